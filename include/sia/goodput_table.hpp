#pragma once
/// @file goodput_table.hpp
/// @brief GoodputTable: a GoodputModel given as a table of values per (GPU type, GPUs[, nodes]).

#include <sia/concepts/configuration.hpp>
#include <sia/concepts/goodput_model.hpp>
#include <sia/concepts/gpu_type.hpp>
#include <sia/configuration.hpp>
#include <sia/error.hpp>
#include <sia/gpu_type_spec.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sia {

/**
 * @brief Goodputs listed per configuration; a configuration absent from the table has goodput 0
 * (not usable), as in the `goodput` tables of `sia_allocate` requests (examples/requests/README.md).
 *
 * An entry may name the node count too; a lookup first tries (type, gpus, nodes), then
 * (type, gpus) with any node count. Rigid jobs are asked for their count, not their footprint
 * (see valid_configs.hpp).
 * @code
 * sia::GoodputTable t;
 * t.set("A", 1, 1.0).set("A", 2, 1.0).set("B", 4, 4.0);
 * @endcode
 */
class GoodputTable {
 public:
  /// One row of the table. `nodes` = 0 matches any node count.
  struct Entry {
    std::string gpu_type;
    int gpus = 0;
    int nodes = 0;
    double value = 0.0;
  };

  GoodputTable() = default;

  /// Sets the goodput of `gpus` GPUs of type `type` (any node count).
  /// @throws InvalidArgument for an empty type, gpus < 1 or a value that is NaN, infinite or < 0.
  GoodputTable& set(std::string type, int gpus, double value) { return set(std::move(type), 0, gpus, value); }

  /// Sets the goodput of `gpus` GPUs on `nodes` nodes of type `type` (nodes = 0: any).
  GoodputTable& set(std::string type, int nodes, int gpus, double value) {
    std::ostringstream where;
    where << "goodput table entry (" << type << ", " << gpus << " GPUs";
    if (nodes > 0) where << ", " << nodes << " nodes";
    where << ")";
    if (type.empty()) throw InvalidArgument(where.str() + ": empty GPU type name");
    if (gpus < 1) throw InvalidArgument(where.str() + ": gpus must be >= 1");
    if (nodes < 0) throw InvalidArgument(where.str() + ": nodes must be >= 0");
    if (!std::isfinite(value) || value < 0.0) {
      std::ostringstream v;
      v << value;
      throw InvalidArgument(where.str() + ": value " + v.str() + " must be finite and >= 0");
    }
    values_[std::move(type)][{gpus, nodes}] = value;
    return *this;
  }

  /// Goodput of configuration `c` of GPU type `t` (0 when absent).
  template <GpuType G, Configuration C>
  [[nodiscard]] double goodput(const G& t, const C& c) const {
    return lookup(std::string_view(t.name()), static_cast<int>(c.num_gpus()), static_cast<int>(c.num_nodes()));
  }

  /// HasGpuLimit: the largest GPU count listed for the type with a positive value (0 if none):
  /// counts the table does not list have goodput 0, so the round skips them.
  template <GpuType G>
  [[nodiscard]] int gpu_limit(const G& t) const {
    const auto it = values_.find(std::string_view(t.name()));
    if (it == values_.end()) return 0;
    // Keys are ordered by GPU count first: the last positive entry has the largest count (a
    // round asks this of every new job and type; walking the whole table cost more than its
    // goodputs).
    for (auto e = it->second.rbegin(); e != it->second.rend(); ++e)
      if (e->second > 0.0) return e->first.first;
    return 0;
  }

  /// Value for (type, gpus, nodes): exact node count first, then "any node count"; 0 if absent.
  [[nodiscard]] double lookup(std::string_view type, int gpus, int nodes = 0) const {
    const auto it = values_.find(type);
    if (it == values_.end()) return 0.0;
    if (nodes > 0) {
      const auto e = it->second.find({gpus, nodes});
      if (e != it->second.end()) return e->second;
    }
    const auto e = it->second.find({gpus, 0});
    return e != it->second.end() ? e->second : 0.0;
  }

  /// All entries, ordered by type name, then GPUs, then nodes.
  [[nodiscard]] std::vector<Entry> entries() const {
    std::vector<Entry> out;
    for (const auto& [type, m] : values_)
      for (const auto& [key, v] : m) out.push_back(Entry{type, key.first, key.second, v});
    return out;
  }
  [[nodiscard]] bool empty() const noexcept { return values_.empty(); }

 private:
  // type -> (gpus, nodes) -> value
  std::map<std::string, std::map<std::pair<int, int>, double>, std::less<>> values_;
};

static_assert(GoodputModel<GoodputTable, GpuTypeSpec, ConfigurationSpec>);
static_assert(HasGpuLimit<GoodputTable, GpuTypeSpec>);

}  // namespace sia
