// The public strict JSON reader (sia/json_reader.hpp): types, paths and positions in errors.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/json_reader.hpp>
#include <sia/request.hpp>

#include <cstddef>
#include <string>
#include <utility>

#include "io/json_position.hpp"
#include "io/json_util.hpp"

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const sia::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

// "<line>:<column>" of the first occurrence of `needle` in `text`, counted independently of the reader.
std::string position_of(const std::string& text, const std::string& needle, std::size_t from = 0) {
  const std::size_t at = text.find(needle, from);
  REQUIRE(at != std::string::npos);
  std::size_t line = 1;
  std::size_t col = 1;
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

std::string request_error(const std::string& text) {
  return error_of([&] { (void)sia::parse_request(text, "req.json"); });
}

// A request over several lines whose job `bad` is spliced in as the fourth job; strict, so that a
// job-level error is the request's (not strict, it would reject that job alone).
std::string request_with(const std::string& bad) {
  return "{\"options\": {\"strict\": true},\n"
         "  \"cluster\": {\"gpu_types\": [{\"name\": \"a\", \"nodes\": 2, \"gpus_per_node\": 4}]},\n"
         "  \"jobs\": [\n"
         "    {\"id\": \"j0\", \"goodput\": [{\"gpu_type\": \"a\", \"gpus\": 1, \"value\": 1}]},\n"
         "    {\"id\": \"j1\", \"goodput\": [{\"gpu_type\": \"a\", \"gpus\": 1, \"value\": 1}]},\n"
         "    {\"id\": \"j2\", \"goodput\": [{\"gpu_type\": \"a\", \"gpus\": 1, \"value\": 1}]},\n"
         "    " +
         bad +
         "\n"
         "  ]\n"
         "}\n";
}
}  // namespace

TEST_CASE("io.json_reader.reads_fields_with_paths") {
  const auto doc = sia::JsonDocument::parse(R"({"name": "c", "types": [{"n": 3, "x": 1.5, "on": true}]})", "f.json");
  CHECK(doc.source() == "f.json");
  const sia::JsonValue root = doc.root();
  CHECK(root.is_object());
  CHECK_NOTHROW(root.allow_only({"name", "types"}));
  CHECK(root.require("name").as_string() == "c");
  CHECK_FALSE(root.get("other").has_value());
  const auto types = root.require("types").items();
  REQUIRE(types.size() == 1);
  CHECK(types[0].path() == "types[0]");
  CHECK(types[0].require("n").as_integer(0, 10) == 3);
  CHECK(types[0].require("x").as_number() == 1.5);
  CHECK(types[0].require("on").as_bool());
  // Errors name the source, the line and column of the value, and the field path.
  CHECK(error_of([&] { (void)types[0].require("n").as_integer(5, 10); }).find("f.json:1:31: types[0].n: ") !=
        std::string::npos);
  CHECK(error_of([&] { (void)types[0].require("missing"); }).find("types[0].missing") != std::string::npos);
  CHECK(error_of([&] { root.allow_only({"name"}); }).find("types") != std::string::npos);
  CHECK(error_of([&] { (void)root.require("name").items(); }).find("name") != std::string::npos);
}

TEST_CASE("io.json_reader.strict_syntax") {
  CHECK(error_of([] { (void)sia::JsonDocument::parse("{\n \"a\": 1,\n \"a\": 2}", "d.json"); }).find("duplicate") !=
        std::string::npos);
  CHECK(error_of([] { (void)sia::JsonDocument::parse("{\"a\": 1e999}", "o.json"); }).find("o.json") !=
        std::string::npos);
  CHECK(error_of([] { (void)sia::JsonDocument::parse("{\"a\": [1, 2}", "s.json"); }).find("s.json:1:") !=
        std::string::npos);
  CHECK(error_of([] {
          (void)sia::JsonDocument::parse(std::string(100, '[') + std::string(100, ']'), "deep.json");
        }).find("deep.json") != std::string::npos);
}

