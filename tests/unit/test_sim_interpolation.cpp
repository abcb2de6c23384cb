// Ground-truth interpolation of the simulator (reference §6.2): 1-D over the local batch for profiled
// placements, barycentric over (nodes, replicas) otherwise, gradient statistics between validated batches.
#include <doctest/doctest.h>

#include <sia/sim/application.hpp>

#include <cmath>
#include <filesystem>

using namespace sia;
using namespace sia::sim;

namespace {
ProfileRow prow(const char* placement, int nodes, int gpus, int bsz, double step, double sync) {
  ProfileRow r;
  r.placement = placement;
  r.nodes = nodes;
  r.gpus = gpus;
  r.local_bsz = bsz;
  r.step_time = step;
  r.sync_time = sync;
  return r;
}
ProfileRow srow(int nodes, int gpus, int bsz, double step, double sync) {
  return prow("", nodes, gpus, bsz, step, sync);
}
}  // namespace

TEST_CASE("sim.interp.curve_1d") {
  BszCurve c;
  c.bsz = {10, 20, 40};
  c.step = {1.0, 2.0, 3.0};
  c.sync = {0.1, 0.2, 0.4};
  CHECK(c.at(10).step == doctest::Approx(1.0));
  CHECK(c.at(15).step == doctest::Approx(1.5));
  CHECK(c.at(30).sync == doctest::Approx(0.3));
  CHECK(c.at(5).step == doctest::Approx(1.0));   // clamped below
  CHECK(c.at(80).step == doctest::Approx(3.0));  // clamped above
}

TEST_CASE("sim.interp.canonical_placement") {
  CHECK(TraceStepTimes::canonical_id({1, 3}) == "13");
  CHECK(TraceStepTimes::canonical_id({3, 1}) == "13");
  CHECK(TraceStepTimes::canonical_id({4, 0, 2, 1}) == "142");
  CHECK(TraceStepTimes::canonical_id({8}) == "8");
  CHECK(placement_of(1, 4) == std::vector<int>{4});
  CHECK(placement_of(3, 24) == std::vector<int>{8, 8, 8});
  CHECK(placement_of(2, 5) == std::vector<int>{3, 2});
}

TEST_CASE("sim.interp.exact_and_barycentric") {
  TypeProfile tp;
  tp.gpu_type = "x";
  tp.placements = {prow("4", 1, 4, 10, 1.0, 0.1), prow("4", 1, 4, 20, 2.0, 0.2), prow("31", 2, 4, 10, 7.0, 0.7),
                   prow("13", 2, 4, 10, 9.0, 0.9)};
  tp.scalability = {srow(3, 4, 10, 3.0, 0.3), srow(3, 8, 10, 5.0, 0.5)};
  TraceStepTimes tt(tp);
  // Exact placement: 1-D interpolation over the local batch.
  CHECK(tt.at({4}, 15).step == doctest::Approx(1.5));
  // Rotations of a placement are the same placement; duplicate rows are averaged.
  CHECK(tt.at({3, 1}, 10).step == doctest::Approx(8.0));
  CHECK(tt.at({1, 3}, 10).sync == doctest::Approx(0.8));
  // (2 nodes, 5 replicas) is not profiled. Profiled (nodes, replicas) points: (1,4)=1, (2,4)=8 (mean of
  // "31" and "13"), (3,4)=3, (3,8)=5. Their Delaunay triangulation is {(1,4),(2,4),(3,8)} and
  // {(2,4),(3,4),(3,8)}; (2,5) lies in the first, whose linear interpolant is f = 4 + 7 n - 2.5 r = 5.5.
  // (The other triangle containing it, (1,4),(3,4),(3,8), is not Delaunay: (2,4) is inside its circumcircle.)
  CHECK(tt.at({3, 2}, 10).step == doctest::Approx(5.5));
  CHECK(tt.at({2, 3}, 10).sync == doctest::Approx(0.55));
  // Beyond the hull: nearest profiled point.
  CHECK(tt.at({8, 8, 8, 8}, 10).step == doctest::Approx(5.0));
  // Memory limits.
  CHECK(tt.max_local_bsz({4}) == 20);
  CHECK(tt.max_local_for_replicas(4) == 20);
  CHECK(tt.max_local_for_replicas(7) == 0);
}

TEST_CASE("sim.interp.grad_table") {
  GradTable g;
  g.batch_sizes = {100, 200};
  g.epochs = {0, 2};
  g.sqr = {{1.0, 3.0}, {2.0, 4.0}};
  g.var = {{10.0, 30.0}, {20.0, 40.0}};
  CHECK(g.at(100, 0).sqr == doctest::Approx(1.0));
  CHECK(g.at(150, 0).sqr == doctest::Approx(1.5));   // between validated batch sizes
  CHECK(g.at(150, 1).var == doctest::Approx(25.0));  // between sub-sampled epochs
  CHECK(g.at(50, 5).sqr == doctest::Approx(3.0));    // clamped in both
  CHECK(g.at(400, 2).var == doctest::Approx(40.0));
}

TEST_CASE("sim.interp.artifact_profiles") {
  const std::filesystem::path dir = SIA_SHARED_DIR "/data/sia-artifact/profiles";
  if (!std::filesystem::exists(dir / "cifar10")) {
    MESSAGE("skipping: " << (dir / "cifar10").string() << " not found");
    return;
  }
  const auto mp = load_model_profile(dir, "cifar10");
  const auto app = Application::from_profile(mp, cluster_preset("paper-heterogeneous"));
  // Exact row of placements-aws.csv: placement 1, local_bsz 32.
  CHECK(app.step_time(0, {1}, 32).step == doctest::Approx(0.0427886962890625));
  // aws with 5 nodes (20 GPUs) is not profiled: interpolated between 4-node and 6-node data.
  const double s5 = app.step_time(0, {4, 4, 4, 4, 4}, 128).step;
  const double s4 = app.step_time(0, {4, 4, 4, 4}, 128).step;
  const double s6 = app.step_time(0, {4, 4, 4, 4, 4, 4}, 128).step;
  CHECK(std::isfinite(s5));
  CHECK(s5 > 0.5 * std::min(s4, s6));
  CHECK(s5 < 1.5 * std::max(s4, s6));
  CHECK(app.init_batch_size == 128);
  CHECK(app.max_batch_size == 4096);
  CHECK(app.num_epochs() == 100);
  CHECK(app.total_progress() == doctest::Approx(39062.9).epsilon(1e-4));
  CHECK(app.types[0].xput1 == doctest::Approx(1458.5).epsilon(1e-3));
  const auto ds2 =
      Application::from_profile(load_model_profile(dir, "deepspeech2"), cluster_preset("paper-heterogeneous"));
  CHECK(ds2.types[2].max_local == 57);  // the reference's rtx override
}
