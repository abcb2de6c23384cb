// The experiment registry and the helpers experiments share (see experiment.hpp, docs/experiments.md).
#include <sia/error.hpp>
#include <sia/sim/experiment.hpp>
#include <sia/sim/metrics.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <sia/sim/plot.hpp>
#include <sia/sim/runner.hpp>

#include "sim/experiments.hpp"
#include "sim/named_registry.hpp"

namespace sia::sim {

namespace detail {

std::vector<ExperimentInfo> builtin_experiments() {
  return {experiment_table3(),    experiment_fig1(),   experiment_table4(),     experiment_fig6(),  experiment_fig7(),
          experiment_fig8(),      experiment_fig9(),   experiment_round_time(), experiment_fig10(), experiment_fig11(),
          experiment_profiling(), experiment_hybrid(), experiment_tenants()};
}

bool run_gnuplot(const std::filesystem::path& script) {
  const PlotStatus st = sia::sim::run_gnuplot(script);  // no shell, in the script's directory (plot.hpp)
  if (!st.ok) std::cerr << "sia_simulate experiment: warning: " << st.message << "\n";
  return st.ok;
}

std::vector<std::filesystem::path> write_line_chart(const std::filesystem::path& dir, const std::string& stem,
                                                    const std::string& title, const std::string& xlabel,
                                                    const std::string& ylabel, const std::vector<LineSeries>& series,
                                                    bool logx, bool logy) {
  std::vector<std::filesystem::path> files;
  const auto data = dir / (stem + ".dat");
  {
    std::ofstream o(data);
    for (const auto& s : series) {
      o << "# " << s.name << "\n";
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) o << s.x[i] << " " << s.y[i] << "\n";
      o << "\n\n";
    }
  }
  files.push_back(data);
  const auto script = dir / (stem + ".gp");
  {
    std::ofstream g(script);
    g << "set terminal pngcairo size 800,500\nset output " << gnuplot_quote(stem + ".png") << "\nset title "
      << gnuplot_quote(title) << "\nset xlabel " << gnuplot_quote(xlabel) << "\nset ylabel " << gnuplot_quote(ylabel)
      << "\nset grid\nset key outside right\n"
      << (logx ? "set logscale x 2\n" : "") << (logy ? "set logscale y\n" : "") << "plot ";
    for (std::size_t i = 0; i < series.size(); ++i)
      g << (i ? ", " : "") << gnuplot_quote(data.filename().string()) << " index " << i << " using 1:2 with "
        << (series[i].points_only ? "points pt 7" : "linespoints lw 2 pt 7") << " title "
        << gnuplot_quote(series[i].name);
    g << "\n";
  }
  files.push_back(script);
  if (run_gnuplot(script)) files.push_back(dir / (stem + ".png"));
  return files;
}

std::vector<std::filesystem::path> write_comparison_chart(const std::filesystem::path& dir, const std::string& stem,
                                                          const std::string& title,
                                                          const std::vector<std::string>& labels,
                                                          const std::vector<BarPanel>& panels) {
  std::vector<std::filesystem::path> files;
  const auto data = dir / (stem + ".dat");
  {
    std::ofstream o(data);
    o << "# label";
    for (const auto& p : panels) o << " | " << p.title << ": ours paper";
    o << "\n";
    for (std::size_t i = 0; i < labels.size(); ++i) {
      o << labels[i];
      for (const auto& p : panels) {
        const double ours = i < p.ours.size() ? p.ours[i] : 0.0;
        const double paper = i < p.paper.size() && std::isfinite(p.paper[i]) ? p.paper[i] : 0.0;
        o << " " << ours << " " << paper;
      }
      o << "\n";
    }
  }
  files.push_back(data);
  const auto script = dir / (stem + ".gp");
  {
    const int cols = panels.size() > 1 ? 2 : 1;
    const int rows = static_cast<int>((panels.size() + 1) / 2);
    std::ofstream g(script);
    g << "set terminal pngcairo size " << 600 * cols << "," << 380 * std::max(rows, 1) + 40 << "\n"
      << "set output " << gnuplot_quote(stem + ".png") << "\n"
      << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
      << "set boxwidth 0.9\nset grid ytics\nset key top left\nset yrange [0:*]\n"
      << "set multiplot layout " << std::max(rows, 1) << "," << cols << " title " << gnuplot_quote(title) << "\n";
    for (std::size_t p = 0; p < panels.size(); ++p) {
      g << "set title " << gnuplot_quote(panels[p].title) << "\nset ylabel " << gnuplot_quote(panels[p].ylabel) << "\n"
        << "plot " << gnuplot_quote(data.filename().string()) << " using " << 2 + 2 * p
        << ":xtic(1) title 'this simulator', '' using " << 3 + 2 * p << " title 'paper'\n";
    }
    g << "unset multiplot\n";
  }
  files.push_back(script);
  if (run_gnuplot(script)) files.push_back(dir / (stem + ".png"));
  return files;
}

void write_workload_csv(const std::filesystem::path& file, const Workload& workload) {
  std::ofstream o(file);
  if (!o) throw InvalidArgument("experiment: cannot write " + file.string());
  o << "name,time,application,num_replicas,batch_size,category\n";
  for (const auto& j : workload.jobs) {
    const auto cat = to_string(j.category);
    o << j.name << "," << std::setprecision(17) << j.time << "," << j.application << "," << j.num_replicas << ","
      << j.batch_size << "," << cat << "\n";
  }
}

std::vector<std::string> experiment_policies(const ExperimentOptions& options, std::vector<std::string> defaults) {
  return options.policies.empty() ? std::move(defaults) : options.policies;
}

void limit_workloads(std::vector<Workload>& workloads, const ExperimentOptions& options) {
  if (options.max_workloads > 0 && workloads.size() > static_cast<std::size_t>(options.max_workloads))
    workloads.resize(static_cast<std::size_t>(options.max_workloads));
}

}  // namespace detail

