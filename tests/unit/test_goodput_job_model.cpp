// Tests of JobModel (multi-type goodput, Eq. 1 projection, first placement), the projection formulas and the pipeline model.

#include <doctest/doctest.h>

#include <sia/goodput/fit.hpp>
#include <sia/goodput/goodput_memo.hpp>
#include <sia/goodput/job_model.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/goodput/projection.hpp>
#include <sia/sim/profiles.hpp>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

const sia::PerfParams kKnown{0.02, 0.003, 0.08, 0.01, 0.02, 0.004, 2.0};

sia::TypeModel known_type(const std::string& name) {
  sia::TypeModel t;
  t.gpu_type = name;
  t.perf = kKnown;
  t.min_local = 8;
  t.max_local = 128;
  t.gpus_per_node = 4;
  return t;
}

/// A 1-GPU-only model of a type `c` times faster than kKnown's compute.
sia::TypeModel seed_type(const std::string& name, double c) {
  sia::TypeModel t;
  t.gpu_type = name;
  t.seed = sia::PerfParams{kKnown.alpha_c / c, kKnown.beta_c / c, 1.1e-8, 1.1e-8, 1e-8, 1e-8, 2.0};
  t.min_local = 8;
  t.max_local = 128;
  t.gpus_per_node = 8;
  return t;
}

}  // namespace

TEST_CASE("goodput.projection.eq1_identity") {
  const sia::PerfParams seed{0.01, 0.001, 1.1e-8, 1.1e-8, 1e-8, 1e-8, 1.3};
  for (int g : {2, 4, 8, 16}) {
    const int n = g <= 4 ? 1 : g / 4;
    for (double b : {8.0, 32.0}) {
      for (int s : {0, 2}) {
        const double lhs = sia::projected_throughput(kKnown, seed, n, g, b, s);
        const double rhs = sia::throughput(seed, 1, 1, b, s) / sia::throughput(kKnown, 1, 1, b, s) *
                           sia::throughput(kKnown, n, g, b, s);
        CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
      }
    }
  }
  // At one GPU the projection is the seed itself.
  CHECK(sia::projected_step_time(kKnown, seed, 1, 1, 16, 0) == doctest::Approx(sia::step_time(seed, 1, 1, 16, 0)));
  // The reference's 1-GPU throughput: max batch over max step time, not necessarily of one row.
  const std::vector<sia::OneGpuSample> rows = {{16, 0.2}, {32, 0.5}};
  CHECK(sia::one_gpu_throughput(rows) == doctest::Approx(32 / 0.5));
  CHECK(sia::one_gpu_throughput({}) == 0.0);
}

