// The JSON request and decision of one round (product.md §5).
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/goodput/job_model.hpp>
#include <sia/goodput_table.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/warm_start.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <ios>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "io/json_util.hpp"
#include "io/model_json.hpp"

namespace sia {
namespace {

using detail::as_array;
using detail::as_integer;
using detail::as_nonnegative;
using detail::as_string;
using detail::JsonContext;
using detail::ObjectReader;
using detail::path_index;
using detail::path_key;
using nlohmann::json;

// Quotes a user-given name for a message; a pathological one (megabytes) is shortened, with its length.
std::string quote_json(std::string_view s) {
  constexpr std::size_t max_shown = 64;
  if (s.size() <= max_shown) return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
  return json(std::string(s.substr(0, max_shown / 2))).dump(-1, ' ', false, json::error_handler_t::replace) + "... (" +
         std::to_string(s.size()) + " bytes)";
}

// ----------------------------------------------------------------------------------------------
// Node names: explicit per type, else "<type>/<index>".
// ----------------------------------------------------------------------------------------------
class NodeDirectory {
 public:
  explicit NodeDirectory(const ClusterSpec& cluster) : cluster_(cluster) {}

  /// Registers the explicit names of every type; rejects duplicates and names that are also the
  /// default name of a node of a type without explicit names (a reference would be ambiguous).
  void build(const std::vector<std::string>& name_paths, const JsonContext& ctx) {
    for (int t = 0; t < cluster_.num_types(); ++t) {
      const auto& names = names_of(t);
      for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string p = path_index(name_paths[static_cast<std::size_t>(t)], i);
        if (const auto d = find_default(names[i]))
          ctx.fail(p, quote_json(names[i]) + " is also the default name of node " + std::to_string(d->second) +
                          " of type " + quote_json(type_name(d->first)));
        const auto [it, inserted] = named_.emplace(names[i], std::make_pair(t, static_cast<int>(i)));
        if (!inserted)
          ctx.fail(p, "node name " + quote_json(names[i]) + " is already used by node " +
                          std::to_string(it->second.second) + " of type " + quote_json(type_name(it->second.first)));
      }
    }
  }

  /// (type, node index) of a node name.
  [[nodiscard]] std::optional<std::pair<int, int>> find(std::string_view name) const {
    if (const auto it = named_.find(std::string(name)); it != named_.end()) return it->second;
    return find_default(name);
  }

  /// Error text for an unknown node name, with a hint when the type names its nodes explicitly.
  [[nodiscard]] std::string unknown(std::string_view name) const {
    std::string msg = "unknown node " + quote_json(name);
    const auto slash = name.rfind('/');
    if (slash != std::string_view::npos) {
      const int t = cluster_.type_index(name.substr(0, slash));
      if (t >= 0 && !names_of(t).empty())
        msg += " (type " + quote_json(type_name(t)) + " names its nodes explicitly, e.g. " +
               quote_json(names_of(t).front()) + ")";
      else if (t >= 0)
        msg += " (type " + quote_json(type_name(t)) + " has " +
               std::to_string(cluster_.types[static_cast<std::size_t>(t)].num_nodes()) + " nodes)";
    }
    return msg;
  }

 private:
  [[nodiscard]] const std::vector<std::string>& names_of(int t) const {
    static const std::vector<std::string> none;
    const auto ti = static_cast<std::size_t>(t);
    return ti < cluster_.node_names.size() ? cluster_.node_names[ti] : none;
  }
  [[nodiscard]] const std::string& type_name(int t) const { return cluster_.types[static_cast<std::size_t>(t)].name(); }

  [[nodiscard]] std::optional<std::pair<int, int>> find_default(std::string_view name) const {
    const auto slash = name.rfind('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const int t = cluster_.type_index(name.substr(0, slash));
    if (t < 0 || !names_of(t).empty()) return std::nullopt;
    const std::string_view digits = name.substr(slash + 1);
    if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
    int index = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      index = index * 10 + (c - '0');
    }
    if (index >= cluster_.types[static_cast<std::size_t>(t)].num_nodes()) return std::nullopt;
    return std::make_pair(t, index);
  }

  const ClusterSpec& cluster_;
  std::unordered_map<std::string, std::pair<int, int>> named_;
};

// ----------------------------------------------------------------------------------------------
// Cluster
// ----------------------------------------------------------------------------------------------
std::vector<std::string> parse_node_names(const json& value, const std::string& path, const JsonContext& ctx,
                                          int nodes) {
  const json& arr = as_array(value, path, ctx, static_cast<std::size_t>(RequestLimits::max_gpus_per_type));
  if (static_cast<long long>(arr.size()) != nodes)
    ctx.fail(path, "names " + std::to_string(arr.size()) + " nodes, but the type has " + std::to_string(nodes));
  std::vector<std::string> names;
  names.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) names.push_back(detail::as_name(arr[i], path_index(path, i), ctx));
  return names;
}

// cluster.tenants: {"<name>": {"max_gpus": N, "guaranteed_gpus": M, "max_gpus_per_type": {"<type>": K}}}
// (tenant_spec.hpp). Guarantees together may not exceed the cluster's GPUs.
std::vector<TenantSpec> parse_tenants(const json& value, const std::string& path, const ClusterSpec& c,
                                      const JsonContext& ctx) {
  if (!value.is_object())
    ctx.fail(path, "must be an object {\"<tenant>\": {\"max_gpus\": N, \"guaranteed_gpus\": M}}, got " +
                       detail::describe(value));
  long long total = 0;
  for (const auto& t : c.types) total += static_cast<long long>(t.num_nodes()) * t.gpus_per_node();
  std::vector<TenantSpec> out;
  long long guaranteed = 0;
  for (const auto& item : value.items()) {
    const std::string p = path_key(path, item.key());
    if (item.key().empty()) ctx.fail(p, "a tenant name must not be empty");
    if (item.key().size() > RequestLimits::max_name_bytes)
      ctx.fail_at_key(p, "a name of " + std::to_string(item.key().size()) + " bytes, more than the limit of " +
                             std::to_string(RequestLimits::max_name_bytes) + " bytes");
    ObjectReader t(item.value(), p, ctx, {"max_gpus", "guaranteed_gpus", "max_gpus_per_type"});
    TenantSpec spec;
    spec.name = item.key();
    if (const auto m = t.integer("max_gpus", 0, INT_MAX)) spec.max_gpus = static_cast<int>(*m);
    if (const auto g = t.integer("guaranteed_gpus", 0, INT_MAX)) spec.guaranteed_gpus = static_cast<int>(*g);
    if (spec.max_gpus && spec.guaranteed_gpus > *spec.max_gpus)
      ctx.fail(t.path("guaranteed_gpus"), std::to_string(spec.guaranteed_gpus) + " exceeds the tenant's max_gpus " +
                                              std::to_string(*spec.max_gpus));
    if (const json* per = t.get_non_null("max_gpus_per_type")) {
      const std::string pp = t.path("max_gpus_per_type");
      if (!per->is_object()) ctx.fail(pp, "must be an object {\"<gpu type>\": GPUs}, got " + detail::describe(*per));
      spec.max_gpus_per_type.assign(c.types.size(), -1);
      for (const auto& cap : per->items()) {
        const std::string cp = path_key(pp, cap.key());
        const int ty = c.type_index(cap.key());
        if (ty < 0) ctx.fail(cp, "unknown GPU type " + quote_json(cap.key()));
        spec.max_gpus_per_type[static_cast<std::size_t>(ty)] =
            static_cast<int>(as_integer(cap.value(), cp, ctx, 0, INT_MAX));
      }
    }
    guaranteed += spec.guaranteed_gpus;
    out.push_back(std::move(spec));
  }
  if (guaranteed > total)
    ctx.fail(path, "guaranteed_gpus sum to " + std::to_string(guaranteed) + ", more than the cluster's " +
                       std::to_string(total) + " GPUs");
  return out;
}

