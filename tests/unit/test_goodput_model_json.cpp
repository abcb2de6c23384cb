// Tests of the `model` form of a job in sia_allocate's JSON request.

#include <doctest/doctest.h>

#include "io/model_json.hpp"

#include <sia/error.hpp>

#include <nlohmann/json.hpp>

namespace {

sia::ClusterSpec cluster() {
  sia::ClusterSpec c;
  c.types = {sia::GpuTypeSpec("t4", 6, 4), sia::GpuTypeSpec("a100", 2, 8)};
  return c;
}

nlohmann::json example() {
  return nlohmann::json::parse(R"({
    "init_batch_size": 128, "max_batch_size": 4096,
    "grad": {"sqr": 0.5, "var": 20.0},
    "perf": {"a100": {"alpha_c": 0.024, "beta_c": 8.7e-5, "alpha_n": 0.014, "beta_n": 7.7e-4,
                      "alpha_r": 0.0127, "beta_r": 1.36e-3, "gamma": 2.53}},
    "seed": {"t4": {"alpha_c": 0.0176, "beta_c": 6.99e-4}},
    "local_batch": {"a100": [32, 4096], "t4": [32, 1024]}
  })");
}

}  // namespace

TEST_CASE("goodput.model_json.parses_and_evaluates") {
  const auto c = cluster();
  const sia::JobModel m = sia::detail::parse_model_json(example(), c, "jobs[0].model");
  REQUIRE(m.types().size() == 2);
  CHECK(m.type("a100")->perf.has_value());
  CHECK(m.type("a100")->gpus_per_node == 8);
  CHECK(m.type("t4")->seed->alpha_n == 1e-8);
  CHECK(m.type("t4")->max_local == 1024);
  CHECK(m.projection() == sia::ProjectionMode::paper);
  const double g = m.goodput(c.types[0], sia::ConfigurationSpec{0, 2, 8});  // projected from a100
  CHECK(g > 0.0);
  const sia::BatchChoice b = m.batch_size(c.types[0], sia::ConfigurationSpec{0, 2, 8});
  CHECK(b.local_batch >= 32);
  CHECK(b.local_batch <= 1024);
  sia::JobSpec job("J1");
  job.kind(sia::JobKind::strong_scaling);
  sia::detail::apply_model_json(job, example(), c, "jobs[0].model");
  CHECK(job.has_goodput());
  CHECK(job.has_batch_size());
  CHECK(job.batch_size(c.types[1], sia::ConfigurationSpec{1, 1, 8}).global_batch == 4096);  // fixed batch
}

TEST_CASE("goodput.model_json.errors_name_the_field") {
  const auto c = cluster();
  auto expect = [&](nlohmann::json j, const char* needle) {
    CAPTURE(j.dump());
    CHECK_THROWS_WITH_AS((void)sia::detail::parse_model_json(j, c, "jobs[2].model"), doctest::Contains(needle),
                         sia::InvalidArgument);
  };
  auto j = example();
  j["colour"] = 1;
  expect(j, "jobs[2].model.colour: unknown field");
  j = example();
  j.erase("init_batch_size");
  expect(j, "jobs[2].model.init_batch_size: missing");
  j = example();
  j["perf"]["h100"] = j["perf"]["a100"];
  expect(j, "jobs[2].model.perf.h100: unknown GPU type");
  j = example();
  j["perf"]["a100"]["gamma"] = 0.5;
  expect(j, "jobs[2].model.perf.a100.gamma");
  j = example();
  j["perf"]["a100"]["beta_x"] = 0.5;
  expect(j, "jobs[2].model.perf.a100.beta_x: unknown field");
  j = example();
  j["perf"]["a100"]["alpha_c"] = "fast";
  expect(j, "jobs[2].model.perf.a100.alpha_c: must be a number");
  j = example();
  j["local_batch"]["t4"] = {64, 32};
  expect(j, "jobs[2].model.local_batch.t4: min 64 > max 32");
  j = example();
  j["grad"]["var"] = -1;
  expect(j, "jobs[2].model.grad.var: must be >= 0");
  j = example();
  j["max_batch_size"] = 64;
  expect(j, "jobs[2].model.max_batch_size");
  j = example();
  j["projection"] = "magic";
  expect(j, "jobs[2].model.projection");
  j = example();
  j["known_type"] = "t4";
  expect(j, "jobs[2].model.known_type");
  j = nlohmann::json::object({{"init_batch_size", 8}});
  expect(j, "at least one GPU type");
  expect(nlohmann::json::array(), "jobs[2].model: must be an object");
}