TEST_CASE("goodput.job_model.eq1_scales_known_curve") {
  // Y is 3x faster than X on one GPU at every batch size; Eq. 1 then predicts 3x X's goodput on
  // every configuration (same limits -> same batch choice).
  sia::JobModel m = sia::JobModel().init_batch_size(32).max_batch_size(2048).grad(sia::GradParams{0.5, 20.0});
  m.add_type(known_type("x")).add_type(seed_type("y", 3.0));
  REQUIRE_NOTHROW(m.validate());
  const sia::GpuTypeSpec x("x", 16, 4), y("y", 16, 4);
  for (int g : {1, 2, 4, 8, 16, 32}) {
    const int n = g <= 4 ? 1 : g / 4;
    const sia::ConfigurationSpec c{0, n, g};
    const sia::GoodputChoice gx = m.evaluate(x, c);
    const sia::GoodputChoice gy = m.evaluate(y, c);
    CAPTURE(g);
    REQUIRE(gx.goodput > 0);
    if (g == 1) {
      // 1 GPU: Y's own seed, which is exactly 3x X's 1-GPU compute (network 0 on both).
      CHECK(gy.goodput == doctest::Approx(3.0 * gx.goodput).epsilon(1e-6));
    } else {
      CHECK(gy.goodput == doctest::Approx(3.0 * gx.goodput).epsilon(1e-9));
      CHECK(gy.batch.global_batch == gx.batch.global_batch);
    }
  }
  // The job model's (pruned, hoisted) Eq. 1 optimisation equals the plain one over projected_step_time.
  for (int g : {2, 8, 32}) {
    const int n = g <= 4 ? 1 : g / 4;
    const sia::PerfParams py = *m.type("y")->seed;
    const sia::GoodputChoice plain = sia::optimize_batch(
        g, 32, m.limits(*m.type("y")),
        [&](double b, int s) { return sia::projected_step_time(kKnown, py, n, g, b, s); },
        [&](double gl) {
          return sia::efficiency(sia::GradParams{0.5, 20.0}, gl, 32);
        });
    const sia::GoodputChoice got = m.evaluate(y, sia::ConfigurationSpec{0, n, g});
    CHECK(got.goodput == doctest::Approx(plain.goodput).epsilon(1e-12));
    CHECK(got.batch.global_batch == plain.batch.global_batch);
  }
  // Without a known type, Y's seed alone predicts linear scaling ("assume throughput doubles").
  sia::JobModel only_seed = sia::JobModel().init_batch_size(32).max_batch_size(32).kind(sia::JobKind::strong_scaling);
  only_seed.add_type(seed_type("y", 1.0));
  const double t1 = only_seed.evaluate(y, sia::ConfigurationSpec{0, 1, 1}).throughput;  // local batch 32
  only_seed.max_batch_size(64);
  const double t2 = only_seed.evaluate(y, sia::ConfigurationSpec{0, 1, 2}).throughput;  // 2 x local batch 32
  CHECK(t2 == doctest::Approx(2 * t1).epsilon(1e-6));
  // Unknown type: not usable.
  CHECK(m.goodput(sia::GpuTypeSpec("z", 1, 8), sia::ConfigurationSpec{0, 1, 1}) == 0.0);
  // ProjectionMode::none: Y falls back to its seed (linear), not to X's scaling.
  m.projection(sia::ProjectionMode::none);
  CHECK(m.evaluate(y, sia::ConfigurationSpec{0, 4, 16}).goodput >
        3.0 * m.evaluate(x, sia::ConfigurationSpec{0, 4, 16}).goodput);
}

TEST_CASE("goodput.job_model.reference_variant") {
  sia::JobModel m = sia::JobModel().init_batch_size(32).max_batch_size(2048).projection(sia::ProjectionMode::reference);
  sia::TypeModel y = seed_type("y", 2.0);
  y.max_local = 64;  // Y's own limit is ignored by the reference variant (X's limits apply)
  y.xput1 = 500.0;
  sia::TypeModel x = known_type("x");
  x.xput1 = 250.0;
  m.add_type(x).add_type(y);
  const sia::GpuTypeSpec ty("y", 4, 8);
  // 16 GPUs of Y (2 nodes of 8) = X's curve on ceil(16/4) = 4 nodes, times 500/250.
  const sia::GoodputChoice got = m.evaluate(ty, sia::ConfigurationSpec{1, 2, 16});
  // No gradient statistics: the smallest batch 16 GPUs hold, max(32, 8 * 16) = 128 (grad()).
  sia::BatchLimits lim = m.limits(x);
  lim.max_batch_size = 128;
  const sia::GoodputChoice want = sia::GoodputFunction{kKnown, std::nullopt, 32}.optimize(4, 16, lim);
  CHECK(got.goodput == doctest::Approx(2.0 * want.goodput));
  CHECK(got.batch.local_batch == want.batch.local_batch);
}

