// Strict JSON parsing and checked field access for sia's JSON formats.
#include "io/json_util.hpp"

#include <sia/request.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "io/json_position.hpp"

namespace sia::detail {

static_assert(JsonLimits{}.max_depth == RequestLimits::max_depth);
static_assert(JsonLimits{}.max_array_elements == RequestLimits::max_array_elements);
static_assert(JsonLimits{}.max_values == RequestLimits::max_json_values);

namespace {

using nlohmann::json;

bool is_identifier(std::string_view key) {
  if (key.empty()) return false;
  const auto c0 = static_cast<unsigned char>(key.front());
  if (!(std::isalpha(c0) || c0 == '_')) return false;
  return std::all_of(key.begin(), key.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

// Removes nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: " prefix:
// sia prints its own position in front of the reason.
std::string clean_reason(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    const auto close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  if (what.substr(0, 11) == "parse error") {
    const auto colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  // nlohmann quotes the whole token it was reading ("last read: '...'"): a megabyte-long unterminated
  // string would be echoed in full; keep its start and its length.
  constexpr std::string_view last_read = "; last read: '";
  const auto lr = what.find(last_read);
  constexpr std::size_t max_token = 64;
  if (lr != std::string_view::npos && what.size() - lr - last_read.size() > max_token + 1) {
    const std::size_t token = what.size() - lr - last_read.size() - 1;  // without the closing quote
    return std::string(what.substr(0, lr + last_read.size() + max_token / 2)) + "...' (" + std::to_string(token) +
           " bytes)";
  }
  return std::string(what);
}

// The parser's input, a byte pointer that also tells how far the parser has read: SAX callbacks
// carry no position, and errors found while building the tree (a duplicate key, an array over the
// limit) should name their line and column.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char** read) : p_(p), read_(read) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    *read_ = ++p_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const CountingIterator& a, const CountingIterator& b) { return a.p_ == b.p_; }

 private:
  const char* p_;
  const char** read_;
};

// Builds the document like nlohmann's own DOM parser, but also rejects duplicate keys (nlohmann
// silently keeps the last one, which would hide a mistake in a request), enforces JsonLimits
// before the tree grows, and remembers where in the document an error happened so the message
// can name the field, the line and the column.
class StrictSax final : public nlohmann::json_sax<json> {
 public:
  StrictSax(json& root, const JsonLimits& limits, std::string_view text, const char* const& read)
      : root_(root), limits_(limits), text_(text), read_(read) {}

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool v) override { return add(json(v)); }
  bool number_integer(number_integer_t v) override { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v)); }
  bool number_float(number_float_t v, const string_t& /*text*/) override { return add(json(v)); }
  bool string(string_t& v) override { return add(json(std::move(v))); }
  bool binary(binary_t& /*v*/) override {
    error_ = "binary values are not JSON";
    return false;
  }
  bool start_object(std::size_t /*elements*/) override { return open(json::object()); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (f.value->contains(k)) {
      error_path_ = path(/*innermost_key=*/false);
      // The key is shortened like paths are: a 4 MB duplicate key is not echoed in full.
      error_ = "duplicate key " +
               (k.size() <= 64 ? json(k).dump(-1, ' ', false, json::error_handler_t::replace) : path_key("", k));
      at(scalar_start(text_, read()));
      return false;
    }
    f.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    error_path_ = path();
    error_ = clean_reason(ex.what());
    // nlohmann reports the number of bytes read; the offending byte is the last one read.
    at(position == 0 ? 0 : position - 1);
    syntax_ = true;
    return false;
  }

  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] const std::string& error_path() const noexcept { return error_path_; }
  [[nodiscard]] bool syntax() const noexcept { return syntax_; }
  [[nodiscard]] std::optional<std::size_t> error_position() const noexcept { return error_position_; }

 private:
  struct Frame {
    json* value;
    std::string key;  // last key read, for objects
  };

  [[nodiscard]] std::size_t read() const { return static_cast<std::size_t>(read_ - text_.data()); }
  void at(std::size_t offset) { error_position_ = offset; }

