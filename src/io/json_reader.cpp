// The public strict JSON reader: a thin layer over the private helpers the request parser uses.
#include <sia/json_reader.hpp>

#include <algorithm>

#include "io/json_util.hpp"

namespace sia {

using nlohmann::json;

struct JsonDocument::Impl {
  std::string text;  // kept for the line and column of errors found after parsing
  detail::JsonContext ctx;
  json tree;
};

namespace {
const json& node(const void* p) { return *static_cast<const json*>(p); }
}  // namespace

JsonDocument JsonDocument::parse(std::string_view text, std::string source, int max_depth) {
  auto impl = std::make_shared<Impl>(Impl{std::string(text), detail::JsonContext(std::move(source)), json()});
  impl->tree = detail::parse_json_strict(impl->text, impl->ctx, max_depth);
  JsonDocument d;
  d.impl_ = std::move(impl);
  return d;
}

JsonValue JsonDocument::root() const { return JsonValue(impl_, &impl_->tree, ""); }

const std::string& JsonDocument::source() const noexcept { return impl_->ctx.source(); }

bool JsonValue::is_null() const noexcept { return node(node_).is_null(); }
bool JsonValue::is_object() const noexcept { return node(node_).is_object(); }
bool JsonValue::is_array() const noexcept { return node(node_).is_array(); }

void JsonValue::allow_only(std::initializer_list<std::string_view> allowed) const {
  (void)detail::ObjectReader(node(node_), path_, doc_->ctx, allowed);
}

std::optional<JsonValue> JsonValue::get(std::string_view key) const {
  const json& v = node(node_);
  if (!v.is_object()) fail("must be an object, got " + detail::describe(v));
  const auto it = v.find(key);
  if (it == v.end()) return std::nullopt;
  return JsonValue(doc_, &*it, detail::path_key(path_, key));
}

JsonValue JsonValue::require(std::string_view key) const {
  if (auto v = get(key)) return *v;
  doc_->ctx.fail(detail::path_key(path_, key), "missing field");
}

std::vector<JsonValue> JsonValue::items(std::size_t max_size) const {
  const json& a = detail::as_array(node(node_), path_, doc_->ctx, max_size);
  std::vector<JsonValue> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(JsonValue(doc_, &a[i], detail::path_index(path_, i)));
  return out;
}

std::string JsonValue::as_string(bool allow_empty) const {
  return detail::as_string(node(node_), path_, doc_->ctx, allow_empty);
}

long long JsonValue::as_integer(long long lo, long long hi) const {
  return detail::as_integer(node(node_), path_, doc_->ctx, lo, hi);
}

double JsonValue::as_number() const { return detail::as_number(node(node_), path_, doc_->ctx); }

bool JsonValue::as_bool() const { return detail::as_bool(node(node_), path_, doc_->ctx); }

void JsonValue::fail(std::string_view message) const { doc_->ctx.fail(path_, message); }

}  // namespace sia
