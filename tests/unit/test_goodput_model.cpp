// Tests of the throughput model, statistical efficiency and batch-size optimisation.

#include <doctest/doctest.h>

#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput/throughput_model.hpp>
#include <sia/goodput_table.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

sia::PerfParams example_perf() { return sia::PerfParams{0.02, 0.001, 0.05, 0.004, 0.01, 0.002, 1.5}; }

/// Independent transcription of the reference optimize (goodput.py) for cross-checking.
sia::GoodputChoice reference_optimize(const sia::GoodputFunction& f, int n, int r, const sia::BatchLimits& l) {
  const double max_batch = l.max_batch_size > 0 ? l.max_batch_size : f.init_batch_size;
  const double min_atomic = l.min_local > 0 ? l.min_local : 1;
  const double max_atomic = l.max_local > 0 ? l.max_local : max_batch;
  const double min_batch = l.tune ? std::max(f.init_batch_size, min_atomic * r) : max_batch;
  sia::GoodputChoice best;
  for (int k = 0; k < 50; ++k) {
    const double batch = min_batch * std::pow(max_batch / min_batch, k / 49.0);
    const double local = batch / r;
    int s = 0;
    if (l.accumulation) {
      s = static_cast<int>(std::ceil(local / max_atomic - 1e-8)) - 1;
      if (r == 1 && local > f.init_batch_size + 1e-8) s = std::max(s, 1);
    }
    const int atomic = static_cast<int>(std::ceil(local / (s + 1) - 1e-8));
    if (atomic < min_atomic || atomic > max_atomic) continue;
    const double g = f.evaluate(n, r, atomic, s);
    if (g > best.goodput) {
      best.goodput = g;
      best.batch = {static_cast<long long>(r) * atomic * (s + 1), atomic, s};
    }
  }
  return best;
}

}  // namespace

TEST_CASE("goodput.throughput.formulas") {
  const sia::PerfParams p = example_perf();
  CHECK(sia::accum_time(p, 10) == doctest::Approx(0.03));
  CHECK(sia::network_time(p, 2, 8) == doctest::Approx(0.05 + 0.004 * 6));
  CHECK(sia::network_time(p, 1, 4) == doctest::Approx(0.01 + 0.002 * 2));
  CHECK(sia::network_time(p, 1, 2) == doctest::Approx(0.01 + 0.002 * 1e-8));
  CHECK(sia::network_time(p, 1, 1) == doctest::Approx(1e-8));
  const double ta = 0.03;
  const double tn = 0.05 + 0.004 * 6;
  const double to = std::pow(std::pow(ta, 1.5) + std::pow(tn, 1.5), 1 / 1.5);
  CHECK(sia::optim_time(p, 2, 8, 10) == doctest::Approx(to));
  CHECK(sia::step_time(p, 2, 8, 10, 3) == doctest::Approx(3 * ta + to));
  CHECK(sia::throughput(p, 2, 8, 10, 3) == doctest::Approx(8 * 10 * 4 / (3 * ta + to)));
  // gamma = 1: no overlap, times add up.
  sia::PerfParams q = p;
  q.gamma = 1.0;
  CHECK(sia::optim_time(q, 2, 8, 10) == doctest::Approx(ta + tn));
}

TEST_CASE("goodput.throughput.validate") {
  sia::PerfParams p = example_perf();
  CHECK_NOTHROW(sia::validate(p));
  p.gamma = 0.5;
  CHECK_THROWS_AS(sia::validate(p, "job.perf"), sia::InvalidArgument);
  p = example_perf();
  p.beta_n = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(sia::validate(p, "jobs[0].model.perf.a100"), doctest::Contains("beta_n"), sia::InvalidArgument);
  p = example_perf();
  p.alpha_r = -1;
  CHECK_THROWS_AS(sia::validate(p), sia::InvalidArgument);
}

