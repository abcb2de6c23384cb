// Experiment "table4": the paper's Table 4 — the homogeneous setting (§4.3: 16 × 4 T4 = 64 GPUs), the 8 Philly
// workloads re-tuned for that cluster (TunedJobs, §4.3 and §5.4), Sia and Pollux (adaptive) against the inelastic
// Shockwave, Themis and Gavel (+ TunedJobs).
#include <sia/error.hpp>
#include <sia/sim/tuned_jobs.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>

#include "sim/experiments.hpp"

namespace sia::sim::detail {

namespace {

/// Paper Table 4 (avg JCT, p99 JCT, makespan in hours; GPU-hours per job).
struct PaperRow {
  double avg, p99, makespan, gpu_hours;
};
const std::map<std::string, PaperRow>& paper_table4() {
  static const std::map<std::string, PaperRow> rows = {{"sia", {1.9, 18.1, 21.4, 8.4}},
                                                       {"pollux", {2.0, 19.3, 21.7, 8.6}},
                                                       {"shockwave", {3.6, 32.8, 35.0, 12.5}},
                                                       {"themis", {5.4, 44.7, 49.7, 17.2}},
                                                       {"gavel", {4.3, 37.1, 44.3, 15.3}}};
  return rows;
}

/// The paper's ordering by average JCT: Sia ≈ Pollux < Shockwave < Gavel < Themis (ties inside a group).
const std::vector<std::vector<std::string>>& paper_order() {
  static const std::vector<std::vector<std::string>> groups = {{"sia", "pollux"}, {"shockwave"}, {"gavel"}, {"themis"}};
  return groups;
}

ExperimentResult run(const ExperimentOptions& o) {
  std::ostream& out = o.out ? *o.out : std::cout;
  const auto data = experiment_data_dir(o);
  const auto cluster = cluster_preset("paper-homogeneous");
  auto workloads = load_workloads(o.workload.empty() ? data / "workloads" / "philly" : o.workload);
  limit_workloads(workloads, o);
  const auto apps = load_applications(data / "profiles", cluster, workloads);
  ExperimentResult result;
  // TunedJobs for the homogeneous cluster: the artifact's rule on T4 with up to 64 GPUs (written out so the
  // runs can be repeated with `sia_simulate --workload`).
  const auto tj = cluster_tuned_jobs(cluster);
  std::filesystem::create_directories(o.out_dir / "workloads-tuned");
  for (auto& w : workloads) {
    validate_inputs(cluster, apps, w);
    w = retune_workload(w, apps, cluster, tj);
    const auto f = o.out_dir / "workloads-tuned" / (w.name + ".csv");
    write_workload_csv(f, w);
    result.files.push_back(f);
  }
  const auto policies = experiment_policies(o, {"sia", "pollux", "shockwave", "themis", "gavel"});
  out << "Table 4: " << cluster.name << " (" << cluster.total_gpus() << " GPUs), " << workloads.size()
      << " Philly workload(s) re-tuned for it (TunedJobs: " << tj.gpu_type << ", up to " << tj.max_gpus
      << " GPUs); policies: ";
  for (std::size_t i = 0; i < policies.size(); ++i) out << (i ? ", " : "") << policies[i];
  out << "\n";
  const auto runs = run_policies(policies, cluster, apps, workloads, o);
  for (auto& f : write_outputs(o.out_dir, runs, cluster)) result.files.push_back(f);

  // Table beside the paper's, CSV, chart.
  const auto csv_path = o.out_dir / "table4.csv";
  std::ofstream csv(csv_path);
  csv << "policy,avg_jct_h,avg_jct_std_h,p99_jct_h,makespan_h,gpu_hours_per_job,restarts_per_job,worst_ftf,"
         "unfair_fraction,policy_ms_p50,policy_ms_p95,paper_avg_jct_h,paper_p99_jct_h,paper_makespan_h,"
         "paper_gpu_hours_per_job,avg_jct_vs_paper\n";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out << "\n"
      << std::left << std::setw(11) << "policy" << std::setw(22) << "avg JCT h (paper)" << std::setw(22)
      << "p99 h (paper)" << std::setw(22) << "makespan h (paper)" << std::setw(22) << "GPU-h/job (paper)"
      << std::setw(10) << "restarts" << std::setw(9) << "worst ρ" << std::setw(9) << "unfair"
      << "round ms p50/p95\n";
  std::vector<std::string> labels;
  std::vector<BarPanel> panels = {{"avg JCT", "hours", {}, {}},
                                  {"p99 JCT", "hours", {}, {}},
                                  {"makespan", "hours", {}, {}},
                                  {"GPU-hours per job", "GPU-hours", {}, {}}};
  bool within = true;
  std::map<std::string, double> avg;
  for (const auto& pr : runs) {
    const auto& m = pr.aggregate;
    const auto it = paper_table4().find(pr.policy);
    const PaperRow paper = it != paper_table4().end() ? it->second : PaperRow{nan, nan, nan, nan};
    avg[pr.policy] = m.avg_jct_h;
    const double diff = m.avg_jct_h / paper.avg - 1;
    if (std::isfinite(diff) && std::abs(diff) > 0.25) within = false;
    out << std::left << std::setw(11) << pr.policy << std::setw(22) << versus(m.avg_jct_h, paper.avg) << std::setw(22)
        << versus(m.p99_jct_h, paper.p99, 1) << std::setw(22) << versus(m.makespan_h, paper.makespan, 1)
        << std::setw(22) << versus(m.gpu_hours_per_job, paper.gpu_hours, 1) << std::setw(10) << std::fixed
        << std::setprecision(2) << m.restarts_per_job << std::setw(9) << m.ftf_worst << std::setw(9)
        << std::setprecision(1) << 100 * m.unfair_fraction << std::setprecision(2) << m.policy_ms_median << " / "
        << m.policy_ms_p95 << "\n";
    csv << pr.policy << "," << m.avg_jct_h << "," << m.avg_jct_std_h << "," << m.p99_jct_h << "," << m.makespan_h << ","
        << m.gpu_hours_per_job << "," << m.restarts_per_job << "," << m.ftf_worst << "," << m.unfair_fraction << ","
        << m.policy_ms_median << "," << m.policy_ms_p95 << "," << paper.avg << "," << paper.p99 << "," << paper.makespan
        << "," << paper.gpu_hours << "," << diff << "\n";
    labels.push_back(pr.policy);
    panels[0].ours.push_back(m.avg_jct_h), panels[0].paper.push_back(paper.avg);
    panels[1].ours.push_back(m.p99_jct_h), panels[1].paper.push_back(paper.p99);
    panels[2].ours.push_back(m.makespan_h), panels[2].paper.push_back(paper.makespan);
    panels[3].ours.push_back(m.gpu_hours_per_job), panels[3].paper.push_back(paper.gpu_hours);
  }
  csv.close();
  result.files.push_back(csv_path);
  for (auto& f :
       write_comparison_chart(o.out_dir, "table4", "Table 4 (homogeneous, 64 T4 GPUs, Philly)", labels, panels))
    result.files.push_back(f);

  // The paper's ordering among the policies that ran: every member of a group below every later group.
  bool ordered = true;
  std::string order_text;
  double prev_max = -1;
  for (const auto& group : paper_order()) {
    double lo = std::numeric_limits<double>::infinity(), hi = -1;
    std::string names;
    for (const auto& p : group)
      if (auto f = avg.find(p); f != avg.end()) {
        lo = std::min(lo, f->second), hi = std::max(hi, f->second);
        names += (names.empty() ? "" : " ≈ ") + p;
      }
    if (hi < 0) continue;
    if (lo <= prev_max) ordered = false;
    order_text += (order_text.empty() ? "" : " < ") + names;
    prev_max = std::max(prev_max, hi);
  }
  out << "\nordering by avg JCT (paper: sia ≈ pollux < shockwave < gavel < themis): "
      << (ordered ? "matches" : "DIFFERS") << " (" << order_text << ")\n"
      << "every avg JCT within ±25 % of the paper: " << (within ? "yes" : "NO") << "\n"
      << "files: " << o.out_dir.string() << "/table4.csv, table4.png, jct_cdf.png, jobs-*.csv\n";
  result.targets_met = ordered && within;
  return result;
}

}  // namespace

ExperimentInfo experiment_table4() {
  return {"table4",
          "paper Table 4: Sia, Pollux, Shockwave+TJ, Themis+TJ, Gavel+TJ on the homogeneous 64-GPU cluster, 8 Philly "
          "workloads re-tuned for it (about 40 min on one core; --threads 2 halves it)",
          run};
}

}  // namespace sia::sim::detail
