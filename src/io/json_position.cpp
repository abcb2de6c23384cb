// Positions of values in a JSON text, found by field path when an error is reported.
#include "io/json_position.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <string>
#include <variant>

namespace sia::detail {
namespace {

constexpr std::size_t npos = std::string_view::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Characters of numbers and of true/false/null.
bool is_scalar_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && is_space(t[i])) ++i;
  return i;
}

// `i` at an opening quote: one past the closing quote, or npos.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (std::size_t j = i + 1; j < t.size(); ++j) {
    if (t[j] == '\\')
      ++j;
    else if (t[j] == '"')
      return j + 1;
  }
  return npos;
}

// One past the value starting at `i`, or npos. The text was parsed before, so brackets balance;
// anything else only ends the search.
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return npos;
  if (t[i] == '"') return skip_string(t, i);
  if (t[i] == '[' || t[i] == '{') {
    std::size_t depth = 0;
    for (std::size_t j = i; j < t.size(); ++j) {
      const char c = t[j];
      if (c == '"') {
        j = skip_string(t, j);
        if (j == npos) return npos;
        --j;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (--depth == 0) return j + 1;
      }
    }
    return npos;
  }
  std::size_t j = i;
  while (j < t.size() && is_scalar_char(t[j])) ++j;
  return j == i ? npos : j;
}

// The string literal [i, end) decoded (escapes included), or nothing when it is not one.
std::optional<std::string> decode_string(std::string_view literal) {
  if (literal.size() < 2) return std::nullopt;
  if (literal.find('\\') == npos) return std::string(literal.substr(1, literal.size() - 2));
  try {
    const auto v = nlohmann::json::parse(literal);
    if (v.is_string()) return v.get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

using Step = std::variant<std::string, std::size_t>;  // object key or array index

// The next step of a path as path_key()/path_index() write it, advancing `i`; nothing at the end
// or on anything else (a shortened long key, which names no member).
std::optional<Step> next_step(std::string_view path, std::size_t& i) {
  if (i >= path.size()) return std::nullopt;
  const auto ident = [&](std::size_t from) -> std::optional<Step> {
    std::size_t j = from;
    while (j < path.size() &&
           (std::isalnum(static_cast<unsigned char>(path[j])) != 0 || path[j] == '_' || path[j] == '-'))
      ++j;
    if (j == from) return std::nullopt;
    Step s = std::string(path.substr(from, j - from));
    i = j;
    return s;
  };
  if (path[i] == '.') return ident(i + 1);
  if (path[i] != '[') return i == 0 ? ident(0) : std::nullopt;
  if (i + 1 < path.size() && path[i + 1] == '"') {
    const std::size_t end = skip_string(path, i + 1);
    if (end == npos || end >= path.size() || path[end] != ']') return std::nullopt;
    auto key = decode_string(path.substr(i + 1, end - i - 1));
    if (!key) return std::nullopt;
    i = end + 1;
    return Step(std::move(*key));
  }
  std::size_t j = i + 1;
  std::size_t index = 0;
  while (j < path.size() && path[j] >= '0' && path[j] <= '9' && j - i <= 18)
    index = index * 10 + static_cast<std::size_t>(path[j++] - '0');
  if (j == i + 1 || j >= path.size() || path[j] != ']') return std::nullopt;
  i = j + 1;
  return Step(index);
}

}  // namespace

std::size_t scalar_start(std::string_view text, std::size_t read) {
  std::size_t q = std::min(read, text.size());
  if (q > 0 && text[q - 1] == '"') {  // a string: back to its opening quote
    for (std::size_t j = q - 1; j-- > 0;) {
      if (text[j] != '"') continue;
      std::size_t backslashes = 0;
      while (j > backslashes && text[j - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) return j;
    }
    return 0;
  }
  if (q > 0 && !is_scalar_char(text[q - 1])) --q;  // the byte the parser read past a number
  while (q > 0 && is_scalar_char(text[q - 1])) --q;
  return q;
}

JsonLocator::JsonLocator(std::string_view text) : text_(text) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") start_ = 3;  // columns count from after the mark
  root_ = skip_space(text_, start_);
  lc_offset_ = start_;
}

std::optional<std::size_t> JsonLocator::element(std::size_t array, std::size_t index) {
  std::vector<std::size_t>& seen = arrays_[array];
  if (seen.empty()) {
    const std::size_t first = skip_space(text_, array + 1);
    if (first >= text_.size() || text_[first] == ']') return std::nullopt;
    seen.push_back(first);
  }
  while (seen.size() <= index) {
    std::size_t i = skip_value(text_, seen.back());
    if (i == npos) return std::nullopt;
    i = skip_space(text_, i);
    if (i >= text_.size() || text_[i] != ',') return std::nullopt;  // the array ends before `index`
    i = skip_space(text_, i + 1);
    if (i >= text_.size()) return std::nullopt;
    seen.push_back(i);
  }
  return seen[index];
}

std::optional<std::pair<std::size_t, std::size_t>> JsonLocator::member(std::size_t object, std::string_view key) const {
  std::size_t i = skip_space(text_, object + 1);
  while (i < text_.size() && text_[i] == '"') {
    const std::size_t key_end = skip_string(text_, i);
    if (key_end == npos) return std::nullopt;
    std::size_t v = skip_space(text_, key_end);
    if (v >= text_.size() || text_[v] != ':') return std::nullopt;
    v = skip_space(text_, v + 1);
    const std::string_view literal = text_.substr(i, key_end - i);
    // Most keys have no escapes: compared in place; the others are decoded.
    const bool match = literal.find('\\') == npos ? literal.substr(1, literal.size() - 2) == key
                                                  : decode_string(literal) == std::optional<std::string>(key);
    if (match) return std::make_pair(i, v);
    i = skip_value(text_, v);
    if (i == npos) return std::nullopt;
    i = skip_space(text_, i);
    if (i >= text_.size() || text_[i] != ',') return std::nullopt;
    i = skip_space(text_, i + 1);
  }
  return std::nullopt;
}

std::optional<JsonLocator::Found> JsonLocator::find(std::string_view path) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (root_ >= text_.size()) return std::nullopt;
  Found found{root_, std::nullopt, false};
  std::size_t i = 0;
  while (i < path.size()) {
    const auto step = next_step(path, i);
    if (!step) return found;
    const char open = text_[found.offset];
    if (const auto* key = std::get_if<std::string>(&*step)) {
      if (open != '{') return found;
      const auto m = member(found.offset, *key);
      if (!m) return found;
      found.key = m->first;
      found.offset = m->second;
    } else {
      if (open != '[') return found;
      const auto e = element(found.offset, std::get<std::size_t>(*step));
      if (!e) return found;
      found.key.reset();
      found.offset = *e;
    }
    if (found.offset >= text_.size()) return std::nullopt;
  }
  found.whole_path = true;
  return found;
}

std::pair<std::size_t, std::size_t> JsonLocator::line_column(std::size_t offset) {
  const std::lock_guard<std::mutex> lock(mutex_);
  offset = std::max(std::min(offset, text_.size()), start_);
  if (offset < lc_offset_) {  // before the last answer: count again from the start
    lc_offset_ = start_;
    lc_line_ = 1;
    lc_column_ = 1;
  }
  for (std::size_t i = lc_offset_; i < offset; ++i) {
    if (text_[i] == '\n') {
      ++lc_line_;
      lc_column_ = 1;
    } else {
      ++lc_column_;
    }
  }
  lc_offset_ = offset;
  return {lc_line_, lc_column_};
}

}  // namespace sia::detail
