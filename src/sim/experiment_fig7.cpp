// Experiment "fig7": the paper's Fig. 7 — average JCT against the job arrival rate. The paper samples Helios jobs at
// several rates; the artifact's rate_* workloads are not in ../shared, so the jobs of the Helios trace are resampled
// (with replacement, seeded) with Poisson arrivals over 8 hours at each rate.
#include <sia/error.hpp>
#include <sia/sim/random.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>

#include "sim/experiments.hpp"

namespace sia::sim::detail {

namespace {

Workload resample(const Workload& base, double rate_per_h, double hours, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Workload w;
  w.name = "helios-rate" + std::to_string(static_cast<int>(rate_per_h));
  w.source = base.source + " (resampled at " + std::to_string(rate_per_h) + " jobs/h)";
  double t = 0.0;
  for (int i = 0;; ++i) {
    t += exponential(rng, rate_per_h / 3600.0);
    if (t >= hours * 3600.0) break;
    WorkloadJob j = base.jobs[uniform_below(rng, base.jobs.size())];
    j.name = j.application + "-" + std::to_string(i);
    j.time = std::round(t);
    j.line = i + 2;
    w.jobs.push_back(std::move(j));
  }
  return w;
}

ExperimentResult run(const ExperimentOptions& o) {
  std::ostream& out = o.out ? *o.out : std::cout;
  const auto data = experiment_data_dir(o);
  const auto cluster = std::make_shared<const SimCluster>(cluster_preset("paper-heterogeneous"));
  const Workload base = o.workload.empty() ? helios_workload(data) : load_workloads(o.workload).front();
  const std::vector<double> rates = {10, 20, 30, 40, 50};
  std::vector<Workload> ws;
  for (double r : rates) ws.push_back(resample(base, r, 8.0, 17));
  const auto apps = std::make_shared<const ApplicationSet>(load_applications(data / "profiles", *cluster, ws));
  const auto policies = experiment_policies(o, {"sia", "pollux", "gavel"});
  std::vector<ExperimentVariant> variants;
  for (const auto& p : policies)
    for (std::size_t i = 0; i < ws.size(); ++i)
      variants.push_back(
          {p + "/" + std::to_string(static_cast<int>(rates[i])), p, {}, cluster, apps, share_workloads({ws[i]}), {}});
  out << "Fig. 7: avg JCT against arrival rate; heterogeneous 64 GPUs; Helios jobs resampled at 10..50 jobs/h over 8 "
         "h\n";
  const auto runs = run_variants(variants, o);
  ExperimentResult result;
  std::map<std::string, std::map<double, double>> jct;
  for (const auto& pr : runs) {
    const auto slash = pr.policy.find('/');
    jct[pr.policy.substr(0, slash)][std::stod(pr.policy.substr(slash + 1))] = pr.aggregate.avg_jct_h;
  }
  std::ofstream csv(o.out_dir / "fig7.csv");
  csv << "rate_jobs_per_hour,jobs";
  for (const auto& p : policies) csv << "," << p << "_avg_jct_h";
  csv << "\n";
  out << "\n" << std::left << std::setw(10) << "jobs/h" << std::setw(7) << "jobs";
  for (const auto& p : policies) out << std::setw(12) << (p + " h");
  out << (jct.count("sia") && jct.count("pollux") ? "Sia vs Pollux (paper: 50-65 % lower)" : "") << "\n";
  std::vector<LineSeries> series;
  for (const auto& p : policies) series.push_back({p, {}, {}});
  bool met = true;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    out << std::left << std::setw(10) << rates[i] << std::setw(7) << ws[i].jobs.size();
    csv << rates[i] << "," << ws[i].jobs.size();
    for (std::size_t k = 0; k < policies.size(); ++k) {
      const double v = jct[policies[k]][rates[i]];
      out << std::setw(12) << std::fixed << std::setprecision(2) << v;
      csv << "," << v;
      series[k].x.push_back(rates[i]);
      series[k].y.push_back(v);
    }
    if (jct.count("sia") && jct.count("pollux")) {
      const double d = 1 - jct["sia"][rates[i]] / jct["pollux"][rates[i]];
      out << std::setprecision(0) << 100 * d << " % lower";
      met = met && d > 0;
    }
    out << "\n";
    csv << "\n";
  }
  csv.close();
  result.files.push_back(o.out_dir / "fig7.csv");
  for (auto& f : write_line_chart(o.out_dir, "fig7", "Fig. 7: avg JCT against arrival rate (Helios jobs)",
                                  "jobs per hour", "avg JCT (hours)", series))
    result.files.push_back(f);
  out << "\nSia below Pollux at every rate: " << (met ? "yes" : "NO") << "\n";
  result.targets_met = met;
  return result;
}

}  // namespace

ExperimentInfo experiment_fig7() {
  return {"fig7",
          "paper Fig. 7: avg JCT of Sia, Pollux, Gavel against the arrival rate (Helios jobs resampled at 10-50/h)",
          run};
}

}  // namespace sia::sim::detail
