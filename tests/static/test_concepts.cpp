// Compile-time tests of the concepts: the library's own models, the archetypes, and types that
// must be rejected. Everything here is static_assert; the TEST_CASE only records that it built.
#include <doctest/doctest.h>

#include <sia/concepts.hpp>
#include <sia/configuration.hpp>
#include <sia/generic_round.hpp>
#include <sia/goodput_table.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_spec.hpp>

#include <list>
#include <string>
#include <vector>

#include "static/archetypes.hpp"

namespace {

using namespace sia;
using namespace sia::archetypes;

// --- positive: the library's models and the archetypes ---------------------------------------
static_assert(GpuType<GpuTypeSpec>);
static_assert(GpuType<GpuTypeArchetype>);
static_assert(Configuration<ConfigurationSpec>);
static_assert(Configuration<ConfigurationArchetype>);
static_assert(GoodputModel<GoodputTable, GpuTypeSpec, ConfigurationSpec>);
static_assert(GoodputModel<GoodputModelArchetype, GpuTypeSpec, ConfigurationSpec>);
static_assert(GoodputModel<GoodputTable, GpuTypeArchetype, ConfigurationArchetype>);  // a template model
static_assert(Job<JobSpec, GpuTypeSpec, ConfigurationSpec>);
static_assert(Job<JobArchetype<GpuTypeSpec>, GpuTypeSpec, ConfigurationSpec>);
static_assert(Job<JobArchetype<GpuTypeArchetype>, GpuTypeArchetype, ConfigurationSpec>);
static_assert(Job<FullJobArchetype<GpuTypeArchetype>, GpuTypeArchetype, ConfigurationSpec>);
static_assert(HasBatchSize<FullJobArchetype<GpuTypeArchetype>, GpuTypeArchetype, ConfigurationSpec>);
static_assert(!HasBatchSize<JobArchetype<GpuTypeArchetype>, GpuTypeArchetype, ConfigurationSpec>);

// The generic round accepts the archetypes (minimal and full) in any forward range.
template <class T, class J>
concept GenericRoundCallable = requires(const T& t, const J& j, const RoundOptions& o) {
  { run_round(t, j, o) } -> std::same_as<RoundResult>;
};
static_assert(GenericRoundCallable<std::vector<GpuTypeSpec>, std::vector<JobSpec>>);
static_assert(GenericRoundCallable<std::list<GpuTypeArchetype>, std::list<JobArchetype<GpuTypeArchetype>>>);
static_assert(GenericRoundCallable<std::list<GpuTypeArchetype>, std::list<FullJobArchetype<GpuTypeArchetype>>>);

// --- negative: near misses ----------------------------------------------------------------
struct NoName {
  int num_nodes() const;
  int gpus_per_node() const;
};
struct NameIsInt {
  int name() const;
  int num_nodes() const;
  int gpus_per_node() const;
};
struct NodesIsString {
  std::string name() const;
  std::string num_nodes() const;
  int gpus_per_node() const;
};
static_assert(!GpuType<NoName>);
static_assert(!GpuType<NameIsInt>);
static_assert(!GpuType<NodesIsString>);
static_assert(!GpuType<int>);

struct ConfigNoType {
  int num_nodes() const;
  int num_gpus() const;
  [[maybe_unused]] friend bool operator==(const ConfigNoType&, const ConfigNoType&) = default;
};
struct ConfigNotComparable {
  int num_nodes() const;
  int num_gpus() const;
  int type_index() const;
};
static_assert(!Configuration<ConfigNoType>);
static_assert(!Configuration<ConfigNotComparable>);

struct ModelWrongArgs {
  double goodput(int, int) const;
};
struct ModelReturnsString {
  std::string goodput(const GpuTypeSpec&, const ConfigurationSpec&) const;
};
struct ModelNonConst {
  double goodput(const GpuTypeSpec&, const ConfigurationSpec&);  // not const: cannot be asked through a const model
};
static_assert(!GoodputModel<ModelWrongArgs, GpuTypeSpec, ConfigurationSpec>);
static_assert(!GoodputModel<ModelReturnsString, GpuTypeSpec, ConfigurationSpec>);
static_assert(!GoodputModel<ModelNonConst, GpuTypeSpec, ConfigurationSpec>);

struct JobNoKind {
  std::string id() const;
  int min_gpus() const;
  int max_gpus() const;
  double goodput(const GpuTypeSpec&, const ConfigurationSpec&) const;
};
struct JobKindIsString {
  std::string id() const;
  int min_gpus() const;
  int max_gpus() const;
  std::string kind() const;
  double goodput(const GpuTypeSpec&, const ConfigurationSpec&) const;
};
struct JobIdIsInt {
  int id() const;
  int min_gpus() const;
  int max_gpus() const;
  JobKind kind() const;
  double goodput(const GpuTypeSpec&, const ConfigurationSpec&) const;
};
static_assert(!Job<JobNoKind, GpuTypeSpec, ConfigurationSpec>);
static_assert(!Job<JobKindIsString, GpuTypeSpec, ConfigurationSpec>);
static_assert(!Job<JobIdIsInt, GpuTypeSpec, ConfigurationSpec>);
// A job evaluated against one GPU type is not a job for another.
static_assert(!Job<JobArchetype<GpuTypeSpec>, GpuTypeArchetype, ConfigurationSpec>);
static_assert(!Job<JobSpec, NameIsInt, ConfigurationSpec>);  // not a GpuType at all
// Concept headers depend on the standard library only: a batch choice of the model's own type counts.
struct OwnBatch {
  long long global_batch = 0;
  int local_batch = 0;
  int accumulation_steps = 0;
};
struct ModelWithOwnBatch {
  double goodput(const GpuTypeSpec&, const ConfigurationSpec&) const;
  OwnBatch batch_size(const GpuTypeSpec&, const ConfigurationSpec&) const;
};
static_assert(HasBatchSize<ModelWithOwnBatch, GpuTypeSpec, ConfigurationSpec>);

static_assert(!GenericRoundCallable<std::vector<NoName>, std::vector<JobSpec>>);
static_assert(!GenericRoundCallable<std::vector<GpuTypeSpec>, std::vector<JobNoKind>>);
static_assert(!GenericRoundCallable<std::vector<GpuTypeArchetype>, std::vector<JobArchetype<GpuTypeSpec>>>);
static_assert(!GenericRoundCallable<std::vector<GpuTypeSpec>, int>);

}  // namespace

TEST_CASE("static.concepts") { CHECK(true); }
