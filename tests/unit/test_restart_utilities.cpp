// The round's utilities under restart factors (product.md §2: u_ij = (r_i·G_ij)^p on every
// configuration but the job's current one, G_ij^p there), computed as G^p · r^p: G^p kept with a
// job's row from round to round (core/round_cache.hpp, RowBlock::powered), r^p once per job and
// round. Checked against an independent computation from the round's normalised rows, against the
// matrix API (goodput_matrix.hpp, utility_matrix(g, restarts, p)), and cold against warm (a round
// built from the previous round's cache equals the same round built anew, bit for bit), for
// p < 0 and p > 0, clipped utilities, r = 0 and r = 1, pinned jobs; with RoundOptions::round_utilities
// the reference's arithmetic, (r·G)^p as written, rounded to cents.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/goodput_matrix.hpp>
#include <sia/goodput_table.hpp>
#include <sia/round.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/round_cache.hpp"
#include "round_instances.hpp"
#include "unit/test_env.hpp"

namespace {

// Entries whose utility as computed (G^p · r^p) differs from (r·G)^p in the last bits: the checks
// below tell the two apart.
std::size_t arithmetic_differs = 0;

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

std::vector<std::optional<sia::ConfigurationSpec>> given(const sia::RoundResult& r) {
  std::vector<std::optional<sia::ConfigurationSpec>> g;
  for (const auto& d : r.decisions) g.push_back(d.config);
  return g;
}

// Restart factor of product.md §2, written out again.
double restart_of(const sia::JobSpec& j) {
  if (!j.current()) return 1.0;
  const double T = j.age_s(), N = j.restarts(), S = j.restart_cost_s();
  if (T < S || T + S <= 0.0) return 1.0;
  const double r = (T - N * S) / (T + S);
  return r > 0.0 ? r : 0.0;
}

// A utility as specified: G^p · r^p (G^p alone where r = 1), clipped at 1e6 for p < 0; with
// rounding (r·G)^p, clipped, rounded to cents (numpy.round).
double expected_utility(double g, double r, double p, bool round) {
  double x = 0.0;
  if (round)
    x = std::pow(g * r, p);
  else
    x = r == 1.0 ? std::pow(g, p) : std::pow(g, p) * std::pow(r, p);
  if (p < 0.0 && x > 1e6) x = 1e6;
  return round ? std::nearbyint(x * 100.0) / 100.0 : x;
}

// Some running jobs get an age just past their restarts' cost (r tiny: utilities that clip for
// p < 0) or short of it (r = 0), others none (r = 1).
void vary_restarts(std::vector<sia::JobSpec>& jobs, std::mt19937& rng) {
  std::uniform_int_distribution<int> pick(0, 9);
  for (auto& j : jobs) {
    if (!j.current()) continue;
    const int k = pick(rng);
    const double S = j.restart_cost_s();
    if (k == 0) j.restarts(2).age_s(2 * S + 1e-4);  // r = 1e-4 / (3 S + 1e-4): (r·G)^-2 above 1e6
    if (k == 1) j.restarts(3).age_s(2 * S);         // r = 0: only the current configuration
    if (k == 2) j.restarts(0).age_s(S / 2);         // T < S: r = 1
  }
}

// Every job's entries in `pb` against the independent computation from the rows of `cache` (the
// round's normalised goodputs: the cache build_problem left for the next round).
std::size_t check_against_rows(const sia::detail::Problem& pb, const sia::detail::RoundCache& cache,
                               const std::vector<sia::JobSpec>& jobs, double p, bool round) {
  REQUIRE(cache.jobs.size() == jobs.size());
  std::size_t checked = 0, wrong = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& b = cache.jobs[i];
    REQUIRE(b.has_rows);
    const auto& block = *cache.blocks[b.block];
    const double r = restart_of(jobs[i]);
    const int cur = pb.current[i];
    const bool pinned = pb.required.pinned[i] != 0;
    std::size_t e = 0;
    for (std::size_t k = b.rows_begin; k < b.rows_end; ++k) {
      const int config = block.stored[k].config;
      const double g = block.goodput[k];
      const double rk = cur >= 0 && config != cur ? r : 1.0;
      if (!(g * rk > 0.0) || (pinned && config != cur)) continue;
      REQUIRE(e < pb.valid[i].size());
      const auto& entry = pb.valid[i][e++];
      wrong += entry.config == config && same_bits(entry.util, expected_utility(g, rk, p, round)) ? 0 : 1;
      ++checked;
      if (!round && entry.util != sia::max_negative_p_utility && !same_bits(entry.util, std::pow(g * rk, p)))
        ++arithmetic_differs;
    }
    wrong += e == pb.valid[i].size() ? 0 : 1;
  }
  CHECK(wrong == 0);
  return checked;
}