  // Counts the value about to be added; false (with the error set) past a limit.
  bool admit(bool container) {
    // Where the value starts: a container was just opened, a scalar was just read.
    const auto start = [&] { return container ? read() - 1 : scalar_start(text_, read()); };
    if (++values_ > limits_.max_values) {
      error_path_ = path();
      error_ = "more than " + std::to_string(limits_.max_values) + " JSON values in the document (the limit)";
      at(start());
      return false;
    }
    if (!frames_.empty() && frames_.back().value->is_array() &&
        frames_.back().value->size() >= limits_.max_array_elements) {
      error_path_ = path();  // names the element past the limit
      error_ = "more than " + std::to_string(limits_.max_array_elements) + " elements in one array (the limit)";
      at(start());
      return false;
    }
    return true;
  }

  json* place(json&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = frames_.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(v));
      return &f.value->back();
    }
    json& slot = (*f.value)[f.key];
    slot = std::move(v);
    return &slot;
  }
  bool add(json&& v) {
    if (!admit(false)) return false;
    place(std::move(v));
    return true;
  }
  bool open(json&& v) {
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {  // defensive: the pre-scan catches this first
      error_ = "nesting deeper than " + std::to_string(limits_.max_depth) + " levels";
      at(read() - 1);
      return false;
    }
    if (!admit(true)) return false;
    json* p = place(std::move(v));
    frames_.push_back(Frame{p, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  // Path of the value being parsed: in arrays the element in progress is the next one, except
  // below the innermost frame, whose containers were already appended.
  [[nodiscard]] std::string path(bool innermost_key = true) const {
    std::string p;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.value->is_array()) {
        const std::size_t n = f.value->size();
        const bool innermost = i + 1 == frames_.size();
        p = path_index(p, innermost ? n : (n == 0 ? 0 : n - 1));
      } else if (i + 1 < frames_.size() || (innermost_key && !f.key.empty())) {
        p = path_key(p, f.key);
      }
    }
    return p;
  }

  json& root_;
  const JsonLimits& limits_;
  std::string_view text_;
  const char* const& read_;  // how far the parser has read (CountingIterator)
  std::size_t values_ = 0;
  std::vector<Frame> frames_;
  std::string error_;
  std::string error_path_;
  std::optional<std::size_t> error_position_;
  bool syntax_ = false;
};

