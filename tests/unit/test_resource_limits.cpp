// Resource limits (issue 9 §5): absurd requests are rejected with a clear message or handled, in
// bounded time and memory. Every input is built in memory; each case stays well under a second
// in a Debug build.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "unit/fault_solver.hpp"

namespace {

using namespace sia;

constexpr const char* two_types = R"("cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2},
                                                               {"name": "B", "nodes": 1, "gpus_per_node": 4}]})";

std::string request_with(const std::string& policy, const std::string& job_fields, const std::string& goodput) {
  std::ostringstream o;
  o << "{" << two_types << ", \"policy\": {" << policy << "}, \"jobs\": [{\"id\": \"J1\"" << job_fields
    << ", \"goodput\": [" << goodput << "]}, {\"id\": \"J2\", \"goodput\": [{\"gpu_type\": \"B\", \"gpus\": 2, "
    << "\"value\": 3}]}]}";
  return o.str();
}

/// Rejection message — of the request, or of its first rejected job ("limits.json: <field>:
/// <reason>", the all-or-nothing message) — or nullopt when the request was accepted whole (then
/// the round ran and was checked: valid allocation, finite objective).
std::optional<std::string> outcome(const std::string& text) {
  Request req;
  try {
    req = parse_request(text, "limits.json");
  } catch (const InvalidArgument& e) {
    return std::string(e.what());
  }
  if (!req.rejected.empty()) return "limits.json: " + req.rejected[0].field + ": " + req.rejected[0].reason;
  RoundResult r;
  try {
    r = run_round(req.cluster, req.jobs, req.options);
  } catch (const InvalidArgument& e) {
    return std::string(e.what());
  }
  if (!r.rejected.empty()) return "limits.json: " + r.rejected[0].field + ": " + r.rejected[0].reason;
  test::check_round_valid(req.cluster, req.jobs, req.options, r);
  CHECK(std::isfinite(r.objective));
  for (double p : r.prices) CHECK(std::isfinite(p));
  const auto json = decision_to_json(req, r);
  CHECK(json.find("nan") == std::string::npos);
  CHECK(json.find("inf") == std::string::npos);
  return std::nullopt;
}

void check_rejected(const std::string& text, const std::string& fragment) {
  const auto m = outcome(text);
  REQUIRE_MESSAGE(m.has_value(), "accepted, expected a rejection naming " << fragment);
  CAPTURE(*m);
  CHECK(m->find(fragment) != std::string::npos);
  // Bounded by the input: messages quote the offending name in full (a 4 MB field name gives a
  // 4 MB message; see docs/reliability.md), but never more than that.
  CHECK(m->size() < text.size() + 4096);
}

template <class F>
double ms_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("hardening.limits.job_count") {
  // 1,000,001 jobs: rejected on the count alone (the entries are not even looked at).
  std::string text = std::string("{") + two_types + ", \"jobs\": [";
  text.reserve(text.size() + 2'000'010);
  for (int i = 0; i <= 1'000'000; ++i) text += i ? ",0" : "0";
  text += "]}";
  double ms = ms_of([&] { check_rejected(text, "jobs"); });
  CHECK(ms < 20000.0);
  MESSAGE("1,000,001 jobs rejected in " << ms << " ms");
}

TEST_CASE("hardening.limits.cluster_size") {
  check_rejected(R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 100000, "gpus_per_node": 8}]}, "jobs": []})",
                 "gpu_types[0]");
  check_rejected(R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 1e30, "gpus_per_node": 8}]}, "jobs": []})",
                 "nodes");
  check_rejected(
      R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 99999999999999999999999, "gpus_per_node": 8}]}, "jobs": []})",
      "nodes");
  check_rejected(R"({"cluster": {"gpu_types": [{"name": "A", "nodes": -0.0, "gpus_per_node": 0}]}, "jobs": []})",
                 "gpus_per_node");
  // The largest cluster accepted (100,000 GPUs of one type, 12,500 nodes: ~12,500 configurations)
  // with a few jobs is handled quickly.
  std::ostringstream o;
  o << R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 12500, "gpus_per_node": 8}]}, "policy": {"prices": false}, "jobs": [)";
  for (int i = 0; i < 20; ++i)
    o << (i ? "," : "") << R"({"id": "j)" << i << R"(", "goodput": [{"gpu_type": "A", "gpus": 8, "value": 1},
         {"gpu_type": "A", "gpus": 800, "value": 50}, {"gpu_type": "A", "gpus": 80000, "value": 900}]})";
  o << "]}";
  const double ms = ms_of([&] { CHECK_FALSE(outcome(o.str()).has_value()); });
  CHECK(ms < 10000.0);
  MESSAGE("100,000-GPU type with 20 jobs: " << ms << " ms");
}

