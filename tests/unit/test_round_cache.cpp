// Incremental rounds (core/round_cache.hpp): a round started from the previous round's warm start
// reuses the rows of the jobs whose inputs did not change. Reused or rebuilt, the round must be
// bit-identical: the problem (every usable configuration and utility, bit for bit), and the
// whole decision on every backend, against the same round given the same warm start without its
// cache — over chains of random rounds in which 0-10 % of the jobs change, jobs leave, arrive and
// move in the input, the cluster loses a node, p changes, and goodput functions change behind
// the round's back.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/input_checks.hpp"
#include "core/problem.hpp"
#include "core/round_cache.hpp"
#include "core/warm_start.hpp"
#include "round_instances.hpp"

namespace {

sia::RoundOptions options(std::shared_ptr<const sia::WarmStart> warm = nullptr, const std::string& backend = "native") {
  sia::RoundOptions o;
  o.backend = backend;
  o.time_limit = std::chrono::milliseconds(30000);
  o.warm_start = std::move(warm);
  return o;
}

std::vector<std::optional<sia::ConfigurationSpec>> given(const sia::RoundResult& r) {
  std::vector<std::optional<sia::ConfigurationSpec>> g;
  for (const auto& d : r.decisions) g.push_back(d.config);
  return g;
}

// The same warm start without its cache: the round then builds every job anew.
std::shared_ptr<const sia::WarmStart> without_cache(const std::shared_ptr<const sia::WarmStart>& w) {
  if (!w) return nullptr;
  auto copy = std::make_shared<sia::WarmStart>(*w);
  copy->cache = nullptr;
  return copy;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

void check_same_problem(const sia::detail::Problem& a, const sia::detail::Problem& b) {
  REQUIRE(a.num_jobs() == b.num_jobs());
  CHECK(a.set.configs == b.set.configs);
  REQUIRE(a.set.rows.size() == b.set.rows.size());
  for (std::size_t r = 0; r < a.set.rows.size(); ++r) {
    CHECK(a.set.rows[r].type == b.set.rows[r].type);
    CHECK(a.set.rows[r].min_item_gpus == b.set.rows[r].min_item_gpus);
    CHECK(a.set.rows[r].capacity == b.set.rows[r].capacity);
  }
  CHECK(a.current == b.current);
  CHECK(a.required.pinned == b.required.pinned);
  CHECK(a.required.forced == b.required.forced);
  CHECK(a.weight == b.weight);
  CHECK(a.tenant == b.tenant);
  CHECK(same_bits(a.util_bound, b.util_bound));
  CHECK(same_bits(a.model_lambda, b.model_lambda));
  CHECK(a.unevaluated == b.unevaluated);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.num_jobs(); ++i) {
    bool same = a.valid[i].size() == b.valid[i].size();
    for (std::size_t k = 0; same && k < a.valid[i].size(); ++k)
      same = a.valid[i][k].config == b.valid[i][k].config && a.valid[i][k].gpus == b.valid[i][k].gpus &&
             same_bits(a.valid[i][k].util, b.valid[i][k].util);
    differing += same ? 0 : 1;
  }
  CHECK(differing == 0);
  // What the answer check relies on (formulation.cpp, decode): a job's entries name distinct
  // configurations, so an entry's index is the one entry_of() finds for its configuration.
  std::size_t misplaced = 0;
  for (const auto* pb : {&a, &b})
    for (std::size_t i = 0; i < pb->num_jobs(); ++i)
      for (std::size_t k = 0; k < pb->valid[i].size(); ++k)
        misplaced += pb->entry_of(i, pb->valid[i][k].config) == static_cast<int>(k) ? 0 : 1;
  CHECK(misplaced == 0);
}

void check_same_decision(const sia::RoundResult& a, const sia::RoundResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.fallback == b.fallback);
  CHECK(a.message == b.message);
  CHECK(same_bits(a.objective, b.objective));
  CHECK((same_bits(a.best_bound, b.best_bound) || (std::isnan(a.best_bound) && std::isnan(b.best_bound))));
  CHECK(a.prices == b.prices);
  CHECK(a.gpus_used == b.gpus_used);
  CHECK(a.evicted == b.evicted);
  CHECK(a.preempted == b.preempted);
  CHECK(a.unmet == b.unmet);
  REQUIRE(a.decisions.size() == b.decisions.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.decisions.size(); ++i) {
    const auto& x = a.decisions[i];
    const auto& y = b.decisions[i];
    const bool same = x.job == y.job && x.config == y.config && x.gpus == y.gpus && x.changed == y.changed &&
                      x.placement == y.placement && x.placement_status == y.placement_status && x.reason == y.reason &&
                      x.detail == y.detail;
    differing += same ? 0 : 1;
  }
  CHECK(differing == 0);
  REQUIRE(a.warm_start);
  REQUIRE(b.warm_start);
  CHECK(a.warm_start->prices.size() == b.warm_start->prices.size());
  for (std::size_t k = 0; k < a.warm_start->prices.size() && k < b.warm_start->prices.size(); ++k)
    CHECK(same_bits(a.warm_start->prices[k].price, b.warm_start->prices[k].price));
}