void parse_cluster(const json& value, Request& req, NodeDirectory& dir, const JsonContext& ctx) {
  ObjectReader cluster(value, "cluster", ctx, {"gpu_types", "reserved", "node_names", "down", "tenants"});
  ClusterSpec& c = req.cluster;
  const std::string types_path = cluster.path("gpu_types");
  const json& types =
      as_array(cluster.require("gpu_types"), types_path, ctx, static_cast<std::size_t>(RequestLimits::max_gpu_types));
  if (types.empty()) ctx.fail(types_path, "the cluster has no GPU types (empty cluster)");

  const std::size_t ntypes = types.size();
  std::vector<std::string> name_paths(ntypes);
  c.node_names.assign(ntypes, {});
  long long total_gpus = 0;
  for (std::size_t t = 0; t < ntypes; ++t) {
    ObjectReader g(types[t], path_index(types_path, t), ctx, {"name", "nodes", "gpus_per_node", "node_names"});
    std::string name = detail::as_name(g.require("name"), g.path("name"), ctx);
    if (name.empty()) ctx.fail(g.path("name"), "must not be empty");
    if (c.type_index(name) >= 0) ctx.fail(g.path("name"), "duplicate GPU type " + quote_json(name));
    const auto nodes = as_integer(g.require("nodes"), g.path("nodes"), ctx, 0, RequestLimits::max_gpus_per_type);
    const auto per_node =
        as_integer(g.require("gpus_per_node"), g.path("gpus_per_node"), ctx, 1, RequestLimits::max_gpus_per_type);
    if (nodes * per_node > RequestLimits::max_gpus_per_type)
      ctx.fail(g.path(), std::to_string(nodes) + " nodes x " + std::to_string(per_node) +
                             " GPUs = " + std::to_string(nodes * per_node) + " GPUs, more than the limit of " +
                             std::to_string(RequestLimits::max_gpus_per_type) + " per type");
    total_gpus += nodes * per_node;
    if (const json* n = g.get("node_names")) {
      name_paths[t] = g.path("node_names");
      c.node_names[t] = parse_node_names(*n, name_paths[t], ctx, static_cast<int>(nodes));
    }
    c.types.emplace_back(std::move(name), static_cast<int>(nodes), static_cast<int>(per_node));
  }
  if (total_gpus == 0) ctx.fail(types_path, "the cluster has no GPUs (every type has 0 nodes)");

  if (const json* v = cluster.get_non_null("node_names")) {
    if (!v->is_object())
      ctx.fail(cluster.path("node_names"), "must be an object {\"<gpu type>\": [names]}, got " + detail::describe(*v));
    for (const auto& item : v->items()) {
      const std::string p = path_key(cluster.path("node_names"), item.key());
      const int t = c.type_index(item.key());
      if (t < 0) ctx.fail(p, "unknown GPU type " + quote_json(item.key()));
      const auto ti = static_cast<std::size_t>(t);
      if (!name_paths[ti].empty())
        ctx.fail(p, "node names of type " + quote_json(item.key()) + " are already given in " + name_paths[ti]);
      name_paths[ti] = p;
      c.node_names[ti] = parse_node_names(item.value(), p, ctx, c.types[ti].num_nodes());
    }
  }

  c.reserved.assign(ntypes, 0);
  if (const json* v = cluster.get_non_null("reserved")) {
    const std::string rp = cluster.path("reserved");
    if (!v->is_object()) ctx.fail(rp, "must be an object {\"<gpu type>\": GPUs}, got " + detail::describe(*v));
    for (const auto& item : v->items()) {
      const std::string p = path_key(rp, item.key());
      const int t = c.type_index(item.key());
      if (t < 0) ctx.fail(p, "unknown GPU type " + quote_json(item.key()));
      const auto& g = c.types[static_cast<std::size_t>(t)];
      const long long total = static_cast<long long>(g.num_nodes()) * g.gpus_per_node();
      c.reserved[static_cast<std::size_t>(t)] = static_cast<int>(as_integer(item.value(), p, ctx, 0, total));
    }
  }

  dir.build(name_paths, ctx);

  c.down.assign(ntypes, {});
  if (const json* v = cluster.get_non_null("down")) {
    const std::string dp = cluster.path("down");
    const json& arr = as_array(
        *v, dp, ctx, static_cast<std::size_t>(RequestLimits::max_gpu_types * RequestLimits::max_gpus_per_type));
    std::unordered_set<long long> seen;
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string p = path_index(dp, i);
      const std::string name = as_string(arr[i], p, ctx);
      const auto node = dir.find(name);
      if (!node) ctx.fail(p, dir.unknown(name));
      if (!seen.insert(static_cast<long long>(node->first) << 32 | node->second).second)
        ctx.fail(p, "node " + quote_json(name) + " is listed twice");
      c.down[static_cast<std::size_t>(node->first)].push_back(node->second);
    }
  }
  // Reserved GPUs cannot exceed what is left when nodes fail: whatever held them was on the nodes
  // that are still up, or is gone with the failed ones.
  for (std::size_t t = 0; t < ntypes; ++t) {
    const auto& g = c.types[t];
    const long long up = static_cast<long long>(g.num_nodes() - static_cast<int>(c.down[t].size())) * g.gpus_per_node();
    if (c.reserved[t] > up) c.reserved[t] = static_cast<int>(up);
  }
  if (const json* v = cluster.get_non_null("tenants"))
    req.options.tenants = parse_tenants(*v, cluster.path("tenants"), c, ctx);
}