TEST_CASE("goodput.efficiency.hand_computed") {
  const sia::GradParams g{1.0, 3.0};
  // scale 4: denom = 3/4 + 1 = 1.75, gain = 4/1.75, efficiency = gain/4.
  CHECK(sia::gain(g, 400, 100) == doctest::Approx(4.0 / 1.75));
  CHECK(sia::efficiency(g, 400, 100) == doctest::Approx(1.0 / 1.75));
  CHECK(sia::efficiency(g, 100, 100) == doctest::Approx(1.0));
  // No noise: a larger batch brings no extra progress per step.
  CHECK(sia::efficiency(sia::GradParams{2.0, 0.0}, 800, 100) == doctest::Approx(1.0 / 8));
  // Pure noise: perfectly efficient.
  CHECK(sia::efficiency(sia::GradParams{0.0, 5.0}, 800, 100) == doctest::Approx(1.0));
  // Degenerate statistics fall back to gain 1, never NaN.
  CHECK(sia::gain(sia::GradParams{0.0, 0.0}, 800, 100) == 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isfinite(sia::efficiency(sia::GradParams{nan, 1.0}, 800, 100)));
  CHECK(sia::efficiency(g, 0, 100) == 0.0);
  CHECK_THROWS_AS(sia::validate(sia::GradParams{-1.0, 1.0}), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::validate(sia::GradParams{1.0, nan}), sia::InvalidArgument);
  CHECK_NOTHROW(sia::validate(sia::GradParams{0.0, 0.0}));
}

TEST_CASE("goodput.optimize.matches_reference_and_exhaustive") {
  sia::GoodputFunction f{example_perf(), sia::GradParams{0.5, 20.0}, 64.0};
  const sia::BatchLimits lim{4096, 16, 256, true, true, 50};
  for (int r : {1, 2, 4, 8, 16, 32}) {
    const int n = r <= 4 ? 1 : r / 4;
    const sia::GoodputChoice c = f.optimize(n, r, lim);
    const sia::GoodputChoice ref = reference_optimize(f, n, r, lim);
    CAPTURE(r);
    CHECK(c.goodput == doctest::Approx(ref.goodput).epsilon(1e-12));
    CHECK(c.batch.global_batch == ref.batch.global_batch);
    CHECK(c.batch.local_batch == ref.batch.local_batch);
    CHECK(c.batch.accumulation_steps == ref.batch.accumulation_steps);
    CHECK(c.goodput == doctest::Approx(f.evaluate(n, r, c.batch.local_batch, c.batch.accumulation_steps)));
    CHECK(c.goodput == doctest::Approx(c.throughput * c.efficiency));
    CHECK(c.batch.local_batch >= 16);
    CHECK(c.batch.local_batch <= 256);
    // Exhaustive search over every split within the limits: the 50 candidates reach within 3 %.
    double best = 0.0;
    for (int s = 0; s <= 64; ++s)
      for (int b = 16; b <= 256; ++b) {
        const double global = static_cast<double>(r) * b * (s + 1);
        if (global < 64 || global > 4096 * (1 + 1e-9)) continue;
        if (r == 1 && s == 0 && b > 64) continue;  // Pollux's single-GPU rule
        best = std::max(best, f.evaluate(n, r, b, s));
      }
    CHECK(c.goodput <= best * (1 + 1e-12));
    CHECK(c.goodput >= best * 0.97);
  }
}

TEST_CASE("goodput.optimize.fixed_batch_and_limits") {
  sia::GoodputFunction f{example_perf(), sia::GradParams{0.5, 20.0}, 64.0};
  sia::BatchLimits fixed{1024, 16, 128, false, true, 50};
  const sia::GoodputChoice c = f.optimize(1, 4, fixed);
  CHECK(c.batch.global_batch == 1024);  // 4 GPUs x 128 x 2 micro-steps
  CHECK(c.batch.local_batch == 128);
  CHECK(c.batch.accumulation_steps == 1);
  // Without accumulation the fixed batch does not fit in memory: not usable.
  fixed.accumulation = false;
  CHECK(f.optimize(1, 4, fixed).goodput == 0.0);
  // Too many GPUs for the batch limit: min_local * R > max batch.
  const sia::BatchLimits small{256, 16, 128, true, true, 50};
  CHECK(f.optimize(8, 32, small).goodput == 0.0);
  // Unknown gradient statistics: efficiency 1, goodput = throughput.
  sia::GoodputFunction nog{example_perf(), std::nullopt, 64.0};
  const sia::GoodputChoice u = nog.optimize(1, 4, sia::BatchLimits{4096, 16, 256});
  CHECK(u.efficiency == 1.0);
  CHECK(u.goodput == doctest::Approx(u.throughput));
  // Invalid inputs never produce NaN.
  sia::GoodputFunction bad{sia::PerfParams{std::numeric_limits<double>::quiet_NaN(), 0, 0, 0, 0, 0, 1}, std::nullopt,
                           64};
  CHECK(bad.optimize(1, 1, sia::BatchLimits{256}).goodput == 0.0);
  CHECK(f.optimize(0, 1, sia::BatchLimits{256}).goodput == 0.0);
  CHECK_THROWS_AS(sia::validate(sia::BatchLimits{256, 64, 32}), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::validate(sia::BatchLimits{std::numeric_limits<double>::quiet_NaN()}), sia::InvalidArgument);
}

