// Experiment "profiling": the paper's §5.7 "Profiling Overheads" — Sia with its Bootstrap (1-GPU profiles, Eq. 1),
// without profiles ("No Prof") and with the true throughputs ("Oracle"), plus the reference code's own mode. The
// paper uses the Helios traces; the artifact ships one, so the Philly traces are run too.
#include <sia/error.hpp>

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
  std::vector<Workload> helios = {helios_workload(data)};
  auto philly = load_workloads(data / "workloads" / "philly");
  limit_workloads(philly, o);
  std::vector<Workload> all = philly;
  all.push_back(helios.front());
  const auto apps = std::make_shared<const ApplicationSet>(load_applications(data / "profiles", *cluster, all));
  const std::vector<std::pair<std::string, std::string>> modes = {{"eq1", "Bootstrap (paper: 1-GPU profiles, Eq. 1)"},
                                                                  {"noprof", "No Prof (no profiles)"},
                                                                  {"oracle", "Oracle (true throughputs)"},
                                                                  {"reference", "reference code (ties, 1-GPU ratio)"}};
  const std::vector<std::pair<std::string, std::vector<Workload>*>> traces = {{"helios", &helios}, {"philly", &philly}};
  std::vector<ExperimentVariant> variants;
  for (const auto& [trace, ws] : traces)
    for (const auto& [mode, label] : modes)
      variants.push_back({trace + "/" + mode, "sia", {{"profiling", mode}}, cluster, apps, share_workloads(*ws), {}});
  out << "Profiling modes (paper §5.7): heterogeneous 64 GPUs; Helios x1, Philly x" << philly.size() << "\n";
  const auto runs = run_variants(variants, o);
  ExperimentResult result;
  std::map<std::string, const RunMetrics*> m;
  for (const auto& pr : runs) m[pr.policy] = &pr.aggregate;
  std::ofstream csv(o.out_dir / "profiling.csv");
  csv << "trace,mode,avg_jct_h,p99_jct_h,makespan_h,restarts_per_job\n";
  std::vector<BarPanel> panels;
  std::vector<std::string> labels;
  for (const auto& [mode, label] : modes) labels.push_back(mode);
  for (const auto& [trace, ws] : traces) {
    out << "\n"
        << trace << "\n"
        << std::left << std::setw(44) << "mode" << std::setw(12) << "avg JCT h" << std::setw(10) << "p99 h"
        << std::setw(13) << "makespan h"
        << "restarts\n";
    BarPanel panel{trace, "avg JCT (hours)", {}, {}};
    for (const auto& [mode, label] : modes) {
      const auto& x = *m[trace + "/" + mode];
      out << std::left << std::setw(44) << label << std::fixed << std::setprecision(3) << std::setw(12) << x.avg_jct_h
          << std::setprecision(1) << std::setw(10) << x.p99_jct_h << std::setw(13) << x.makespan_h
          << std::setprecision(2) << x.restarts_per_job << "\n";
      csv << trace << "," << mode << "," << x.avg_jct_h << "," << x.p99_jct_h << "," << x.makespan_h << ","
          << x.restarts_per_job << "\n";
      panel.ours.push_back(x.avg_jct_h);
      panel.paper.push_back(std::numeric_limits<double>::quiet_NaN());
    }
    const double b = m[trace + "/eq1"]->avg_jct_h, n = m[trace + "/noprof"]->avg_jct_h,
                 oracle = m[trace + "/oracle"]->avg_jct_h;
    out << "Bootstrap vs No Prof: " << std::setprecision(0) << 100 * (1 - b / n)
        << " % lower avg JCT (paper 30 %); vs Oracle: " << 100 * (b / oracle - 1) << " % higher (paper 8 %)\n";
    panels.push_back(panel);
  }
  csv.close();
  result.files.push_back(o.out_dir / "profiling.csv");
  for (auto& f : write_comparison_chart(o.out_dir, "profiling", "Profiling modes (avg JCT)", labels, panels))
    result.files.push_back(f);
  return result;
}

}  // namespace

ExperimentInfo experiment_profiling() {
  return {"profiling",
          "paper §5.7 profiling: Sia with Bootstrap (Eq. 1), No Prof, Oracle and the reference's mode, Helios x1 and "
          "Philly x8 (about 2 min)",
          run};
}

}  // namespace sia::sim::detail