// A next round with more kinds of change than bench::next_round: some jobs leave, a few move in
// the input, one job's goodput is replaced by a fresh model object of the same values.
sia::bench::RoundInstance shuffle_round(const sia::bench::RoundInstance& in, unsigned seed) {
  sia::bench::RoundInstance out = in;
  std::mt19937 rng(seed);
  if (out.jobs.size() > 8) {
    std::uniform_int_distribution<std::size_t> pick(0, out.jobs.size() - 1);
    for (int k = 0; k < 2; ++k)
      out.jobs.erase(out.jobs.begin() + static_cast<std::ptrdiff_t>(pick(rng) % out.jobs.size()));
    const std::size_t a = pick(rng) % out.jobs.size(), b = pick(rng) % out.jobs.size();
    std::swap(out.jobs[a], out.jobs[b]);
    std::reverse(out.jobs.begin(), out.jobs.begin() + 3);
  }
  return out;
}

}  // namespace

TEST_CASE("round.cache.problem_is_bit_identical") {
  // build_problem from the previous round's rows against build_problem from scratch, over chains
  // of rounds of every generated family.
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 512}) {
      CAPTURE(family);
      CAPTURE(gpus);
      auto in = sia::bench::make_instance(family, gpus, 5);
      sia::RoundOptions o = options();
      o.place = false;
      o.time_limit = std::chrono::milliseconds(2000);  // the rounds only feed the next round's input
      auto r = sia::run_round(in.cluster, in.jobs, o);
      unsigned seed = 1;
      for (const double changed : {0.0, 0.02, 0.05, 0.1, -1.0, 0.03}) {
        CAPTURE(changed);
        in = changed < 0 ? shuffle_round(sia::bench::next_round(in, given(r), 0.0, seed, gpus), seed)
                         : sia::bench::next_round(in, given(r), changed, seed, gpus);
        ++seed;
        REQUIRE(r.warm_start);
        const sia::detail::RoundCache* cache = r.warm_start->cache.get();
        REQUIRE(cache != nullptr);
        sia::RoundOptions ow = options(r.warm_start);
        ow.place = false;
        ow.time_limit = o.time_limit;
        const auto cold = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, ow);
        const auto warm = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, ow,
                                                     nullptr, cache);
        check_same_problem(cold, warm);
        CHECK(warm.previous_position.size() == in.jobs.size());  // the cache was used
        // The round's columns are its entries (Formulation::columns_are_entries), and the warm
        // start applied by position through them is the one looked up by id and name.
        const auto f = sia::detail::formulate(warm, warm.required);
        CHECK(f.columns_are_entries);
        for (std::size_t c = 0; c < f.cols.size(); ++c) {
          const auto job = static_cast<std::size_t>(f.cols[c].job);
          REQUIRE(warm.valid.begin_of(job) + static_cast<std::size_t>(f.cols[c].entry) == c);
        }
        sia::MilpParams by_position, by_id;
        sia::detail::apply_warm_start(*r.warm_start, warm, in.cluster, in.jobs, f, by_position);
        sia::detail::apply_warm_start(*without_cache(r.warm_start), warm, in.cluster, in.jobs, f, by_id);
        REQUIRE(by_position.start_values.size() == by_id.start_values.size());
        for (std::size_t c = 0; c < by_id.start_values.size(); ++c)
          CHECK(std::bit_cast<std::uint64_t>(by_position.start_values[c]) ==
                std::bit_cast<std::uint64_t>(by_id.start_values[c]));
        r = sia::run_round(in.cluster, in.jobs, ow);
      }
    }
}