// The matrix API on the round's normalised goodputs gives the round's utilities bit for bit (and,
// with rounding, the reference's two steps apply_restart_factors + utility_matrix do too).
void check_matrix_api(const sia::detail::Problem& pb, const sia::detail::RoundCache& cache,
                      const std::vector<sia::JobSpec>& jobs, double p, bool round) {
  const auto n = static_cast<Eigen::Index>(jobs.size());
  const auto m = static_cast<Eigen::Index>(cache.set.configs.size());
  std::vector<Eigen::Triplet<double>> t;
  std::vector<sia::RestartInput> restarts(jobs.size());
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& b = cache.jobs[i];
    const auto& block = *cache.blocks[b.block];
    for (std::size_t k = b.rows_begin; k < b.rows_end; ++k)
      t.emplace_back(static_cast<Eigen::Index>(i), block.stored[k].config, block.goodput[k]);
    restarts[i] = sia::RestartInput{pb.current[i], jobs[i].age_s(), static_cast<double>(jobs[i].restarts()),
                                    jobs[i].restart_cost_s()};
    ids.push_back(jobs[i].id());
  }
  sia::SparseGoodputMatrix g(n, m);
  g.setFromTriplets(t.begin(), t.end());
  const sia::SparseGoodputMatrix u = sia::utility_matrix(g, restarts, p, round, ids);
  sia::SparseGoodputMatrix two_steps = g;
  if (round) {
    sia::apply_restart_factors(two_steps, restarts);
    two_steps = sia::utility_matrix(two_steps, p, true, ids);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (pb.required.pinned[i]) continue;  // (the matrix holds every configuration of a pinned job)
    std::size_t usable = 0;
    for (sia::SparseGoodputMatrix::InnerIterator it(g, static_cast<Eigen::Index>(i)); it; ++it) {
      const double rk = it.col() == pb.current[i] ? 1.0 : restart_of(jobs[i]);
      if (it.value() * rk > 0.0) ++usable;
    }
    wrong += usable == pb.valid[i].size() ? 0 : 1;
    for (const auto& e : pb.valid[i]) {
      wrong += same_bits(u.coeff(static_cast<Eigen::Index>(i), e.config), e.util) ? 0 : 1;
      if (round) wrong += same_bits(two_steps.coeff(static_cast<Eigen::Index>(i), e.config), e.util) ? 0 : 1;
    }
  }
  CHECK(wrong == 0);
  // The dense matrix API agrees with the sparse one.
  if (n <= 400) {
    const sia::GoodputMatrix dense = sia::utility_matrix(sia::GoodputMatrix(g), restarts, p, round, ids);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (sia::SparseGoodputMatrix::InnerIterator it(u, static_cast<Eigen::Index>(i)); it; ++it)
        differ += same_bits(dense(it.row(), it.col()), it.value()) ? 0 : 1;
    CHECK(differ == 0);
  }
}

sia::RoundOptions options(double p, bool round, std::shared_ptr<const sia::WarmStart> warm = nullptr) {
  sia::RoundOptions o;
  o.p = p;
  o.round_utilities = round;
  o.place = false;
  o.time_limit = std::chrono::milliseconds(5000);
  o.warm_start = std::move(warm);
  return o;
}

}  // namespace