TEST_CASE("goodput.job_model.first_placement") {
  // A job no type has a fitted model for: valued by its seeds (default), all alike (tie) or by each
  // type's 1-GPU throughput (profiled).
  sia::TypeModel a = seed_type("a", 1.0);
  a.xput1 = 100.0;
  sia::TypeModel b = seed_type("b", 3.0);
  b.xput1 = 250.0;
  sia::JobModel m = sia::JobModel().init_batch_size(32).max_batch_size(2048).add_type(a).add_type(b);
  const sia::GpuTypeSpec ta("a", 4, 4), tb("b", 4, 4);
  const sia::ConfigurationSpec one{0, 1, 1};
  CHECK(m.first_placement() == sia::FirstPlacement::seed);
  CHECK(m.goodput(tb, one) == doctest::Approx(3.0 * m.goodput(ta, one)).epsilon(1e-6));
  m.first_placement(sia::FirstPlacement::tie);
  CHECK(m.goodput(ta, one) == 1.0);
  CHECK(m.goodput(tb, one) == 1.0);
  CHECK(m.batch_size(tb, one).global_batch == 0);  // no batch choice before the first run
  m.first_placement(sia::FirstPlacement::profiled);
  CHECK(m.goodput(ta, one) == 100.0);
  CHECK(m.goodput(tb, one) == 250.0);
  // Rigid jobs are never tied: the reference values them by profiled throughput.
  m.first_placement(sia::FirstPlacement::tie).kind(sia::JobKind::rigid);
  CHECK(m.goodput(tb, sia::ConfigurationSpec{0, 1, 4}) == 250.0);
  // Once a type has a fitted model, first placement no longer applies: the others are projected.
  m.kind(sia::JobKind::adaptive).add_type(known_type("x"));
  CHECK(m.goodput(ta, one) != 1.0);
  // A configuration beyond the model's node range is not usable.
  sia::TypeModel x = known_type("x");
  x.max_nodes = 2;
  m.add_type(x);
  const sia::GpuTypeSpec tx("x", 8, 4);
  CHECK(m.goodput(tx, sia::ConfigurationSpec{0, 2, 8}) > 0.0);
  CHECK(m.goodput(tx, sia::ConfigurationSpec{0, 3, 12}) == 0.0);
}

TEST_CASE("goodput.job_model.kinds_and_validation") {
  sia::JobModel m = sia::JobModel().init_batch_size(64).max_batch_size(512).kind(sia::JobKind::strong_scaling);
  m.add_type(known_type("x"));
  const sia::GpuTypeSpec x("x", 4, 4);
  const sia::BatchChoice b = m.batch_size(x, sia::ConfigurationSpec{0, 1, 2});
  CHECK(b.global_batch == 512);  // fixed batch: 2 GPUs x 128 x 2 micro-steps
  CHECK(b.local_batch == 128);
  CHECK(b.accumulation_steps == 1);
  // No gradient statistics: efficiency 1.
  CHECK(m.evaluate(x, sia::ConfigurationSpec{0, 1, 2}).efficiency == 1.0);
  // Bad fields are named.
  sia::JobModel bad = sia::JobModel().init_batch_size(64).max_batch_size(32);
  CHECK_THROWS_WITH_AS(bad.validate("jobs[0].model"), doctest::Contains("jobs[0].model.max_batch_size"),
                       sia::InvalidArgument);
  sia::TypeModel t = known_type("x");
  t.min_local = 256;  // > max_local 128: refused when added
  CHECK_THROWS_WITH_AS(sia::JobModel().add_type(t), "JobModel.types['x'].min_local: 256 > max_local 128",
                       sia::InvalidArgument);
  CHECK_THROWS_WITH_AS(sia::JobModel().grad(sia::GradParams{-1, 2}), doctest::Contains("JobModel.grad"),
                       sia::InvalidArgument);
  // Invalid configurations are simply not usable.
  CHECK(m.goodput(x, sia::ConfigurationSpec{0, 2, 1}) == 0.0);
  CHECK(m.goodput(x, sia::ConfigurationSpec{0, 0, 0}) == 0.0);
}