// ----------------------------------------------------------------------------------------------
// Policy
// ----------------------------------------------------------------------------------------------
void parse_round_options(const json& value, RoundOptions& o, const JsonContext& ctx) {
  ObjectReader pol(
      value, "policy", ctx,
      {"p", "lambda", "backend", "time_limit_ms", "relative_gap", "place", "round_utilities", "prices", "threads"});
  if (const auto p = pol.number("p")) {
    if (*p == 0.0) ctx.fail(pol.path("p"), "the fairness exponent must be non-zero, got 0");
    o.p = *p;
  }
  if (const auto l = pol.number("lambda")) {
    if (!(*l > 0.0)) ctx.fail(pol.path("lambda"), "must be > 0, got " + detail::describe(*pol.get("lambda")));
    o.lambda = *l;
  }
  if (const auto b = pol.string("backend")) {
    if (!has_milp_solver(*b)) {
      std::string avail;
      for (const auto& n : available_milp_solvers()) avail += (avail.empty() ? "" : ", ") + n;
      ctx.fail(pol.path("backend"), "unknown MILP backend " + quote_json(*b) + " (available: " + avail + ", default)");
    }
    o.backend = *b;
  }
  if (const json* t = pol.get("time_limit_ms")) {
    if (t->is_null())
      o.time_limit.reset();  // null: no limit
    else
      o.time_limit = std::chrono::milliseconds(as_integer(*t, pol.path("time_limit_ms"), ctx, 0, INT_MAX));
  }
  if (const auto g = pol.number("relative_gap")) {
    if (*g < 0.0 || *g > 1.0)
      ctx.fail(pol.path("relative_gap"), "must be in [0, 1], got " + detail::describe(*pol.get("relative_gap")));
    o.relative_gap = *g;
  }
  if (const auto b = pol.boolean("place")) o.place = *b;
  if (const auto b = pol.boolean("round_utilities")) o.round_utilities = *b;
  if (const auto b = pol.boolean("prices")) o.compute_prices = *b;
  if (const auto t = pol.integer("threads", 0, 4096)) o.threads = static_cast<int>(*t);
}

// ----------------------------------------------------------------------------------------------
// Warm start (warm_start.hpp): the previous decision's `warm_start` object. Types, rows and jobs
// this request does not have are ignored; only the form is checked.
// ----------------------------------------------------------------------------------------------
std::shared_ptr<const WarmStart> parse_warm_start(const json& value, const JsonContext& ctx) {
  ObjectReader root(value, "warm_start", ctx, {"prices", "allocations"});
  auto w = std::make_shared<WarmStart>();
  if (const json* arr = root.get_non_null("prices")) {
    const std::string path = root.path("prices");
    const json& a = as_array(*arr, path, ctx, static_cast<std::size_t>(RequestLimits::max_gpu_types) * 32);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ObjectReader e(a[i], path_index(path, i), ctx, {"gpu_type", "min_item_gpus", "price"});
      WarmStart::RowPrice rp;
      rp.gpu_type = as_string(e.require("gpu_type"), e.path("gpu_type"), ctx);
      rp.min_item_gpus = static_cast<int>(e.integer("min_item_gpus", 1, RequestLimits::max_gpus_per_type).value_or(1));
      rp.price = as_nonnegative(e.require("price"), e.path("price"), ctx);
      w->prices.push_back(std::move(rp));
    }
  }
  if (const json* arr = root.get_non_null("allocations")) {
    const std::string path = root.path("allocations");
    const json& a = as_array(*arr, path, ctx, static_cast<std::size_t>(RequestLimits::max_jobs));
    for (std::size_t i = 0; i < a.size(); ++i) {
      ObjectReader e(a[i], path_index(path, i), ctx, {"job", "gpu_type", "nodes", "gpus"});
      WarmStart::Allocation al;
      al.job = as_string(e.require("job"), e.path("job"), ctx);
      al.gpu_type = e.string("gpu_type").value_or("");
      al.nodes = static_cast<int>(
          e.integer("nodes", 0, RequestLimits::max_gpus_per_type).value_or(al.gpu_type.empty() ? 0 : 1));
      al.gpus = static_cast<int>(e.integer("gpus", 0, RequestLimits::max_gpus_per_type).value_or(0));
      w->allocations.push_back(std::move(al));
    }
  }
  return w;
}

// ----------------------------------------------------------------------------------------------
// Jobs
// ----------------------------------------------------------------------------------------------

// Configurations of the whole cluster (no failed nodes, no reservations): goodput tables are
// written for the cluster, and a node failing must not turn a valid table into a rejected request.
// The shapes come from configuration_of_count() (configuration_set.hpp), the one home of the rule.
class ConfigIndex {
 public:
  explicit ConfigIndex(const ClusterSpec& cluster) : cluster_(cluster) {}

  /// The configuration a job holding `gpus` GPUs of `type` runs on (a rigid job's count `rigid_count`
  /// may name its footprint), if the whole cluster has it and its node count is `nodes` (0 = any).
  [[nodiscard]] std::optional<ConfigurationSpec> held(int type, int gpus, int nodes,
                                                      std::optional<int> rigid_count) const {
    const auto& g = cluster_.types[static_cast<std::size_t>(type)];
    auto c = held_configuration(type, largest_virtual_node(g.gpus_per_node()), g.num_nodes(), gpus, rigid_count);
    if (c && nodes > 0 && c->nodes != nodes) return std::nullopt;
    return c;
  }
  /// "type "A" has single-node configurations of 1, 2 GPUs and whole-node configurations of 2..4 nodes x 2 GPUs".
  [[nodiscard]] std::string describe(int type) const {
    const auto& g = cluster_.types[static_cast<std::size_t>(type)];
    const int s = largest_virtual_node(g.gpus_per_node());
    std::string out = "type " + quote_json(g.name()) + " has";
    if (s < 1 || g.num_nodes() < 1) return out + " no configurations";
    std::string single;
    for (int k = 1; k <= s; k *= 2) single += (single.empty() ? "" : ", ") + std::to_string(k);
    out += " single-node configurations of " + single + " GPUs";
    if (g.num_nodes() >= 2)
      out += " and whole-node configurations of 2" +
             (g.num_nodes() > 2 ? ".." + std::to_string(g.num_nodes()) : std::string()) + " nodes x " +
             std::to_string(s) + " GPUs (give \"nodes\" and the total \"gpus\")";
    return out;
  }

 private:
  const ClusterSpec& cluster_;
};

