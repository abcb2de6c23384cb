#pragma once
// Archetypes: the least a type must offer to model each concept of sia. If a library template
// compiles with these, it asks for nothing beyond what the concept documents.
#include <sia/allocation.hpp>
#include <sia/concepts/configuration.hpp>
#include <sia/concepts/goodput_model.hpp>
#include <sia/concepts/gpu_type.hpp>
#include <sia/concepts/job.hpp>
#include <sia/configuration.hpp>

#include <optional>
#include <string_view>

namespace sia::archetypes {

/// Only convertible to what the concepts ask for (int / double / string_view), nothing more.
struct IntLike {
  operator int() const { return 1; }  // NOLINT(google-explicit-constructor)
};
struct DoubleLike {
  operator double() const { return 1.0; }  // NOLINT
};
struct NameLike {
  operator std::string_view() const { return "arch"; }  // NOLINT
};

struct GpuTypeArchetype {
  GpuTypeArchetype() = delete;  // the library never creates GPU types of the caller
  explicit GpuTypeArchetype(int) {}
  GpuTypeArchetype(const GpuTypeArchetype&) = delete;  // nor copies them
  GpuTypeArchetype& operator=(const GpuTypeArchetype&) = delete;
  [[nodiscard]] NameLike name() const { return {}; }
  [[nodiscard]] IntLike num_nodes() const { return {}; }
  [[nodiscard]] IntLike gpus_per_node() const { return {}; }
};

struct ConfigurationArchetype {
  [[nodiscard]] IntLike num_nodes() const { return {}; }
  [[nodiscard]] IntLike num_gpus() const { return {}; }
  [[nodiscard]] IntLike type_index() const { return {}; }
  friend bool operator==(const ConfigurationArchetype&, const ConfigurationArchetype&) = default;
};

struct GoodputModelArchetype {
  [[nodiscard]] DoubleLike goodput(const GpuTypeSpec&, const ConfigurationSpec&) const { return {}; }
};

/// A job with only the required members, evaluated against GPU type G.
template <class G>
struct JobArchetype {
  JobArchetype() = delete;
  explicit JobArchetype(int) {}
  JobArchetype(const JobArchetype&) = delete;
  JobArchetype& operator=(const JobArchetype&) = delete;
  [[nodiscard]] NameLike id() const { return {}; }
  [[nodiscard]] IntLike min_gpus() const { return {}; }
  [[nodiscard]] IntLike max_gpus() const { return {}; }
  [[nodiscard]] JobKind kind() const { return JobKind::adaptive; }
  [[nodiscard]] DoubleLike goodput(const G&, const ConfigurationSpec&) const { return {}; }
};

/// A job with every optional member of the Job concept.
template <class G>
struct FullJobArchetype : JobArchetype<G> {
  using JobArchetype<G>::JobArchetype;
  [[nodiscard]] bool preemptible() const { return true; }
  [[nodiscard]] DoubleLike age_s() const { return {}; }
  [[nodiscard]] IntLike restarts() const { return {}; }
  [[nodiscard]] DoubleLike restart_cost_s() const { return {}; }
  [[nodiscard]] IntLike pipeline_size() const { return {}; }
  [[nodiscard]] std::optional<int> max_gpus_ever() const { return std::nullopt; }
  [[nodiscard]] std::optional<CurrentAllocation> current() const { return std::nullopt; }
  [[nodiscard]] BatchChoice batch_size(const G&, const ConfigurationSpec&) const { return {}; }
};

}  // namespace sia::archetypes