// Each setter refuses a bad value at once, naming the field and the value (issue 15).
TEST_CASE("goodput.job_model.setters_validate") {
  using sia::InvalidArgument;
  CHECK_THROWS_WITH_AS(sia::JobModel().init_batch_size(-1),
                       "JobModel.init_batch_size: must be a finite number in (0, 1e12], got -1", InvalidArgument);
  CHECK_THROWS_WITH_AS(sia::JobModel().init_batch_size(std::nan("")), doctest::Contains("got nan"), InvalidArgument);
  CHECK_THROWS_WITH_AS(sia::JobModel().max_batch_size(1e13), doctest::Contains("JobModel.max_batch_size"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(sia::JobModel().microbatches(0), "JobModel.microbatches: must be >= 1, got 0", InvalidArgument);
  CHECK_THROWS_WITH_AS(sia::JobModel().candidates(0), doctest::Contains("JobModel.candidates"), InvalidArgument);
  CHECK_THROWS_WITH_AS(sia::JobModel().kind(static_cast<sia::JobKind>(9)), doctest::Contains("JobModel.kind"),
                       InvalidArgument);
  sia::TypeModel t = known_type("x");
  t.stages = 0;
  CHECK_THROWS_WITH_AS(sia::JobModel().add_type(t), "JobModel.types['x'].stages: must be >= 1, got 0", InvalidArgument);
  t = known_type("");
  CHECK_THROWS_WITH_AS(sia::JobModel().add_type(t), doctest::Contains("empty GPU type name"), InvalidArgument);
  t = known_type("x");
  t.perf->alpha_c = -1;
  CHECK_THROWS_WITH_AS(sia::JobModel().add_type(t), doctest::Contains("JobModel.types['x'].perf"), InvalidArgument);
  // A refused value leaves the model as it was.
  sia::JobModel m = sia::JobModel().init_batch_size(32);
  CHECK_THROWS_AS(m.init_batch_size(0), InvalidArgument);
  CHECK(m.init_batch_size() == 32);
}

// Without gradient statistics an adaptive job runs at its initial batch size (the smallest its GPUs
// hold), not the largest the limits allow; with them it tunes its batch.
TEST_CASE("goodput.job_model.no_grad_starts_at_init_batch") {
  sia::JobModel m = sia::JobModel().init_batch_size(32).max_batch_size(2048).add_type(known_type("x"));
  const sia::GpuTypeSpec x("x", 4, 4);
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 1, 1}).global_batch == 32);
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 1, 2}).global_batch == 32);
  // 8 GPUs x min_local 8 = 64 > 32: the smallest batch the GPUs hold.
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 2, 8}).global_batch == 64);
  CHECK(m.goodput(x, sia::ConfigurationSpec{0, 2, 8}) > 0.0);
  // A configuration whose smallest batch exceeds max_batch_size is not usable, as with statistics.
  sia::JobModel small = sia::JobModel().init_batch_size(32).max_batch_size(32).add_type(known_type("x"));
  CHECK(small.goodput(x, sia::ConfigurationSpec{0, 2, 8}) == 0.0);
  // With statistics the batch is tuned (here: larger than the initial one on 1 GPU).
  m.grad(sia::GradParams{0.5, 20.0});
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 1, 1}).global_batch > 32);
  // Strong-scaling jobs keep their fixed batch with or without statistics.
  sia::JobModel s = sia::JobModel().kind(sia::JobKind::strong_scaling).init_batch_size(32).max_batch_size(256);
  s.add_type(known_type("x"));
  CHECK(s.batch_size(x, sia::ConfigurationSpec{0, 1, 2}).global_batch == 256);
}

TEST_CASE("goodput.job_model.hybrid_no_grad_starts_at_init_batch") {
  // A hybrid job of 2-GPU pipelines and 4 micro-batches: the global batch is pipelines x m x 4.
  sia::TypeModel t = known_type("x");
  t.stages = 2;
  t.min_local = 1;
  t.max_local = 64;
  sia::JobModel m = sia::JobModel().kind(sia::JobKind::hybrid).microbatches(4).init_batch_size(30).max_batch_size(4096);
  m.add_type(t);
  const sia::GpuTypeSpec x("x", 4, 4);
  // 1 pipeline: m = 8 (32 >= 30), not the largest batch the range allows (1 x 64 x 4 = 256).
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 1, 2}).global_batch == 32);
  // 2 pipelines: m = 4 (2 x 4 x 4 = 32).
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 1, 4}).global_batch == 32);
  // 8 pipelines: the smallest micro-batch already exceeds the initial batch (8 x 1 x 4 = 32 >= 30).
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 4, 16}).global_batch == 32);
  CHECK(m.goodput(x, sia::ConfigurationSpec{0, 1, 4}) > 0.0);
  // With statistics the batch is tuned, as for adaptive jobs.
  m.grad(sia::GradParams{0.5, 20.0});
  CHECK(m.batch_size(x, sia::ConfigurationSpec{0, 1, 2}).global_batch > 32);
}