// The fixed count of a rigid job (which may name its footprint), empty for the other kinds.
std::optional<int> rigid_count(const JobSpec& job) {
  return job.kind() == JobKind::rigid ? std::optional<int>(job.min_gpus()) : std::nullopt;
}

JobKind parse_kind(const json& value, const std::string& path, const JsonContext& ctx) {
  const std::string k = as_string(value, path, ctx);
  if (const auto kind = parse_job_kind(k)) return *kind;
  ctx.fail(path, "unknown job kind " + quote_json(k) + " (known: " + std::string(job_kind_names) + ")");
}

int type_of(const json& value, const std::string& path, const ClusterSpec& cluster, const JsonContext& ctx) {
  const std::string name = as_string(value, path, ctx);
  const int t = cluster.type_index(name);
  if (t < 0) {
    std::string known;
    for (const auto& g : cluster.types) known += (known.empty() ? "" : ", ") + quote_json(g.name());
    ctx.fail(path, "unknown GPU type " + quote_json(name) + " (cluster types: " + known + ")");
  }
  return t;
}

// The goodput model object a JsonSession keeps for a job from one request to the next: its
// `goodput` table, or its `model` (Pollux's) with what parse_model_json() built it from.
struct KeptModel {
  std::shared_ptr<const GoodputTable> table;
  std::shared_ptr<const JobModel> model;
  json model_json;  // the job's `model` as read
  JobKind kind = JobKind::adaptive;
  int pipeline_size = 1;
};

// The models of the previous request a JsonSession parsed (`previous`, by job id) and this
// request's (`next`, filled while parsing).
struct ModelReuse {
  const std::unordered_map<std::string, KeptModel>& previous;
  std::unordered_map<std::string, KeptModel> next;
};

// The same JSON value bit for bit: the same keys in the same order, numbers of the same kind with
// the same bits (1 and 1.0, 0 and -0.0 differ: conservative, a value read differently is never
// taken for the same).
bool same_bits(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::object:
      if (a.size() != b.size()) return false;
      for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y)
        if (x.key() != y.key() || !same_bits(x.value(), y.value())) return false;
      return true;
    case json::value_t::array:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_bits(a[i], b[i])) return false;
      return true;
    case json::value_t::number_float:
      return std::bit_cast<std::uint64_t>(a.get<double>()) == std::bit_cast<std::uint64_t>(b.get<double>());
    default:  // null, booleans, strings, integers
      return a == b;
  }
}

void parse_goodput(const json& value, const std::string& path, JobSpec& job, const ClusterSpec& cluster,
                   const ConfigIndex& index, const JsonContext& ctx, ModelReuse* reuse) {
  const json& arr = as_array(value, path, ctx, static_cast<std::size_t>(RequestLimits::max_gpus_per_type));
  GoodputTable table;
  std::map<std::tuple<int, int, int>, std::size_t> seen;  // configuration -> position in the array
  for (std::size_t i = 0; i < arr.size(); ++i) {
    ObjectReader e(arr[i], path_index(path, i), ctx, {"gpu_type", "gpus", "nodes", "value"});
    const int t = type_of(e.require("gpu_type"), e.path("gpu_type"), cluster, ctx);
    const int gpus =
        static_cast<int>(as_integer(e.require("gpus"), e.path("gpus"), ctx, 1, RequestLimits::max_gpus_per_type));
    std::optional<int> nodes;
    if (const auto n = e.integer("nodes", 1, RequestLimits::max_gpus_per_type)) nodes = static_cast<int>(*n);
    const double v = as_nonnegative(e.require("value"), e.path("value"), ctx);

    // A rigid job whose count is not a configuration size runs on its footprint, the smallest
    // configuration that holds it; the round asks the goodput of that configuration.
    const std::optional<ConfigurationSpec> config = index.held(t, gpus, nodes.value_or(0), rigid_count(job));
    if (!config) {
      const std::string what = "(gpu_type " + quote_json(cluster.types[static_cast<std::size_t>(t)].name()) +
                               ", gpus " + std::to_string(gpus) +
                               (nodes ? ", nodes " + std::to_string(*nodes) : std::string()) + ")";
      ctx.fail(e.path(), what + " is not a configuration of the cluster: " + index.describe(t));
    }
    const auto [it, inserted] = seen.emplace(std::make_tuple(config->type, config->nodes, gpus), i);
    if (!inserted) ctx.fail(e.path(), "duplicate goodput entry: same configuration as " + path_index(path, it->second));
    // The round asks a rigid job's goodput for its count (on its footprint's nodes), any other job
    // for the configuration itself; the node count is only needed to tell shapes apart.
    table.set(cluster.types[static_cast<std::size_t>(t)].name(), nodes.value_or(0), gpus, v);
  }
  auto shared = std::make_shared<const GoodputTable>(std::move(table));
  if (reuse != nullptr) {
    // The previous request's object when the table is the same (JsonSession): its identity lets
    // the round reuse what the previous round built for this job.
    if (const auto it = reuse->previous.find(job.id());
        it != reuse->previous.end() && it->second.table && *it->second.table == *shared)
      shared = it->second.table;
    reuse->next.emplace(job.id(), KeptModel{shared, nullptr, nullptr, job.kind(), job.pipeline_size()});
  }
  job.goodput_model(std::move(shared));
}

// A job's `model` (Pollux's, io/model_json.hpp) as its goodput model; set kind and pipeline size
// first. In a JsonSession, the previous request's object when the model would be built the same.
void parse_model(const json& value, const std::string& path, JobSpec& job, const ClusterSpec& cluster,
                 ModelReuse* reuse) {
  auto shared =
      std::make_shared<const JobModel>(detail::parse_model_json(value, cluster, path, job.kind(), job.pipeline_size()));
  if (reuse != nullptr) {
    // parse_model_json() reads the `model` value, the job's kind and pipeline size, and of the
    // cluster the node size of each type the model names (the names were checked): the same of
    // all four builds the same JobModel, whose answers then are the same bit for bit.
    const auto same_model = [&](const KeptModel& k) {
      if (!k.model || k.kind != job.kind() || k.pipeline_size != job.pipeline_size() ||
          !same_bits(k.model_json, value) || k.model->types().size() != shared->types().size())
        return false;
      for (std::size_t t = 0; t < shared->types().size(); ++t)
        if (k.model->types()[t].gpus_per_node != shared->types()[t].gpus_per_node) return false;
      return true;
    };
    if (const auto it = reuse->previous.find(job.id()); it != reuse->previous.end() && same_model(it->second))
      shared = it->second.model;
    reuse->next.emplace(job.id(), KeptModel{nullptr, shared, value, job.kind(), job.pipeline_size()});
  }
  job.goodput_model(std::move(shared));
}

