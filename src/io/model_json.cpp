/// @file io/model_json.cpp
/// @brief The `model` form of a job in sia_allocate's request (see model_json.hpp).

#include "io/model_json.hpp"
#include "io/json_util.hpp"

#include <sia/error.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <initializer_list>
#include <set>
#include <string_view>
#include <utility>

namespace sia::detail {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& msg) { throw InvalidArgument(where + ": " + msg); }

/// One of the named values of an enumerated string field ("must be \"a\", \"b\" or \"c\"" otherwise).
template <class E>
E choice(const json& value, const std::string& where, std::initializer_list<std::pair<std::string_view, E>> names) {
  const std::string s = value.is_string() ? value.get<std::string>() : std::string();
  for (const auto& [name, e] : names)
    if (s == name) return e;
  std::string list;
  std::size_t i = 0;
  for (const auto& [name, e] : names)
    list += (i++ == 0 ? "" : (i == names.size() ? " or " : ", ")) + ("\"" + std::string(name) + "\"");
  fail(where, "must be " + list);
}

void require_object(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object");
}

void reject_unknown(const json& j, const std::string& where, const std::set<std::string>& allowed) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (allowed.count(it.key()) == 0) fail(path_key(where, it.key()), "unknown field");
}

double number(const json& j, const std::string& where) {
  if (!j.is_number()) fail(where, "must be a number");
  const double v = j.get<double>();
  if (!std::isfinite(v)) fail(where, "must be a finite number");
  return v;
}

int integer(const json& j, const std::string& where) {
  const double v = number(j, where);
  if (v != std::floor(v) || v < -2147483648.0 || v > 2147483647.0) fail(where, "must be an integer");
  return static_cast<int>(v);
}

void check_type(const ClusterSpec& cluster, const std::string& name, const std::string& where) {
  if (cluster.type_index(name) < 0) fail(where, "unknown GPU type '" + name + "' (not in cluster.gpu_types)");
}

PerfParams parse_perf(const json& j, const std::string& where) {
  require_object(j, where);
  reject_unknown(j, where, {"alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma"});
  PerfParams p{0.0, 0.0, 1e-8, 1e-8, 1e-8, 1e-8, 1.0};
  if (!j.contains("alpha_c")) fail(where + ".alpha_c", "missing");
  if (!j.contains("beta_c")) fail(where + ".beta_c", "missing");
  p.alpha_c = number(j["alpha_c"], where + ".alpha_c");
  p.beta_c = number(j["beta_c"], where + ".beta_c");
  if (j.contains("alpha_n")) p.alpha_n = number(j["alpha_n"], where + ".alpha_n");
  if (j.contains("beta_n")) p.beta_n = number(j["beta_n"], where + ".beta_n");
  if (j.contains("alpha_r")) p.alpha_r = number(j["alpha_r"], where + ".alpha_r");
  if (j.contains("beta_r")) p.beta_r = number(j["beta_r"], where + ".beta_r");
  if (j.contains("gamma")) p.gamma = number(j["gamma"], where + ".gamma");
  validate(p, where);
  return p;
}

TypeModel& type_entry(std::vector<TypeModel>& types, const std::string& name) {
  for (auto& t : types)
    if (t.gpu_type == name) return t;
  TypeModel t;
  t.gpu_type = name;
  types.push_back(std::move(t));
  return types.back();
}

}  // namespace