TEST_CASE("round.cache.row_blocks_shared_and_bounded") {
  // A job that keeps its rows reads them in the block an earlier round wrote (RoundCache::blocks)
  // instead of a copy; a block less than a quarter used has its jobs' rows copied into the new
  // round's block, and a block no job uses leaves its number empty (null) until most numbers are.
  // Long chains of rounds with heavy churn (so that blocks fall below a quarter and are copied out
  // or dropped): the same problem and decision as without the cache every round, every job's model
  // held by its block, the blocks never holding more than four times the rows in use, and never
  // more than half of the numbers (and 16) empty.
  for (const std::string family : {"tables", "helios", "batch", "identical"})
    for (int gpus : {64, 512}) {
      CAPTURE(family);
      CAPTURE(gpus);
      auto in = sia::bench::make_instance(family, gpus, 3);
      sia::RoundOptions o = options();
      auto r = sia::run_round(in.cluster, in.jobs, o);
      std::size_t previous_blocks = 0;
      int shrunk = 0;
      for (unsigned round = 0; round < 24; ++round) {
        CAPTURE(round);
        const double changed = round % 3 == 2 ? 0.0 : 0.3;
        in = round % 5 == 4 ? shuffle_round(sia::bench::next_round(in, given(r), changed, 40 + round, gpus), round)
                            : sia::bench::next_round(in, given(r), changed, 40 + round, gpus);
        REQUIRE(r.warm_start);
        const sia::detail::RoundCache* cache = r.warm_start->cache.get();
        REQUIRE(cache != nullptr);
        std::size_t held = 0, live = 0;
        for (const auto& block : cache->blocks)
          if (block != nullptr) held += block->stored.size(), ++live;
        CHECK(held <= 4 * cache->rows);
        CHECK(cache->blocks.size() <= 2 * live + 16);
        REQUIRE(cache->blocks.back() != nullptr);  // this round's
        std::size_t misheld = 0;
        for (const auto& j : cache->jobs) {
          REQUIRE(j.block < cache->blocks.size());
          REQUIRE(cache->blocks[j.block] != nullptr);
          const auto& block = *cache->blocks[j.block];
          misheld += j.rows_end <= block.stored.size() && j.model_slot < block.models.size() &&
                             block.models[j.model_slot].get() == j.model
                         ? 0
                         : 1;
        }
        CHECK(misheld == 0);
        if (live <= previous_blocks) ++shrunk;
        previous_blocks = live;
        sia::RoundOptions ow = options(r.warm_start);
        const auto cold = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, ow);
        const auto warm = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, ow,
                                                     nullptr, cache);
        check_same_problem(cold, warm);
        const auto cached = sia::run_round(in.cluster, in.jobs, ow);
        const auto rebuilt = sia::run_round(in.cluster, in.jobs, options(without_cache(r.warm_start)));
        check_same_decision(cached, rebuilt);
        r = cached;
      }
      CHECK(shrunk > 0);  // blocks were copied out or dropped
    }
}