TEST_CASE("goodput.job_model.seed_type_model") {
  std::vector<sia::PerfObservation> rows;
  for (double b : {4.0, 8.0, 16.0}) rows.push_back({1, 1, b, 0.01 + 0.002 * b, 0.0001});
  const sia::TypeModel t = sia::make_seed_type_model("t4", rows);
  REQUIRE(t.seed.has_value());
  CHECK(t.min_local == 4);
  CHECK(t.max_local == 16);
  CHECK(t.xput1 == doctest::Approx(16 / (0.01 + 0.002 * 16)));
  CHECK(sia::step_time(*t.seed, 1, 1, 8, 0) == doctest::Approx(0.01 + 0.002 * 8).epsilon(0.02));
  CHECK_THROWS_AS((void)sia::make_seed_type_model("t4", std::vector<sia::PerfObservation>{}), sia::InvalidArgument);
}

TEST_CASE("goodput.pipeline.gpipe_model") {
  sia::PipelineParams p{sia::PerfParams{0.0, 0.1, 0.2, 0.01, 0.02, 0.001, 1.0}, 2, 48};
  // 2 pipelines of 2 stages on one node: 3 * (1 + 48) * fwd(1) + T_net(1, 4).
  CHECK(sia::pipeline_step_time(p, 1, 2, 1) == doctest::Approx(3 * 49 * 0.1 + 0.02 + 0.001 * 2));
  CHECK(sia::pipeline_throughput(p, 1, 2, 1) == doctest::Approx(2 * 48 / (3 * 49 * 0.1 + 0.022)));
  sia::PipelineGoodputFunction f{p, std::nullopt, 12};
  const sia::BatchLimits lim{384, 1, 2};
  const sia::GoodputChoice c = f.optimize(1, 4, lim);
  CHECK(c.batch.global_batch == 192);  // 2 pipelines x micro 2 x 48
  CHECK(c.batch.local_batch == 2);
  CHECK(c.batch.accumulation_steps == 47);
  CHECK(f.optimize(1, 3, lim).goodput == 0.0);   // not a multiple of the stages
  CHECK(f.optimize(2, 16, lim).goodput > 0.0);   // 8 pipelines x 1 x 48 = 384
  CHECK(f.optimize(4, 32, lim).goodput == 0.0);  // 16 pipelines exceed the batch limit
  // Fitting recovers noise-free profiles exactly.
  std::vector<sia::PipelineObservation> obs;
  for (int d : {1, 2, 4, 8})
    for (double m : {1.0, 2.0}) {
      const int gpus = d * 2;
      const int nodes = gpus <= 8 ? 1 : gpus / 8;
      obs.push_back({nodes, gpus, d, m, sia::accum_time(p.perf, m) + 1e-9,
                     gpus > 1 ? sia::network_time(p.perf, nodes, gpus) : 0.0});
    }
  const sia::PipelineParams q = sia::fit_pipeline_params(obs, 2);
  for (const auto& o : obs)
    CHECK(sia::pipeline_step_time(q, o.nodes, o.pipelines, o.micro_bsz) ==
          doctest::Approx(sia::pipeline_observed_step_time(q, o)).epsilon(0.02));
  CHECK_THROWS_AS((void)sia::fit_pipeline_params(std::vector<sia::PipelineObservation>{}, 2), sia::InvalidArgument);
}

