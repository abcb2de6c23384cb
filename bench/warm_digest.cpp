// sia_warm_digest: one of the bench's warm rounds (bench_solver.cpp, run_warm), run again and again, with a digest
// of its whole result. Two uses, both for work on the round's speed:
//  - checking that a change leaves every decision as it was: the digest covers every job's configuration, GPUs,
//    batch, placement, flags and reason, the objective and bound bit for bit, the prices and the round's lists, so
//    two builds that print the same digest gave the same answer (compare a change's digests with main's);
//  - profiling one phase: the measured round repeats `rounds` times over the same inputs (perf record around it),
//    and the median CPU time a round is printed.
// Usage: sia_warm_digest <family> <gpus> <rounds> <warm 1|cold 0> <seed> [prices] [placed] [chain N] [verbose]
//        [default-malloc]
// The round is the bench's: a fresh instance, solved, three unchanged rounds (each from the previous one's warm
// start), then 5 % of the jobs changed; the measured round is that last round, warm (from the previous warm start)
// or cold. `prices` asks for prices (RoundOptions::compute_prices), `placed` makes every job report its placement.
// `chain N` measures a scheduler's rounds instead: after the same set-up, N changed rounds in a row (the first is
// the bench's changed round), each made from the one before by next_round (5 % of the jobs changed) and, warm,
// started from its warm start. Each round then reads a fresh cache, as a scheduler's rounds do; the repeated round
// reads one cache again and again, so what a cache builds once per use it builds once in all. Printed: the median
// CPU ms of the chain's rounds (`rounds` is not used), of freeing a round's result when the next one replaces it, and
// a digest of every round's result. A re-estimated job gets a new goodput model object with the same goodputs (as a
// scheduler keeping its JobSpecs gives it, or sia::JsonSession for a changed table) instead of next_round's goodput
// function, whose job would be rebuilt in every later round (2.5 % more of the jobs each round).
// `verbose` (with `chain`) prints each round's CPU ms, freeing ms and minor page faults, and its phases as
// RoundOptions::log gives them. Like a scheduler's long run of rounds (sia_allocate --serve), the program keeps
// freed memory for the next round (sia::retain_freed_memory); `default-malloc` leaves glibc's policy as it is,
// under which a round now and then takes its pages back from the system (docs/performance.md, eleventh session).
#include "round_instances.hpp"
#include "warm_sequence.hpp"

#include <sia/memory.hpp>
#include <sia/round.hpp>
#include <sia/round_log.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace sia;
using namespace sia::bench;

// FNV-1a, 64 bits: enough to tell two results apart; not a checksum against tampering.
struct Digest {
  std::uint64_t h = 1469598103934665603ULL;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ULL;
  }
  void i64(long long v) { bytes(&v, sizeof v); }
  void i64s(std::initializer_list<long long> v) {
    for (long long x : v) i64(x);
  }
  void f64(double v) { i64(std::bit_cast<long long>(v)); }
  void str(const std::string& s) {
    i64(static_cast<long long>(s.size()));
    bytes(s.data(), s.size());
  }
  void strs(const std::vector<std::string>& v) {
    i64(static_cast<long long>(v.size()));
    for (const auto& s : v) str(s);
  }
};