// Issue 14 part 6: content errors (not only malformed JSON) read `source:line:col: field: message`.
TEST_CASE("io.json_reader.content_errors_name_line_and_column") {
  // A value out of range: the position of the value.
  std::string text =
      request_with(R"({"id": "j3", "min_gpus": 0, "goodput": [{"gpu_type": "a", "gpus": 1, "value": 1}]})");
  CHECK(request_error(text) == "req.json:" + position_of(text, "0, \"goodput") +
                                   ": jobs[3].min_gpus: must be an integer in [1, 2147483647], got 0");
  REQUIRE(position_of(text, "0, \"goodput") == "7:30");
  // Deeper: an element of an array inside the job.
  text = request_with(
      R"({"id": "j3", "goodput": [{"gpu_type": "a", "gpus": 1, "value": 1}, {"gpu_type": "a", "gpus": 2, "value": -2}]})");
  CHECK(request_error(text) ==
        "req.json:" + position_of(text, "-2") + ": jobs[3].goodput[1].value: must be finite and >= 0, got -2");
  // An unknown field: the position of its key.
  text = request_with(R"({"id": "j3", "colour": "red", "goodput": [{"gpu_type": "a", "gpus": 1, "value": 1}]})");
  CHECK(request_error(text).find("req.json:" + position_of(text, "\"colour\"") + ": jobs[3].colour: unknown field") ==
        0);
  // A missing field: the position of the object that lacks it.
  text = request_with(R"({"goodput": [{"gpu_type": "a", "gpus": 1, "value": 1}]})");
  CHECK(request_error(text) == "req.json:" + position_of(text, "{\"goodput") + ": jobs[3].id: missing required field");
  // A duplicate key: the position of the second one.
  text = request_with(R"({"id": "j3", "id": "j4", "goodput": []})");
  CHECK(request_error(text) == "req.json:" + position_of(text, "\"id\": \"j4\"") + ": jobs[3]: duplicate key \"id\"");
  // Keys that need quoting in paths, escapes in the text, and a byte-order mark (columns count after it).
  text =
      "\xEF\xBB\xBF{\"cluster\": {\"gpu_types\": [{\"name\": \"a\", \"nodes\": 1, \"gpus_per_node\": 2}],\n"
      " \"reserved\": {\"a\\u0020b\": 1}}, \"jobs\": []}";
  CHECK(request_error(text) == "req.json:2:27: cluster.reserved[\"a b\"]: unknown GPU type \"a b\"");
  // The model form's own parser names the path; its message is positioned by that path.
  text = request_with(R"({"id": "j3", "model": {"init_batch_size": 0}})");
  CHECK(request_error(text).find("req.json:" + position_of(text, "0}}") + ": jobs[3].model.init_batch_size: ") == 0);
  text = request_with(R"({"id": "j3", "model": {"init_batch_size": 8, "colour": 1}})");
  CHECK(request_error(text).find("req.json:" + position_of(text, "\"colour\"") +
                                 ": jobs[3].model.colour: unknown field") == 0);
}

TEST_CASE("io.json_reader.public_reader_names_positions") {
  const std::string text = "{\n  \"name\": \"c\",\n  \"types\": [\n    {\"n\": 3},\n    {\"n\": -1}\n  ]\n}\n";
  const auto doc = sia::JsonDocument::parse(text, "c.json");
  const auto types = doc.root().require("types").items();
  CHECK(error_of([&] { (void)types[1].require("n").as_integer(0, 9); }) ==
        "c.json:5:11: types[1].n: must be an integer in [0, 9], got -1");
  CHECK(error_of([&] { (void)types[1].require("m"); }) == "c.json:5:5: types[1].m: missing field");
  CHECK(error_of([&] { doc.root().allow_only({"types"}); }) == "c.json:2:3: name: unknown field (known fields: types)");
  CHECK(error_of([&] { types[0].fail("custom"); }) == "c.json:4:5: types[0]: custom");
}

