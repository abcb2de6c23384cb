// sia_simulate: trace-driven simulation of Sia (and any registered baseline) on a cluster.
//
// With no arguments it runs the embedded default: the built-in catalogue of the paper's five models, a
// synthetic Philly-like workload (Poisson arrivals, 20 jobs/hour for 8 hours) on paper-heterogeneous.
//   sia_simulate --workload ../shared/data/sia-artifact/workloads/philly --policy sia
//   sia_simulate --workload ../shared/data/sia-artifact/workloads/scale/scale_32x --scale 32
#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/catalogue.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/experiment.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/metrics.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/report.hpp>
#include <sia/sim/runner.hpp>
#include <sia/sim/simulator.hpp>
#include <sia/sim/tuned_jobs.hpp>
#include <sia/sim/workload.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "program_cli.hpp"

namespace fs = std::filesystem;

namespace {

/// The artifact's profiles beside the repository (../shared from the repo root), searched from the
/// working directory and from the executable's directory upwards.
std::optional<fs::path> default_profiles_dir(const char* argv0) {
  const fs::path rel = fs::path("shared") / "data" / "sia-artifact" / "profiles";
  std::vector<fs::path> starts;
  std::error_code ec;
  starts.push_back(fs::current_path(ec));
  auto exe = fs::canonical("/proc/self/exe", ec);
  if (ec) exe = fs::absolute(argv0, ec);
  starts.push_back(exe.parent_path());
  for (auto dir : starts) {
    for (int up = 0; up < 6 && !dir.empty(); ++up) {
      if (fs::is_directory(dir / ".." / rel, ec)) return fs::weakly_canonical(dir / ".." / rel, ec);
      if (fs::is_directory(dir / rel, ec)) return fs::weakly_canonical(dir / rel, ec);
      if (dir == dir.parent_path()) break;
      dir = dir.parent_path();
    }
  }
  return std::nullopt;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

/// The registered policies with their descriptions and options (`--list-policies`).
std::string policy_listing() {
  std::ostringstream os;
  for (const auto& name : sia::sim::policy_names()) {
    const auto info = sia::sim::find_policy(name);
    if (!info) continue;
    os << name << ": " << info->description << "\n";
    for (const auto& o : info->options)
      os << "    " << name << "." << o.key << " (default " << o.default_value << "): " << o.help << "\n";
  }
  return os.str();
}

/// Options of `policy` from `--policy-option` entries: `key=value` for every policy declaring `key`,
/// `policy.key=value` for that policy only.
sia::sim::PolicyOptions options_for(const std::string& policy, const std::vector<std::string>& entries) {
  const auto info = sia::sim::find_policy(policy);
  sia::sim::PolicyOptions o;
  for (const auto& e : entries) {
    const auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0)
      throw sia::InvalidArgument("--policy-option: expected [policy.]key=value, got '" + e + "'");
    std::string key = e.substr(0, eq);
    const std::string value = e.substr(eq + 1);
    const auto dot = key.find('.');
    if (dot != std::string::npos) {
      if (key.substr(0, dot) != policy) continue;
      key = key.substr(dot + 1);
    } else if (!info ||
               std::none_of(info->options.begin(), info->options.end(), [&](const auto& d) { return d.key == key; })) {
      continue;  // a bare key applies to the policies that declare it
    }
    o.set(key, value);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sia_simulate: trace-driven simulation of the Sia scheduler (SOSP 2023).\n"
      "Without arguments: built-in models, synthetic Philly-like workload, paper-heterogeneous cluster."};
  std::string profiles, workload_path, cluster_name = "paper-heterogeneous", policies, out_dir, bootstrap = "tie";
  std::string backend = "default", dump_catalogue, force_category, pollux_search = "genetic";
  long long pollux_seed = 1;
  int scale = 1;
  double interval = 0.0, rate = 20.0, hours = 8.0;
  int threads = 0;
  bool progress = false, no_progress = false;
  bool json = false, per_workload = false, round_utilities = false, no_projection = false, list_policies = false;
  bool tuned_jobs = false;
  std::vector<std::string> policy_options;
  long long seed = 1, jobs_limit = 0;
  app.add_option("--profiles", profiles,
                 "artifact profiles directory (default: ../shared/data/sia-artifact/profiles "
                 "when --workload is given; the built-in catalogue otherwise)");
  app.add_option("--workload", workload_path, "workload CSV or directory of CSVs (default: synthetic Philly-like)");
  app.add_option("--cluster", cluster_name,
                 "preset (paper-heterogeneous, paper-homogeneous, paper-physical) or JSON file")
      ->capture_default_str();
  app.add_option("--scale", scale, "multiply node counts by K")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option(
      "--policy", policies, "comma-separated policies (default: every registered policy): " + [] {
        std::string s;
        for (const auto& n : sia::sim::policy_names()) s += (s.empty() ? "" : ", ") + n;
        return s;
      }());
  app.add_option("--policy-option", policy_options,
                 "option of the policies, [policy.]key=value (repeatable; --list-policies shows them)");
  app.add_flag("--list-policies", list_policies, "list the registered policies and their options, and exit");
  app.add_option("--interval", interval,
                 "round length in seconds, in [0.001, 86400] (default: the policy's, Sia 60); a run needing more than "
                 "2,000,000 rounds until its last submission is refused");
  app.add_option("--out", out_dir, "write per-job CSV, per-round JSON lines, summary.json and PNG plots here");
  app.add_flag("--json", json, "print the JSON report instead of the table");
  app.add_option("--threads", threads,
                 "threads: simulations (workloads x policies) run at once, one per thread, and a single simulation "
                 "uses them all in its rounds with enough work to share (its jobs step and refit in parallel from "
                 "256 refits a round, Sia fills new goodput estimates beside the round from 512); 0 = the machine's "
                 "cores (default); results are the same for every value")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_flag("--progress", progress,
               "progress line on standard error (simulated time, jobs finished, rounds/s, ETA) even when it is not a "
               "terminal or with --json (default: only on a terminal, and not with --json)");
  app.add_flag("--no-progress", no_progress, "no progress line")->excludes("--progress");
  app.add_option("--seed", seed, "seed of the synthetic workload, in [0, 2^63-1]")->capture_default_str();
  app.add_option("--rate", rate, "synthetic workload: jobs per hour, in (0, 1e6]")->capture_default_str();
  app.add_option("--hours", hours,
                 "synthetic workload: hours of arrivals, in (0, 2160] (the 90-day horizon); rate x hours at most "
                 "2,000,000 jobs")
      ->capture_default_str();
  app.add_option("--jobs", jobs_limit,
                 "synthetic workload: exactly this many jobs (1 to 2,000,000), arriving at --rate for as long as "
                 "that takes (instead of --hours)");
  app.add_option("--bootstrap", bootstrap,
                 "sia: first placement of a never-run job: tie (reference code, default) or profiled (paper: 1-GPU "
                 "profiles); = sia.first_placement")
      ->check(CLI::IsMember({"profiled", "tie"}))
      ->capture_default_str();
  app.add_flag("--no-projection", no_projection,
               "sia: do not project unseen GPU types from a fitted one; = sia.projection=none");
  app.add_flag("--round-utilities", round_utilities, "sia: round utilities to 2 decimals like the reference code");
  app.add_option(
         "--backend", backend,
         "MILP backend of the Sia round; = sia.backend (" +
             [] {
               std::string s;
               for (const auto& n : sia::available_milp_solvers()) s += (s.empty() ? "" : ", ") + n;
               return s;
             }() +
             ")")
      ->capture_default_str();
  app.add_option("--force-category", force_category,
                 "override every job's kind for every policy (paper Fig. 1): rigid, strong-scaling or adaptive")
      ->check(CLI::IsMember({"rigid", "strong-scaling", "adaptive"}));
  app.add_option("--pollux-search", pollux_search,
                 "search of the pollux policy: genetic (Pollux's published NSGA-II) or greedy (marginal allocation); = "
                 "pollux.search")
      ->check(CLI::IsMember({"genetic", "greedy"}))
      ->capture_default_str();
  app.add_option("--pollux-seed", pollux_seed, "genetic pollux: seed of its random generator; = pollux.seed")
      ->capture_default_str();
  // Issue 17: the paper's knobs (§5.7) and limited adaptivity (Fig. 11).
  std::string p_value, lambda_value, mix, profiling, strong_rule;
  long long mix_seed = 1;
  app.add_option("--p", p_value, "sia: fairness exponent p in [-10, 10] without 0 (default -0.5); = sia.p")
      ->check(CLI::Range(-10.0, 10.0));
  app.add_option("--lambda", lambda_value,
                 "sia: penalty per job left without GPUs, in [1e-6, 1000] (default 1.1); = sia.lambda")
      ->check(CLI::Range(1e-6, 1000.0));
  app.add_option("--mix", mix,
                 "give the workloads' data-parallel jobs these kinds, e.g. adaptive=60,strong-scaling=20,rigid=20 "
                 "(percent, summing to 100; exact counts by a seeded shuffle, the same for every policy)");
  app.add_option("--mix-seed", mix_seed, "seed of --mix's shuffle")->capture_default_str();
  app.add_option("--profiling", profiling,
                 "sia: how job throughputs are known (paper 5.7), = sia.profiling. "
                 "reference (default): the reference code's tie rule - a job that never ran values every GPU type "
                 "alike, and a type it has not run on follows its known type scaled by the 1-GPU throughput ratio. "
                 "eq1: the paper's Bootstrap - each type's 1-GPU profile seeds its model, and a type the job has "
                 "not run on is projected from a known one by Eq. 1. "
                 "noprof: the paper's No Prof - nothing profiled up front (profile as you go): types tie until the "
                 "job runs, and a type it has not run on is assumed as fast as the one it has. "
                 "oracle: every configuration's true throughput is known (the simulator's ground truth; the "
                 "paper's best case)")
      ->check(CLI::IsMember({"reference", "eq1", "noprof", "oracle"}));
  app.add_option("--strong-scaling-rule", strong_rule,
                 "sia: strong-scaling jobs take any count up to their target at once (reference, default) or grow by "
                 "the 2x rule (2x); = sia.strong_scaling")
      ->check(CLI::IsMember({"reference", "2x"}));
  std::string interpolation = "2d";
  app.add_option("--interpolation", interpolation,
                 "ground truth of placements not profiled exactly: 2d (per (nodes, replicas) point over the local "
                 "batch, then a 2-D Delaunay triangle; default) or 3d (the reference's 3-D Delaunay over nodes, "
                 "replicas and local batch, via qhull)")
      ->check(CLI::IsMember({"2d", "3d"}))
      ->capture_default_str();
  app.add_flag(
      "--tuned-jobs", tuned_jobs,
      "re-tune every job's GPU count and batch size for the cluster (TunedJobs, paper 4.3: the artifact's rule "
      "on the cluster's first GPU type, counts up to the GPUs a job may span there; Table 4 re-tunes the "
      "Philly workloads this way for the 64-GPU homogeneous cluster)");
  app.add_flag("--per-workload", per_workload, "table: one row per workload too");
  // `sia_simulate experiment NAME`: the paper's tables and figures (docs/experiments.md).
  auto* exp = app.add_subcommand("experiment",
                                 "run one of the paper's tables/figures (CSV + PNG + the paper's numbers "
                                 "beside ours); `experiment --list` shows them");
  std::string exp_name, exp_out, exp_data, exp_policies, exp_workload;
  int exp_workloads = 0, exp_threads = 0;
  bool exp_list = false;
  exp->add_option("name", exp_name, "experiment name (table4, fig8, round-time, ...)");
  exp->add_flag("--list", exp_list, "list the experiments and exit");
  exp->add_option("--out", exp_out, "output directory (default: experiments-out/NAME)");
  exp->add_option("--data", exp_data,
                  "artifact data directory (default: ../shared/data/sia-artifact, found automatically)");
  exp->add_option("--policy", exp_policies, "comma-separated policies instead of the paper's");
  exp->add_option("--workloads", exp_workloads, "use only the first N workloads (quick runs)")
      ->check(CLI::NonNegativeNumber);
  exp->add_option("--workload", exp_workload, "workload file or directory instead of the experiment's");
  exp->add_option("--threads", exp_threads, "simulations at once on the thread pool; 0 = the machine's cores")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--dump-catalogue", dump_catalogue,
                 "print the C++ source of the built-in catalogue derived from this profiles directory, and exit");
  sia::programs::add_common_options(app, "sia_simulate");
  if (const auto code = sia::programs::parse(app, "sia_simulate", argc, argv)) return *code;

