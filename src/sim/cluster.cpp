#include <sia/error.hpp>
#include <sia/json_reader.hpp>
#include <sia/sim/cluster.hpp>

#include <climits>
#include <fstream>
#include <sstream>

namespace sia::sim {

long long SimCluster::total_gpus() const noexcept {
  long long n = 0;
  for (const auto& g : types) n += static_cast<long long>(g.nodes) * g.gpus_per_node;
  return n;
}

int SimCluster::type_gpus(int t) const noexcept {
  const auto& g = types[static_cast<std::size_t>(t)];
  return g.nodes * g.gpus_per_node;
}

int SimCluster::type_index(std::string_view n) const noexcept {
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i].name == n) return static_cast<int>(i);
  return -1;
}

ClusterSpec SimCluster::spec() const {
  ClusterSpec c;
  for (const auto& t : types) c.types.emplace_back(t.name, t.nodes, t.gpus_per_node);
  return c;
}

int default_max_job_nodes(std::string_view profile) noexcept {
  // simulator_config.cluster_max_physical_nnodes of the reference.
  if (profile == "aws") return 16;
  if (profile == "azure") return 5;
  if (profile == "dgx" || profile == "dgx-ext") return 2;
  if (profile == "quad") return 1;
  if (profile == "rtx") return 3;
  return 0;
}

std::vector<std::string> cluster_preset_names() {
  return {"paper-heterogeneous", "paper-homogeneous", "paper-physical"};
}

namespace {

SimGpuType make_type(std::string name, int nodes, int gpn) {
  SimGpuType t;
  t.profile = name;
  t.name = std::move(name);
  t.nodes = nodes;
  t.gpus_per_node = gpn;
  t.max_job_nodes = default_max_job_nodes(t.profile);
  return t;
}

void check_scale(int scale) {
  if (scale < 1) throw InvalidArgument("cluster scale: must be >= 1, got " + std::to_string(scale));
}

void check_has_gpus(const SimCluster& c, std::string_view source) {
  if (c.types.empty() || c.total_gpus() <= 0) throw InvalidArgument(std::string(source) + ": the cluster has no GPUs");
  // The rounds and the simulator count a cluster's GPUs in int.
  if (c.total_gpus() > INT_MAX)
    throw InvalidArgument(std::string(source) + ": integer overflow: the cluster has " +
                          std::to_string(c.total_gpus()) + " GPUs in all, more than " + std::to_string(INT_MAX));
}

}  // namespace

SimCluster cluster_preset(std::string_view name, int scale) {
  check_scale(scale);
  SimCluster c;
  c.name = std::string(name);
  if (name == "paper-heterogeneous") {
    c.types = {make_type("aws", 6, 4), make_type("dgx-ext", 2, 8), make_type("rtx", 3, 8)};
  } else if (name == "paper-homogeneous") {
    c.types = {make_type("aws", 16, 4)};
  } else if (name == "paper-physical") {
    c.types = {make_type("dgx-ext", 2, 8), make_type("quad", 1, 4), make_type("rtx", 3, 8)};
  } else {
    std::string known;
    for (const auto& n : cluster_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw InvalidArgument("cluster: unknown preset '" + std::string(name) + "' (known: " + known +
                          "; or give a path to a cluster JSON file)");
  }
  for (auto& t : c.types) {
    if (static_cast<long long>(t.nodes) * scale * t.gpus_per_node > INT_MAX)
      throw InvalidArgument("cluster scale: integer overflow: " + std::to_string(t.nodes) + " nodes of type '" +
                            t.name + "' x scale " + std::to_string(scale) + " x " + std::to_string(t.gpus_per_node) +
                            " GPUs, more than " + std::to_string(INT_MAX) + " GPUs");
    t.nodes *= scale;
  }
  if (scale > 1) c.name += " x" + std::to_string(scale);
  check_has_gpus(c, c.name);
  return c;
}

SimCluster parse_cluster_json(std::string_view text, std::string_view source, int scale) {
  check_scale(scale);
  const std::string src(source);
  // The library's strict reader (shared with sia_allocate): positions in errors, overflowing
  // numbers rejected, and a nesting-depth scan before parsing (found by fuzz_cluster).
  const JsonDocument doc = JsonDocument::parse(text, src);
  const JsonValue root = doc.root();
  root.allow_only({"name", "gpu_types"});
  SimCluster c;
  c.name = src;
  if (const auto name = root.get("name")) c.name = name->as_string(true);
  for (const JsonValue& e : root.require("gpu_types").items(1000)) {
    e.allow_only({"name", "profile", "nodes", "gpus_per_node", "max_job_nodes"});
    SimGpuType t;
    t.name = e.require("name").as_string();
    if (c.type_index(t.name) >= 0) e.require("name").fail("duplicate GPU type '" + t.name + "'");
    t.profile = t.name;
    if (const auto p = e.get("profile")) t.profile = p->as_string();
    // Counts are ints: nodes x scale and the type's GPUs must fit, or they would silently wrap.
    const long long nodes = e.require("nodes").as_integer(0, INT_MAX / 64) * static_cast<long long>(scale);
    if (nodes > INT_MAX)
      e.require("nodes").fail("integer overflow: " + std::to_string(nodes / scale) + " nodes x scale " +
                              std::to_string(scale) + " = " + std::to_string(nodes) + " nodes, more than " +
                              std::to_string(INT_MAX));
    const long long per_node = e.require("gpus_per_node").as_integer(1, INT_MAX / 64);
    if (nodes * per_node > INT_MAX)
      e.fail("integer overflow: " + std::to_string(nodes) + " nodes x " + std::to_string(per_node) +
             " GPUs = " + std::to_string(nodes * per_node) + " GPUs, more than " + std::to_string(INT_MAX));
    t.nodes = static_cast<int>(nodes);
    t.gpus_per_node = static_cast<int>(per_node);
    const int dflt = default_max_job_nodes(t.profile);
    t.max_job_nodes = dflt > 0 ? dflt : t.nodes;
    if (const auto m = e.get("max_job_nodes")) t.max_job_nodes = static_cast<int>(m->as_integer(0, INT_MAX / 64));
    c.types.push_back(std::move(t));
  }
  check_has_gpus(c, src);
  return c;
}

SimCluster load_cluster(const std::string& name_or_file, int scale) {
  for (const auto& n : cluster_preset_names())
    if (n == name_or_file) return cluster_preset(name_or_file, scale);
  std::ifstream in(name_or_file);
  if (!in) {
    std::string known;
    for (const auto& n : cluster_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw InvalidArgument("cluster: '" + name_or_file + "' is neither a preset (" + known + ") nor a readable file");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_cluster_json(ss.str(), name_or_file, scale);
}

}  // namespace sia::sim