std::uint64_t digest_of(const RoundResult& r) {
  Digest d;
  d.i64(static_cast<long long>(r.status));
  d.str(r.backend);
  d.f64(r.objective);
  d.f64(r.best_bound);
  d.i64(static_cast<long long>(r.decisions.size()));
  for (const JobDecision& x : r.decisions) {
    d.str(x.job);
    d.i64(x.config ? 1 : 0);
    if (x.config) d.i64s({x.config->type, x.config->nodes, x.config->gpus});
    d.i64(x.gpus);
    d.i64(x.batch ? 1 : 0);
    if (x.batch) d.i64s({x.batch->global_batch, x.batch->local_batch, x.batch->accumulation_steps});
    d.i64(static_cast<long long>(x.placement.size()));
    for (const NodeShare& s : x.placement) {
      d.i64(s.node);
      d.i64(s.gpus);
      d.i64(static_cast<long long>(s.gpu_ids.size()));
      for (int g : s.gpu_ids) d.i64(g);
    }
    d.i64(x.changed ? 1 : 0);
    d.i64(static_cast<long long>(x.reason));
    d.str(x.detail);
    d.i64(x.placement_status ? 1 + static_cast<long long>(*x.placement_status) : 0);
  }
  for (int g : r.gpus_used) d.i64(g);
  d.i64(static_cast<long long>(r.prices.size()));
  for (double p : r.prices) d.f64(p);
  d.strs(r.evicted);
  d.strs(r.unmet);
  d.strs(r.preempted);
  d.strs(r.tenant_capped);
  d.i64(r.fallback ? 1 : 0);
  return d.h;
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// Minor page faults of the process so far: a page taken back from the system (10.7 us each on this project's VMs).
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

int usage() {
  std::fprintf(stderr,
               "usage: sia_warm_digest <family> <gpus> <rounds> <warm 1|cold 0> <seed> [prices] [placed] [chain N] "
               "[verbose] [default-malloc]\n");
  return 2;
}

// A job re-estimated by next_round (a goodput function over its previous JobSpec) as a model object: the same
// goodputs and count limits, a new identity.
struct Reestimated {
  JobSpec job;
  [[nodiscard]] double goodput(const GpuTypeSpec& t, const ConfigurationSpec& c) const { return job.goodput(t, c); }
};
struct ReestimatedLimited : Reestimated {
  [[nodiscard]] int gpu_limit(const GpuTypeSpec& t) const { return job.gpu_limit(t); }
};

std::vector<std::optional<ConfigurationSpec>> given_by(const RoundResult& res) {
  std::vector<std::optional<ConfigurationSpec>> g;
  for (const auto& d : res.decisions) g.push_back(d.config);
  return g;
}

// Gives every job without a goodput model object (in the bench's instances, every job re-estimated by next_round:
// a goodput function over its previous JobSpec) a model object with the same goodputs and count limits.
void reestimates_as_models(RoundInstance& in) {
  for (JobSpec& j : in.jobs) {
    if (j.goodput_model_identity() != nullptr) continue;
    if (j.has_gpu_limit())
      j.goodput_model(ReestimatedLimited{Reestimated{j}});
    else
      j.goodput_model(Reestimated{j});
  }
}

// The chain's round after `prev` (decided as `res`): next_round, its re-estimated jobs given model objects.
RoundInstance chain_step(const RoundInstance& prev, const RoundResult& res, unsigned seed, int gpus, bool placed) {
  std::vector<std::vector<NodeShare>> where;
  if (placed)
    for (const auto& d : res.decisions) where.push_back(d.placement);
  RoundInstance in = next_round(prev, given_by(res), 0.05, seed, gpus, placed ? &where : nullptr);
  reestimates_as_models(in);
  return in;
}

// The chain mode (see the head of this file): returns the exit code.
int run_chain(const std::string& family, int gpus, bool warm, unsigned seed, bool prices, bool placed, int length,
              bool verbose, const RoundOptions& o, WarmSequence seq) {
  RoundInstance in = std::move(seq.changed);
  reestimates_as_models(in);
  RoundResult last = std::move(seq.last);
  std::vector<double> cpu, freeing;
  Digest all;
  for (int k = 0; k < length; ++k) {
    if (k > 0) in = chain_step(in, last, seed * 100 + 60 + static_cast<unsigned>(k), gpus, placed);
    RoundOptions oc = o;
    if (warm) oc.warm_start = last.warm_start;
    std::string phases;
    if (verbose) oc.log = [&phases](const RoundEvent& e) { phases += "  " + format(e) + "\n"; };
    const long faults0 = minor_faults();
    const double c0 = process_cpu_ms();
    RoundResult m = run_round(in.cluster, in.jobs, oc);
    const double c1 = process_cpu_ms();
    const long faults = minor_faults() - faults0;
    oc.warm_start.reset();
    last = std::move(m);  // the previous round's result (and its cache) freed
    const double c2 = process_cpu_ms();
    cpu.push_back(c1 - c0);
    freeing.push_back(c2 - c1);
    if (verbose)
      std::printf("round %d cpu_ms %.2f free_ms %.2f minor_faults %ld\n%s", k, c1 - c0, c2 - c1, faults,
                  phases.c_str());
    all.i64(static_cast<long long>(digest_of(last)));
  }
  // The mean too: where a third to a half of the rounds take a slower path (a warm solution its
  // first evaluation does not prove), the median is one round's and the mean what the chain costs.
  double sum = 0.0;
  for (double c : cpu) sum += c;
  std::sort(cpu.begin(), cpu.end());
  std::sort(freeing.begin(), freeing.end());
  std::printf(
      "%s %d %s seed %u%s%s chain %d digest %016llx cpu_ms median %.2f min %.2f max %.2f mean %.2f free_ms "
      "median %.2f\n",
      family.c_str(), gpus, warm ? "warm" : "cold", seed, prices ? " prices" : "", placed ? " placed" : "", length,
      static_cast<unsigned long long>(all.h), cpu[cpu.size() / 2], cpu.front(), cpu.back(),
      sum / static_cast<double>(cpu.size()), freeing[freeing.size() / 2]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 6) return usage();
  const std::string family = argv[1];
  const int gpus = std::atoi(argv[2]);
  const int rounds = std::max(1, std::atoi(argv[3]));
  const bool warm = std::atoi(argv[4]) != 0;
  const auto seed = static_cast<unsigned>(std::strtoul(argv[5], nullptr, 10));
  bool prices = false, placed = false;
  int chain = 0;
  bool verbose = false, default_malloc = false;
  for (int a = 6; a < argc; ++a) {
    if (std::strcmp(argv[a], "prices") == 0)
      prices = true;
    else if (std::strcmp(argv[a], "placed") == 0)
      placed = true;
    else if (std::strcmp(argv[a], "chain") == 0 && a + 1 < argc && std::atoi(argv[a + 1]) > 0)
      chain = std::atoi(argv[++a]);
    else if (std::strcmp(argv[a], "verbose") == 0)
      verbose = true;
    else if (std::strcmp(argv[a], "default-malloc") == 0)
      default_malloc = true;
    else
      return usage();
  }
  if (gpus <= 0) return usage();
  if (!default_malloc) (void)retain_freed_memory();

  // The same sequence as bench_solver.cpp's run_warm.
  RoundOptions o;
  o.time_limit = std::chrono::milliseconds(60000);
  o.compute_prices = prices;
  WarmSequence seq = warm_sequence(family, gpus, seed, o, placed);
  if (chain > 0) return run_chain(family, gpus, warm, seed, prices, placed, chain, verbose, o, std::move(seq));
  const RoundInstance& changed = seq.changed;
  const RoundResult& r = seq.last;
  RoundOptions om = o;
  if (warm) om.warm_start = r.warm_start;

  std::vector<double> cpu;
  std::uint64_t first = 0;
  bool same = true;
  for (int k = 0; k < rounds; ++k) {
    const double c0 = process_cpu_ms();
    const RoundResult m = run_round(changed.cluster, changed.jobs, om);
    cpu.push_back(process_cpu_ms() - c0);
    const std::uint64_t h = digest_of(m);
    if (k == 0) first = h;
    same = same && h == first;
  }
  std::sort(cpu.begin(), cpu.end());
  std::printf("%s %d %s seed %u%s%s digest %016llx%s cpu_ms median %.2f min %.2f (%d rounds)\n", family.c_str(), gpus,
              warm ? "warm" : "cold", seed, prices ? " prices" : "", placed ? " placed" : "",
              static_cast<unsigned long long>(first), same ? "" : " (REPEATS DIFFER)", cpu[cpu.size() / 2], cpu.front(),
              rounds);
  return same ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "sia_warm_digest: %s\n", e.what());
  return 1;
}