TEST_CASE("round.cache.empty_block_numbers_made_dense") {
  // A block no job uses leaves its number empty; once most numbers are empty they are made dense
  // again (every job's block number changed, this round's block the last). A long chain with half
  // of the jobs changed each round: every round the problem the cache gives is the one without it.
  auto in = sia::bench::make_instance("tables", 64, 5);
  sia::RoundOptions o = options();
  o.place = false;
  auto r = sia::run_round(in.cluster, in.jobs, o);
  int compacted = 0;
  std::size_t previous_size = 0;
  for (unsigned round = 0; round < 60; ++round) {
    CAPTURE(round);
    in = sia::bench::next_round(in, given(r), 0.5, 300 + round, 64);
    REQUIRE(r.warm_start);
    const sia::detail::RoundCache* cache = r.warm_start->cache.get();
    REQUIRE(cache != nullptr);
    std::size_t live = 0;
    for (const auto& block : cache->blocks) live += block != nullptr ? 1 : 0;
    CHECK(cache->blocks.size() <= 2 * live + 16);
    if (cache->blocks.size() < previous_size) ++compacted;
    previous_size = cache->blocks.size();
    for (const auto& j : cache->jobs) REQUIRE((j.block < cache->blocks.size() && cache->blocks[j.block] != nullptr));
    sia::RoundOptions ow = options(r.warm_start);
    ow.place = false;
    const auto cold = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, ow);
    const auto warm =
        sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, ow, nullptr, cache);
    check_same_problem(cold, warm);
    r = sia::run_round(in.cluster, in.jobs, ow);
  }
  CHECK(compacted > 0);
}

TEST_CASE("round.cache.decisions_are_identical_on_every_backend") {
  // Whole rounds, placement included: warm start with its cache against the same warm start
  // without it. Chains of rounds; each next round starts from the cached round's warm start.
  for (const auto& backend : sia::available_milp_solvers()) {
    if (backend != "native" && backend != "cbc" && backend != "glpk") continue;
    for (const std::string family : {"helios", "tables", "pinned", "batch", "near-ties", "infeasible"})
      for (int gpus : {64, 512}) {
        if (backend != "native" && gpus > 64) continue;  // the slow backends' rounds at 512 GPUs take seconds
        CAPTURE(backend);
        CAPTURE(family);
        CAPTURE(gpus);
        auto in = sia::bench::make_instance(family, gpus, 2);
        // The chain's first round is only its start: CBC cannot prove the cold `infeasible` round infeasible
        // (448,000 nodes in 28.5 s) and falls back to the greedy allocation at any limit, so 2 s will do.
        sia::RoundOptions first = options(nullptr, backend);
        first.time_limit = std::chrono::seconds(2);
        auto r = sia::run_round(in.cluster, in.jobs, first);
        unsigned seed = 20;
        for (const double changed : {0.0, 0.05, 0.1, -1.0}) {
          CAPTURE(changed);
          in = changed < 0 ? shuffle_round(sia::bench::next_round(in, given(r), 0.02, seed, gpus), seed)
                           : sia::bench::next_round(in, given(r), changed, seed, gpus);
          ++seed;
          const auto cached = sia::run_round(in.cluster, in.jobs, options(r.warm_start, backend));
          const auto rebuilt = sia::run_round(in.cluster, in.jobs, options(without_cache(r.warm_start), backend));
          check_same_decision(cached, rebuilt);
          r = cached;
        }
      }
  }
}

