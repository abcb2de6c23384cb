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
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
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
    if (type.empty() || gpus < 1 || nodes < 0 || !std::isfinite(value) || value < 0.0)
      invalid_entry(type, nodes, gpus, value);
    auto t = std::lower_bound(types_.begin(), types_.end(), std::string_view(type),
                              [](const Type& x, std::string_view name) { return x.name < name; });
    if (t == types_.end() || t->name != type)
      t = types_.insert(t, Type{std::move(type), 0, cells_.size(), cells_.size()});
    const Cell cell{gpus, nodes, value};
    // Tables are usually written type by type, each in order (appended); otherwise the cell goes
    // into its place and the cells of the types after it move up by one.
    const auto first = cells_.begin() + static_cast<std::ptrdiff_t>(t->begin);
    const auto last = cells_.begin() + static_cast<std::ptrdiff_t>(t->end);
    const auto at = first == last || before(*(last - 1), cell) ? last : std::lower_bound(first, last, cell, before);
    if (at != last && at->gpus == gpus && at->nodes == nodes) {
      at->value = value;
    } else {
      const std::size_t pos = static_cast<std::size_t>(at - cells_.begin());
      cells_.insert(at, cell);
      for (Type& other : types_)
        if (&other != &*t && other.begin >= pos) ++other.begin, ++other.end;
      ++t->end;
    }
    if (value > 0.0) {
      t->limit = std::max(t->limit, gpus);
    } else if (gpus == t->limit) {
      t->limit = 0;
      for (const Cell& c : cells_of(*t))
        if (c.value > 0.0) t->limit = std::max(t->limit, c.gpus);
    }
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
    const Type* type = find(std::string_view(t.name()));
    return type != nullptr ? type->limit : 0;
  }

  /// Value for (type, gpus, nodes): exact node count first, then "any node count"; 0 if absent.
  [[nodiscard]] double lookup(std::string_view type, int gpus, int nodes = 0) const {
    const Type* t = find(type);
    if (t == nullptr) return 0.0;
    const std::span<const Cell> cells = cells_of(*t);
    // The first cell of `gpus` GPUs. A table listing counts first, first + 1, ... with any node
    // count (as the usual tables do) has it at gpus - first: tried before searching.
    auto at = cells.end();
    const auto guess = static_cast<std::size_t>(gpus) - static_cast<std::size_t>(cells.front().gpus);
    if (guess < cells.size() && cells[guess].gpus == gpus && cells[guess].nodes == 0) {  // (the least key of gpus)
      at = cells.begin() + static_cast<std::ptrdiff_t>(guess);
    } else {
      at = std::lower_bound(cells.begin(), cells.end(), Cell{gpus, 0, 0.0}, before);
    }
    if (at == cells.end() || at->gpus != gpus) return 0.0;
    if (nodes > 0)
      for (auto e = at; e != cells.end() && e->gpus == gpus; ++e)
        if (e->nodes == nodes) return e->value;
    return at->nodes == 0 ? at->value : 0.0;
  }

  /// All entries, ordered by type name, then GPUs, then nodes.
  [[nodiscard]] std::vector<Entry> entries() const {
    std::vector<Entry> out;
    for (const Type& t : types_)
      for (const Cell& c : cells_of(t)) out.push_back(Entry{t.name, c.gpus, c.nodes, c.value});
    return out;
  }
  [[nodiscard]] bool empty() const noexcept { return types_.empty(); }

  /// The same table: the same entries with the same values bit for bit (so 0 and -0 differ, as
  /// their goodputs' bits would). Two equal tables give every round the same goodputs and limits.
  friend bool operator==(const GoodputTable& a, const GoodputTable& b) noexcept {
    if (a.types_.size() != b.types_.size() || a.cells_.size() != b.cells_.size()) return false;
    for (std::size_t t = 0; t < a.types_.size(); ++t) {
      const Type &x = a.types_[t], &y = b.types_[t];
      if (x.name != y.name || x.limit != y.limit || x.end - x.begin != y.end - y.begin) return false;
      // (By type: where a type's cells lie depends on the order the table was written in.)
      const std::span<const Cell> xc = a.cells_of(x), yc = b.cells_of(y);
      for (std::size_t c = 0; c < xc.size(); ++c)
        if (xc[c].gpus != yc[c].gpus || xc[c].nodes != yc[c].nodes ||
            std::bit_cast<std::uint64_t>(xc[c].value) != std::bit_cast<std::uint64_t>(yc[c].value))
          return false;
    }
    return true;
  }

 private:
  // Flat arrays, not maps of maps: a round asks every new job's table for its count limit per
  // type and its goodput per configuration, and each node of a std::map was a cache miss (the
  // tables of 20,000 jobs lie apart in memory). The cells of every type lie in one array (a
  // vector per type was a cache miss per type the round asks of, none of them in cache when a
  // job's table is new to the round).
  struct Cell {
    int gpus = 0;
    int nodes = 0;  // 0: any node count
    double value = 0.0;
  };
  struct Type {
    std::string name;
    int limit = 0;          // gpu_limit(): the largest count with a positive value
    std::size_t begin = 0;  // its cells: cells_[begin, end), ordered by (gpus, nodes), never empty
    std::size_t end = 0;
  };
  [[nodiscard]] std::span<const Cell> cells_of(const Type& t) const noexcept {
    return {cells_.data() + t.begin, t.end - t.begin};
  }
  static bool before(const Cell& a, const Cell& b) noexcept {
    return a.gpus != b.gpus ? a.gpus < b.gpus : a.nodes < b.nodes;
  }
  [[nodiscard]] const Type* find(std::string_view name) const {
    // Types are few: a scan of names (length first) beats a search.
    for (const Type& t : types_)
      if (t.name.size() == name.size() && std::string_view(t.name) == name) return &t;
    return nullptr;
  }
  [[noreturn]] static void invalid_entry(const std::string& type, int nodes, int gpus, double value) {
    std::ostringstream where;
    where << "goodput table entry (" << type << ", " << gpus << " GPUs";
    if (nodes > 0) where << ", " << nodes << " nodes";
    where << ")";
    if (type.empty()) throw InvalidArgument(where.str() + ": empty GPU type name");
    if (gpus < 1) throw InvalidArgument(where.str() + ": gpus must be >= 1");
    if (nodes < 0) throw InvalidArgument(where.str() + ": nodes must be >= 0");
    std::ostringstream v;
    v << value;
    throw InvalidArgument(where.str() + ": value " + v.str() + " must be finite and >= 0");
  }

  std::vector<Type> types_;  // ordered by name
  std::vector<Cell> cells_;  // each type's cells together (Type::begin, end)
};

static_assert(GoodputModel<GoodputTable, GpuTypeSpec, ConfigurationSpec>);
static_assert(HasGpuLimit<GoodputTable, GpuTypeSpec>);

}  // namespace sia
