// Experiment "fig6": the paper's Fig. 6 — GPU-hours per job by model for Sia, Pollux and Gavel+TJ on the Helios trace
// (heterogeneous cluster), normalised per model to the smallest of the three, with each policy's split over GPU types.
#include <sia/error.hpp>

#include <algorithm>
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
  std::vector<Workload> ws;
  if (o.workload.empty())
    ws.push_back(helios_workload(data));
  else
    ws = load_workloads(o.workload);
  limit_workloads(ws, o);
  const auto apps = std::make_shared<const ApplicationSet>(load_applications(data / "profiles", *cluster, ws));
  const auto policies = experiment_policies(o, {"sia", "pollux", "gavel"});
  std::vector<ExperimentVariant> variants;
  for (const auto& p : policies) variants.push_back({p, p, {}, cluster, apps, share_workloads(ws), {}});
  out << "Fig. 6: GPU-hours per job by model; heterogeneous 64 GPUs, " << ws.size()
      << " Helios trace(s) (the paper pools 10; the artifact ships one)\n";
  const auto runs = run_variants(variants, o);
  ExperimentResult result;
  for (auto& f : write_outputs(o.out_dir, runs, *cluster)) result.files.push_back(f);
  const std::size_t nt = cluster->types.size();
  std::map<std::string, std::map<std::string, std::vector<double>>> by;  // model -> policy -> per type + total
  for (const auto& pr : runs)
    for (const auto& [model, v] : gpu_hours_by_model(pr, nt)) by[model][pr.policy] = v;
  std::ofstream csv(o.out_dir / "fig6.csv");
  csv << "model,policy,gpu_hours_per_job,normalised";
  for (const auto& t : cluster->types) csv << ",share_" << t.name;
  csv << "\n";
  out << "\n"
      << std::left << std::setw(13) << "model" << std::setw(9) << "policy" << std::setw(11) << "GPU-h/job"
      << std::setw(12) << "normalised";
  for (const auto& t : cluster->types) out << std::setw(10) << ("% " + t.name);
  out << "\n";
  std::vector<BarPanel> panels;
  bool bert_on_a100 = false;
  for (const auto& [model, per] : by) {
    double lo = 1e300;
    for (const auto& [p, v] : per) lo = std::min(lo, v.back());
    BarPanel panel{model, "GPU-hours per job / min", {}, {}};
    for (const auto& p : policies) {
      const auto it = per.find(p);
      if (it == per.end()) continue;
      const auto& v = it->second;
      const double norm = lo > 0 ? v.back() / lo : 0.0;
      out << std::left << std::setw(13) << model << std::setw(9) << p << std::setw(11) << std::fixed
          << std::setprecision(2) << v.back() << std::setw(12) << norm;
      csv << model << "," << p << "," << v.back() << "," << norm;
      for (std::size_t t = 0; t < nt; ++t) {
        const double share = v.back() > 0 ? 100 * v[t] / v.back() : 0.0;
        out << std::setw(10) << std::setprecision(0) << share;
        csv << "," << share / 100;
      }
      out << "\n";
      csv << "\n";
      panel.ours.push_back(norm);
      panel.paper.push_back(std::numeric_limits<double>::quiet_NaN());
      if (model == "bert" && p == "sia") {
        const int a100 = cluster->type_index("dgx-ext");
        bert_on_a100 = a100 >= 0 && v.back() > 0 && v[static_cast<std::size_t>(a100)] / v.back() > 0.5;
      }
    }
    panels.push_back(panel);
  }
  csv.close();
  result.files.push_back(o.out_dir / "fig6.csv");
  for (auto& f : write_comparison_chart(o.out_dir, "fig6", "Fig. 6 (GPU-hours per job, min-normalised, Helios)",
                                        policies, panels))
    result.files.push_back(f);
  out << "\nthe paper's bars are not printed; its claim: Sia runs BERT almost only on A100 (dgx-ext): "
      << (bert_on_a100 ? "yes (over half of its GPU-hours)" : "NO") << "\n";
  result.targets_met = bert_on_a100;
  return result;
}

}  // namespace

ExperimentInfo experiment_fig6() {
  return {"fig6",
          "paper Fig. 6: GPU-hours per job by model and GPU type, Sia/Pollux/Gavel on the Helios trace (about 1 min)",
          run};
}

}  // namespace sia::sim::detail