// Many errors in one long array (one per rejected job) must not rescan the text each time: the
// locator keeps the offsets of the elements it walked. The answers stay right in any order.
TEST_CASE("io.json_reader.locator_many_lookups") {
  std::string text = "[";
  const int n = 2000;
  for (int i = 0; i < n; ++i) text += (i ? ",\n" : "") + std::string("{\"k\": [") + std::to_string(i) + ", \"x\"]}";
  text += "]";
  sia::detail::JsonLocator loc(text);
  for (int i : {5, 1999, 0, 1000, 1001, 3}) {
    const auto f = loc.find("[" + std::to_string(i) + "].k[1]");
    REQUIRE(f.has_value());
    CHECK(f->whole_path);
    const std::string digits = std::to_string(i);
    CHECK(f->offset == text.find("[" + digits + ", ") + digits.size() + 3);  // the "x" after the number
    const auto [line, col] = loc.line_column(f->offset);
    CHECK(std::to_string(line) + ":" + std::to_string(col) ==
          position_of(text, "\"x\"", text.find("[" + digits + ", ")));
  }
  // Past the end: the deepest value found.
  const auto past = loc.find("[7].k[9]");
  REQUIRE(past.has_value());
  CHECK_FALSE(past->whole_path);
  CHECK(text.substr(past->offset, 4) == "[7, ");
  CHECK_FALSE(loc.find("[2000]")->whole_path);
}

// Issue 14 part 6: the parse tree of a document within the byte limit stays bounded; arrays and
// value counts are checked while parsing, with the position of the first value over the limit.
TEST_CASE("io.json_reader.element_limits_while_parsing") {
  sia::detail::JsonLimits limits;
  limits.max_array_elements = 4;
  limits.max_values = 20;
  const auto parse = [&](const std::string& t) {
    return error_of([&] {
      const sia::detail::JsonContext ctx("l.json");
      (void)sia::detail::parse_json_strict(t, ctx, limits);
    });
  };
  CHECK(parse("[0,0,0,0]") == "no error");
  CHECK(parse("[0,0,0,0,0]") == "l.json:1:10: [4]: more than 4 elements in one array (the limit)");
  CHECK(parse("{\"a\": [[], [], [], [], []]}") == "l.json:1:24: a[4]: more than 4 elements in one array (the limit)");
  limits.max_values = 10;
  CHECK(parse("[[0,0,0],[0,0,0],[0,0,0]]") ==
        "l.json:1:19: [2][0]: more than 10 JSON values in the document (the limit)");
  CHECK(parse("[\"ab\\\"c\", 0, 0, 0, \"x\"]") == "l.json:1:20: [4]: more than 4 elements in one array (the limit)");
  // The defaults are RequestLimits': a request with one array over the limit is refused while parsing.
  std::string big =
      "{\"cluster\": {\"gpu_types\": [{\"name\": \"a\", \"nodes\": 1, \"gpus_per_node\": 1}]}, \"jobs\": [";
  for (std::size_t i = 0; i <= sia::RequestLimits::max_array_elements; ++i) big += i ? ",0" : "0";
  big += "]}";
  CHECK(request_error(big) == "req.json:1:" + std::to_string(big.size() - 2) + ": jobs[" +
                                  std::to_string(sia::RequestLimits::max_array_elements) +
                                  "]: more than 1000000 elements in one array (the limit)");
}

// Issue 14 part 6: job ids, GPU type names and node names longer than RequestLimits::max_name_bytes
// are refused (a 200 MB id used to be accepted and echoed into the decision).
TEST_CASE("io.request.name_length_limit") {
  const std::string ok(sia::RequestLimits::max_name_bytes, 'n');
  const std::string over(sia::RequestLimits::max_name_bytes + 1, 'n');
  const auto request = [](const std::string& type, const std::string& node, const std::string& job) {
    return R"({"cluster": {"gpu_types": [{"name": ")" + type +
           R"(", "nodes": 1, "gpus_per_node": 2, "node_names": [")" + node + R"("]}]}, "jobs": [{"id": ")" + job +
           R"(", "goodput": [{"gpu_type": ")" + type + R"(", "gpus": 1, "value": 1}]}]})";
  };
  CHECK(request_error(request(ok, ok, ok)) == "no error");
  const std::string limit = "more than the limit of 256 bytes";
  CHECK(request_error(request(over, "n0", "j")).find("cluster.gpu_types[0].name: a name of 257 bytes") !=
        std::string::npos);
  CHECK(request_error(request("a", over, "j")).find("cluster.gpu_types[0].node_names[0]: a name of 257 bytes") !=
        std::string::npos);
  const std::string msg = request_error(request("a", "n0", over));
  CHECK(msg.find("req.json:1:") == 0);
  CHECK(msg.find("jobs[0].id: a name of 257 bytes") != std::string::npos);
  CHECK(msg.find(limit) != std::string::npos);
  CHECK(msg.size() < 200);  // the name itself is not echoed in full
}
