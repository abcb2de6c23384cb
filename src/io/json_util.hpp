#pragma once
/// @file io/json_util.hpp
/// @brief Private helpers for sia's JSON formats: strict parsing with positions, and readers
/// that check types, ranges and unknown fields while naming the offending field path.
///
/// Every error is a sia::InvalidArgument whose message starts with the source name, then either
/// `line:column` (malformed JSON) or the field path (`jobs[1].goodput[3].value`), then the reason.

#include <sia/error.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace sia::detail {

/// Limits that protect the parsers from absurd input (documented in the README).
inline constexpr int kMaxJsonDepth = 64;

/// Where errors come from: the source name (file name, "<stdin>", ...) used as message prefix.
class JsonContext {
 public:
  explicit JsonContext(std::string source) : source_(std::move(source)) {}
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// Throws InvalidArgument "<source>: <path>: <message>" (parts omitted when empty).
  [[noreturn]] void fail(std::string_view path, std::string_view message) const;

 private:
  std::string source_;
};

/// `parent.key`, or `parent["key"]` when the key is not a plain identifier.
[[nodiscard]] std::string path_key(std::string_view parent, std::string_view key);
/// `parent[index]`.
[[nodiscard]] std::string path_index(std::string_view parent, std::size_t index);
/// Short description of a value for messages: `-1`, `"abc" (a string)`, `an object`, ...
[[nodiscard]] std::string describe(const nlohmann::json& value);
/// 1-based line and column of byte offset `offset` of `text` (columns count bytes).
[[nodiscard]] std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset);

/**
 * @brief Parses `text` as one JSON document, strictly.
 *
 * Rejects, with `<source>:<line>:<column>: <reason>`: malformed JSON, numbers that overflow a
 * double (`1e999`), nesting deeper than `max_depth` (checked by a scan *before* parsing, so deep
 * input cannot exhaust the stack), duplicate keys in an object (named by path), trailing content.
 */
[[nodiscard]] nlohmann::json parse_json_strict(std::string_view text, const JsonContext& ctx,
                                               int max_depth = kMaxJsonDepth);

/// Checks `value` is an integer (or an integral number) in [lo, hi]; names `path` otherwise.
[[nodiscard]] long long as_integer(const nlohmann::json& value, std::string_view path, const JsonContext& ctx,
                                   long long lo, long long hi);
/// Checks `value` is a number (always finite after parse_json_strict).
[[nodiscard]] double as_number(const nlohmann::json& value, std::string_view path, const JsonContext& ctx);
/// Checks `value` is a number >= 0.
[[nodiscard]] double as_nonnegative(const nlohmann::json& value, std::string_view path, const JsonContext& ctx);
/// Checks `value` is a string (non-empty unless `allow_empty`).
[[nodiscard]] std::string as_string(const nlohmann::json& value, std::string_view path, const JsonContext& ctx,
                                    bool allow_empty = false);
/// Checks `value` is true or false.
[[nodiscard]] bool as_bool(const nlohmann::json& value, std::string_view path, const JsonContext& ctx);
/// Checks `value` is an array with at most `max_size` elements.
const nlohmann::json& as_array(const nlohmann::json& value, std::string_view path, const JsonContext& ctx,
                               std::size_t max_size);

/**
 * @brief Reads one JSON object whose allowed keys are known up front: construction rejects a
 * non-object and any key not in `allowed` (listing the allowed ones), so callers only pick fields.
 */
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& value, std::string path, const JsonContext& ctx,
               std::initializer_list<std::string_view> allowed);

  /// The value of `key`, or nullptr when absent.
  [[nodiscard]] const nlohmann::json* get(std::string_view key) const;
  /// The value of `key`, or nullptr when absent or null.
  [[nodiscard]] const nlohmann::json* get_non_null(std::string_view key) const;
  /// The value of `key`; a "missing field" error when absent.
  [[nodiscard]] const nlohmann::json& require(std::string_view key) const;
  /// Path of field `key` of this object.
  [[nodiscard]] std::string path(std::string_view key) const { return path_key(path_, key); }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const nlohmann::json& value() const noexcept { return value_; }

  // Typed optional fields: std::nullopt when absent (null is a type error unless stated).
  [[nodiscard]] std::optional<long long> integer(std::string_view key, long long lo, long long hi) const;
  [[nodiscard]] std::optional<double> number(std::string_view key) const;
  [[nodiscard]] std::optional<double> nonnegative(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> string(std::string_view key) const;
  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const;

 private:
  const nlohmann::json& value_;
  std::string path_;
  const JsonContext& ctx_;
};

}  // namespace sia::detail