JobModel parse_model_json(const json& model, const ClusterSpec& cluster, const std::string& path, JobKind kind,
                          int pipeline_size) {
  require_object(model, path);
  reject_unknown(model, path,
                 {"init_batch_size", "max_batch_size", "grad", "perf", "seed", "local_batch", "xput1", "stages",
                  "microbatches", "projection", "first_placement", "known_type"});
  JobModel m;
  m.kind(kind);
  if (!model.contains("init_batch_size")) fail(path + ".init_batch_size", "missing");
  const double init = number(model["init_batch_size"], path + ".init_batch_size");
  if (!(init > 0.0)) fail(path + ".init_batch_size", "must be > 0");
  m.init_batch_size(init);
  double max_batch = init;
  if (model.contains("max_batch_size")) {
    max_batch = number(model["max_batch_size"], path + ".max_batch_size");
    if (!(max_batch > 0.0) || max_batch > 1e12) fail(path + ".max_batch_size", "must be in (0, 1e12]");
    if (kind == JobKind::adaptive && max_batch < init)
      fail(path + ".max_batch_size", "must be >= init_batch_size for an adaptive job");
  }
  m.max_batch_size(max_batch);
  if (model.contains("grad") && !model["grad"].is_null()) {
    const json& g = model["grad"];
    const std::string w = path + ".grad";
    require_object(g, w);
    reject_unknown(g, w, {"sqr", "var"});
    if (!g.contains("sqr")) fail(w + ".sqr", "missing");
    if (!g.contains("var")) fail(w + ".var", "missing");
    GradParams gp{number(g["sqr"], w + ".sqr"), number(g["var"], w + ".var")};
    if (gp.sqr < 0.0) fail(w + ".sqr", "must be >= 0");
    if (gp.var < 0.0) fail(w + ".var", "must be >= 0");
    m.grad(gp);
  }

  std::vector<TypeModel> types;
  // "perf" first, in its order: the default known type of Eq. 1 is the first fitted type.
  for (const char* key : {"perf", "seed"}) {
    if (!model.contains(key)) continue;
    const std::string w = path + "." + key;
    require_object(model[key], w);
    for (auto it = model[key].begin(); it != model[key].end(); ++it) {
      const std::string tw = w + "." + it.key();
      check_type(cluster, it.key(), tw);
      TypeModel& t = type_entry(types, it.key());
      (std::string(key) == "perf" ? t.perf : t.seed) = parse_perf(it.value(), tw);
    }
  }
  if (model.contains("local_batch")) {
    const std::string w = path + ".local_batch";
    require_object(model["local_batch"], w);
    for (auto it = model["local_batch"].begin(); it != model["local_batch"].end(); ++it) {
      const std::string tw = w + "." + it.key();
      check_type(cluster, it.key(), tw);
      const json& r = it.value();
      if (!r.is_array() || r.size() != 2) fail(tw, "must be [min, max]");
      const int lo = integer(r[0], tw + "[0]");
      const int hi = integer(r[1], tw + "[1]");
      if (lo < 1) fail(tw + "[0]", "must be >= 1");
      if (hi < lo) fail(tw, "min " + std::to_string(lo) + " > max " + std::to_string(hi));
      TypeModel& t = type_entry(types, it.key());
      t.min_local = lo;
      t.max_local = hi;
    }
  }
  if (model.contains("xput1")) {
    const std::string w = path + ".xput1";
    require_object(model["xput1"], w);
    for (auto it = model["xput1"].begin(); it != model["xput1"].end(); ++it) {
      const std::string tw = w + "." + it.key();
      check_type(cluster, it.key(), tw);
      const double v = number(it.value(), tw);
      if (!(v > 0.0)) fail(tw, "must be > 0");
      type_entry(types, it.key()).xput1 = v;
    }
  }
  if (model.contains("stages")) {
    const std::string w = path + ".stages";
    require_object(model["stages"], w);
    for (auto it = model["stages"].begin(); it != model["stages"].end(); ++it) {
      const std::string tw = w + "." + it.key();
      check_type(cluster, it.key(), tw);
      const int v = integer(it.value(), tw);
      if (v < 1) fail(tw, "must be >= 1");
      type_entry(types, it.key()).stages = v;
    }
  }
  for (auto& t : types) {
    const int ti = cluster.type_index(t.gpu_type);
    t.gpus_per_node = cluster.types[static_cast<std::size_t>(ti)].gpus_per_node();
    if (!(model.contains("stages") && model["stages"].contains(t.gpu_type))) t.stages = std::max(pipeline_size, 1);
    if (!t.perf && !t.seed)
      fail(path, "GPU type '" + t.gpu_type + "' has limits but neither a \"perf\" nor a \"seed\" model");
    m.add_type(std::move(t));
  }
  if (model.contains("microbatches")) {
    const int v = integer(model["microbatches"], path + ".microbatches");
    if (v < 1) fail(path + ".microbatches", "must be >= 1");
    m.microbatches(v);
  }
  if (model.contains("projection"))
    m.projection(choice<ProjectionMode>(model["projection"], path + ".projection",
                                        {{"paper", ProjectionMode::paper},
                                         {"reference", ProjectionMode::reference},
                                         {"none", ProjectionMode::none},
                                         {"equal", ProjectionMode::equal}}));
  if (model.contains("first_placement"))
    m.first_placement(choice<FirstPlacement>(
        model["first_placement"], path + ".first_placement",
        {{"seed", FirstPlacement::seed}, {"tie", FirstPlacement::tie}, {"profiled", FirstPlacement::profiled}}));
  if (model.contains("known_type")) {
    const std::string w = path + ".known_type";
    if (!model["known_type"].is_string()) fail(w, "must be a GPU type name");
    const std::string k = model["known_type"].get<std::string>();
    check_type(cluster, k, w);
    if (m.type(k) == nullptr || !m.type(k)->perf) fail(w, "type '" + k + "' has no \"perf\" model");
    m.known_type(k);
  }
  if (m.types().empty()) fail(path, "needs a \"perf\" or \"seed\" model for at least one GPU type");
  m.validate(path);
  return m;
}

void apply_model_json(JobSpec& job, const json& model, const ClusterSpec& cluster, const std::string& path) {
  job.goodput_model(parse_model_json(model, cluster, path, job.kind(), job.pipeline_size()));
}

}  // namespace sia::detail