  try {
    if (exp->parsed()) {
      if (exp_list || exp_name.empty()) {
        for (const auto& n : sia::sim::experiment_names())
          std::cout << std::left << std::setw(12) << n << " " << sia::sim::find_experiment(n)->description << "\n";
        return sia::to_int(exp_list ? sia::ExitCode::done : sia::ExitCode::bad_input);
      }
      sia::sim::ExperimentOptions eo;
      eo.out_dir = exp_out;
      eo.data_dir = exp_data;
      eo.policies = split_list(exp_policies);
      eo.max_workloads = exp_workloads;
      eo.workload = exp_workload;
      eo.threads = exp_threads;
      const auto r = sia::sim::run_experiment(exp_name, eo);
      std::cout << "wrote " << r.files.size() << " files"
                << (r.targets_met ? "" : "; the paper's targets are NOT all met") << "\n";
      return 0;
    }
    if (list_policies) {
      std::cout << policy_listing();
      return 0;
    }
    // The shorthand flags are policy options (--list-policies); they come first so that an explicit
    // --policy-option given for the same key wins.
    std::vector<std::string> option_entries = {
        "sia.backend=" + backend, "sia.first_placement=" + bootstrap, "pollux.search=" + pollux_search,
        "pollux.seed=" + std::to_string(sia::sim::checked_seed(pollux_seed, "--pollux-seed"))};
    if (no_projection) option_entries.push_back("sia.projection=none");
    if (!profiling.empty()) {
      if (no_projection || app.count("--bootstrap") > 0)
        throw sia::InvalidArgument(
            "--profiling sets the first placement and the projection: drop --bootstrap/--no-projection");
      std::erase(option_entries, "sia.first_placement=" + bootstrap);
      option_entries.push_back("sia.profiling=" + profiling);
    }
    if (!p_value.empty()) {
      if (std::stod(p_value) == 0.0) throw sia::InvalidArgument("--p: must not be 0 (range [-10, 10] without 0)");
      option_entries.push_back("sia.p=" + p_value);
    }
    if (!lambda_value.empty()) option_entries.push_back("sia.lambda=" + lambda_value);
    if (!strong_rule.empty()) option_entries.push_back("sia.strong_scaling=" + strong_rule);
    if (round_utilities) option_entries.push_back("sia.round_utilities=true");
    option_entries.insert(option_entries.end(), policy_options.begin(), policy_options.end());
    for (const auto& e : policy_options) {  // a bare key must belong to some policy, a prefix must be one
      const auto eq = e.find('=');
      const std::string key = e.substr(0, eq);
      if (eq == std::string::npos) continue;  // options_for() names the malformed entry
      if (const auto dot = key.find('.'); dot != std::string::npos) {
        if (!sia::sim::find_policy(key.substr(0, dot)))
          throw sia::InvalidArgument("--policy-option '" + e + "': no policy '" + key.substr(0, dot) + "'");
        continue;
      }
      bool known = false;
      for (const auto& n : sia::sim::policy_names())
        if (const auto info = sia::sim::find_policy(n))
          for (const auto& d : info->options) known = known || d.key == key;
      if (!known)
        throw sia::InvalidArgument("--policy-option: no policy has an option '" + key + "' (see --list-policies)");
    }
    if (!dump_catalogue.empty()) {
      std::cout << sia::sim::generate_catalogue_source(dump_catalogue);
      return 0;
    }
    const auto cluster = sia::sim::load_cluster(cluster_name, scale);
    std::vector<sia::sim::Workload> workloads;
    // Ranges of sim/limits.hpp: refused before any work, with what the run would need.
    if (app.count("--interval") > 0) sia::sim::check_interval(interval, "--interval");
    if (workload_path.empty()) {
      if (jobs_limit != 0 && app.count("--hours") > 0) throw sia::InvalidArgument("--jobs and --hours: give one");
      const std::optional<long long> n = app.count("--jobs") > 0 ? std::optional<long long>(jobs_limit) : std::nullopt;
      sia::sim::check_synthetic(rate, n ? std::nullopt : std::optional<double>(hours), n);
      workloads.push_back(sia::sim::synthetic_philly_workload(sia::sim::checked_seed(seed, "--seed"), rate,
                                                              n ? HUGE_VAL : hours, n.value_or(0)));
    } else {
      if (app.count("--jobs") + app.count("--rate") + app.count("--hours") + app.count("--seed") > 0)
        throw sia::InvalidArgument(
            "--jobs, --rate, --hours and --seed shape the synthetic workload: not with --workload");
      else
        workloads = sia::sim::load_workloads(workload_path);
    }
    if (interval != 0)
      for (const auto& w : workloads) sia::sim::check_run(w, interval, sia::sim::kDefaultHorizonS, "--interval");
    if (!mix.empty()) {
      if (!force_category.empty()) throw sia::InvalidArgument("--mix and --force-category both set the jobs' kinds");
      const auto m = sia::sim::parse_kind_mix(mix);
      for (auto& w : workloads) sia::sim::apply_kind_mix(w, m, sia::sim::checked_seed(mix_seed, "--mix-seed"));
    }

    sia::sim::ApplicationSet apps;
    if (profiles.empty() && !workload_path.empty()) {
      const auto d = default_profiles_dir(argv[0]);
      if (!d) throw sia::InvalidArgument("--profiles: not given and ../shared/data/sia-artifact/profiles not found");
      profiles = d->string();
    }
    if (profiles.empty())
      apps = sia::sim::catalogue_applications(cluster);
    else
      apps = sia::sim::load_applications(
          profiles, cluster, workloads,
          interpolation == "3d" ? sia::sim::Interpolation::delaunay3d : sia::sim::Interpolation::planar);
    for (const auto& w : workloads) sia::sim::validate_inputs(cluster, apps, w);
    if (tuned_jobs) {
      const auto tj = sia::sim::cluster_tuned_jobs(cluster);
      for (auto& w : workloads) w = sia::sim::retune_workload(w, apps, cluster, tj);
    }

    std::vector<std::string> names = policies.empty() ? sia::sim::policy_names() : split_list(policies);
    if (names.empty()) throw sia::InvalidArgument("--policy: no policy named");
    // Unknown names and bad options fail before any work.
    for (const auto& n : names) (void)sia::sim::make_policy(n, options_for(n, option_entries));

    auto shared_cluster = std::make_shared<const sia::sim::SimCluster>(cluster);
    auto shared_apps = std::make_shared<const sia::sim::ApplicationSet>(std::move(apps));
    std::vector<std::shared_ptr<const sia::sim::Workload>> shared_workloads;
    for (const auto& w : workloads) shared_workloads.push_back(std::make_shared<const sia::sim::Workload>(w));
    sia::sim::SimOptions so;
    so.interval_s = interval;
    so.keep_round_log = !out_dir.empty();
    if (!force_category.empty()) so.force_category = sia::parse_job_kind(force_category);
    sia::sim::RunnerOptions ro;
    ro.threads = threads;
    // Progress on standard error: on a terminal unless --json; anywhere with --progress; never with --no-progress.
    const bool tty = isatty(STDERR_FILENO) != 0;
    const bool show_progress = no_progress ? false : (progress || (tty && !json));
    if (show_progress) {
      ro.progress_period_s = tty ? 0.5 : 5.0;
      ro.on_progress = sia::sim::ProgressPrinter(std::cerr, tty);
    }
    const auto elapsed0 = std::chrono::steady_clock::now();
    const auto all = sia::sim::simulate_policies(names, shared_cluster, shared_apps, shared_workloads, so, ro,
                                                 [&](const std::string& n) { return options_for(n, option_entries); });
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - elapsed0).count();

