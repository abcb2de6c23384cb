// Experiment "hybrid": the paper's §5.3 — a 2.8B-parameter GPT fine-tuned with GPipe pipelines (2 stages on A100, 8 on
// RTX; 48 micro-batches of 1 per pipeline; BERT's statistical efficiency), profiles `gpt_pmp`. (a) Throughput against
// GPU count per type: the ground truth, Sia's bootstrap from one pipeline's profile, and the model fitted on every
// profile row. (b) Allocation over time: the GPT job alone from t = 0, a burst of Philly-like jobs between 1 h and 3 h,
// then quiet again; Sia should scale the GPT job down under the congestion and back up after it.
#include <sia/error.hpp>
#include <sia/goodput/pipeline.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>

#include "sim/experiments.hpp"

namespace sia::sim::detail {

namespace {

ExperimentResult run(const ExperimentOptions& o) {
  std::ostream& out = o.out ? *o.out : std::cout;
  const auto data = experiment_data_dir(o);
  const auto cluster = std::make_shared<const SimCluster>(cluster_preset("paper-heterogeneous"));
  ExperimentResult result;

  // (b)'s workload: the GPT job, then 2 h of Philly-like arrivals at 40 jobs/h starting at 1 h.
  Workload w;
  w.name = "hybrid-congestion";
  w.source = "built-in (experiment hybrid)";
  {
    WorkloadJob g;
    g.name = "gpt_pmp-0";
    g.application = "gpt_pmp";
    g.category = JobKind::hybrid;
    g.num_replicas = 8;  // baselines: one RTX pipeline or four A100 pipelines
    g.batch_size = 384;  // paper Table 2: GPT batch sizes 48-384
    g.line = 2;
    w.jobs.push_back(g);
    auto burst = synthetic_philly_workload(7, 40.0, 2.0);
    int line = 3;
    for (auto& j : burst.jobs) {
      j.time += 3600.0;
      j.line = line++;
      w.jobs.push_back(j);
    }
  }
  if (!o.workload.empty()) w = load_workloads(o.workload).front();
  const auto apps = std::make_shared<const ApplicationSet>(load_applications(data / "profiles", *cluster, {w}));
  const Application& gpt = *apps->at("gpt_pmp");

  // (a) throughput against GPUs.
  const auto mp = load_model_profile(data / "profiles", "gpt_pmp");
  std::ofstream csv(o.out_dir / "hybrid_throughput.csv");
  csv << "gpu_type,gpus,pipelines,true_samples_per_s,bootstrap_samples_per_s,fitted_samples_per_s\n";
  out << "Hybrid GPT (paper §5.3): throughput against GPUs (48 micro-batches of 1 per pipeline)\n"
      << std::left << std::setw(9) << "type" << std::setw(6) << "GPUs" << std::setw(11) << "pipelines" << std::setw(14)
      << "true smp/s" << std::setw(16) << "bootstrap smp/s" << std::setw(14) << "fitted smp/s"
      << "per GPU (true)\n";
  std::vector<LineSeries> tput;
  bool linear = true;
  for (std::size_t t = 0; t < cluster->types.size(); ++t) {
    const auto& tt = gpt.types[t];
    if (!tt.available) continue;
    const auto& type = cluster->types[t];
    const TypeProfile* tp = mp.type(type.profile);
    std::vector<PipelineObservation> obs;
    for (const auto& r : tp->all_rows()) obs.push_back(pipeline_observation(r, tt.stages));
    const PipelineParams fitted = fit_pipeline_params(obs, tt.stages, gpt.microbatches);
    const PipelineParams boot{*tt.seed, tt.stages, gpt.microbatches};
    LineSeries truth{type.name + " (true)", {}, {}}, model{type.name + " (fitted model)", {}, {}, true};
    double first_per_gpu = 0;
    for (int d = 1; d <= 8; ++d) {
      const int gpus = d * tt.stages;
      const int nodes = (gpus + type.gpus_per_node - 1) / type.gpus_per_node;
      if (nodes > type.nodes) break;
      const double step = gpt.pipeline_step_time(static_cast<int>(t), placement_of(nodes, gpus), 1);
      const double x = d * gpt.microbatches / step;
      const double xb = pipeline_throughput(boot, nodes, d, 1.0);
      const double xf = pipeline_throughput(fitted, nodes, d, 1.0);
      if (d == 1) first_per_gpu = x / gpus;
      linear = linear && x / gpus >= 0.8 * first_per_gpu;
      out << std::left << std::setw(9) << type.name << std::setw(6) << gpus << std::setw(11) << d << std::fixed
          << std::setprecision(2) << std::setw(14) << x << std::setw(16) << xb << std::setw(14) << xf
          << std::setprecision(3) << x / gpus << "\n";
      csv << type.name << "," << gpus << "," << d << "," << x << "," << xb << "," << xf << "\n";
      truth.x.push_back(gpus), truth.y.push_back(x);
      model.x.push_back(gpus), model.y.push_back(xf);
    }
    tput.push_back(truth);
    tput.push_back(model);
  }
  csv.close();
  result.files.push_back(o.out_dir / "hybrid_throughput.csv");
  for (auto& f : write_line_chart(o.out_dir, "hybrid_throughput", "Hybrid GPT: throughput against GPUs", "GPUs",
                                  "samples/s", tput))
    result.files.push_back(f);
  out << "per-GPU throughput within 20 % of one pipeline's up to 8 pipelines (paper: scales linearly): "
      << (linear ? "yes" : "NO") << "\n";

  // (b) allocation over time under congestion.
  const auto policies = experiment_policies(o, {"sia", "pollux", "gavel"});
  SimOptions sim;
  sim.keep_round_log = true;
  std::vector<ExperimentVariant> variants;
  for (const auto& p : policies) variants.push_back({p, p, {}, cluster, apps, share_workloads({w}), sim});
  out << "\nAllocation over time: GPT job at 0 h, " << w.jobs.size() - 1
      << " Philly-like jobs arriving between 1 h and 3 h (40/h)\n";
  const auto runs = run_variants(variants, o);
  for (auto& f : write_outputs(o.out_dir, runs, *cluster)) result.files.push_back(f);
  std::ofstream tl(o.out_dir / "hybrid_timeline.csv");
  tl << "policy,time_h,active_jobs,gpt_gpu_type,gpt_gpus,gpt_pipelines\n";
  std::vector<LineSeries> gpus_series, active;
  bool shape = false;
  out << std::left << std::setw(9) << "policy" << std::setw(10) << "GPT JCT h" << std::setw(22) << "GPT GPUs before 1 h"
      << std::setw(24) << "min GPUs in 1.5-3 h"
      << "max GPUs after 3 h\n";
  for (const auto& pr : runs) {
    const auto& r = pr.runs.front();
    LineSeries g{pr.policy + ": GPT GPUs", {}, {}}, a{pr.policy + ": active jobs", {}, {}};
    int before = 0, during = 1 << 30, after = 0;
    bool seen_during = false;
    for (const auto& round : r.rounds) {
      int gg = 0, type = -1;
      for (const auto& al : round.allocations)
        if (al.job == "gpt_pmp-0") gg = al.gpus, type = al.type;
      const double h = round.time / 3600.0;
      const int stages = type >= 0 ? std::max(1, gpt.types[static_cast<std::size_t>(type)].stages) : 1;
      tl << pr.policy << "," << h << "," << round.active << ","
         << (type >= 0 ? cluster->types[static_cast<std::size_t>(type)].name : "") << "," << gg << ","
         << (type >= 0 ? gg / stages : 0) << "\n";
      bool gpt_active = false;
      for (const auto& al : round.allocations) gpt_active = gpt_active || al.job == "gpt_pmp-0";
      if (!gpt_active) continue;
      g.x.push_back(h), g.y.push_back(gg);
      a.x.push_back(h), a.y.push_back(round.active);
      if (h < 1.0) before = std::max(before, gg);
      if (h >= 1.5 && h <= 3.0) during = std::min(during, gg), seen_during = true;
      if (h > 3.0) after = std::max(after, gg);
    }
    if (!seen_during) during = 0;
    const auto& job = r.jobs.front();
    out << std::left << std::setw(9) << pr.policy << std::fixed << std::setprecision(2) << std::setw(10)
        << job.jct() / 3600 << std::setw(22) << before << std::setw(24) << during << after << "\n";
    if (pr.policy == "sia") shape = before > during && after > during;
    gpus_series.push_back(g);
    active.push_back(a);
  }
  tl.close();
  result.files.push_back(o.out_dir / "hybrid_timeline.csv");
  std::vector<LineSeries> both = gpus_series;
  for (auto& s : active) {
    s.points_only = true;
    both.push_back(s);
  }
  for (auto& f :
       write_line_chart(o.out_dir, "hybrid_timeline", "Hybrid GPT: GPUs held over time under a burst of jobs (1-3 h)",
                        "time (hours)", "GPUs / active jobs", both))
    result.files.push_back(f);
  out << "Sia scales the GPT job down under the congestion and back up after it (paper: down near 1 h, up near 4 h): "
      << (shape ? "yes" : "NO") << "\n";
  result.targets_met = shape && linear;
  return result;
}

}  // namespace

ExperimentInfo experiment_hybrid() {
  return {"hybrid",
          "paper §5.3: a hybrid-parallel GPT (GPipe, 2 stages on A100, 8 on RTX): throughput against GPUs, and its "
          "allocation over time under a burst of jobs (Sia, Pollux, Gavel)",
          run};
}

}  // namespace sia::sim::detail