TEST_CASE("goodput.optimize.pruning_keeps_the_argmax") {
  // The bound-based pruning must return exactly what evaluating every candidate returns.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const sia::PerfParams p{0.001 + 0.3 * u(rng), 1e-5 + 0.02 * u(rng), 1e-8 + 0.5 * u(rng), 1e-8 + 0.02 * u(rng),
                            1e-8 + 0.2 * u(rng),  1e-8 + 0.02 * u(rng), 1.0 + 3.0 * u(rng)};
    const double init = std::floor(8 + 200 * u(rng));
    const sia::GoodputFunction f{p, sia::GradParams{u(rng), 50 * u(rng)}, init};
    const int min_local = 1 + static_cast<int>(16 * u(rng));
    const sia::BatchLimits lim{init * (1 + 60 * u(rng)), min_local, min_local + static_cast<int>(500 * u(rng))};
    const int r = 1 << static_cast<int>(7 * u(rng));
    const int n = r <= 4 ? 1 : r / 4;
    const sia::GoodputChoice fast = f.optimize(n, r, lim);
    const sia::GoodputChoice all = sia::optimize_batch(
        r, init, lim, [&](double b, int s) { return sia::step_time(p, n, r, b, s); },
        [&](double g) { return f.efficiency(g); });
    CAPTURE(trial);
    CHECK(fast.goodput == doctest::Approx(all.goodput).epsilon(1e-12));
    CHECK(fast.batch.global_batch == all.batch.global_batch);
    CHECK(fast.batch.accumulation_steps == all.batch.accumulation_steps);
  }
}

TEST_CASE("goodput.optimize.step_time_bound_changes_no_bit") {
  // GoodputFunction::optimize skips candidates by a lower bound on the step time (max(ta, tn) and the power-mean
  // bound 2^(1/g - 1) (ta + tn)): its choice must be, bit for bit, the one of evaluating every candidate with the
  // same step time, and of the max(ta, tn) bound alone. Random models (gamma 1 to 11, the two times alike or
  // far apart), statistics known or not, every replica count to 64 on 1 to 8 nodes.
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto same = [](const sia::GoodputChoice& a, const sia::GoodputChoice& b) {
    return std::memcmp(&a.goodput, &b.goodput, sizeof(double)) == 0 &&
           std::memcmp(&a.throughput, &b.throughput, sizeof(double)) == 0 &&
           std::memcmp(&a.efficiency, &b.efficiency, sizeof(double)) == 0 &&
           a.batch.global_batch == b.batch.global_batch && a.batch.local_batch == b.batch.local_batch &&
           a.batch.accumulation_steps == b.batch.accumulation_steps;
  };
  long compared = 0, positive = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const double scale = std::pow(10.0, -3.0 + 3.0 * u(rng));
    const double gamma = trial % 5 == 0 ? 1.0 : trial % 5 == 1 ? 1.0 + 1e-3 * u(rng) : 1.0 + 10.0 * u(rng);
    const sia::PerfParams p{scale * (0.001 + 0.3 * u(rng)),
                            scale * (1e-5 + 0.02 * u(rng)),
                            0.5 * u(rng),
                            0.02 * u(rng),
                            0.2 * u(rng),
                            0.02 * u(rng),
                            gamma};
    const double init = std::floor(8 + 200 * u(rng));
    std::optional<sia::GradParams> grad;
    if (trial % 7 != 0) grad = sia::GradParams{u(rng), 50 * u(rng)};
    const sia::GoodputFunction f{p, grad, init};
    const int min_local = 1 + static_cast<int>(16 * u(rng));
    sia::BatchLimits lim{init * (1 + 60 * u(rng)), min_local, min_local + static_cast<int>(500 * u(rng))};
    lim.tune = trial % 11 != 0;
    for (int nodes = 1; nodes <= 8; ++nodes)
      for (int r = nodes; r <= 64; ++r) {
        const double tn = sia::network_time(p, nodes, r);
        const bool linear = p.gamma == 1.0;
        const double tn_pow = linear ? tn : std::pow(tn, p.gamma);
        auto step = [&](double b, int s) {
          const double ta = p.alpha_c + p.beta_c * b;
          const double to = linear ? ta + tn : std::pow(std::pow(ta, p.gamma) + tn_pow, 1.0 / p.gamma);
          return static_cast<double>(s) * ta + to;
        };
        const sia::GoodputChoice fast = f.optimize(nodes, r, lim);
        const sia::GoodputChoice all =
            sia::optimize_batch(r, init, lim, step, sia::efficiency_fn(grad, init), sia::NoStepTimeBound{});
        const sia::GoodputChoice by_max =
            sia::optimize_batch(r, init, lim, step, sia::efficiency_fn(grad, init), [&](double b, int s) {
              const double ta = p.alpha_c + p.beta_c * b;
              return static_cast<double>(s) * ta + std::max(ta, tn);
            });
        CAPTURE(trial);
        CAPTURE(nodes);
        CAPTURE(r);
        CHECK(same(fast, all));
        CHECK(same(by_max, all));
        ++compared;
        positive += all.goodput > 0.0;
      }
  }
  CHECK(compared == 400L * 484);  // 8 node counts, r from nodes to 64
  CHECK(positive > compared / 2);
}