// GPUs held on one node by the current placements of the jobs seen so far.
struct NodeUse {
  long long gpus = 0;
  std::vector<std::string> jobs;
  std::unordered_map<int, std::string> gpu_owner;
};

struct PlacementState {
  const NodeDirectory* dir = nullptr;
  std::unordered_map<long long, NodeUse> nodes;
};

std::string job_list(std::vector<std::string> jobs, const std::string& last) {
  jobs.push_back(last);
  std::string s;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    s += (i == 0 ? "" : i + 1 == jobs.size() ? " and " : ", ") + quote_json(jobs[i]);
  return s;
}

CurrentAllocation parse_current(const json& value, const std::string& path, const JobSpec& job,
                                const ClusterSpec& cluster, const ConfigIndex& index, PlacementState& state,
                                const JsonContext& ctx) {
  const std::string& job_id = job.id();
  ObjectReader cur(value, path, ctx, {"gpu_type", "gpus", "nodes", "placement"});
  CurrentAllocation a;
  a.type = type_of(cur.require("gpu_type"), cur.path("gpu_type"), cluster, ctx);
  const auto& g = cluster.types[static_cast<std::size_t>(a.type)];
  const long long type_gpus = static_cast<long long>(g.num_nodes()) * g.gpus_per_node();
  if (type_gpus == 0) ctx.fail(cur.path("gpu_type"), "type " + quote_json(g.name()) + " has no GPUs");
  a.gpus = static_cast<int>(as_integer(cur.require("gpus"), cur.path("gpus"), ctx, 1, type_gpus));
  if (const auto n = cur.integer("nodes", 1, g.num_nodes())) a.nodes = static_cast<int>(*n);
  {
    // What the job holds must be a configuration of the (whole) cluster, or a rigid job's count
    // on its footprint.
    if (!index.held(a.type, a.gpus, a.nodes, rigid_count(job)))
      ctx.fail(cur.path(), "(gpu_type " + quote_json(g.name()) + ", gpus " + std::to_string(a.gpus) +
                               (a.nodes > 0 ? ", nodes " + std::to_string(a.nodes) : std::string()) +
                               ") is not a configuration of the cluster: " + index.describe(a.type));
  }

  const json* pl = cur.get_non_null("placement");
  if (pl == nullptr) return a;
  const std::string pp = cur.path("placement");
  const json& arr = as_array(*pl, pp, ctx, static_cast<std::size_t>(g.num_nodes()));
  long long placed = 0;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    ObjectReader e(arr[i], path_index(pp, i), ctx, {"node", "gpus", "gpu_ids"});
    const std::string name = as_string(e.require("node"), e.path("node"), ctx);
    const auto node = state.dir->find(name);
    if (!node) ctx.fail(e.path("node"), state.dir->unknown(name));
    if (node->first != a.type)
      ctx.fail(e.path("node"), "node " + quote_json(name) + " is of type " +
                                   quote_json(cluster.types[static_cast<std::size_t>(node->first)].name()) +
                                   ", but the job's current gpu_type is " + quote_json(g.name()));
    for (const NodeShare& s : a.placement)
      if (s.node == node->second)
        ctx.fail(e.path("node"), "node " + quote_json(name) + " appears twice in the placement");
    const int r = g.gpus_per_node();
    NodeShare share;
    share.node = node->second;
    share.gpus = static_cast<int>(as_integer(e.require("gpus"), e.path("gpus"), ctx, 1, INT_MAX));
    if (share.gpus > r)
      ctx.fail(e.path("gpus"),
               std::to_string(share.gpus) + " GPUs on node " + quote_json(name) + ", which has " + std::to_string(r));
    NodeUse& use = state.nodes[static_cast<long long>(node->first) << 32 | node->second];
    if (use.gpus + share.gpus > r)
      ctx.fail(e.path("gpus"), "node " + quote_json(name) + " has " + std::to_string(r) + " GPUs, but jobs " +
                                   job_list(use.jobs, job_id) + " hold " + std::to_string(use.gpus + share.gpus) +
                                   " GPUs on it");
    if (const json* ids = e.get_non_null("gpu_ids")) {
      const std::string ip = e.path("gpu_ids");
      const json& idarr = as_array(*ids, ip, ctx, static_cast<std::size_t>(r));
      if (static_cast<int>(idarr.size()) != share.gpus)
        ctx.fail(ip, "lists " + std::to_string(idarr.size()) + " GPUs, but gpus is " + std::to_string(share.gpus));
      for (std::size_t k = 0; k < idarr.size(); ++k) {
        const int id = static_cast<int>(as_integer(idarr[k], path_index(ip, k), ctx, 0, r - 1));
        if (std::find(share.gpu_ids.begin(), share.gpu_ids.end(), id) != share.gpu_ids.end())
          ctx.fail(path_index(ip, k),
                   "GPU " + std::to_string(id) + " of node " + quote_json(name) + " is listed twice");
        const auto [it, inserted] = use.gpu_owner.emplace(id, job_id);
        if (!inserted)
          ctx.fail(path_index(ip, k), "GPU " + std::to_string(id) + " of node " + quote_json(name) +
                                          " is also held by job " + quote_json(it->second));
        share.gpu_ids.push_back(id);
      }
    }
    use.gpus += share.gpus;
    use.jobs.push_back(job_id);
    placed += share.gpus;
    a.placement.push_back(std::move(share));
  }
  if (placed != a.gpus)
    ctx.fail(pp, "places " + std::to_string(placed) + " GPUs, but the job's current configuration has " +
                     std::to_string(a.gpus));
  return a;
}