TEST_CASE("goodput.job_model.artifact_profiles") {
  const std::filesystem::path dir = SIA_SHARED_DIR "/data/sia-artifact";
  if (!std::filesystem::exists(dir / "profiles/cifar10")) {
    MESSAGE("skipped: " << (dir / "profiles/cifar10").string() << " is missing");
    return;
  }
  // A cifar10 job that ran on rtx (multi-GPU) and has only seed profiles for the T4 (aws).
  const sia::sim::ModelProfile mp = sia::sim::load_model_profile(dir / "profiles", "cifar10");
  const sia::sim::SeedProfile seed = sia::sim::load_seed_profile(dir / "seed-profiles/cifar10.csv");
  std::vector<sia::PerfObservation> rtx_obs;
  for (const auto& r : mp.type("rtx")->all_rows())
    if (r.gpus <= 8) rtx_obs.push_back({r.nodes, r.gpus, static_cast<double>(r.local_bsz), r.step_time, r.sync_time});
  sia::TypeModel rtx;
  rtx.gpu_type = "rtx";
  rtx.perf = sia::fit_perf_params(rtx_obs);
  rtx.min_local = mp.type("rtx")->min_local_bsz();
  rtx.max_local = mp.type("rtx")->max_local_bsz();
  std::vector<sia::PerfObservation> t4;
  for (const auto& r : seed.rows_for("aws"))
    t4.push_back({1, 1, static_cast<double>(r.local_bsz), r.step_time, r.sync_time});
  sia::JobModel m = sia::JobModel()
                        .init_batch_size(static_cast<double>(mp.init_batch_size()))
                        .max_batch_size(static_cast<double>(mp.max_batch_size()))
                        .grad(sia::GradParams{mp.validation[0].rows[1].grad_sqr, mp.validation[0].rows[1].grad_var})
                        .add_type(rtx)
                        .add_type(sia::make_seed_type_model("aws", t4));
  REQUIRE_NOTHROW(m.validate());
  const sia::GpuTypeSpec aws("aws", 6, 4);
  std::vector<double> g_of;
  for (int g : {1, 2, 4, 8}) {
    const sia::GoodputChoice c = m.evaluate(aws, sia::ConfigurationSpec{0, g <= 4 ? 1 : 2, g});
    CHECK(c.goodput > 0.0);
    CHECK(c.batch.local_batch <= 1024);
    CHECK(c.batch.local_batch >= 32);
    g_of.push_back(c.goodput);
  }
  CHECK(g_of[1] > g_of[0]);  // 2 T4s beat one
  CHECK(g_of[2] > g_of[1]);
}

namespace {

bool same_bits(const sia::GoodputChoice& a, const sia::GoodputChoice& b) {
  return std::bit_cast<std::uint64_t>(a.goodput) == std::bit_cast<std::uint64_t>(b.goodput) &&
         std::bit_cast<std::uint64_t>(a.throughput) == std::bit_cast<std::uint64_t>(b.throughput) &&
         std::bit_cast<std::uint64_t>(a.efficiency) == std::bit_cast<std::uint64_t>(b.efficiency) &&
         a.batch.global_batch == b.batch.global_batch && a.batch.local_batch == b.batch.local_batch &&
         a.batch.accumulation_steps == b.batch.accumulation_steps;
}

/// A small pool of models, statistics and limits, so that random queries repeat (what the memo is for).
struct MemoQueries {
  std::vector<sia::PerfParams> perfs;
  std::vector<std::optional<sia::GradParams>> grads;
  std::vector<sia::BatchLimits> limits;
  explicit MemoQueries(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int i = 0; i < 6; ++i)
      perfs.push_back(sia::PerfParams{0.01 + 0.1 * u(rng), 1e-4 + 0.01 * u(rng), 0.05 * u(rng), 0.01 * u(rng),
                                      0.02 * u(rng), 0.005 * u(rng), i == 0 ? 1.0 : 1.0 + 9.0 * u(rng)});
    grads = {std::nullopt, sia::GradParams{0.5, 20.0}, sia::GradParams{2.0, 1.0}, sia::GradParams{1e-3, 5e3}};
    for (int i = 0; i < 4; ++i) {
      sia::BatchLimits l;
      l.max_batch_size = i == 3 ? 0.0 : 256.0 * (1 << (2 * i));
      l.min_local = i == 2 ? 0 : 4 * (i + 1);
      l.max_local = i == 1 ? 0 : 64 * (i + 1);
      l.tune = i != 2;
      l.accumulation = i != 3;
      limits.push_back(l);
    }
  }
};

}  // namespace