TEST_CASE("round.cache.changed_cluster_exponent_and_functions") {
  auto in = sia::bench::make_instance("helios", 512, 4);
  const auto r0 = sia::run_round(in.cluster, in.jobs, options());
  auto next = sia::bench::next_round(in, given(r0), 0.0, 9, 512);
  auto compare = [&](const sia::bench::RoundInstance& round, sia::RoundOptions o) {
    o.warm_start = r0.warm_start;
    const auto cached = sia::run_round(round.cluster, round.jobs, o);
    o.warm_start = without_cache(r0.warm_start);
    check_same_decision(cached, sia::run_round(round.cluster, round.jobs, o));
  };
  SUBCASE("a node down: the configuration set changes, nothing is reused") {
    auto down = next;
    down.cluster.down.assign(down.cluster.types.size(), {});
    down.cluster.down[0].push_back(0);
    for (auto& j : down.jobs)  // jobs on the failed node lose their allocation (as a scheduler would report)
      if (j.current() && j.current()->type == 0) j.current(std::nullopt);
    compare(down, options());
  }
  SUBCASE("another p and rounded utilities") {
    sia::RoundOptions o = options();
    o.p = 0.5;
    compare(next, o);
    o.p = -1.0;
    o.round_utilities = true;
    compare(next, o);
  }
  SUBCASE("goodput functions are never taken as unchanged") {
    // A goodput_fn that reads state changed between rounds (as the simulator's estimators do):
    // its job has no model identity, so its rows are always asked again.
    auto scale = std::make_shared<double>(1.0);
    auto fn_round = [&](double s) {
      *scale = s;
      auto round = next;
      for (std::size_t i = 0; i < round.jobs.size(); i += 3) {
        const sia::JobSpec orig = next.jobs[i];
        round.jobs[i].goodput_fn([orig, scale](const sia::GpuTypeSpec& t, const sia::ConfigurationSpec& c) {
          return *scale * orig.goodput(t, c);
        });
      }
      return round;
    };
    const auto first = fn_round(1.0);
    const auto r1 = sia::run_round(first.cluster, first.jobs, options(r0.warm_start));
    const auto second = fn_round(3.0);
    const auto cached = sia::run_round(second.cluster, second.jobs, options(r1.warm_start));
    check_same_decision(cached, sia::run_round(second.cluster, second.jobs, options(without_cache(r1.warm_start))));
    const auto cold =
        sia::detail::build_problem(sia::make_configuration_set(second.cluster), second.cluster, second.jobs, options());
    const auto warm = sia::detail::build_problem(sia::make_configuration_set(second.cluster), second.cluster,
                                                 second.jobs, options(), nullptr, r1.warm_start->cache.get());
    check_same_problem(cold, warm);
  }
}