JobSpec parse_job(const json& value, const std::string& path, const ClusterSpec& cluster, const ConfigIndex& index,
                  PlacementState& placements, const JsonContext& ctx, ModelReuse* reuse) {
  ObjectReader j(value, path, ctx,
                 {"id", "min_gpus", "max_gpus", "kind", "pipeline_size", "preemptible", "age_s", "restarts",
                  "restart_cost_s", "max_gpus_ever", "current", "goodput", "model", "weight", "tenant"});
  JobSpec job(detail::as_name(j.require("id"), j.path("id"), ctx));
  if (const json* k = j.get("kind")) job.kind(parse_kind(*k, j.path("kind"), ctx));

  const auto pipeline = j.integer("pipeline_size", 1, RequestLimits::max_gpus_per_type);
  if (pipeline && *pipeline != 1 && job.kind() != JobKind::hybrid)
    ctx.fail(j.path("pipeline_size"), "only hybrid jobs have a pipeline (kind is not \"hybrid\")");
  const int p = static_cast<int>(pipeline.value_or(1));
  job.pipeline_size(p);

  const auto min = j.integer("min_gpus", 1, INT_MAX);
  const auto max = j.integer("max_gpus", 1, INT_MAX);
  // A hybrid job needs at least one pipeline; a rigid job's count is its minimum and maximum.
  int min_gpus = static_cast<int>(min.value_or(job.kind() == JobKind::hybrid ? p : 1));
  int max_gpus = static_cast<int>(max.value_or(job.kind() == JobKind::rigid ? min_gpus : INT_MAX));
  if (job.kind() == JobKind::rigid && !min && max) min_gpus = max_gpus;
  if (min_gpus > max_gpus)
    ctx.fail(j.path(min ? "min_gpus" : "max_gpus"),
             "min_gpus " + std::to_string(min_gpus) + " exceeds max_gpus " + std::to_string(max_gpus));
  if (job.kind() == JobKind::rigid && min_gpus != max_gpus)
    ctx.fail(j.path("max_gpus"), "a rigid job runs on exactly one count: min_gpus (" + std::to_string(min_gpus) +
                                     ") and max_gpus (" + std::to_string(max_gpus) + ") must be equal");
  if (job.kind() == JobKind::hybrid && min_gpus % p != 0)
    ctx.fail(j.path("min_gpus"), "must be a multiple of pipeline_size " + std::to_string(p) +
                                     " for a hybrid job, got " + std::to_string(min_gpus));
  if (job.kind() == JobKind::hybrid && max_gpus < p)
    ctx.fail(j.path("max_gpus"), "is smaller than one pipeline of " + std::to_string(p) + " GPUs");
  job.min_gpus(min_gpus).max_gpus(max_gpus);

  if (const auto b = j.boolean("preemptible")) job.preemptible(*b);
  if (const auto a = j.nonnegative("age_s")) job.age_s(*a);
  if (const auto r = j.integer("restarts", 0, INT_MAX)) job.restarts(static_cast<int>(*r));
  if (const auto s = j.nonnegative("restart_cost_s")) job.restart_cost_s(*s);
  if (const auto w = j.number("weight")) {
    if (!(*w > 0.0)) ctx.fail(j.path("weight"), "must be > 0, got " + detail::describe(*j.get("weight")));
    job.weight(*w);
  }
  if (const auto t = j.string("tenant")) {
    if (t->empty()) ctx.fail(j.path("tenant"), "must not be empty (leave it out for no tenant)");
    job.tenant(*t);
  }
  if (const json* m = j.get_non_null("max_gpus_ever"))
    job.max_gpus_ever(static_cast<int>(as_integer(*m, j.path("max_gpus_ever"), ctx, 0, INT_MAX)));
  if (const json* c = j.get_non_null("current"))
    job.current(parse_current(*c, j.path("current"), job, cluster, index, placements, ctx));

  const json* goodput = j.get("goodput");
  const json* model = j.get("model");
  if (goodput != nullptr && model != nullptr)
    ctx.fail(j.path("model"), "give either \"goodput\" or \"model\", not both");
  if (goodput != nullptr) {
    parse_goodput(*goodput, j.path("goodput"), job, cluster, index, ctx, reuse);
  } else if (model != nullptr) {
    // Pollux's model per GPU type (issue 3); its parser names the field, the source is added here.
    try {
      parse_model(*model, j.path("model"), job, cluster, reuse);
    } catch (const InvalidArgument& e) {
      ctx.fail("", e.what());
    }
  } else {
    ctx.fail(j.path(), "job " + quote_json(job.id()) + " needs a \"goodput\" table or a \"model\"");
  }
  return job;
}

// A job's tenant must be one of cluster.tenants.
void check_job_tenant(const JobSpec& job, const std::vector<TenantSpec>& tenants, const std::string& path,
                      const JsonContext& ctx) {
  if (job.tenant().empty()) return;
  std::string known;
  for (const auto& t : tenants) {
    if (t.name == job.tenant()) return;
    known += (known.empty() ? "" : ", ") + quote_json(t.name);
  }
  ctx.fail(path, "unknown tenant " + quote_json(job.tenant()) +
                     " (cluster.tenants: " + (known.empty() ? std::string("none") : known) + ")");
}

// A message of JsonContext::fail() without its "<source>:<line>:<column>: " (parts that may be absent).
std::string without_source(const std::string& msg, const std::string& source) {
  std::size_t pos = 0;
  if (!source.empty() && msg.compare(0, source.size(), source) == 0) pos = source.size();
  // ":<line>:<column>" glued to the source, or "<line>:<column>" at the start without one.
  std::size_t q = pos;
  if (pos > 0 && q < msg.size() && msg[q] == ':') ++q;
  const auto digits = [&](std::size_t at) {
    std::size_t e = at;
    while (e < msg.size() && msg[e] >= '0' && msg[e] <= '9') ++e;
    return e;
  };
  const std::size_t line_end = digits(q);
  if (line_end > q && line_end < msg.size() && msg[line_end] == ':') {
    const std::size_t col_end = digits(line_end + 1);
    if (col_end > line_end + 1) pos = col_end;
  }
  if (msg.compare(pos, 2, ": ") == 0) pos += 2;
  return msg.substr(pos);
}

// Splits "<path>: <reason>" (a job-level error of the parser, without source) into the field path
// and the reason; `job_path` ("jobs[3]") starts every path. Path segments: `.key` (up to the next
// `.`, `[` or `: `), `[12]`, `["key"]` (a JSON string) and `["key..." (N bytes)]`.
std::pair<std::string, std::string> split_field(const std::string& msg, const std::string& job_path) {
  if (msg.compare(0, job_path.size(), job_path) != 0) return {job_path, msg};
  std::size_t pos = job_path.size();
  while (pos < msg.size() && msg.compare(pos, 2, ": ") != 0) {
    if (msg[pos] == '.') {
      ++pos;
      while (pos < msg.size() && msg[pos] != '.' && msg[pos] != '[' && msg.compare(pos, 2, ": ") != 0) ++pos;
    } else if (msg[pos] == '[') {
      ++pos;
      if (pos < msg.size() && msg[pos] == '"') {
        for (++pos; pos < msg.size() && msg[pos] != '"'; ++pos)
          if (msg[pos] == '\\') ++pos;
        ++pos;
      }
      while (pos < msg.size() && msg[pos] != ']') ++pos;
      if (pos < msg.size()) ++pos;
    } else {
      return {job_path, msg};
    }
  }
  if (pos >= msg.size()) return {job_path, msg};
  return {msg.substr(0, pos), msg.substr(pos + 2)};
}

// NaN and infinities are not JSON; a bound that is unknown prints as null.
nlohmann::ordered_json number_or_null(double v) {
  if (std::isfinite(v)) return v;
  return nullptr;
}

