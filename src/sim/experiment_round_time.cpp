// Experiment "round-time": every policy's round (policy call) time at 64 and 2048 GPUs — the paper's §5.6 / Fig. 9
// setting: the heterogeneous cluster (×1 and ×32) with the Helios trace (×1 and the artifact's scale_32x).
#include <sia/error.hpp>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>

#include "sim/experiments.hpp"

namespace sia::sim::detail {

namespace {

/// Paper §5.6 (64 GPUs, Helios) and Fig. 9 (2048 GPUs, about 1 s for Sia); median / p95 in ms where published.
struct PaperTime {
  double median, p95;
};
const std::map<std::string, PaperTime>& paper_64() {
  static const std::map<std::string, PaperTime> t = {{"sia", {96, 426}}, {"pollux", {2200, 4800}}, {"gavel", {13, 28}}};
  return t;
}

ExperimentResult run(const ExperimentOptions& o) {
  std::ostream& out = o.out ? *o.out : std::cout;
  const auto data = experiment_data_dir(o);
  const auto policies = experiment_policies(o, {"sia", "pollux", "shockwave", "themis", "gavel"});
  const auto csv_path = o.out_dir / "round_time.csv";
  std::ofstream csv(csv_path);
  csv << "gpus,policy,rounds,mean_active_jobs,median_ms,p95_ms,max_ms,paper_median_ms,paper_p95_ms\n";
  out << "Round time per policy (one policy call; Helios trace on the heterogeneous cluster)\n"
      << std::left << std::setw(7) << "GPUs" << std::setw(11) << "policy" << std::setw(8) << "rounds" << std::setw(8)
      << "jobs" << std::setw(12) << "median ms" << std::setw(12) << "p95 ms" << std::setw(12) << "max ms"
      << "paper (64 GPUs) median / p95 ms\n";
  // 64 GPUs: the first 12 simulated hours (the busy part of the trace). 2048 GPUs: the first 20 rounds of every
  // policy on scale_32x (20 min for the 60-s policies, 2 h for the 360-s ones; hundreds of active jobs), which keeps
  // Pollux's 2048-GPU rounds affordable.
  struct Setting {
    int scale;
    double horizon_h;  ///< 0: 20 rounds of the policy
  };
  ExperimentResult result;
  for (const Setting s : {Setting{1, 12.0}, Setting{32, 0.0}}) {
    const auto cluster = cluster_preset("paper-heterogeneous", s.scale);
    std::vector<Workload> workloads;
    if (s.scale == 1)
      workloads.push_back(helios_workload(data));
    else
      workloads = load_workloads(data / "workloads" / "scale" / "scale_32x");
    limit_workloads(workloads, o);
    const auto apps = load_applications(data / "profiles", cluster, workloads);
    for (const auto& policy : policies) {
      SimOptions sim;
      sim.horizon_s = s.horizon_h > 0 ? s.horizon_h * 3600 : 20 * make_policy(policy)->default_interval_s();
      sim.truncate = true;
      const auto runs = run_policies({policy}, cluster, apps, workloads, o, sim);
      const auto& pr = runs.front();
      std::vector<double> ms;
      double active = 0;
      int counted = 0;
      for (const auto& r : pr.runs) {
        ms.insert(ms.end(), r.policy_ms.begin(), r.policy_ms.end());
        for (const auto& l : r.rounds)
          if (l.active > 0) active += l.active, ++counted;
      }
      const double jobs = counted ? active / counted : 0.0;
      const double med = percentile_index(ms, 0.5), p95 = percentile_index(ms, 0.95);
      const double mx = ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end());
      const auto it = paper_64().find(pr.policy);
      const bool has = s.scale == 1 && it != paper_64().end();
      out << std::left << std::setw(7) << cluster.total_gpus() << std::setw(11) << pr.policy << std::setw(8)
          << ms.size() << std::setw(8) << std::fixed << std::setprecision(0) << jobs << std::setw(12)
          << std::setprecision(2) << med << std::setw(12) << p95 << std::setw(12) << mx;
      if (has) out << it->second.median << " / " << it->second.p95;
      out << std::endl;
      csv << cluster.total_gpus() << "," << pr.policy << "," << ms.size() << "," << jobs << "," << med << "," << p95
          << "," << mx << "," << (has ? std::to_string(it->second.median) : "") << ","
          << (has ? std::to_string(it->second.p95) : "") << "\n";
    }
  }
  csv.close();
  result.files.push_back(csv_path);
  out << "(the paper's times are Python + GLPK/pymoo on its machines; Fig. 9: about 1 s for Sia at 2048 GPUs)\n"
      << "file: " << csv_path.string() << "\n";
  return result;
}

}  // namespace

ExperimentInfo experiment_round_time() {
  return {
      "round-time",
      "round time of every policy at 64 and 2048 GPUs (paper 5.6 / Fig. 9 setting: Helios, heterogeneous x1 for 12 h "
      "and x32 for 20 rounds; about 20 min, most of it Pollux)",
      run};
}

}  // namespace sia::sim::detail