TEST_CASE("round.cache.max_gpus_ever_that_keeps_the_cap") {
  // A running job's max_gpus_ever grows with its largest allocation. Where the count cap it makes
  // (the 2x rule, effective_max_gpus) does not move, or the job ignores it (rigid; hybrid counted in
  // pipelines), the job keeps its rows from the previous round instead of asking its goodputs again;
  // where the cap moves, the rows are built anew. Either way the problem is bit for bit the one
  // built without the cache.
  auto in = sia::bench::make_instance("tables", 512, 6);
  for (std::size_t k = 0; k < in.jobs.size(); ++k) {
    sia::JobSpec& j = in.jobs[k];
    if (k % 6 == 4) j.kind(sia::JobKind::rigid).min_gpus(2).max_gpus(2).current(std::nullopt).preemptible(true);
    if (k % 6 == 5)
      j.kind(sia::JobKind::hybrid)
          .pipeline_size(2)
          .min_gpus(2)
          .max_gpus(std::max(2, j.max_gpus()))
          .max_pipelines_ever(3)
          .current(std::nullopt)
          .preemptible(true);
  }
  // Per job (by position, k % 6): its max_gpus_ever before and after, M its max_gpus. Kept: 0 (none
  // -> ceil(M / 2): the cap stays M), 1 (M -> M + 3), 4 (rigid), 5 (hybrid with max_pipelines_ever);
  // built anew where the cap moves below M: 2 (none -> 1), 3 (2 -> 0).
  auto set_ever = [](sia::bench::RoundInstance& round, bool after) {
    for (std::size_t k = 0; k < round.jobs.size(); ++k) {
      sia::JobSpec& j = round.jobs[k];
      const int m = j.max_gpus();
      switch (k % 6) {
        case 0:
          j.max_gpus_ever(after ? std::optional<int>((m + 1) / 2) : std::nullopt);
          break;
        case 1:
          j.max_gpus_ever(after ? m + 3 : m);
          break;
        case 2:
          j.max_gpus_ever(after ? std::optional<int>(1) : std::nullopt);
          break;
        case 3:
          j.max_gpus_ever(after ? 0 : 2);
          break;
        case 4:
          j.max_gpus_ever(after ? std::optional<int>(7) : std::nullopt);
          break;
        default:
          j.max_gpus_ever(after ? std::optional<int>(5) : std::nullopt);
          break;
      }
    }
  };
  set_ever(in, false);
  sia::RoundOptions o = options();
  o.place = false;
  const auto r0 = sia::run_round(in.cluster, in.jobs, o);
  auto in1 = sia::bench::next_round(in, given(r0), 0.0, 11, 512);
  set_ever(in1, false);
  o.warm_start = r0.warm_start;
  const auto r1 = sia::run_round(in1.cluster, in1.jobs, o);
  REQUIRE(r1.warm_start);
  const sia::detail::RoundCache* cache = r1.warm_start->cache.get();
  REQUIRE(cache != nullptr);
  auto in2 = sia::bench::next_round(in1, given(r1), 0.0, 12, 512);
  set_ever(in2, true);
  o.warm_start = r1.warm_start;
  const auto cold = sia::detail::build_problem(sia::make_configuration_set(in2.cluster), in2.cluster, in2.jobs, o);
  std::shared_ptr<sia::detail::RoundCache> next;
  const auto warm = sia::detail::build_problem(sia::make_configuration_set(in2.cluster), in2.cluster, in2.jobs, o,
                                               nullptr, cache, &next);
  check_same_problem(cold, warm);
  REQUIRE(next != nullptr);
  REQUIRE(next->jobs.size() == in2.jobs.size());
  // A job kept its rows when they lie in a block of an earlier round (this round's is the last).
  const auto own = static_cast<std::uint32_t>(next->blocks.size() - 1);
  std::size_t kept[6] = {}, jobs[6] = {};
  for (std::size_t k = 0; k < in2.jobs.size(); ++k) {
    ++jobs[k % 6];
    kept[k % 6] += next->jobs[k].has_rows && next->jobs[k].block != own ? 1 : 0;
  }
  for (std::size_t c : {0, 1, 4, 5}) {
    CAPTURE(c);
    CHECK(jobs[c] > 10);
    CHECK(kept[c] == jobs[c]);
  }
  // (Category 2 keeps the jobs whose max_gpus is 2 at most, category 3 those of max_gpus 1.)
  CHECK(kept[2] < jobs[2] / 2);
  CHECK(kept[3] < jobs[3] / 2);
  // And the whole round, from the cache, is the round without it.
  const auto cached = sia::run_round(in2.cluster, in2.jobs, options(r1.warm_start));
  check_same_decision(cached, sia::run_round(in2.cluster, in2.jobs, options(without_cache(r1.warm_start))));
}