// parse_request(), with the goodput models of the previous request of a JsonSession (`reuse`; null:
// none).
Request parse_request_reusing(std::string_view json_text, std::string_view source_name, ModelReuse* reuse) {
  const JsonContext ctx{std::string(source_name)};
  const json doc = detail::parse_json_strict(json_text, ctx, RequestLimits::max_depth);
  ObjectReader root(doc, "", ctx, {"cluster", "policy", "jobs", "warm_start", "options"});

  Request req;
  NodeDirectory dir(req.cluster);  // refers to req.cluster, which stays in place while parsing
  parse_cluster(root.require("cluster"), req, dir, ctx);
  if (const json* p = root.get_non_null("policy")) parse_round_options(*p, req.options, ctx);
  if (const json* w = root.get_non_null("warm_start")) req.options.warm_start = parse_warm_start(*w, ctx);
  if (const json* o = root.get_non_null("options")) {
    // How the request itself is handled (not the round's policy): all-or-nothing or per job.
    ObjectReader opt(*o, "options", ctx, {"strict"});
    if (const auto b = opt.boolean("strict")) req.options.strict = *b;
  }

  const ConfigIndex index(req.cluster);
  PlacementState placements{&dir, {}};

  const std::string jobs_path = "jobs";
  const json& jobs = as_array(root.require("jobs"), jobs_path, ctx, static_cast<std::size_t>(RequestLimits::max_jobs));
  req.jobs.reserve(jobs.size());
  // Duplicate ids are a request-level error (a decision must name one job per id), checked before
  // any job is parsed so that a rejected job cannot share its id with a scheduled one.
  std::unordered_map<std::string, std::size_t> ids;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].is_object()) continue;
    const auto id = jobs[i].find("id");
    if (id == jobs[i].end() || !id->is_string()) continue;
    // A size limit, like the request's: the whole request is refused.
    if (id->get_ref<const std::string&>().size() > RequestLimits::max_name_bytes)
      (void)detail::as_name(*id, path_key(path_index(jobs_path, i), "id"), ctx);
    const auto [it, inserted] = ids.emplace(id->get<std::string>(), i);
    if (!inserted)
      ctx.fail(path_key(path_index(jobs_path, i), "id"),
               "duplicate job id " + quote_json(it->first) + " (also " + path_index(jobs_path, it->second) + ")");
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string p = path_index(jobs_path, i);
    try {
      JobSpec job = parse_job(jobs[i], p, req.cluster, index, placements, ctx, reuse);
      check_job_tenant(job, req.options.tenants, path_key(p, "tenant"), ctx);
      req.jobs.push_back(std::move(job));
    } catch (const InvalidArgument& e) {
      if (req.options.strict) throw;  // all or nothing: the job's error is the request's
      RejectedJob r;
      r.index = i;
      std::tie(r.field, r.reason) = split_field(without_source(e.what(), ctx.source()), p);
      if (jobs[i].is_object()) {
        const auto id = jobs[i].find("id");
        if (id != jobs[i].end() && id->is_string()) r.job = id->get<std::string>();
        const auto cur = jobs[i].find("current");
        r.running = cur != jobs[i].end() && !cur->is_null();
      }
      req.rejected.push_back(std::move(r));
    }
  }
  // Scheduling rule of the core: a job whose configuration failed nodes took away restarts.
  (void)forget_lost_allocations(req.cluster, req.jobs);
  return req;
}

}  // namespace

Request parse_request(std::string_view json_text, std::string_view source_name) {
  return parse_request_reusing(json_text, source_name, nullptr);
}

struct JsonSession::State {
  // The goodput models of the last request parsed, by job id; what the last round built.
  std::unordered_map<std::string, KeptModel> models;
  decltype(WarmStart::cache) cache;
};

JsonSession::JsonSession() : state_(std::make_unique<State>()) {}
JsonSession::~JsonSession() = default;
JsonSession::JsonSession(JsonSession&&) noexcept = default;
JsonSession& JsonSession::operator=(JsonSession&&) noexcept = default;

Request JsonSession::parse(std::string_view json_text, std::string_view source_name) {
  ModelReuse reuse{state_->models, {}};
  Request req = parse_request_reusing(json_text, source_name, &reuse);
  state_->models = std::move(reuse.next);  // (only the last request's: memory stays one request's)
  return req;
}

RoundResult JsonSession::run(const Request& request) {
  RoundOptions options = request.options;
  if (options.warm_start && !options.warm_start->cache && state_->cache) {
    auto warm = std::make_shared<WarmStart>(*options.warm_start);
    warm->cache = state_->cache;
    options.warm_start = std::move(warm);
  }
  state_->cache.reset();  // (let go before the round builds its own)
  RoundResult result = run_round(request.cluster, request.jobs, options);
  if (result.warm_start) state_->cache = result.warm_start->cache;
  return result;
}

void JsonSession::clear() noexcept {
  state_->models.clear();
  state_->cache.reset();
}

namespace {

// Whole stream as a string, at most `max_bytes` (checked while reading, chunk by chunk, so an
// endless stream stops there); read errors (libstdc++ throws from stream reads, e.g. for a
// directory) become InvalidArgument naming the source.
std::string read_all(std::istream& in, const std::string& source, std::size_t max_bytes) {
  try {
    std::string text;
    char buf[1 << 16];
    while (in) {
      in.read(buf, sizeof buf);
      const auto n = static_cast<std::size_t>(in.gcount());
      if (n > max_bytes - text.size())
        throw InvalidArgument(source + ": the request is larger than the limit of " + std::to_string(max_bytes) +
                              " bytes (sia_allocate --max-request-bytes)");
      text.append(buf, n);
    }
    if (in.bad()) throw InvalidArgument(source + ": cannot read the request");
    return text;
  } catch (const std::ios_base::failure& e) {
    throw InvalidArgument(source + ": cannot read the request: " + e.what());
  }
}

}  // namespace

