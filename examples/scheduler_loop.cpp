// scheduler_loop: a scheduler's main loop on sia — 200 rounds of 60 s on a 56-GPU cluster with job
// arrivals, completions and node failures (and repairs), carrying each job's state between rounds
// with sia::advance_round_state (include/sia/round_state.hpp, docs/round-state.md).
//
//   scheduler_loop [--rounds N] [--seed S] [--verbose] [--log FILE]
//
// --log writes the decisions, one line per job and round, and the node failures, in a plain format that
// examples/python/scheduler_loop.py writes too (tests/python/test_round_loop.py compares the two logs).
//
// Every round it checks, independently of the library, what a real scheduler relies on: no GPU
// type and no node holds more GPUs than it has, no GPU is given twice, no job runs on a failed node,
// the 2x rule holds, `age_s` is the time since arrival, and `restarts` equals the restarts the loop
// itself sees (a job that ran before and now holds other GPUs than it held, or a job a failed node
// killed that runs again). It prints "scheduler loop: ... invariants hold" and exits 0, or names the
// first violation ("FAILED ...") and exits 1. Deterministic: its own random generator (splitmix64),
// the native backend, no time limit.
#include <sia/error.hpp>
#include <sia/round.hpp>
#include <sia/round_state.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

// splitmix64: the same numbers with every standard library (std:: distributions are not portable).
class Random {
 public:
  explicit Random(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t s_;
};

// What the loop knows about a job beyond sia's description and state: its work and its speed.
struct Workload {
  double work = 0.0;     // samples left to process
  double scaling = 0.8;  // exponent of the speed-up curve
  double speed[2] = {};  // samples/s of one GPU of each type
  int arrival_round = 0;
  int restarts_seen = 0;                       // counted by the loop, not by sia
  int largest_seen = 0;                        // largest count the job ran with, counted by the loop
  std::optional<sia::CurrentAllocation> held;  // what the loop saw it hold (cleared when a failure killed it)
};

double goodput(const Workload& w, const sia::ConfigurationSpec& c) {
  // Sub-linear scaling and a penalty per extra node: the kind of curve a fitted model gives.
  return w.speed[c.type] * std::pow(c.gpus, w.scaling) * std::pow(0.9, c.nodes - 1);
}

// Node ids with the GPU ids they hold, for comparing two placements.
std::map<int, std::set<int>> by_node(const std::vector<sia::NodeShare>& p) {
  std::map<int, std::set<int>> m;
  for (const auto& s : p) m[s.node].insert(s.gpu_ids.begin(), s.gpu_ids.end());
  return m;
}

struct Failure {
  std::string what;
};

[[noreturn]] void fail(int round, const std::string& what) {
  std::ostringstream o;
  o << "round " << round << ": " << what;
  throw Failure{o.str()};
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 200;
  std::uint64_t seed = 15;
  bool verbose = false;
  std::ofstream log;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--rounds" || a == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 1000000) {
        std::cerr << "scheduler_loop: " << a << ": expected an integer in [0, 1000000], got '" << argv[i] << "'\n";
        return 2;
      }
      (a == "--rounds" ? rounds = static_cast<int>(v) : seed = static_cast<std::uint64_t>(v));
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--log" && i + 1 < argc) {
      log.open(argv[++i]);
      if (!log) {
        std::cerr << "scheduler_loop: --log: cannot write '" << argv[i] << "'\n";
        return 2;
      }
      log << std::setprecision(17);
    } else {
      std::cerr << "usage: scheduler_loop [--rounds N] [--seed S] [--verbose] [--log FILE]\n";
      return 2;
    }
  }

  constexpr double round_s = 60.0;
  sia::ClusterSpec cluster;
  cluster.types = {sia::GpuTypeSpec("a100", 4, 8), sia::GpuTypeSpec("t4", 6, 4)};
  cluster.down = {{}, {}};
  std::map<std::pair<int, int>, int> repair_round;  // failed node -> round it comes back

  Random rng(seed);
  std::vector<sia::JobSpec> jobs;          // descriptions, in arrival order
  std::vector<sia::JobRoundState> states;  // sia's state of each job, same order
  std::vector<Workload> loads;             // the loop's own view, same order
  sia::RoundOptions options;
  options.backend = "native";
  options.time_limit.reset();  // deterministic: every round solved to the gap
  options.threads = 1;

  int arrived = 0, completed = 0, failures = 0, lost = 0, restarts = 0, most_active = 0, job_number = 0;
  try {
    for (int round = 0; round < rounds; ++round) {
      // Arrivals: 0.55 jobs per round on average; a third rigid, a few of those non-preemptible.
      const double a = rng.uniform();
      const int new_jobs = a < 0.55 ? 0 : a < 0.9 ? 1 : 2;
      for (int k = 0; k < new_jobs; ++k) {
        sia::JobSpec j("job" + std::to_string(job_number++));
        Workload w;
        w.arrival_round = round;
        w.scaling = 0.6 + 0.35 * rng.uniform();
        w.speed[0] = 100.0 * (1.0 + rng.uniform());  // a100
        w.speed[1] = w.speed[0] * (0.2 + 0.3 * rng.uniform());
        w.work = w.speed[0] * round_s * (10 + 100 * rng.uniform());  // 10-110 rounds on one a100
        if (rng.uniform() < 1.0 / 3) {
          const int counts[] = {1, 2, 4, 6, 8, 12};
          const int n = counts[rng.below(6)];
          j.kind(sia::JobKind::rigid).min_gpus(n).max_gpus(n).preemptible(rng.uniform() >= 0.1);
        } else {
          j.min_gpus(1).max_gpus(8 << rng.below(3));
        }
        j.restart_cost_s(30);
        j.goodput_fn([w](const sia::GpuTypeSpec&, const sia::ConfigurationSpec& c) { return goodput(w, c); });
        states.push_back(sia::round_state_of(j));
        jobs.push_back(std::move(j));
        loads.push_back(w);
        ++arrived;
      }
      most_active = std::max(most_active, static_cast<int>(jobs.size()));

      // The round.
      for (std::size_t i = 0; i < jobs.size(); ++i) sia::apply_round_state(states[i], jobs[i]);
      const sia::RoundResult r = sia::run_round(cluster, jobs, options);
      if (r.decisions.size() != jobs.size()) fail(round, "one decision per job expected");
      if (log) {
        log << round << " round " << to_string(r.status) << ' ' << r.objective << '\n';
        for (const sia::JobDecision& d : r.decisions) {
          log << round << ' ' << d.job;
          if (!d.config) {
            log << " - " << to_string(d.reason) << '\n';
            continue;
          }
          log << ' ' << cluster.types[static_cast<std::size_t>(d.config->type)].name() << ' ' << d.config->nodes << ' '
              << d.gpus << ' ' << d.changed;
          for (const auto& s : d.placement) {
            log << ' ' << s.node << ':';
            for (std::size_t g = 0; g < s.gpu_ids.size(); ++g) log << (g ? "," : "") << s.gpu_ids[g];
          }
          log << '\n';
        }
      }

      // Invariants of the decision, checked from the cluster and the placements alone.
      std::vector<int> used(cluster.types.size(), 0);
      std::map<std::pair<int, int>, std::set<int>> node_gpus;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const sia::JobDecision& d = r.decisions[i];
        if (!d.config) continue;
        const int t = d.config->type;
        used[static_cast<std::size_t>(t)] += d.gpus;  // a rigid job is charged its count, not its footprint
        int placed = 0;
        for (const auto& s : d.placement) {
          if (cluster.is_down(t, s.node)) fail(round, d.job + " placed on failed node " + cluster.node_name(t, s.node));
          auto& held = node_gpus[{t, s.node}];
          for (int g : s.gpu_ids)
            if (g < 0 || g >= cluster.types[static_cast<std::size_t>(t)].gpus_per_node() || !held.insert(g).second)
              fail(round,
                   "GPU " + std::to_string(g) + " of " + cluster.node_name(t, s.node) + " given twice or absent");
          placed += s.gpus;
        }
        if (placed != d.gpus)
          fail(round, d.job + ": placement holds " + std::to_string(placed) + " GPUs, not " + std::to_string(d.gpus));
        // The 2x rule (adaptive jobs): a job that never ran takes its minimum; later at most twice its largest.
        if (jobs[i].kind() == sia::JobKind::adaptive) {
          const int cap =
              loads[i].largest_seen == 0 ? jobs[i].min_gpus() : std::max(2 * loads[i].largest_seen, jobs[i].min_gpus());
          if (d.gpus > cap)
            fail(round, d.job + " got " + std::to_string(d.gpus) + " GPUs, above the 2x cap " + std::to_string(cap));
        }
      }
      for (std::size_t t = 0; t < cluster.types.size(); ++t) {
        const auto& g = cluster.types[t];
        const int capacity = (g.num_nodes() - static_cast<int>(cluster.down[t].size())) * g.gpus_per_node();
        if (used[t] > capacity)
          fail(round, g.name() + ": " + std::to_string(used[t]) + " GPUs used of " + std::to_string(capacity));
      }

      // The loop's own restart count: a job that ran before and now holds other GPUs than it held.
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const sia::JobDecision& d = r.decisions[i];
        Workload& w = loads[i];
        if (!d.config) {
          w.held.reset();
          continue;
        }
        const bool same =
            w.held && w.held->type == d.config->type && by_node(w.held->placement) == by_node(d.placement);
        if (!same && w.largest_seen > 0) ++w.restarts_seen;
        // Progress: the round's goodput, minus the restart cost when it (re)started.
        const double run_s = same ? round_s : std::max(0.0, round_s - jobs[i].restart_cost_s());
        w.work -= goodput(w, *d.config) * run_s;
        w.largest_seen = std::max(w.largest_seen, d.gpus);
        sia::CurrentAllocation cur;
        cur.type = d.config->type;
        cur.gpus = d.gpus;
        cur.placement = d.placement;
        w.held = cur;
      }

      // Between rounds: node failures (about one every 12 rounds) and repairs (10 rounds later).
      sia::ClusterSpec next = cluster;
      for (auto it = repair_round.begin(); it != repair_round.end();)
        if (it->second == round + 1) {
          auto& d = next.down[static_cast<std::size_t>(it->first.first)];
          d.erase(std::find(d.begin(), d.end(), it->first.second));
          it = repair_round.erase(it);
        } else {
          ++it;
        }
      if (rng.uniform() < 1.0 / 12) {
        int t = rng.below(2);
        int node = rng.below(next.types[static_cast<std::size_t>(t)].num_nodes());
        // Half of the failures hit a node of a job spread over several nodes: the case where the job's
        // configuration itself disappears (sia forgets it; the round must not see it again).
        std::vector<std::pair<int, int>> wide;
        for (const Workload& w : loads)
          if (w.held && w.held->placement.size() > 1)
            for (const auto& sh : w.held->placement) wide.emplace_back(w.held->type, sh.node);
        if (!wide.empty() && rng.uniform() < 0.5)
          std::tie(t, node) = wide[static_cast<std::size_t>(rng.below(static_cast<int>(wide.size())))];
        if (!next.is_down(t, node)) {
          next.down[static_cast<std::size_t>(t)].push_back(node);
          repair_round[{t, node}] = round + 11;
          ++failures;
          // The loop sees its jobs there die.
          for (Workload& w : loads)
            if (w.held && w.held->type == t &&
                std::any_of(w.held->placement.begin(), w.held->placement.end(),
                            [node](const sia::NodeShare& s) { return s.node == node; }))
              w.held.reset();
          if (verbose) std::cout << "round " << round << ": node " << next.node_name(t, node) << " failed\n";
          if (log) log << round << " failed " << next.node_name(t, node) << '\n';
        }
      }

      const sia::RoundStateChanges changes = sia::advance_round_state(states, jobs, r, round_s, next);
      lost += static_cast<int>(changes.lost.size());
      cluster = next;

      // sia's state against the loop's own view.
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const sia::JobRoundState& s = states[i];
        const Workload& w = loads[i];
        if (s.restarts != w.restarts_seen)
          fail(round, s.id + ": sia counts " + std::to_string(s.restarts) + " restarts, the loop saw " +
                          std::to_string(w.restarts_seen));
        if (s.max_gpus_ever != w.largest_seen) fail(round, s.id + ": largest count differs");
        if (s.age_s != (round + 1 - w.arrival_round) * round_s)
          fail(round, s.id + ": age_s is not the time since arrival");
        const bool was_lost = std::find(changes.lost.begin(), changes.lost.end(), s.id) != changes.lost.end();
        if (was_lost && s.current) fail(round, s.id + ": lost but still holds GPUs");
      }
      if (verbose)
        std::cout << "round " << round << ": " << jobs.size() << " jobs, " << to_string(r.status) << ", objective "
                  << r.objective << ", a100 " << used[0] << " t4 " << used[1] << " GPUs, " << changes.restarted.size()
                  << " restarted, " << changes.lost.size() << " lost\n";

      // Completions.
      for (std::size_t i = jobs.size(); i-- > 0;)
        if (loads[i].work <= 0) {
          restarts += states[i].restarts;
          jobs.erase(jobs.begin() + static_cast<std::ptrdiff_t>(i));
          states.erase(states.begin() + static_cast<std::ptrdiff_t>(i));
          loads.erase(loads.begin() + static_cast<std::ptrdiff_t>(i));
          ++completed;
        }
    }
  } catch (const Failure& f) {
    std::cout << "scheduler loop: FAILED " << f.what << '\n';
    return 1;
  } catch (const sia::Error& e) {
    std::cout << "scheduler loop: FAILED (sia) " << e.what() << '\n';
    return 1;
  }
  for (const auto& s : states) restarts += s.restarts;
  std::cout << "scheduler loop: " << rounds << " rounds, " << arrived << " jobs arrived, " << completed
            << " completed, at most " << most_active << " at once, " << failures << " node failures, " << lost
            << " allocations lost, " << restarts << " restarts; invariants hold\n";
  return 0;
}