TEST_CASE("goodput.split_batch.is_the_formula_bit_for_bit") {
  // split_batch skips a division and a ceiling when the local batch fits (s = 0) and rounds up without libm:
  // the same integers as the formula (reference goodput.py) for every input, fractional, integral and large.
  auto formula = [](double global, int replicas, double max_local, double threshold, bool accumulation) {
    sia::BatchSplit out;
    if (replicas < 1 || !(global > 0.0)) return out;
    const double local = global / replicas;
    long long s = 0;
    if (accumulation && max_local > 0.0) {
      s = static_cast<long long>(std::ceil(local / max_local - 1e-8)) - 1;
      if (s < 0) s = 0;
    }
    if (accumulation && replicas == 1 && local > threshold + 1e-8 && s < 1) s = 1;
    out.accumulation_steps = s;
    out.local_batch = static_cast<long long>(std::ceil(local / static_cast<double>(s + 1) - 1e-8));
    return out;
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto check = [&](double global, int replicas, double max_local, double threshold, bool accumulation) {
    const sia::BatchSplit a = sia::split_batch(global, replicas, max_local, threshold, accumulation);
    const sia::BatchSplit b = formula(global, replicas, max_local, threshold, accumulation);
    CHECK(a.local_batch == b.local_batch);
    CHECK(a.accumulation_steps == b.accumulation_steps);
  };
  for (int k = 0; k < 200000; ++k) {
    const int replicas = 1 + static_cast<int>(unit(rng) * (k % 3 == 0 ? 4 : 64));
    const double max_local = k % 7 == 0 ? 0.0 : std::floor(1.0 + unit(rng) * 512);
    double global = std::exp(unit(rng) * std::log(1e6));
    if (k % 5 == 0) global = std::round(global);  // integral batches, exact multiples of the count
    if (k % 11 == 0) global = max_local * replicas * (1 + static_cast<int>(unit(rng) * 3));
    if (k % 13 == 0) global = std::nextafter(max_local * replicas, k % 2 ? 0.0 : 1e300);
    check(global, replicas, max_local, 128.0 * unit(rng), k % 17 != 0);
  }
  // Up to where the formula's conversion to long long is defined (below 2^63).
  for (double global : {1e-300, 1e-9, 0.5, 1.0 - 1e-8, 1.0, 1.0 + 1e-8, 3.0 + 1e-9, 1e12, 4503599627370495.5,
                        4503599627370496.0, 9.007199254740993e15, 4.6e18})
    for (int replicas : {1, 2, 3, 8})
      for (double max_local : {0.0, 1.0, 3.0, 1e12}) check(global, replicas, max_local, 64.0, true);
  CHECK(sia::split_batch(0.0, 4, 16, 1).local_batch == 0);
  CHECK(sia::split_batch(std::nan(""), 4, 16, 1).local_batch == 0);
}

TEST_CASE("goodput.optimize.memoised_splits_are_pass_one_bit_for_bit") {
  // GoodputFunction::optimize takes its splits from a per-thread memo (detail::memoised_valid_splits): every list
  // must be valid_splits()'s, bit for bit, on a first call, on a repeat, after the memo started over (more than its
  // 4,096 lists), and on two threads at once; and optimize() must still be optimize_batch() with the same step time.
  auto check_thread = [](std::uint64_t seed, long& mismatches, long& calls) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<std::pair<int, sia::BatchLimits>> asked;
    std::vector<double> inits;
    for (int i = 0; i < 6000; ++i) {
      const bool repeat = !asked.empty() && u(rng) < 0.5;
      const std::size_t j = repeat ? static_cast<std::size_t>(u(rng) * static_cast<double>(asked.size())) : 0;
      int r = 0;
      double init = 0.0;
      sia::BatchLimits lim;
      if (repeat && j < asked.size()) {
        r = asked[j].first;
        lim = asked[j].second;
        init = inits[j];
      } else {
        r = 1 + static_cast<int>(64 * u(rng));
        init = std::floor(1 + 300 * u(rng));
        const int min_local = static_cast<int>(17 * u(rng));  // 0: no lower limit
        lim = sia::BatchLimits{init * (1 + 60 * u(rng)) * (u(rng) < 0.1 ? 0.0 : 1.0), min_local,
                               u(rng) < 0.1 ? 0 : min_local + static_cast<int>(500 * u(rng))};
        lim.tune = u(rng) > 0.1;
        lim.accumulation = u(rng) > 0.1;
        lim.candidates = 1 + static_cast<int>(128 * u(rng));
        asked.emplace_back(r, lim);
        inits.push_back(init);
      }
      sia::detail::BatchCandidate fresh[sia::detail::kMaxBufferedCandidates];
      const int m = sia::detail::valid_splits(r, init, lim, fresh);
      int mm = -1;
      const sia::detail::BatchCandidate* memo = sia::detail::memoised_valid_splits(r, init, lim, mm);
      ++calls;
      bool same = m == mm;
      for (int k = 0; same && k < m; ++k)
        same = std::memcmp(&fresh[k].atomic, &memo[k].atomic, sizeof(double)) == 0 &&
               std::memcmp(&fresh[k].global, &memo[k].global, sizeof(double)) == 0 && fresh[k].s == memo[k].s;
      mismatches += !same;
    }
  };
  long mismatches = 0, calls = 0;
  check_thread(23, mismatches, calls);
  CHECK(calls == 6000);
  CHECK(mismatches == 0);
  long m1 = 0, c1 = 0, m2 = 0, c2 = 0;
  std::thread a([&] { check_thread(29, m1, c1); });
  std::thread b([&] { check_thread(31, m2, c2); });
  a.join();
  b.join();
  CHECK(c1 + c2 == 12000);
  CHECK(m1 + m2 == 0);

  // optimize() with the memoised splits against optimize_batch() making them, above and below the buffered size.
  const sia::PerfParams p = example_perf();
  const sia::GoodputFunction f{p, sia::GradParams{0.3, 20.0}, 64.0};
  for (const int candidates : {1, 2, 50, 128, 129, 400})
    for (int r = 1; r <= 32; ++r) {
      sia::BatchLimits lim{4096.0, 8, 256};
      lim.candidates = candidates;
      const int nodes = (r + 3) / 4;
      const double tn = sia::network_time(p, nodes, r);
      auto step = [&](double b, int s) {
        const double ta = p.alpha_c + p.beta_c * b;
        return static_cast<double>(s) * ta + std::pow(std::pow(ta, p.gamma) + std::pow(tn, p.gamma), 1.0 / p.gamma);
      };
      const sia::GoodputChoice fast = f.optimize(nodes, r, lim);
      const sia::GoodputChoice all = sia::optimize_batch(r, 64.0, lim, step, sia::efficiency_fn(f.grad, 64.0));
      CAPTURE(candidates);
      CAPTURE(r);
      CHECK(std::memcmp(&fast.goodput, &all.goodput, sizeof(double)) == 0);
      CHECK(fast.batch.global_batch == all.batch.global_batch);
      CHECK(fast.batch.local_batch == all.batch.local_batch);
      CHECK(fast.batch.accumulation_steps == all.batch.accumulation_steps);
    }
}