TEST_CASE("goodput.memo.same_bits_as_optimize") {
  // Every answer of the memo is the optimisation's own, bit for bit, whether it comes from the memo's newer
  // generation, its older one, or a fresh optimisation (a capacity of 7 turns the generations over often).
  const MemoQueries q(11);
  std::mt19937_64 rng(3);
  for (const std::size_t capacity : {std::size_t{7}, std::size_t{1} << 15}) {
    sia::GoodputMemo memo(capacity);
    int mismatches = 0;
    for (int i = 0; i < 20000; ++i) {
      const sia::GoodputFunction f{q.perfs[rng() % q.perfs.size()], q.grads[rng() % q.grads.size()],
                                   rng() % 2 == 0 ? 32.0 : 128.0};
      const int nodes = 1 + static_cast<int>(rng() % 4);
      const int replicas = nodes + static_cast<int>(rng() % 16);
      const sia::BatchLimits& lim = q.limits[rng() % q.limits.size()];
      if (!same_bits(memo.optimize(f, nodes, replicas, lim), f.optimize(nodes, replicas, lim))) ++mismatches;
    }
    CHECK(mismatches == 0);
    const auto st = memo.stats();
    CHECK(st.lookups == 20000);
    CHECK(st.hits > (capacity > 100 ? 5000U : 0U));  // 6 x 4 x 2 x 4 x ~40 shapes: about half the queries repeat
  }
  // Keys are bits: -0 and +0, or statistics absent and present, are different inputs.
  sia::GoodputMemo memo;
  sia::PerfParams p = q.perfs[1];
  p.alpha_n = 0.0;
  sia::PerfParams m = p;
  m.alpha_n = -0.0;
  const sia::BatchLimits& lim = q.limits[0];
  (void)memo.optimize(sia::GoodputFunction{p, std::nullopt, 32.0}, 2, 8, lim);
  CHECK(same_bits(memo.optimize(sia::GoodputFunction{m, std::nullopt, 32.0}, 2, 8, lim),
                  sia::GoodputFunction{m, std::nullopt, 32.0}.optimize(2, 8, lim)));
  CHECK(same_bits(memo.optimize(sia::GoodputFunction{p, sia::GradParams{0.0, 0.0}, 32.0}, 2, 8, lim),
                  sia::GoodputFunction{p, sia::GradParams{0.0, 0.0}, 32.0}.optimize(2, 8, lim)));
  CHECK(memo.stats().hits == 0);
}

TEST_CASE("goodput.memo.threads_and_job_models") {
  // Two threads asking at once (the simulator's round and its filler) get the optimisation's bits.
  const MemoQueries q(5);
  auto memo = std::make_shared<sia::GoodputMemo>(64);
  std::atomic<int> mismatches{0};
  auto ask = [&](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 5000; ++i) {
      const sia::GoodputFunction f{q.perfs[rng() % 3], q.grads[rng() % 2], 64.0};
      const int replicas = 1 + static_cast<int>(rng() % 8);
      const sia::BatchLimits& lim = q.limits[rng() % 2];
      if (!same_bits(memo->optimize(f, 1, replicas, lim), f.optimize(1, replicas, lim))) ++mismatches;
    }
  };
  std::thread other(ask, 1);
  ask(2);
  other.join();
  CHECK(mismatches == 0);
  CHECK(memo->stats().lookups == 10000);

  // A JobModel answers the same with a memo, shared with another model, as without (every projection mode; the
  // reference projection asks the known type's optimisation once per GPU count for every node count and type).
  for (const auto mode : {sia::ProjectionMode::reference, sia::ProjectionMode::paper, sia::ProjectionMode::equal,
                          sia::ProjectionMode::none}) {
    sia::TypeModel x = known_type("x");
    x.xput1 = 250.0;
    sia::TypeModel y = seed_type("y", 2.0);
    y.xput1 = 500.0;
    sia::JobModel plain =
        sia::JobModel().init_batch_size(32).max_batch_size(2048).projection(mode).add_type(x).add_type(y);
    plain.grad(sia::GradParams{0.5, 20.0});
    sia::JobModel memoised = plain;
    memoised.memo(memo);
    sia::JobModel other_job = plain;
    other_job.memo(memo);
    const sia::GpuTypeSpec tx("x", 4, 4), ty("y", 4, 8);
    for (int round = 0; round < 2; ++round)
      for (const auto* t : {&tx, &ty})
        for (int nodes = 1; nodes <= 4; ++nodes)
          for (int gpus = nodes; gpus <= nodes * t->gpus_per_node(); ++gpus) {
            const sia::ConfigurationSpec c{t == &tx ? 0 : 1, nodes, gpus};
            CHECK(same_bits(memoised.evaluate(*t, c), plain.evaluate(*t, c)));
            CHECK(same_bits(other_job.evaluate(*t, c), plain.evaluate(*t, c)));
          }
  }
}
