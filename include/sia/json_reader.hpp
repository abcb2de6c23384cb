#pragma once
/// @file json_reader.hpp
/// @brief Reading sia's JSON formats from outside libsia (the simulator's cluster files, a
/// scheduler's own configuration): the same strict reader the `sia_allocate` request parser uses,
/// with the JSON library kept private.
///
/// Strict: malformed JSON, numbers that overflow a double, duplicate keys, nesting deeper than the
/// limit, arrays of more than 1,000,000 elements, more than 16,000,000 values and trailing content
/// are rejected. Every error is a sia::InvalidArgument `<source>:<line>:<column>: <reason>`
/// (syntax) or `<source>:<line>:<column>: <field path>: <reason>` (content; the position is the
/// value's, or its object's when a field is missing), e.g.
/// `mine.json:7:16: gpu_types[1].nodes: must be an integer in [0, 1000000], got -1`.
/// @code
/// const sia::JsonDocument doc = sia::JsonDocument::parse(text, "cluster.json");
/// const sia::JsonValue root = doc.root();
/// root.allow_only({"name", "gpu_types"});
/// for (const sia::JsonValue& t : root.require("gpu_types").items()) { ... t.require("nodes").as_integer(0, 1000) ... }
/// @endcode

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sia {

class JsonValue;

/// @brief A parsed JSON document (cheap to copy: shares the parsed tree).
class JsonDocument {
 public:
  /// @throws InvalidArgument naming `source`, the line and the column on malformed input.
  [[nodiscard]] static JsonDocument parse(std::string_view text, std::string source, int max_depth = 64);
  [[nodiscard]] JsonValue root() const;
  [[nodiscard]] const std::string& source() const noexcept;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

/// @brief One value of a JsonDocument and its field path; readers check the type and name the path.
class JsonValue {
 public:
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] bool is_null() const noexcept;
  [[nodiscard]] bool is_object() const noexcept;
  [[nodiscard]] bool is_array() const noexcept;

  /// Object: rejects a non-object and any key not in `allowed` (the message lists the allowed ones).
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  /// Object: the value of `key`, if present.
  [[nodiscard]] std::optional<JsonValue> get(std::string_view key) const;
  /// Object: the value of `key`; a "missing field" error when absent.
  [[nodiscard]] JsonValue require(std::string_view key) const;
  /// Array: its elements (an error for anything else, or more than `max_size` elements).
  [[nodiscard]] std::vector<JsonValue> items(std::size_t max_size = 1'000'000) const;

  [[nodiscard]] std::string as_string(bool allow_empty = false) const;
  [[nodiscard]] long long as_integer(long long lo, long long hi) const;
  [[nodiscard]] double as_number() const;
  [[nodiscard]] bool as_bool() const;

  /// Throws InvalidArgument "<source>: <path>: <message>".
  [[noreturn]] void fail(std::string_view message) const;

 private:
  friend class JsonDocument;
  JsonValue(std::shared_ptr<const JsonDocument::Impl> doc, const void* node, std::string path)
      : doc_(std::move(doc)), node_(node), path_(std::move(path)) {}
  std::shared_ptr<const JsonDocument::Impl> doc_;
  const void* node_ = nullptr;  ///< the JSON library's node (private to libsia)
  std::string path_;
};

}  // namespace sia