// GoodputTable keeps flat sorted arrays (a round asks every new job's table per type and
// configuration; maps of maps were a cache miss per node): every answer as the map it replaced.
TEST_CASE("goodput.table.answers_as_a_map") {
  using Key = std::pair<int, int>;  // (gpus, nodes)
  const std::vector<std::string> names = {"B", "A", "CC", "a-type-name-longer-than-sso", "A2"};
  std::mt19937 rng(7);
  for (int round = 0; round < 60; ++round) {
    sia::GoodputTable t;
    std::map<std::string, std::map<Key, double>, std::less<>> ref;
    const int sets = 1 + static_cast<int>(rng() % 200);
    const bool in_order = round % 3 == 0;  // appended, as tables usually are written
    for (int k = 0; k < sets; ++k) {
      const std::string& type = names[rng() % (round % 2 == 0 ? 2 : names.size())];
      const int gpus = in_order ? 1 + k / 4 : 1 + static_cast<int>(rng() % 40);
      const int nodes = rng() % 3 == 0 ? static_cast<int>(rng() % 4) : 0;
      const double value = rng() % 5 == 0 ? 0.0 : static_cast<double>(rng() % 1000) / 7.0;
      t.set(type, nodes, gpus, value);
      ref[type][{gpus, nodes}] = value;
    }
    std::vector<sia::GoodputTable::Entry> want;
    for (const auto& [type, m] : ref)
      for (const auto& [key, v] : m) want.push_back({type, key.first, key.second, v});
    const auto got = t.entries();
    REQUIRE(got.size() == want.size());
    for (std::size_t e = 0; e < got.size(); ++e) {
      CHECK(got[e].gpu_type == want[e].gpu_type);
      CHECK(got[e].gpus == want[e].gpus);
      CHECK(got[e].nodes == want[e].nodes);
      CHECK(got[e].value == want[e].value);
    }
    for (const std::string& type : {names[0], names[1], names[2], names[3], names[4], std::string("D")}) {
      int limit = 0;
      if (const auto it = ref.find(type); it != ref.end())
        for (const auto& [key, v] : it->second)
          if (v > 0.0) limit = std::max(limit, key.first);
      CHECK(t.gpu_limit(sia::GpuTypeSpec(type, 4, 8)) == limit);
      for (int gpus = -1; gpus <= 42; ++gpus)
        for (int nodes = -1; nodes <= 4; ++nodes) {
          double v = 0.0;
          if (const auto it = ref.find(type); it != ref.end()) {
            const auto exact = it->second.find({gpus, nodes});
            const auto any = it->second.find({gpus, 0});
            if (nodes > 0 && exact != it->second.end())
              v = exact->second;
            else if (any != it->second.end())
              v = any->second;
          }
          CHECK(t.lookup(type, gpus, nodes) == v);
          if (gpus >= 1 && nodes >= 1)
            CHECK(t.goodput(sia::GpuTypeSpec(type, 4, 8), sia::ConfigurationSpec{0, nodes, gpus}) == v);
        }
    }
    CHECK(t.empty() == ref.empty());
  }
  sia::GoodputTable t;
  CHECK_THROWS_WITH(t.set("A", 2, 0, 1.0), "goodput table entry (A, 0 GPUs, 2 nodes): gpus must be >= 1");
  CHECK_THROWS_WITH(t.set("", 3, 1.0), "goodput table entry (, 3 GPUs): empty GPU type name");
  CHECK_THROWS_WITH(t.set("A", 3, -1.5), "goodput table entry (A, 3 GPUs): value -1.5 must be finite and >= 0");
  CHECK(t.empty());
}