    if (json) {
      std::cout << sia::sim::report_json(all) << "\n";
    } else {
      std::cout << "cluster " << cluster.name << ": ";
      for (std::size_t t = 0; t < cluster.types.size(); ++t)
        std::cout << (t ? ", " : "") << cluster.types[t].nodes << "x" << cluster.types[t].gpus_per_node << " "
                  << cluster.types[t].name;
      std::cout << " (" << cluster.total_gpus() << " GPUs); ";
      std::size_t jobs = 0;
      for (const auto& w : workloads) jobs += w.jobs.size();
      std::cout << workloads.size() << " workload(s), " << jobs
                << " jobs; models: " << (profiles.empty() ? "built-in catalogue" : "profiles " + profiles) << "\n\n";
      sia::sim::print_table(std::cout, all, per_workload);
      std::cout << "\nGPU-hours per job by model and GPU type (paper Fig. 6)\n";
      sia::sim::print_gpu_hours_by_model(std::cout, all, cluster);
      double wall = 0;
      for (const auto& p : all) wall += p.aggregate.wall_s;
      std::cout << "\nsimulated in " << std::fixed << std::setprecision(2) << wall << " s wall time";
      if (sia::sim::effective_threads(threads) > 1 && names.size() * workloads.size() > 1)
        std::cout << " (" << elapsed << " s elapsed on " << sia::sim::effective_threads(threads) << " threads)";
      std::cout << "\n";
    }
    if (!out_dir.empty()) {
      std::vector<std::string> warnings;
      const auto files = sia::sim::write_outputs(out_dir, all, cluster, &warnings);
      for (const auto& w : warnings) std::cerr << "sia_simulate: warning: " << w << "\n";
      if (!json) std::cout << "wrote " << files.size() << " files to " << out_dir << "\n";
    }
  } catch (const std::exception& e) {  // rejected input (naming source:line:column: field): 2; else 1 or 3
    return sia::programs::report("sia_simulate", e);
  }
  return sia::to_int(sia::ExitCode::done);
}