TEST_CASE("round.cache.errors_are_the_same") {
  auto in = sia::bench::make_instance("tables", 64, 3);
  const auto r0 = sia::run_round(in.cluster, in.jobs, options());
  auto message = [&](const sia::bench::RoundInstance& round, std::shared_ptr<const sia::WarmStart> w, bool strict) {
    sia::RoundOptions o = options(std::move(w));
    o.strict = strict;
    try {
      const auto r = sia::run_round(round.cluster, round.jobs, o);
      std::string s = "ok";
      for (const auto& rj : r.rejected) s += "; rejected " + rj.job + " " + rj.field + ": " + rj.reason;
      return s;
    } catch (const sia::InvalidArgument& e) {
      return std::string("error: ") + e.what();
    }
  };
  auto both = [&](const sia::bench::RoundInstance& round) {
    for (bool strict : {false, true}) {
      const std::string cached = message(round, r0.warm_start, strict);
      CHECK(cached == message(round, without_cache(r0.warm_start), strict));
      CHECK(cached != "ok");
    }
  };
  SUBCASE("a duplicate id among reused jobs") {
    auto dup = in;
    dup.jobs.push_back(dup.jobs[3]);
    both(dup);
  }
  SUBCASE("a duplicate id among new jobs") {
    auto dup = in;
    dup.jobs.push_back(sia::JobSpec(dup.jobs[0]).id("fresh"));
    dup.jobs.insert(dup.jobs.begin() + 2, sia::JobSpec(dup.jobs[1]).id("fresh"));
    both(dup);
  }
  SUBCASE("an invalid current configuration on a reused job") {
    auto bad = in;
    sia::CurrentAllocation cur;
    cur.type = 0;
    cur.gpus = 3;
    cur.nodes = 1;
    bad.jobs[5].current(cur);
    both(bad);
  }
  SUBCASE("a negative goodput on a changed job") {
    auto bad = in;
    bad.jobs[4].goodput_fn([](const sia::GpuTypeSpec&, const sia::ConfigurationSpec&) { return -1.0; });
    both(bad);
  }
}

TEST_CASE("round.answer_check_matches_is_feasible") {
  // decode's check (detail::answer_feasible: from the entries of the columns at 1 when every value
  // is 0 or 1) gives MilpModel::is_feasible's verdict: feasible answers grown greedily, random 0/1
  // vectors, and both with values that are not 0 or 1.
  std::mt19937 rng(11);
  std::size_t checked = 0, feasible = 0, decoded = 0;
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 512})
      for (unsigned seed = 1; seed <= 2; ++seed) {
        CAPTURE(family);
        CAPTURE(gpus);
        const auto in = sia::bench::make_instance(family, gpus, seed);
        sia::RoundOptions o = options();
        const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o);
        const auto f = sia::detail::formulate(pb, pb.required);
        const std::size_t ncols = f.cols.size();
        if (ncols == 0) continue;
        auto check = [&](const std::vector<double>& x) {
          const bool expected = f.milp.is_feasible(x, 1e-6);
          CHECK(sia::detail::answer_feasible(f, x) == expected);
          ++checked;
          feasible += expected ? 1 : 0;
        };
        // A feasible answer grown greedily in a random order of the columns (pinned columns first).
        std::vector<double> grown(ncols, 0.0);
        for (std::size_t c = 0; c < ncols; ++c)
          if (f.milp.col_lower[c] > 0.5) grown[c] = 1.0;
        std::vector<std::size_t> order(ncols);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::shuffle(order.begin(), order.end(), rng);
        const std::size_t tries = std::min<std::size_t>(ncols, 300);
        for (std::size_t t = 0; t < tries; ++t) {
          const std::size_t c = order[t];
          if (grown[c] == 1.0) continue;
          grown[c] = 1.0;
          if (!f.milp.is_feasible(grown, 1e-6)) grown[c] = 0.0;
        }
        check(grown);
        // decode reads the chosen columns from the check's list: each job gets its column at 1.
        if (f.milp.is_feasible(grown, 1e-6)) {
          sia::detail::Choice choice;
          REQUIRE(sia::detail::decode(pb, f, grown, pb.required, choice));
          std::vector<int> expected(pb.num_jobs(), -1);
          for (std::size_t c = 0; c < ncols; ++c)
            if (grown[c] == 1.0) expected[f.job_of(c)] = f.cols[c].entry;
          CHECK(choice == expected);
          ++decoded;
        }
        std::uniform_int_distribution<std::size_t> col(0, ncols - 1);
        for (int k = 0; k < 36; ++k) {
          std::vector<double> x = grown;
          switch (k % 6) {
            case 0:
              x[col(rng)] = 1.0 - x[col(rng)];  // one column flipped
              break;
            case 1:
              for (std::size_t c = 0; c < ncols; ++c)  // random 0/1
                x[c] = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < (k < 12 ? 0.02 : 0.2) ? 1.0 : 0.0;
              break;
            case 2:
              x[col(rng)] = std::vector<double>{0.5, 1e-7, 1.0 - 1e-7, 1.0 + 1e-7, 2.0, -1e-7}[rng() % 6];
              break;
            case 3:
              x[col(rng)] = -0.0;
              break;
            case 4:
              x[col(rng)] = std::numeric_limits<double>::quiet_NaN();
              break;
            default:
              for (std::size_t c = 0; c < ncols; ++c)
                if (f.milp.col_lower[c] > 0.5) x[c] = 0.0;  // pins dropped
          }
          check(x);
        }
        check(std::vector<double>(ncols, 0.0));
        check(std::vector<double>(ncols, 1.0));
        check(std::vector<double>(ncols + 1, 0.0));
      }
  MESSAGE("answer checks compared: " << checked << ", feasible: " << feasible);
  CHECK(feasible > checked / 10);
  CHECK(decoded > 20);
}