TEST_CASE("hardening.limits.absurd_numbers") {
  const std::string ok_goodput = R"({"gpu_type": "B", "gpus": 4, "value": 4})";
  // p = 1e308 or -1e308: utilities overflow unless handled.
  for (const char* p : {"1e308", "-1e308", "1e-320", "-1e-320"}) {
    CAPTURE(p);
    const auto m = outcome(request_with(std::string("\"p\": ") + p, "", ok_goodput));
    if (m) CHECK(m->find("p") != std::string::npos);
  }
  check_rejected(request_with("\"p\": -0.0", "", ok_goodput), "p");
  check_rejected(request_with("\"p\": 1e400", "", ok_goodput), "");  // not a double: malformed/out of range
  for (const char* l : {"1e308", "1e-320"}) {
    CAPTURE(l);
    const auto m = outcome(request_with(std::string("\"lambda\": ") + l, "", ok_goodput));
    if (m) CHECK_FALSE(m->empty());
  }
  check_rejected(request_with("\"lambda\": -0.0", "", ok_goodput), "lambda");
  check_rejected(request_with("\"relative_gap\": 1e308", "", ok_goodput), "relative_gap");
  // time limits: huge is fine (clamped or accepted), negative zero is 0 ms.
  for (const char* t : {"9007199254740992", "1e308", "-0.0"}) {
    CAPTURE(t);
    const auto m = outcome(request_with(std::string("\"time_limit_ms\": ") + t, "", ok_goodput));
    if (m) CHECK(m->find("time_limit_ms") != std::string::npos);
  }
  // Goodput values across the whole double range in one job, and denormals.
  for (const char* v : {"1e308", "1e-320", "4.9e-324", "-0.0", "1.7976931348623157e308"}) {
    CAPTURE(v);
    const auto m = outcome(request_with("", "",
                                        std::string(R"({"gpu_type": "A", "gpus": 1, "value": )") + v +
                                            R"(}, {"gpu_type": "B", "gpus": 4, "value": 1e-300})"));
    if (m) CHECK(m->find("value") != std::string::npos);
  }
  // Job fields.
  check_rejected(request_with("", R"(, "max_gpus": 1e30)", ok_goodput), "max_gpus");
  check_rejected(request_with("", R"(, "restarts": 18446744073709551616)", ok_goodput), "restarts");
  check_rejected(request_with("", R"(, "min_gpus": -0.5)", ok_goodput), "min_gpus");
  for (const char* a : {"1e308", "-0.0", "1e-320"}) {
    CAPTURE(a);
    const auto m =
        outcome(request_with("", std::string(R"(, "age_s": )") + a + R"(, "restart_cost_s": 1e308)", ok_goodput));
    if (m) CHECK((m->find("age_s") != std::string::npos || m->find("restart_cost_s") != std::string::npos));
  }
}

TEST_CASE("hardening.limits.deep_nesting") {
  for (int depth : {65, 10'000, 1'000'000}) {
    CAPTURE(depth);
    std::string text = std::string("{") + two_types + ", \"jobs\": ";
    text += std::string(static_cast<std::size_t>(depth), '[');
    text += std::string(static_cast<std::size_t>(depth), ']');
    text += "}";
    const double ms = ms_of([&] { check_rejected(text, "nested deeper than"); });
    CHECK(ms < 5000.0);
  }
  // Deep nesting inside a string is not nesting.
  const std::string id(250, '[');  // within RequestLimits::max_name_bytes
  std::string text = request_with("", "", R"({"gpu_type": "B", "gpus": 4, "value": 4})");
  text.replace(text.find("\"J1\""), 4, "\"" + id + "\"");
  CHECK_FALSE(outcome(text).has_value());
}

TEST_CASE("hardening.limits.long_strings") {
  const std::string big(4'000'000, 'x');
  // A 4 MB unknown field name, GPU type name and job id: rejected or handled, message bounded.
  auto text = request_with("", ", \"" + big + "\": 1", R"({"gpu_type": "B", "gpus": 4, "value": 4})");
  double ms = ms_of([&] { check_rejected(text, "unknown field"); });
  CHECK(ms < 5000.0);
  text = request_with("", "", R"({"gpu_type": ")" + big + R"(", "gpus": 4, "value": 4})");
  ms = ms_of([&] { check_rejected(text, "gpu_type"); });
  CHECK(ms < 5000.0);
  // Duplicate 4 MB job ids: refused for their length first.
  std::string dup = std::string("{") + two_types + R"(, "jobs": [{"id": ")" + big + R"(", "goodput": []}, {"id": ")" +
                    big + R"(", "goodput": []}]})";
  ms = ms_of([&] { check_rejected(dup, "a name of 4000000 bytes"); });  // over RequestLimits::max_name_bytes
  CHECK(ms < 5000.0);
}

// A pathological name is shortened in messages (its length is reported instead): a 4 MB field
// name or job id used to come back as a 4 MB message.
TEST_CASE("hardening.limits.huge_names_in_messages") {
  const std::string huge(4'000'000, 'x');
  const auto field = outcome(request_with("", ", \"" + huge + "\": 1", R"({"gpu_type": "A", "gpus": 1, "value": 1})"));
  REQUIRE(field.has_value());
  CHECK(field->size() < 2000);
  CHECK(field->find("4000000 bytes") != std::string::npos);
  CHECK(field->find("unknown field") != std::string::npos);
  // A huge id in a message: two jobs with the same id.
  std::ostringstream o;
  o << "{" << two_types << R"(, "jobs": [)";
  for (int k = 0; k < 2; ++k)
    o << (k ? "," : "") << R"({"id": ")" << huge << R"(", "goodput": [{"gpu_type": "B", "gpus": 4, "value": 1}]})";
  o << "]}";
  const auto id = outcome(o.str());
  REQUIRE(id.has_value());
  CHECK(id->size() < 2000);
  CHECK_MESSAGE(id->find("4000000 bytes") != std::string::npos, id->substr(0, 300));
}
