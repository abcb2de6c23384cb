#pragma once
// Private to the round: the round's problem (product.md §2) derived from validated input — the
// configuration set, each job's usable configurations with their utilities, and the jobs'
// requirements — and the value of an allocation of it.
#include <sia/cluster.hpp>
#include <sia/configuration_set.hpp>
#include <sia/job_spec.hpp>
#include <sia/round.hpp>
#include <sia/tenant_spec.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/deadline.hpp"

namespace sia::detail {

struct RoundCache;

/// A configuration a job may take this round, with its utility.
struct Entry {
  int config = 0;     ///< index into ConfigurationSet::configs
  int gpus = 0;       ///< GPUs the job uses there (a rigid job's count on its footprint)
  double util = 0.0;  ///< u_ij
};

/// Per job, its usable entries (Problem::valid): one flat array and each job's range in it. A vector
/// per job cost an allocation (and a free) per job, 20,000 in a large round, and the round cache
/// kept a second copy of every entry; the array is shared with the cache instead (immutable once
/// built).
class EntryRows {
 public:
  EntryRows() : data_(std::make_shared<const std::vector<Entry>>()), begin_(1, 0) {}
  /// `data`: every job's entries, job by job; `begin`: job i's are [begin[i], begin[i + 1]).
  EntryRows(std::shared_ptr<const std::vector<Entry>> data, std::vector<std::size_t> begin)
      : data_(std::move(data)), begin_(std::move(begin)) {}
  [[nodiscard]] std::span<const Entry> operator[](std::size_t i) const {
    return {data_->data() + begin_[i], data_->data() + begin_[i + 1]};
  }
  [[nodiscard]] std::size_t size() const noexcept { return begin_.size() - 1; }
  /// Where job i's entries start in all(), and every job's entries.
  [[nodiscard]] std::size_t begin_of(std::size_t i) const { return begin_[i]; }
  [[nodiscard]] const std::shared_ptr<const std::vector<Entry>>& all() const noexcept { return data_; }

  class iterator {
   public:
    using value_type = std::span<const Entry>;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const EntryRows* rows, std::size_t i) : rows_(rows), i_(i) {}
    value_type operator*() const { return (*rows_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }

   private:
    const EntryRows* rows_ = nullptr;
    std::size_t i_ = 0;
  };
  [[nodiscard]] iterator begin() const { return {this, 0}; }
  [[nodiscard]] iterator end() const { return {this, size()}; }

