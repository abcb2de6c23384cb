// The next sia_allocate request from a request and its decision (include/sia/round_state_json.hpp).
// The rules are advance_round_state()'s (src/core/round_state.cpp): this file only translates.
#include <sia/request.hpp>
#include <sia/round_state.hpp>
#include <sia/round_state_json.hpp>

#include <climits>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "io/json_util.hpp"

namespace sia {
namespace {

using detail::as_array;
using detail::as_bool;
using detail::as_integer;
using detail::as_string;
using detail::JsonContext;
using detail::path_index;
using detail::path_key;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// (type, node) of every node name the decision may print (ClusterSpec::node_name).
std::map<std::string, std::pair<int, int>, std::less<>> node_names(const ClusterSpec& cluster) {
  std::map<std::string, std::pair<int, int>, std::less<>> names;
  for (int t = 0; t < cluster.num_types(); ++t)
    for (int n = 0; n < cluster.types[static_cast<std::size_t>(t)].num_nodes(); ++n)
      names.emplace(cluster.node_name(t, n), std::make_pair(t, n));
  return names;
}

// One entry of the decision's `allocations`: the fields the state needs (others are ignored, so a
// decision with more fields than this reader knows still reads).
JobDecision read_allocation(const json& a, const std::string& path, const ClusterSpec& cluster,
                            const std::map<std::string, std::pair<int, int>, std::less<>>& nodes,
                            const JsonContext& ctx) {
  if (!a.is_object()) ctx.fail(path, "must be an object, got " + detail::describe(a));
  auto field = [&](const char* key) -> const json& {
    const auto it = a.find(key);
    if (it == a.end()) ctx.fail(path_key(path, key), "missing field");
    return *it;
  };
  JobDecision d;
  d.job = as_string(field("job"), path_key(path, "job"), ctx);
  const std::string type = as_string(field("gpu_type"), path_key(path, "gpu_type"), ctx);
  const int t = cluster.type_index(type);
  if (t < 0) ctx.fail(path_key(path, "gpu_type"), "unknown GPU type \"" + type + "\" (not in the request's cluster)");
  ConfigurationSpec c;
  c.type = t;
  c.nodes = static_cast<int>(as_integer(field("nodes"), path_key(path, "nodes"), ctx, 1, INT_MAX));
  d.gpus = static_cast<int>(as_integer(field("gpus"), path_key(path, "gpus"), ctx, 1, INT_MAX));
  c.gpus = d.gpus;
  if (const auto it = a.find("config_gpus"); it != a.end())
    c.gpus = static_cast<int>(as_integer(*it, path_key(path, "config_gpus"), ctx, 1, INT_MAX));
  d.config = c;
  if (const auto it = a.find("changed"); it != a.end()) d.changed = as_bool(*it, path_key(path, "changed"), ctx);
  if (const auto it = a.find("placement"); it != a.end() && !it->is_null()) {
    const std::string pp = path_key(path, "placement");
    const json& arr = as_array(*it, pp, ctx, static_cast<std::size_t>(INT_MAX));
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string ep = path_index(pp, i);
      if (!arr[i].is_object()) ctx.fail(ep, "must be an object, got " + detail::describe(arr[i]));
      const auto name_it = arr[i].find("node");
      const auto gpus_it = arr[i].find("gpus");
      if (name_it == arr[i].end()) ctx.fail(path_key(ep, "node"), "missing field");
      if (gpus_it == arr[i].end()) ctx.fail(path_key(ep, "gpus"), "missing field");
      const std::string name = as_string(*name_it, path_key(ep, "node"), ctx);
      const auto node = nodes.find(name);
      if (node == nodes.end() || node->second.first != t)
        ctx.fail(path_key(ep, "node"), "unknown node \"" + name + "\" of GPU type \"" + type + "\"");
      NodeShare s;
      s.node = node->second.second;
      s.gpus = static_cast<int>(as_integer(*gpus_it, path_key(ep, "gpus"), ctx, 1, INT_MAX));
      if (const auto ids = arr[i].find("gpu_ids"); ids != arr[i].end() && !ids->is_null()) {
        const std::string ip = path_key(ep, "gpu_ids");
        const json& idv = as_array(*ids, ip, ctx, static_cast<std::size_t>(INT_MAX));
        for (std::size_t k = 0; k < idv.size(); ++k)
          s.gpu_ids.push_back(static_cast<int>(as_integer(idv[k], path_index(ip, k), ctx, 0, INT_MAX)));
      }
      d.placement.push_back(std::move(s));
    }
  }
  return d;
}

// Ids a decision lists as getting nothing: `unallocated` entries are ids or objects with `job`;
// `rejected` entries objects with `job`.
void read_ids(const json& decision, const char* key, const JsonContext& ctx, std::vector<std::string>& out) {
  const auto it = decision.find(key);
  if (it == decision.end() || it->is_null()) return;
  const json& arr = as_array(*it, key, ctx, static_cast<std::size_t>(INT_MAX));
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = path_index(key, i);
    if (arr[i].is_object()) {
      const auto j = arr[i].find("job");
      if (j == arr[i].end()) ctx.fail(path_key(p, "job"), "missing field");
      if (j->is_null()) continue;  // a rejected job whose id could not be read: in no request's jobs
      out.push_back(as_string(*j, path_key(p, "job"), ctx));
    } else {
      out.push_back(as_string(arr[i], p, ctx));
    }
  }
}