namespace {

detail::NamedRegistry<ExperimentInfo>& registry() {
  static detail::NamedRegistry<ExperimentInfo> r(detail::builtin_experiments());
  return r;
}

}  // namespace

void register_experiment(ExperimentInfo info) {
  if (info.name.empty()) throw InvalidArgument("register_experiment: empty experiment name");
  if (!info.run) throw InvalidArgument("register_experiment: experiment '" + info.name + "' has no run function");
  registry().add(std::move(info));
}

std::vector<std::string> experiment_names() { return registry().names(); }

std::optional<ExperimentInfo> find_experiment(std::string_view name) { return registry().find(name); }

ExperimentResult run_experiment(std::string_view name, const ExperimentOptions& options) {
  const auto info = find_experiment(name);
  if (!info)
    throw InvalidArgument("experiment: unknown experiment '" + std::string(name) + "' (known: " + registry().listing() +
                          ")");
  if (options.threads < 0 || options.threads > 1024)
    throw InvalidArgument("experiment: threads must be in [0, 1024] (0 = the machine's cores)");
  if (options.max_workloads < 0) throw InvalidArgument("experiment: max_workloads must not be negative");
  ExperimentOptions o = options;
  if (o.out_dir.empty()) o.out_dir = std::filesystem::path("experiments-out") / info->name;
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec)
    throw InvalidArgument("experiment: cannot create output directory " + o.out_dir.string() + ": " + ec.message());
  return info->run(o);
}

std::optional<std::filesystem::path> find_artifact_data() {
  namespace fs = std::filesystem;
  const fs::path rel = fs::path("shared") / "data" / "sia-artifact";
  std::vector<fs::path> starts;
  std::error_code ec;
  starts.push_back(fs::current_path(ec));
  if (auto exe = fs::canonical("/proc/self/exe", ec); !ec) starts.push_back(exe.parent_path());
  for (auto dir : starts) {
    for (int up = 0; up < 8 && !dir.empty(); ++up) {
      for (const auto& cand : {dir / ".." / rel, dir / rel})
        if (fs::is_directory(cand / "profiles", ec)) return fs::weakly_canonical(cand, ec);
      if (dir == dir.parent_path()) break;
      dir = dir.parent_path();
    }
  }
  return std::nullopt;
}

std::filesystem::path experiment_data_dir(const ExperimentOptions& options) {
  if (!options.data_dir.empty()) {
    if (!std::filesystem::is_directory(options.data_dir / "profiles"))
      throw InvalidArgument("experiment: " + (options.data_dir / "profiles").string() + " not found");
    return options.data_dir;
  }
  if (auto d = find_artifact_data()) return *d;
  throw InvalidArgument("experiment: the artifact data (../shared/data/sia-artifact) was not found; pass --data DIR");
}