// Depth of brackets outside strings, checked before parsing so that absurdly nested input is
// rejected in linear time with a position, whatever the parser does with it.
void check_depth(std::string_view text, const JsonContext& ctx, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) ctx.fail_at(i, "", "JSON nested deeper than " + std::to_string(max_depth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace

JsonContext::JsonContext(std::string source) : source_(std::move(source)) {}
JsonContext::JsonContext(JsonContext&&) noexcept = default;
JsonContext& JsonContext::operator=(JsonContext&&) noexcept = default;
JsonContext::~JsonContext() = default;

void JsonContext::attach(std::string_view text) const { locator_ = std::make_unique<JsonLocator>(text); }

void JsonContext::fail(std::string_view path, std::string_view message) const {
  if (path.empty() && locator_) {
    // Another parser's message "<path>: <reason>" (the model form's): positioned by its path when
    // that is a path of the document.
    const auto colon = message.find(": ");
    if (colon != std::string_view::npos && colon > 0) {
      const std::string_view inner = message.substr(0, colon);
      if (inner.find_first_of(" ,") == std::string_view::npos) {
        if (const auto found = locator_->find(inner); found && found->whole_path) {
          const std::string_view reason = message.substr(colon + 2);
          const bool at_key = reason.substr(0, 13) == "unknown field" && found->key;
          fail_at(at_key ? *found->key : found->offset, inner, reason);
        }
      }
    }
  }
  fail_located(path, message, false);
}

void JsonContext::fail_at_key(std::string_view path, std::string_view message) const {
  fail_located(path, message, true);
}

void JsonContext::fail_located(std::string_view path, std::string_view message, bool at_key) const {
  if (locator_ && !path.empty()) {
    if (const auto found = locator_->find(path))
      fail_at(at_key && found->whole_path && found->key ? *found->key : found->offset, path, message);
  }
  std::string out = source_;
  if (!path.empty()) out += (out.empty() ? "" : ": ") + std::string(path);
  if (!out.empty()) out += ": ";
  out += message;
  throw InvalidArgument(out);
}

void JsonContext::fail_at(std::size_t offset, std::string_view path, std::string_view message) const {
  std::string out = source_;
  if (locator_) {
    // Glued to the source name like compilers do.
    const auto [line, col] = locator_->line_column(offset);
    out += (out.empty() ? "" : ":") + std::to_string(line) + ":" + std::to_string(col);
  }
  if (!path.empty()) out += (out.empty() ? "" : ": ") + std::string(path);
  if (!out.empty()) out += ": ";
  out += message;
  throw InvalidArgument(out);
}

std::string path_key(std::string_view parent, std::string_view key) {
  std::string out(parent);
  // Paths only appear in messages: a pathological key (a fuzzer's 4 MB field name) is shortened so
  // the message stays readable; its length is kept.
  constexpr std::size_t max_key = 64;
  if (key.size() > max_key) {
    std::string shown(key.substr(0, max_key / 2));
    out += '[';
    out += json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
    out += "... (" + std::to_string(key.size()) + " bytes)]";
    return out;
  }
  if (is_identifier(key)) {
    if (!out.empty()) out += '.';
    out += key;
  } else {
    out += '[';
    out += json(std::string(key)).dump(-1, ' ', false, json::error_handler_t::replace);
    out += ']';
  }
  return out;
}

std::string path_index(std::string_view parent, std::size_t index) {
  std::string out(parent);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return value.dump();
    case json::value_t::string: {
      std::string s = value.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return json(s).dump(-1, ' ', false, json::error_handler_t::replace) + " (a string)";
    }
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a non-JSON value";
  }
}

json parse_json_strict(std::string_view text, const JsonContext& ctx, const JsonLimits& limits) {
  ctx.attach(text);  // positions count from the start of the text, byte-order mark included
  // A UTF-8 byte-order mark (written by some Windows editors) is not JSON, but means nothing either.
  const std::size_t bom = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  const std::string_view body = text.substr(bom);
  check_depth(text, ctx, limits.max_depth);
  json root;
  const char* read = body.data();
  StrictSax sax(root, limits, body, read);
  bool ok = false;
  try {
    ok = json::sax_parse(CountingIterator(body.data(), &read), CountingIterator(body.data() + body.size(), &read), &sax,
                         json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {  // sax_parse reports through the handler; this is a safety net
    ctx.fail("", "malformed JSON: " + clean_reason(e.what()));
  }
  if (!ok) {
    const std::string reason = sax.error().empty() ? "malformed JSON" : sax.error();
    if (sax.syntax()) {
      std::string msg = "malformed JSON";
      if (!sax.error_path().empty()) msg += " at " + sax.error_path();
      ctx.fail_at(bom + sax.error_position().value_or(0), "", msg + ": " + reason);
    }
    if (const auto pos = sax.error_position()) ctx.fail_at(bom + *pos, sax.error_path(), reason);
    ctx.fail(sax.error_path(), reason);
  }
  return root;
}

json parse_json_strict(std::string_view text, const JsonContext& ctx, int max_depth) {
  JsonLimits limits;
  limits.max_depth = max_depth;
  return parse_json_strict(text, ctx, limits);
}

long long as_integer(const json& value, std::string_view path, const JsonContext& ctx, long long lo, long long hi) {
  const auto range = [&] {
    return "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describe(value);
  };
  long long v = 0;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    v = value.get<long long>();
  } else if (value.is_number_unsigned()) {
    const auto u = value.get<unsigned long long>();
    if (u > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) ctx.fail(path, range());
    v = static_cast<long long>(u);
  } else if (value.is_number_float()) {
    // Integral floats (4.0, 1e3) are accepted: some JSON writers print every number as a float.
    const double d = value.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < -9.0e18 || d > 9.0e18) ctx.fail(path, range());
    v = static_cast<long long>(d);
  } else {
    ctx.fail(path, "must be an integer, got " + describe(value));
  }
  if (v < lo || v > hi) ctx.fail(path, range());
  return v;
}

double as_number(const json& value, std::string_view path, const JsonContext& ctx) {
  if (!value.is_number()) ctx.fail(path, "must be a number, got " + describe(value));
  const double d = value.get<double>();
  if (!std::isfinite(d)) ctx.fail(path, "must be finite, got " + describe(value));
  return d;
}

double as_nonnegative(const json& value, std::string_view path, const JsonContext& ctx) {
  if (!value.is_number()) ctx.fail(path, "must be a number, got " + describe(value));
  const double d = value.get<double>();
  if (!std::isfinite(d) || d < 0) ctx.fail(path, "must be finite and >= 0, got " + describe(value));
  return d;
}

std::string as_string(const json& value, std::string_view path, const JsonContext& ctx, bool allow_empty) {
  if (!value.is_string()) ctx.fail(path, "must be a string, got " + describe(value));
  std::string s = value.get<std::string>();
  if (s.empty() && !allow_empty) ctx.fail(path, "must not be empty");
  return s;
}

std::string as_name(const json& value, std::string_view path, const JsonContext& ctx) {
  std::string s = as_string(value, path, ctx);
  if (s.size() > RequestLimits::max_name_bytes)
    ctx.fail(path, "a name of " + std::to_string(s.size()) + " bytes (" + describe(value) +
                       "), more than the limit of " + std::to_string(RequestLimits::max_name_bytes) + " bytes");
  return s;
}

bool as_bool(const json& value, std::string_view path, const JsonContext& ctx) {
  if (!value.is_boolean()) ctx.fail(path, "must be true or false, got " + describe(value));
  return value.get<bool>();
}

const json& as_array(const json& value, std::string_view path, const JsonContext& ctx, std::size_t max_size) {
  if (!value.is_array()) ctx.fail(path, "must be an array, got " + describe(value));
  if (value.size() > max_size)
    ctx.fail(path,
             "has " + std::to_string(value.size()) + " elements, more than the limit of " + std::to_string(max_size));
  return value;
}

ObjectReader::ObjectReader(const json& value, std::string path, const JsonContext& ctx,
                           std::initializer_list<std::string_view> allowed)
    : value_(value), path_(std::move(path)), ctx_(ctx) {
  if (!value.is_object()) ctx.fail(path_.empty() ? "request" : path_, "must be an object, got " + describe(value));
  for (const auto& item : value.items()) {
    const std::string& k = item.key();
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string known;
    for (auto a : allowed) {
      if (!known.empty()) known += ", ";
      known += a;
    }
    ctx.fail_at_key(path_key(path_, k), "unknown field (known fields: " + known + ")");
  }
}

const json* ObjectReader::get(std::string_view key) const {
  const auto it = value_.find(key);
  return it == value_.end() ? nullptr : &*it;
}

const json* ObjectReader::get_non_null(std::string_view key) const {
  const json* v = get(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

const json& ObjectReader::require(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) ctx_.fail(path(key), "missing required field");
  return *v;
}

std::optional<long long> ObjectReader::integer(std::string_view key, long long lo, long long hi) const {
  const json* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_integer(*v, path(key), ctx_, lo, hi);
}

std::optional<double> ObjectReader::number(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_number(*v, path(key), ctx_);
}

std::optional<double> ObjectReader::nonnegative(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_nonnegative(*v, path(key), ctx_);
}

std::optional<std::string> ObjectReader::string(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_string(*v, path(key), ctx_);
}

std::optional<bool> ObjectReader::boolean(std::string_view key) const {
  const json* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_bool(*v, path(key), ctx_);
}

}  // namespace sia::detail