TEST_CASE("round.utilities.restart_power_product") {
  // Chains of rounds (cold, then warm from the previous round's cache, 0-5 % of jobs changed, every
  // running job one minute older): each round's utilities as specified, equal to the matrix API's,
  // and the warm round's problem equal to the same round built without the cache.
  std::size_t clipped = 0, zero_r = 0, total = 0;
  for (const std::string family : {"helios", "tables", "pinned", "batch", "near-ties"})
    for (const double p : {-0.5, -2.0, 0.5, 2.0})
      for (const bool round : {false, true}) {
        if (round && family != "tables" && family != "pinned") continue;
        if (sia::test::short_run() && (p == -0.5 || p == 2.0)) continue;
        CAPTURE(family);
        CAPTURE(p);
        CAPTURE(round);
        std::mt19937 rng(static_cast<unsigned>(family.size() * 31 + static_cast<unsigned>(p * 4 + 8)));
        auto in = sia::bench::make_instance(family, 512, 7);
        vary_restarts(in.jobs, rng);
        sia::RoundResult r = sia::run_round(in.cluster, in.jobs, options(p, round));
        for (unsigned k = 0; k < 3; ++k) {
          CAPTURE(k);
          in = sia::bench::next_round(in, given(r), k == 1 ? 0.05 : 0.0, 70 + k, 512);
          vary_restarts(in.jobs, rng);
          REQUIRE(r.warm_start);
          REQUIRE(r.warm_start->cache);
          const sia::RoundOptions o = options(p, round, r.warm_start);
          std::shared_ptr<sia::detail::RoundCache> cold_cache, warm_cache;
          const auto cold = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o,
                                                       nullptr, nullptr, &cold_cache);
          const auto warm = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o,
                                                       nullptr, r.warm_start->cache.get(), &warm_cache);
          REQUIRE(cold_cache);
          REQUIRE(warm_cache);
          CHECK(warm.previous_position.size() == in.jobs.size());  // the cache was used
          // Cold and warm alike, bit for bit.
          REQUIRE(cold.num_jobs() == warm.num_jobs());
          std::size_t differing = 0;
          for (std::size_t i = 0; i < cold.num_jobs(); ++i) {
            bool same = cold.valid[i].size() == warm.valid[i].size();
            for (std::size_t e = 0; same && e < cold.valid[i].size(); ++e)
              same = cold.valid[i][e].config == warm.valid[i][e].config &&
                     same_bits(cold.valid[i][e].util, warm.valid[i][e].util);
            differing += same ? 0 : 1;
          }
          CHECK(differing == 0);
          CHECK(same_bits(cold.util_bound, warm.util_bound));
          total += check_against_rows(cold, *cold_cache, in.jobs, p, round);
          check_against_rows(warm, *warm_cache, in.jobs, p, round);
          check_matrix_api(cold, *cold_cache, in.jobs, p, round);
          for (std::size_t i = 0; i < cold.num_jobs(); ++i) {
            if (in.jobs[i].current() && restart_of(in.jobs[i]) == 0.0) ++zero_r;
            for (const auto& e : cold.valid[i]) clipped += e.util == sia::max_negative_p_utility ? 1 : 0;
          }
          // The whole round: cached and rebuilt give the same decision.
          auto plain = std::make_shared<sia::WarmStart>(*r.warm_start);
          plain->cache = nullptr;
          const auto cached = sia::run_round(in.cluster, in.jobs, o);
          const auto rebuilt = sia::run_round(in.cluster, in.jobs, options(p, round, plain));
          CHECK(same_bits(cached.objective, rebuilt.objective));
          REQUIRE(cached.decisions.size() == rebuilt.decisions.size());
          std::size_t moved = 0;
          for (std::size_t i = 0; i < cached.decisions.size(); ++i)
            moved += cached.decisions[i].config == rebuilt.decisions[i].config ? 0 : 1;
          CHECK(moved == 0);
          r = cached;
        }
      }
  CHECK(total > 10000);
  CHECK(arithmetic_differs > total / 100);
  CHECK(clipped > 0);  // the cases the instances were made to cover
  CHECK(zero_r > 0);
}

