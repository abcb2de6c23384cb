// Experiment "tenants" (issue 15 part 4): what job weights and tenant quotas do. Two tenants share the paper's
// 64-GPU heterogeneous cluster under a congested Philly-like workload (jobs assigned to a tenant by a hash of their
// name, sim/sia_policy.hpp); Sia runs it with no tenants, with tenant b's jobs at weight 4, with tenant a capped at
// 16 GPUs, and with 32 GPUs guaranteed to tenant b. Per tenant: jobs, mean JCT, GPU-hours, and the most GPUs it
// held in one round (the cap must hold in every round).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <sia/sim/sia_policy.hpp>

#include "sim/experiments.hpp"

namespace sia::sim::detail {

namespace {

struct Setting {
  std::string label, tenants;
};

ExperimentResult run(const ExperimentOptions& o) {
  std::ostream& out = o.out ? *o.out : std::cout;
  const auto data = experiment_data_dir(o);
  const auto cluster = std::make_shared<const SimCluster>(cluster_preset("paper-heterogeneous"));
  ExperimentResult result;

  Workload w = synthetic_philly_workload(15, 60.0, 4.0);
  w.name = "tenants-philly";
  if (!o.workload.empty()) w = load_workloads(o.workload).front();
  const auto apps = std::make_shared<const ApplicationSet>(load_applications(data / "profiles", *cluster, {w}));

  const std::vector<Setting> settings = {{"no tenants", ""},
                                         {"b weight 4", "a;b:weight=4"},
                                         {"a capped 16", "a:max=16;b"},
                                         {"b guaranteed 32", "a;b:guarantee=32"}};
  SimOptions sim;
  sim.keep_round_log = true;
  std::vector<ExperimentVariant> variants;
  for (const auto& s : settings) {
    PolicyOptions po;
    // The no-tenant run still names a and b (with no constraint and weight 1) so that its table is comparable.
    po.set("tenants", s.tenants.empty() ? "a;b" : s.tenants);
    variants.push_back({s.label, "sia", po, cluster, apps, share_workloads({w}), sim});
  }
  out << "Two tenants (a, b; jobs by a hash of their name) on the 64-GPU heterogeneous cluster, " << w.jobs.size()
      << " Philly-like jobs over 4 h (60/h)\n";
  const auto runs = run_variants(variants, o);
  for (auto& f : write_outputs(o.out_dir, runs, *cluster)) result.files.push_back(f);

  std::ofstream csv(o.out_dir / "tenants.csv");
  csv << "setting,tenant,jobs,finished,avg_jct_h,gpu_hours,max_gpus_in_a_round\n";
  out << std::left << std::setw(18) << "setting" << std::setw(8) << "tenant" << std::setw(6) << "jobs" << std::setw(10)
      << "finished" << std::setw(12) << "avg JCT h" << std::setw(11) << "GPU-hours"
      << "most GPUs in a round\n";
  std::map<std::string, std::map<std::size_t, double>> jct;
  int cap_peak = 0;
  for (const auto& pr : runs) {
    const auto& r = pr.runs.front();
    std::map<std::string, std::size_t> tenant_of;
    for (const auto& j : r.jobs) tenant_of[j.name] = tenant_index(j.name, 2);
    int peak[2] = {0, 0};
    for (const auto& round : r.rounds) {
      int held[2] = {0, 0};
      for (const auto& al : round.allocations) held[tenant_of[al.job]] += al.gpus;
      for (int t = 0; t < 2; ++t) peak[t] = std::max(peak[t], held[t]);
    }
    if (pr.policy == "a capped 16") cap_peak = peak[0];
    for (std::size_t t = 0; t < 2; ++t) {
      int jobs = 0, finished = 0;
      double sum = 0, hours = 0;
      for (const auto& j : r.jobs) {
        if (tenant_of[j.name] != t) continue;
        ++jobs;
        hours += j.gpu_hours;
        if (j.completion_time) ++finished, sum += j.jct();
      }
      const double avg = finished ? sum / finished / 3600.0 : 0.0;
      jct[pr.policy][t] = avg;
      const char name = static_cast<char>('a' + t);
      out << std::left << std::setw(18) << pr.policy << std::setw(8) << name << std::setw(6) << jobs << std::setw(10)
          << finished << std::fixed << std::setprecision(2) << std::setw(12) << avg << std::setprecision(1)
          << std::setw(11) << hours << peak[t] << "\n";
      csv << pr.policy << "," << name << "," << jobs << "," << finished << "," << avg << "," << hours << "," << peak[t]
          << "\n";
    }
  }
  csv.close();
  result.files.push_back(o.out_dir / "tenants.csv");
  const bool cap_held = cap_peak <= 16;
  const bool weight_helps = jct["b weight 4"][1] <= jct["no tenants"][1];
  out << "tenant a's cap of 16 GPUs held in every round: " << (cap_held ? "yes" : "NO") << " (most " << cap_peak
      << ")\n"
      << "weight 4 shortens tenant b's mean JCT: " << (weight_helps ? "yes" : "NO") << "\n";
  result.targets_met = cap_held && weight_helps;
  return result;
}

}  // namespace

ExperimentInfo experiment_tenants() {
  return {"tenants",
          "issue 15: two tenants on the 64-GPU cluster (Philly-like, 4 h): no tenants, one at weight 4, a cap, a "
          "guarantee; per-tenant JCT and GPU-hours (a few minutes)",
          run};
}

}  // namespace sia::sim::detail