 private:
  std::shared_ptr<const std::vector<Entry>> data_;
  std::vector<std::size_t> begin_;
};

/// Per job: must it keep its configuration (pinned), must it get one (forced)?
struct Requirements {
  std::vector<char> pinned;  ///< non-preemptible and running: keeps its current configuration
  std::vector<char> forced;  ///< non-preemptible and waiting: must get a configuration
};

/// An allocation: per job, an index into Problem::valid[i], or -1 for no GPUs.
using Choice = std::vector<int>;

/// Everything the formulation, the fallback and the tie rules need.
struct Problem {
  ConfigurationSet set;
  EntryRows valid;           ///< per job: usable configurations (G > 0), by config index
  std::vector<int> current;  ///< per job: current config index or -1
  Requirements required;     ///< as the jobs ask (before capacity is considered)
  double p = -0.5;
  double lambda = 1.1;  ///< the round's λ: the objective is reported with it
  /// The λ the binary program and the tie rules use. Equal to `lambda` unless λ exceeds
  /// 2·util_bound + 1: every λ' > util_bound orders all allocations the same way (more jobs served
  /// always wins, then utility), so λ' = 2·util_bound + 1 gives the same optimal allocations without
  /// drowning the utilities in λ (λ = 1e16 with utilities near 1 rounds them away; λ = 1e9 puts
  /// their differences below CBC's and GLPK's tolerances once the objective is scaled near 1).
  double model_lambda = 1.1;
  /// Σ over jobs of the job's weight times its largest utility: no allocation's weighted utility
  /// sum exceeds it.
  double util_bound = 0.0;
  /// Per job: its weight (JobSpec::weight), which multiplies its whole term of the objective.
  std::vector<double> weight;
  double total_weight = 0.0;    ///< Σ weight: the λ terms of the objective hold λ·total_weight
  bool integer_weights = true;  ///< every weight an integer (model_lambda may then differ from lambda)
  /// The round's tenants (RoundOptions::tenants) and, per job, its tenant's index (-1 = none).
  std::vector<TenantSpec> tenants;
  std::vector<int> tenant;
  /// Jobs whose configurations were not evaluated because the round's deadline passed while the
  /// problem was built: each has at most its current configuration (valued alone).
  std::size_t unevaluated = 0;
  /// Per job: its position among the previous round's jobs (RoundCache::jobs) when build_problem
  /// was given that round's rows on the same cluster (-1: a job that round did not have); empty
  /// otherwise.
  std::vector<int> previous_position;
  [[nodiscard]] std::size_t num_jobs() const { return valid.size(); }
  /// Contribution of giving job i its entry e, in "bigger is better" units (with model_lambda and
  /// the job's weight).
  [[nodiscard]] double gain(std::size_t i, const Entry& e) const {
    return weight[i] * (p > 0 ? e.util + model_lambda : model_lambda - e.util);
  }
  /// Every job of weight 1 (the paper's objective).
  [[nodiscard]] bool uniform_weights() const {
    for (double w : weight)
      if (w != 1.0) return false;
    return true;
  }
  /// Position of configuration `config` in valid[i], or -1. (Inline: the warm start and the tie
  /// rules look up every job's configuration, 20,000 calls in a large round.)
  [[nodiscard]] int entry_of(std::size_t i, int config) const {
    // valid[i] is sorted by configuration index: a binary search.
    const auto v = valid[i];
    const auto it = std::lower_bound(v.begin(), v.end(), config, [](const Entry& e, int c) { return e.config < c; });
    return it != v.end() && it->config == config ? static_cast<int>(it - v.begin()) : -1;
  }
  /// Configuration index job i gets in `ch` (-1 = none).
  [[nodiscard]] int config_of(const Choice& ch, std::size_t i) const {
    return ch[i] < 0 ? -1 : valid[i][static_cast<std::size_t>(ch[i])].config;
  }
};

/// What the caller already checked of every job (run_round's checks when not strict): each passed
/// validate_job, the ids are distinct, and `current[i]` is the index of job i's current
/// configuration in the cluster's configuration set (current_config_index; -1: none).
struct CheckedJobs {
  std::vector<int> current;
};

/**
 * @brief Builds the problem: validates every job, restricts the configuration set per job
 * (valid_configs.hpp), asks each job its raw goodputs, normalises, and makes the utilities
 * `G^p · r^p` with the restart factors r (goodput_matrix.hpp: utility_matrix(g, restarts, p)). `set` is the cluster's configuration set, built once.
 * Once `deadline` has passed, the remaining jobs are not enumerated: a running job gets only its
 * current configuration, a waiting one none (Problem::unevaluated counts them).
 * `previous`: the previous round's rows (round_cache.hpp): a job whose rows depend on the same
 * inputs keeps them instead of asking its goodputs again (the same bits). `next`: receives this
 * round's rows for the next round (left null when no job's rows can be reused: no job has a
 * goodput model object, JobSpec::goodput_model_identity()). `checked`: what the caller checked
 * already (those checks are not repeated; null: every check here).
 * @throws InvalidArgument naming the job and field.
 */
[[nodiscard]] Problem build_problem(ConfigurationSet set, const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                                    const RoundOptions& options, const RoundDeadline* deadline = nullptr,
                                    const RoundCache* previous = nullptr, std::shared_ptr<RoundCache>* next = nullptr,
                                    const CheckedJobs* checked = nullptr);

/// Value of product.md §2 step 4 for allocation `ch` (with the round's λ and the jobs' weights).
[[nodiscard]] double objective_of(const Problem& pb, const Choice& ch);

/**
 * @brief A proven bound on the round's objective (with the round's λ) from a proven bound of the
 * binary program, whose λ is `model_lambda`: the same value when the two λ are equal; otherwise
 * the model bound shifted by (λ − λ') times the fewest jobs that the model bound proves must wait.
 */
[[nodiscard]] double round_bound(const Problem& pb, double model_bound);

}  // namespace sia::detail
