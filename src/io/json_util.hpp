#pragma once
/// @file io/json_util.hpp
/// @brief Private helpers for sia's JSON formats: strict parsing with positions, and readers
/// that check types, ranges and unknown fields while naming the offending field path.
///
/// Every error is a sia::InvalidArgument `<source>:<line>:<column>: <field path>: <reason>`, e.g.
/// `req.json:12:18: jobs[3].min_gpus: must be an integer in [1, ...], got 0`: the position is the
/// value's (a key's for unknown and duplicate keys); malformed JSON has no field path, and a
/// context with no text (or a path not in it) gives `<source>: <field path>: <reason>`.

#include <sia/error.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sia::detail {

class JsonLocator;

/// Limits that protect the parsers from absurd input (documented in the README).
inline constexpr int kMaxJsonDepth = 64;

/// What one document may hold, checked while parsing, before the parse tree grows: nesting,
/// elements of one array, values in all (a 128 MiB `[[],[],...]` would otherwise become a tree
/// of several GB).
struct JsonLimits {
  int max_depth = kMaxJsonDepth;
  std::size_t max_array_elements = 1'000'000;  ///< RequestLimits::max_array_elements
  std::size_t max_values = 16'000'000;         ///< RequestLimits::max_json_values
};

/// Where errors come from: the source name (file name, "<stdin>", ...) used as message prefix,
/// and the text, so that a field path can be turned into a line and a column.
class JsonContext {
 public:
  explicit JsonContext(std::string source);
  JsonContext(JsonContext&&) noexcept;
  JsonContext& operator=(JsonContext&&) noexcept;
  ~JsonContext();

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// Lets errors name the line and column of the field in `text` (which must outlive the context's
  /// use); parse_json_strict() attaches the text it parses. Const: it changes only messages.
  void attach(std::string_view text) const;
  /// Throws InvalidArgument "<source>:<line>:<col>: <path>: <message>" (parts omitted when empty
  /// or unknown). An empty path with a message that starts "<path>: " (another parser's message)
  /// is positioned by that path.
  [[noreturn]] void fail(std::string_view path, std::string_view message) const;
  /// Like fail(), at the key of the member `path` names (unknown and duplicate fields).
  [[noreturn]] void fail_at_key(std::string_view path, std::string_view message) const;
  /// Like fail(), at byte `offset` of the attached text.
  [[noreturn]] void fail_at(std::size_t offset, std::string_view path, std::string_view message) const;

 private:
  [[noreturn]] void fail_located(std::string_view path, std::string_view message, bool at_key) const;
  std::string source_;
  mutable std::unique_ptr<JsonLocator> locator_;
};

/// `parent.key`, or `parent["key"]` when the key is not a plain identifier.
[[nodiscard]] std::string path_key(std::string_view parent, std::string_view key);
/// `parent[index]`.
[[nodiscard]] std::string path_index(std::string_view parent, std::size_t index);
/// Short description of a value for messages: `-1`, `"abc" (a string)`, `an object`, ...
[[nodiscard]] std::string describe(const nlohmann::json& value);

/**
 * @brief Parses `text` as one JSON document, strictly.
 *
 * Rejects, with `<source>:<line>:<column>: <reason>`: malformed JSON, numbers that overflow a
 * double (`1e999`), nesting deeper than `limits.max_depth` (checked by a scan *before* parsing, so
 * deep input cannot exhaust the stack), duplicate keys in an object (named by path), trailing
 * content, an array longer than `limits.max_array_elements` and more than `limits.max_values`
 * values (both while parsing, before the tree grows). Attaches `text` to `ctx` (JsonContext::attach).
 */
[[nodiscard]] nlohmann::json parse_json_strict(std::string_view text, const JsonContext& ctx, const JsonLimits& limits);
/// parse_json_strict() with the default limits but nesting `max_depth`.
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
/// Checks `value` is a name (a job id, a GPU type or node name): a non-empty string of at most
/// RequestLimits::max_name_bytes bytes.
[[nodiscard]] std::string as_name(const nlohmann::json& value, std::string_view path, const JsonContext& ctx);
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
