#pragma once
/// @file io/json_position.hpp
/// @brief Where a value sits in a JSON text (line and column), found by its field path, so that
/// content errors read `req.json:12:18: jobs[3].min_gpus: must be >= 1, got 0`.
///
/// Nothing is recorded while parsing, so a request that parses cleanly pays nothing: the text is
/// scanned when an error is reported. The element offsets of the arrays walked are cached, so many
/// errors in one long array (a rejected job each) cost one pass over it, not one pass per error.
/// The cache is guarded by a mutex: copies of a JsonDocument share one locator and may fail in
/// several threads at once.

#include <cstddef>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sia::detail {

/// Byte offset where the scalar token that ends at or just before `read` starts (`read` is how far
/// the parser has read: one byte past a number, whose end it only sees on the next byte).
[[nodiscard]] std::size_t scalar_start(std::string_view text, std::size_t read);

class JsonLocator {
 public:
  /// `text` must stay alive and unchanged while the locator is used; a UTF-8 byte-order mark is skipped.
  explicit JsonLocator(std::string_view text);

  struct Found {
    std::size_t offset = 0;          ///< of the value (the deepest one of the path found)
    std::optional<std::size_t> key;  ///< of its key, when it is an object member
    bool whole_path = false;         ///< false when only an enclosing value was found
  };

  /// The value at `path` (`jobs[3].goodput[1]["a b"]`, the form of path_key()/path_index()), or
  /// the deepest enclosing value found (a missing field points at its object). Nothing when the
  /// path is not of that form or the text is not JSON where it leads.
  [[nodiscard]] std::optional<Found> find(std::string_view path);

  /// 1-based line and column (in bytes) of `offset`; consecutive calls with growing offsets
  /// count only the text in between.
  [[nodiscard]] std::pair<std::size_t, std::size_t> line_column(std::size_t offset);

 private:
  [[nodiscard]] std::optional<std::size_t> element(std::size_t array, std::size_t index);
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> member(std::size_t object,
                                                                          std::string_view key) const;

  std::mutex mutex_;
  std::string_view text_;
  std::size_t start_ = 0;  ///< after a byte-order mark
  std::size_t root_ = 0;
  std::unordered_map<std::size_t, std::vector<std::size_t>> arrays_;  ///< array offset -> its elements' offsets seen
  std::size_t lc_offset_ = 0;  ///< line_column's last answer, where the next one starts counting
  std::size_t lc_line_ = 1;
  std::size_t lc_column_ = 1;
};

}  // namespace sia::detail