ojson current_json(const ClusterSpec& cluster, const CurrentAllocation& cur) {
  ojson c = ojson::object();
  c["gpu_type"] = cluster.types[static_cast<std::size_t>(cur.type)].name();
  c["gpus"] = cur.gpus;
  if (cur.nodes > 0) c["nodes"] = cur.nodes;
  if (!cur.placement.empty()) {
    ojson pl = ojson::array();
    for (const NodeShare& s : cur.placement) {
      ojson e = ojson::object();
      e["node"] = cluster.node_name(cur.type, s.node);
      e["gpus"] = s.gpus;
      if (!s.gpu_ids.empty()) e["gpu_ids"] = s.gpu_ids;
      pl.push_back(std::move(e));
    }
    c["placement"] = std::move(pl);
  }
  return c;
}

}  // namespace

std::string next_request_json(std::string_view request_json, std::string_view decision_json, double elapsed_s,
                              const NextRequestOptions& options) {
  // The request as sia_allocate reads it (validated, lost allocations forgotten): what the decision
  // was made from.
  Request req = parse_request(request_json, options.request_source);
  const JsonContext dctx(options.decision_source);
  const json decision = detail::parse_json_strict(decision_json, dctx);
  if (!decision.is_object()) dctx.fail("", "a decision must be a JSON object, got " + detail::describe(decision));
  if (!std::isfinite(elapsed_s) || elapsed_s < 0)
    throw InvalidArgument("elapsed seconds must be finite and >= 0, got " + std::to_string(elapsed_s));

  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < req.jobs.size(); ++i) index.emplace(req.jobs[i].id(), i);

  RoundResult result;
  result.decisions.resize(req.jobs.size());
  std::vector<bool> seen(req.jobs.size(), false);
  auto claim = [&](const std::string& id, const std::string& path) -> std::size_t {
    const auto it = index.find(id);
    if (it == index.end()) dctx.fail(path, "job \"" + id + "\" is not in the request");
    if (seen[it->second]) dctx.fail(path, "job \"" + id + "\" appears twice in the decision");
    seen[it->second] = true;
    return it->second;
  };
  // Jobs the decision lists in `rejected` (per-job rejection) may be absent from the parsed request:
  // they get nothing, and their entries in the request are left as written.
  std::vector<std::string> rejected_ids;
  read_ids(decision, "rejected", dctx, rejected_ids);
  const std::unordered_set<std::string> rejected(rejected_ids.begin(), rejected_ids.end());
  const auto nodes = node_names(req.cluster);
  if (const auto it = decision.find("allocations"); it != decision.end() && !it->is_null()) {
    const json& arr = as_array(*it, "allocations", dctx, static_cast<std::size_t>(INT_MAX));
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string p = path_index("allocations", i);
      JobDecision d = read_allocation(arr[i], p, req.cluster, nodes, dctx);
      const std::size_t k = claim(d.job, path_key(p, "job"));
      result.decisions[k] = std::move(d);
    }
  }
  std::vector<std::string> without;
  read_ids(decision, "unallocated", dctx, without);
  for (const std::string& id : without) {
    const auto it = index.find(id);
    if (it == index.end() && rejected.count(id) != 0) continue;  // a job the request reader set aside
    if (it == index.end()) dctx.fail("unallocated", "job \"" + id + "\" is not in the request");
    if (seen[it->second]) continue;  // also in `rejected`, or listed twice: it gets nothing either way
    seen[it->second] = true;
    result.decisions[it->second].job = id;
  }
  for (std::size_t i = 0; i < req.jobs.size(); ++i)
    if (!seen[i])
      dctx.fail("", "job \"" + req.jobs[i].id() + "\" of the request is neither in allocations nor in unallocated");

  std::vector<JobRoundState> states;
  states.reserve(req.jobs.size());
  for (const JobSpec& j : req.jobs) states.push_back(round_state_of(j));
  (void)advance_round_state(states, req.jobs, result, elapsed_s, req.cluster);

  ojson next = ojson::parse(request_json);  // already validated by parse_request
  for (auto& job : next["jobs"]) {
    const auto id = job.is_object() ? job.find("id") : job.end();
    if (id == job.end() || !id->is_string()) continue;  // not a job the reader kept (set aside as rejected)
    const auto it = index.find(id->get<std::string>());
    if (it == index.end()) continue;  // not scheduled by this request (e.g. rejected): left as written
    const JobRoundState& s = states[it->second];
    job["current"] = s.current ? current_json(req.cluster, *s.current) : ojson(nullptr);
    job["age_s"] = s.age_s;
    job["restarts"] = s.restarts;
    job["max_gpus_ever"] = s.max_gpus_ever;
  }
  next.erase("warm_start");
  if (const auto w = decision.find("warm_start"); w != decision.end() && !w->is_null()) next["warm_start"] = *w;
  return next.dump(options.pretty ? 2 : -1, ' ', false, ojson::error_handler_t::replace);
}

}  // namespace sia