Request load_request(const std::filesystem::path& file, std::size_t max_bytes) {
  if (file == "-") return parse_request(read_all(std::cin, "<stdin>", max_bytes), "<stdin>");
  const std::string source = file.string();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw InvalidArgument(source + ": cannot read the request: is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InvalidArgument(source + ": cannot open the request: " + std::strerror(errno));
  return parse_request(read_all(in, source, max_bytes), source);
}

std::string decision_to_json(const Request& request, const RoundResult& result, bool pretty) {
  using ojson = nlohmann::ordered_json;
  const ClusterSpec& cluster = request.cluster;
  const auto type_name = [&](int t) {
    return t >= 0 && t < cluster.num_types() ? cluster.types[static_cast<std::size_t>(t)].name()
                                             : "#" + std::to_string(t);
  };
  ojson d = ojson::object();
  d["status"] = to_string(result.status);
  d["objective"] = number_or_null(result.objective);
  d["best_bound"] = number_or_null(result.best_bound);
  d["backend"] = result.backend;
  d["solve_ms"] = number_or_null(result.solve_ms);
  d["total_ms"] = number_or_null(result.total_ms);
  ojson allocations = ojson::array();
  ojson unallocated = ojson::array();
  ojson rejected = ojson::array();
  std::vector<std::string> preempted;
  // Walks the request's jobs in order: those the parser rejected (Request::rejected, by index) and
  // the round's decisions for the others (which the round itself may have rejected).
  const std::unordered_set<std::string> preempted_by_round(result.preempted.begin(), result.preempted.end());
  auto add_rejected = [&](const RejectedJob& r, const std::string& field) {
    ojson e = ojson::object();
    e["job"] = r.job.empty() ? ojson(nullptr) : ojson(r.job);
    e["field"] = field;
    e["reason"] = r.reason;
    rejected.push_back(std::move(e));
    ojson u = ojson::object();
    u["job"] = r.job.empty() ? ojson(nullptr) : ojson(r.job);
    u["reason"] = to_string(PendingReason::rejected);
    u["detail"] = field + ": " + r.reason;
    unallocated.push_back(std::move(u));
    if (r.running && !r.job.empty()) preempted.push_back(r.job);  // (one without an id is named by its field)
  };
  std::size_t next_rejected = 0, next_round_rejected = 0;
  const std::size_t total = result.decisions.size() + request.rejected.size();
  std::size_t k = 0;  // index into result.decisions
  for (std::size_t req_index = 0; req_index < total; ++req_index) {
    if (next_rejected < request.rejected.size() && request.rejected[next_rejected].index == req_index) {
      const RejectedJob& r = request.rejected[next_rejected++];
      add_rejected(r, r.field);
      continue;
    }
    if (k >= result.decisions.size()) break;
    const std::size_t ki = k++;
    const JobDecision& jd = result.decisions[ki];
    if (next_round_rejected < result.rejected.size() && result.rejected[next_round_rejected].index == ki) {
      // Rejected by the round: its field is a JobSpec member; in the request it is the job's field.
      const RejectedJob& r = result.rejected[next_round_rejected++];
      add_rejected(r, path_key(path_index("jobs", req_index), r.field));
      continue;
    }
    if (!jd.config) {
      ojson u = ojson::object();
      u["job"] = jd.job;
      u["reason"] = to_string(jd.reason);
      if (!jd.detail.empty()) u["detail"] = jd.detail;
      unallocated.push_back(std::move(u));
      if (preempted_by_round.count(jd.job) != 0) preempted.push_back(jd.job);
      continue;
    }
    const ConfigurationSpec& c = *jd.config;
    ojson a = ojson::object();
    a["job"] = jd.job;
    a["gpu_type"] = type_name(c.type);
    a["nodes"] = c.nodes;
    // A rigid job may use fewer GPUs than its configuration blocks (its footprint).
    const int used = jd.gpus > 0 ? jd.gpus : c.gpus;
    a["gpus"] = used;
    if (used != c.gpus) a["config_gpus"] = c.gpus;
    if (jd.batch) {
      a["batch_size"] = jd.batch->global_batch;
      a["local_batch"] = jd.batch->local_batch;
      a["accumulation_steps"] = jd.batch->accumulation_steps;
    }
    if (!jd.placement.empty()) {
      ojson pl = ojson::array();
      for (const NodeShare& s : jd.placement) {
        ojson e = ojson::object();
        e["node"] = c.type >= 0 && c.type < cluster.num_types() ? cluster.node_name(c.type, s.node)
                                                                : type_name(c.type) + "/" + std::to_string(s.node);
        e["gpus"] = s.gpus;
        if (!s.gpu_ids.empty()) e["gpu_ids"] = s.gpu_ids;
        pl.push_back(std::move(e));
      }
      a["placement"] = std::move(pl);
    }
    if (jd.placement_status) a["placement_status"] = std::string(to_string(*jd.placement_status));
    a["changed"] = jd.changed;
    allocations.push_back(std::move(a));
  }
  d["allocations"] = std::move(allocations);
  d["unallocated"] = std::move(unallocated);
  if (!rejected.empty()) d["rejected"] = std::move(rejected);
  if (!result.prices.empty()) {
    ojson prices = ojson::object();
    for (std::size_t t = 0; t < result.prices.size(); ++t)
      prices[type_name(static_cast<int>(t))] = number_or_null(result.prices[t]);
    d["prices"] = std::move(prices);
  }
  // What the next request can start from: the capacity rows' prices (the allocation is the
  // decision's own, which the next request reports as its jobs' `current`). With `prices` only:
  // like them, the same for every backend (docs/decision.md: one routine computes them).
  if (request.options.compute_prices && result.warm_start && !result.warm_start->prices.empty()) {
    ojson rows = ojson::array();
    for (const auto& rp : result.warm_start->prices) {
      ojson e = ojson::object();
      e["gpu_type"] = rp.gpu_type;
      e["min_item_gpus"] = rp.min_item_gpus;
      e["price"] = number_or_null(rp.price);
      rows.push_back(std::move(e));
    }
    ojson w = ojson::object();
    w["prices"] = std::move(rows);
    d["warm_start"] = std::move(w);
  }
  if (!result.unmet.empty()) d["unmet"] = result.unmet;
  if (!result.evicted.empty()) d["evicted"] = result.evicted;
  if (!preempted.empty()) d["preempted"] = std::move(preempted);
  if (!result.tenant_capped.empty()) d["tenant_capped"] = result.tenant_capped;
  if (!result.tenant_gpus.empty() && result.tenant_gpus.size() == request.options.tenants.size()) {
    const auto& tenants = request.options.tenants;
    ojson t = ojson::object();
    for (std::size_t k = 0; k < tenants.size(); ++k) t[tenants[k].name] = ojson{{"gpus", result.tenant_gpus[k]}};
    d["tenants"] = std::move(t);
  }
  if (result.fallback) d["fallback"] = true;  // the backend gave nothing usable: greedy allocation
  if (!result.message.empty()) d["message"] = result.message;
  return d.dump(pretty ? 2 : -1, ' ', false, ojson::error_handler_t::replace);
}

int exit_code(RoundStatus status) noexcept {
  return to_int(status == RoundStatus::optimal || status == RoundStatus::feasible ? ExitCode::done
                                                                                  : ExitCode::not_solved);
}

}  // namespace sia