Workload helios_workload(const std::filesystem::path& data_dir) {
  const auto file = data_dir / "workloads" / "scale" / "scale_2x" / "workload-1.csv";
  if (!std::filesystem::is_regular_file(file))
    throw InvalidArgument("helios workload: " + file.string() + " not found");
  const auto all = load_workloads(file);
  Workload w = all.front();
  if (w.jobs.size() % 2 != 0) throw InvalidArgument("helios workload: " + file.string() + " has an odd number of jobs");
  std::vector<WorkloadJob> kept;
  for (std::size_t i = 0; i < w.jobs.size(); i += 2) {
    const auto& a = w.jobs[i];
    const auto& b = w.jobs[i + 1];
    if (a.time != b.time || a.application != b.application || a.num_replicas != b.num_replicas ||
        a.batch_size != b.batch_size)
      throw InvalidArgument("helios workload: " + file.string() + ":" + std::to_string(b.line) +
                            ": rows are not pairs of identical jobs (not the 2x-replicated Helios trace)");
    kept.push_back(a);
  }
  w.jobs = std::move(kept);
  w.name = "helios-1";
  return w;
}

std::vector<PolicyRuns> run_policies(const std::vector<std::string>& policies, const SimCluster& cluster,
                                     const ApplicationSet& apps, const std::vector<Workload>& workloads,
                                     const ExperimentOptions& options, const SimOptions& sim) {
  auto c = std::make_shared<const SimCluster>(cluster);
  auto a = std::make_shared<const ApplicationSet>(apps);
  std::vector<std::shared_ptr<const Workload>> ws;
  for (const auto& w : workloads) ws.push_back(std::make_shared<const Workload>(w));
  std::vector<ExperimentVariant> variants;
  for (const auto& p : policies) variants.push_back({p, p, {}, c, a, ws, sim});
  return run_variants(variants, options);
}

std::vector<PolicyRuns> run_variants(const std::vector<ExperimentVariant>& variants, const ExperimentOptions& options) {
  std::ostream& out = options.out ? *options.out : std::cout;
  // One batch for the thread pool (sim/runner.hpp): every (variant, workload) simulation, results in order.
  std::vector<SimulationSpec> specs;
  for (const auto& v : variants) {
    (void)make_policy(v.policy, v.options);  // unknown names and bad options fail before any work
    for (const auto& w : v.workloads) {
      SimulationSpec s;
      s.cluster = v.cluster;
      s.apps = v.apps;
      s.workload = w;
      s.policy = v.policy;
      s.policy_options = v.options;
      s.options = v.sim;
      specs.push_back(std::move(s));
    }
  }
  RunnerOptions ro;
  ro.threads = options.threads;
  ro.progress_period_s = 5.0;
  ro.on_progress = [printer = ProgressPrinter(out, false)](const RunnerProgress& p) mutable {
    if (!p.done) printer(p);
  };
  auto results = run_simulations(specs, ro);
  std::vector<PolicyRuns> all;
  std::size_t k = 0;
  for (const auto& v : variants) {
    PolicyRuns pr;
    pr.policy = v.label;
    for (std::size_t w = 0; w < v.workloads.size(); ++w, ++k) {
      pr.metrics.push_back(compute_metrics(results[k]));
      pr.runs.push_back(std::move(results[k]));
    }
    std::vector<const SimResult*> ptrs;
    for (const auto& r : pr.runs) ptrs.push_back(&r);
    pr.aggregate = aggregate_metrics(ptrs);
    pr.aggregate.policy = v.label;
    if (v.workloads.size() == 1) pr.aggregate.workload = v.workloads.front()->name;
    all.push_back(std::move(pr));
  }
  return all;
}

std::vector<std::shared_ptr<const Workload>> share_workloads(const std::vector<Workload>& workloads) {
  std::vector<std::shared_ptr<const Workload>> out;
  for (const auto& w : workloads) out.push_back(std::make_shared<const Workload>(w));
  return out;
}

std::string versus(double ours, double paper, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << ours << " (" << paper;
  if (paper != 0) s << ", " << std::showpos << std::setprecision(0) << (ours / paper - 1) * 100 << " %";
  s << ")";
  return s.str();
}

}  // namespace sia::sim
