// Experiment "fig9": the paper's Fig. 9 — median policy runtime (one round) against cluster size: the heterogeneous
// cluster ×1..×32 (64..2048 GPUs) with the Helios trace replicated as many times (the artifact's scale_Nx). Each
// policy runs its first 20 rounds at each size (the busy start of the trace; Pollux's genetic search at 2048 GPUs
// would otherwise take hours), and the 25th/50th/75th percentiles of its round times are reported.
#include <sia/error.hpp>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>

#include "sim/experiments.hpp"

namespace sia::sim::detail {

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

ExperimentResult run(const ExperimentOptions& o) {
  std::ostream& out = o.out ? *o.out : std::cout;
  const auto data = experiment_data_dir(o);
  const auto policies = experiment_policies(o, {"sia", "pollux", "gavel"});
  const std::vector<int> scales = {1, 2, 4, 8, 16, 32};
  std::vector<ExperimentVariant> variants;
  for (int k : scales) {
    const auto cluster = std::make_shared<const SimCluster>(cluster_preset("paper-heterogeneous", k));
    std::vector<Workload> ws;
    if (k == 1)
      ws.push_back(helios_workload(data));
    else
      ws.push_back(load_workloads(data / "workloads" / "scale" / ("scale_" + std::to_string(k) + "x")).front());
    const auto apps = std::make_shared<const ApplicationSet>(load_applications(data / "profiles", *cluster, ws));
    for (const auto& p : policies) {
      SimOptions sim;
      sim.horizon_s = 20 * make_policy(p)->default_interval_s();
      sim.truncate = true;
      variants.push_back({std::to_string(k) + "/" + p, p, {}, cluster, apps, share_workloads(ws), sim});
    }
  }
  out << "Fig. 9: policy runtime per round against cluster size (heterogeneous x1..x32, Helios x1..x32; first 20 "
         "rounds of each policy)\n";
  const auto runs = run_variants(variants, o);
  ExperimentResult result;
  std::ofstream csv(o.out_dir / "fig9.csv");
  csv << "gpus,policy,rounds,p25_ms,median_ms,p75_ms\n";
  std::map<std::string, LineSeries> series;
  std::map<std::string, std::map<int, double>> med;
  out << "\n"
      << std::left << std::setw(7) << "GPUs" << std::setw(9) << "policy" << std::setw(8) << "rounds" << std::setw(12)
      << "p25 ms" << std::setw(12) << "median ms"
      << "p75 ms\n";
  for (const auto& pr : runs) {
    const auto slash = pr.policy.find('/');
    const int gpus = 64 * std::stoi(pr.policy.substr(0, slash));
    const std::string p = pr.policy.substr(slash + 1);
    std::vector<double> ms;
    for (const auto& r : pr.runs) ms.insert(ms.end(), r.policy_ms.begin(), r.policy_ms.end());
    const double p25 = percentile(ms, 0.25), p50 = percentile(ms, 0.5), p75 = percentile(ms, 0.75);
    out << std::left << std::setw(7) << gpus << std::setw(9) << p << std::setw(8) << ms.size() << std::fixed
        << std::setprecision(2) << std::setw(12) << p25 << std::setw(12) << p50 << p75 << "\n";
    csv << gpus << "," << p << "," << ms.size() << "," << p25 << "," << p50 << "," << p75 << "\n";
    auto& s = series[p];
    s.name = p;
    s.x.push_back(gpus);
    s.y.push_back(std::max(p50, 1e-3));
    med[p][gpus] = p50;
  }
  csv.close();
  result.files.push_back(o.out_dir / "fig9.csv");
  std::vector<LineSeries> lines;
  for (const auto& p : policies)
    if (series.count(p)) lines.push_back(series[p]);
  for (auto& f : write_line_chart(o.out_dir, "fig9", "Fig. 9: median policy runtime per round", "GPUs",
                                  "median round time (ms)", lines, true, true))
    result.files.push_back(f);
  // Paper: Sia about 1 s at 2048 GPUs (Python + GLPK), Pollux about 100x slower, Gavel much quicker.
  bool met = true;
  if (med.count("sia") && med.count("pollux"))
    for (const auto& [g, v] : med["sia"]) met = met && v < med["pollux"][g];
  out << "\npaper: Sia about 1 s per round at 2048 GPUs (Python + GLPK), Pollux about 100x slower, Gavel quicker;\n"
      << "Sia's median round below Pollux's at every size: " << (met ? "yes" : "NO") << "\n";
  result.targets_met = met;
  return result;
}

}  // namespace

ExperimentInfo experiment_fig9() {
  return {"fig9",
          "paper Fig. 9: median policy runtime against cluster size, 64 to 2048 GPUs (Helios x1..x32, first 20 "
          "rounds per policy)",
          run};
}

}  // namespace sia::sim::detail