TEST_CASE("round.current_config_index_is_current_configuration") {
  // detail::current_config_index answers the usual count (a configuration of its type) by
  // arithmetic: the same index as sia::current_configuration, and the same error otherwise, on
  // random clusters (node sizes powers of two or not, nodes down, types without nodes) and jobs
  // (rigid or not, counts in and out of range).
  std::mt19937 rng(23);
  std::size_t found = 0, refused = 0;
  for (int round = 0; round < 200; ++round) {
    sia::ClusterSpec cluster;
    const int types = 1 + static_cast<int>(rng() % 4);
    cluster.down.resize(static_cast<std::size_t>(types));
    for (int t = 0; t < types; ++t) {
      const int per_node = std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16}[rng() % 8];
      const int nodes = static_cast<int>(rng() % 6) + (t == 0 ? 1 : 0);  // (a cluster has GPUs)
      cluster.types.emplace_back("t" + std::to_string(t), nodes, per_node);
      for (int k = 0; k < nodes; ++k)
        if (rng() % 4 == 0) cluster.down[static_cast<std::size_t>(t)].push_back(k);
    }
    const auto set = sia::make_configuration_set(cluster);
    for (int k = 0; k < 200; ++k) {
      sia::CurrentAllocation cur;
      // (What validate_job lets through: a type of the cluster, at least one GPU.)
      cur.type = static_cast<int>(rng() % static_cast<unsigned>(types));
      const int vnode = std::max(1, set.vnode_size[static_cast<std::size_t>(cur.type)]);
      switch (rng() % 3) {
        case 0:
          cur.gpus = 1 << (rng() % 5);  // single-node shapes and beyond
          break;
        case 1:
          cur.gpus = vnode * static_cast<int>(1 + rng() % 7);  // whole virtual nodes, up or not
          break;
        default:
          cur.gpus = 1 + static_cast<int>(rng() % 80);
      }
      cur.nodes = 1;
      sia::JobSpec j("j" + std::to_string(k));
      if (rng() % 3 == 0) j.kind(sia::JobKind::rigid).min_gpus(cur.gpus).max_gpus(cur.gpus);
      j.current(cur);
      const auto expected = sia::current_configuration(set, j);
      CAPTURE(cur.type);
      CAPTURE(cur.gpus);
      if (expected) {
        CHECK(sia::detail::current_config_index(set, cluster, j, 0) == *expected);
        ++found;
      } else {
        CHECK_THROWS_AS((void)sia::detail::current_config_index(set, cluster, j, 0), sia::InvalidArgument);
        ++refused;
      }
    }
  }
  MESSAGE("current configurations found: " << found << ", refused: " << refused);
  CHECK(found > 10000);
  CHECK(refused > 10000);
}