TEST_CASE("round.utilities.extreme_powers_and_overflow") {
  // One job on a 4-GPU node, running on 1 GPU (normalised goodput 1), with a huge goodput on 2 or
  // 4 GPUs: where G^p or r^p alone over- or underflows the round computes (r·G)^p as written, and
  // a utility that overflows names the job, cold and warm alike.
  sia::ClusterSpec c;
  c.types = {sia::GpuTypeSpec("A", 1, 4)};
  auto job = [](double g2, double g4, double age, int restarts) {
    sia::GoodputTable t;
    t.set("A", 1, 1.0).set("A", 2, g2).set("A", 4, g4);
    sia::CurrentAllocation cur;
    cur.type = 0;
    cur.gpus = 1;
    cur.nodes = 1;
    return sia::JobSpec("big").goodput_model(t).current(cur).age_s(age).restarts(restarts).restart_cost_s(30);
  };
  auto utilities = [&](const std::vector<sia::JobSpec>& jobs, double p, const sia::detail::RoundCache* prev = nullptr) {
    const auto pb =
        sia::detail::build_problem(sia::make_configuration_set(c), c, jobs, options(p, false), nullptr, prev);
    std::vector<double> u(3, -1.0);
    for (const auto& e : pb.valid[0]) u[e.gpus == 1 ? 0 : e.gpus == 2 ? 1 : 2] = e.util;
    return u;  // [1 GPU, 2 GPUs, 4 GPUs]
  };
  // p > 0: G^3 = inf on 4 GPUs, r ~ 1e-10: (r·G)^3 is finite.
  {
    const auto jobs = std::vector<sia::JobSpec>{job(2.0, 1e110, 30 + 6e-9, 1)};
    const double r = restart_of(jobs[0]);
    REQUIRE(r > 0.0);
    REQUIRE(r < 1e-9);
    const auto u = utilities(jobs, 3.0);
    CHECK(same_bits(u[0], 1.0));
    CHECK(same_bits(u[1], std::pow(2.0, 3.0) * std::pow(r, 3.0)));
    CHECK(same_bits(u[2], std::pow(1e110 * r, 3.0)));  // the fallback
    CHECK(std::isfinite(u[2]));
  }
  // p < 0: G^p = 0 and r^p = inf (their product NaN): (r·G)^p as written.
  {
    const auto jobs = std::vector<sia::JobSpec>{job(2.0, 1e300, 30 + 6e-9, 1)};
    const double r = restart_of(jobs[0]);
    const auto u = utilities(jobs, -40.0);
    CHECK(same_bits(u[0], 1.0));
    CHECK(same_bits(u[1], sia::max_negative_p_utility));  // 2^-40 · r^-40 is far above the clip
    CHECK(same_bits(u[2], std::pow(1e300 * r, -40.0)));
  }
  // The matrix API's same cases.
  {
    sia::GoodputMatrix g(1, 3);
    g << 1.0, 2.0, 1e110;
    const std::vector<sia::RestartInput> s = {{0, 30 + 6e-9, 1, 30}};
    const double r = sia::restart_factor(30 + 6e-9, 1, 30);
    const auto u = sia::utility_matrix(g, s, 3.0);
    CHECK(same_bits(u(0, 0), 1.0));
    CHECK(same_bits(u(0, 1), std::pow(2.0, 3.0) * std::pow(r, 3.0)));
    CHECK(same_bits(u(0, 2), std::pow(1e110 * r, 3.0)));
    const std::vector<sia::RestartInput> zero = {{1, 60, 5, 30}};  // r = 0: only the current column
    const auto z = sia::utility_matrix(g, zero, -0.5);
    CHECK(z(0, 0) == 0.0);
    CHECK(same_bits(z(0, 1), std::pow(2.0, -0.5)));
    CHECK(z(0, 2) == 0.0);
    const std::vector<sia::RestartInput> one = {{1, 10, 5, 30}};  // T < S: r = 1, u = G^p everywhere
    const auto o = sia::utility_matrix(g, one, -0.5);
    CHECK(same_bits(o(0, 0), 1.0));
    CHECK(same_bits(o(0, 2), std::pow(1e110, -0.5)));
    const std::vector<std::string> ids = {"named"};
    CHECK_THROWS_WITH_AS((void)sia::utility_matrix(g, std::vector<sia::RestartInput>{{0, 90, 1, 30}}, 3.0, false, ids),
                         doctest::Contains("job 'named'"), sia::InvalidArgument);
  }
  // An overflow (r = 0.5: (r·G)^3 is not finite) names the job, cold and from a cache alike.
  {
    const auto before = std::vector<sia::JobSpec>{job(2.0, 1e110, 30 + 6e-9, 1)};
    std::shared_ptr<sia::detail::RoundCache> cache;
    (void)sia::detail::build_problem(sia::make_configuration_set(c), c, before, options(3.0, false), nullptr, nullptr,
                                     &cache);
    REQUIRE(cache);
    const auto after = std::vector<sia::JobSpec>{job(2.0, 1e110, 90, 1)};
    auto message = [&](const sia::detail::RoundCache* prev) {
      try {
        (void)sia::detail::build_problem(sia::make_configuration_set(c), c, after, options(3.0, false), nullptr, prev);
      } catch (const sia::InvalidArgument& e) {
        return std::string(e.what());
      }
      return std::string("ok");
    };
    const std::string cold = message(nullptr);
    CHECK(cold.find("job 'big'") != std::string::npos);
    CHECK(cold.find("overflows") != std::string::npos);
    CHECK(cold == message(cache.get()));
  }
}
