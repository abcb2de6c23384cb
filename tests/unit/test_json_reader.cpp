// The public strict JSON reader (sia/json_reader.hpp): types, paths and positions in errors.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/json_reader.hpp>

#include <string>

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const sia::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
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
  // Errors name the source and the field path.
  CHECK(error_of([&] { (void)types[0].require("n").as_integer(5, 10); }).find("f.json: types[0].n") !=
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
