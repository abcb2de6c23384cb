// Warm starts between rounds (warm_start.hpp).
#include "core/warm_start.hpp"

#include "core/id_index.hpp"

#include <sia/configuration_set.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

namespace sia::detail {
namespace {

int type_index(const ClusterSpec& cluster, std::string_view name) {
  for (int t = 0; t < cluster.num_types(); ++t)
    if (cluster.types[static_cast<std::size_t>(t)].name() == name) return t;
  return -1;
}

// Price per unit of a row in the objective's units from a model dual (MilpResult::row_duals: the
// derivative of the model's objective by the row's bound), and back.
double price_of_dual(const Problem& pb, double dual) { return (pb.p > 0 ? dual : -dual) + 0.0; }  // -0 -> 0
double dual_of_price(const Problem& pb, double price) { return pb.p > 0 ? price : -price; }

// Where the start is written: params.start_values (every column 0 until written), or `bits`
// (ReadingSolver::StartBits, the same values) when given.
class StartOut {
 public:
  StartOut(MilpParams& params, ReadingSolver::StartBits* bits, std::size_t cols) : bits_(bits) {
    if (bits_ != nullptr) {
      bits_->reset(cols);
    } else {
      params.start_values.assign(cols, 0.0);
      values_ = params.start_values.data();
    }
  }
  void one(std::size_t c) noexcept {
    if (bits_ != nullptr)
      bits_->set_one(c);
    else
      values_[c] = 1.0;
  }
  // Columns [first, end) unknown (NaN).
  void unknown(std::size_t first, std::size_t end) noexcept {
    if (bits_ != nullptr)
      for (std::size_t c = first; c < end; ++c) bits_->set_unknown(c);
    else
      std::fill(values_ + first, values_ + end, std::numeric_limits<double>::quiet_NaN());
  }

 private:
  ReadingSolver::StartBits* bits_;
  double* values_ = nullptr;
};

}  // namespace

void apply_warm_start(const WarmStart& warm, const Problem& pb, const ClusterSpec& cluster,
                      std::span<const JobSpec> jobs, const Formulation& f, MilpParams& params,
                      ReadingSolver::StartBits* bits) {
  const auto& rows = pb.set.rows;
  if (!warm.prices.empty()) {
    params.start_duals.assign(static_cast<std::size_t>(f.milp.num_rows()), 0.0);
    for (const auto& wp : warm.prices) {
      const int t = type_index(cluster, wp.gpu_type);
      if (t < 0) continue;
      for (std::size_t r = 0; r < rows.size(); ++r)
        if (rows[r].type == t && rows[r].min_item_gpus == wp.min_item_gpus && f.capacity_row[r] >= 0)
          params.start_duals[static_cast<std::size_t>(f.capacity_row[r])] = dual_of_price(pb, wp.price);
    }
  }
  if (warm.allocations.empty()) {
    // No allocation given: the jobs' current configurations are the previous round's solution.
    StartOut out(params, bits, f.cols.size());
    for (std::size_t c = 0; c < f.cols.size(); ++c)
      if (pb.current[f.job_of(c)] == f.entry_of(pb, c).config) out.one(c);
  } else if (const RoundCache* cache = warm.cache.get();
             cache != nullptr && cache->allocations == static_cast<const void*>(warm.allocations.data()) &&
             cache->allocated.size() == warm.allocations.size() &&
             cache->allocated_entry.size() == cache->allocated.size() && pb.previous_position.size() == jobs.size()) {
    // The list the cache was made with, on the same cluster (build_problem matched the jobs to it):
    // by position. Same values as the lookups below.
    StartOut out(params, bits, f.cols.size());
    if (f.columns_are_entries) {
      // Job by job: its columns are its entries (Formulation::columns_are_entries), and its
      // configuration (distinct among its entries) is looked up in its own entries only — the
      // columns' (job, entry) pairs and most entries are not read at all.
      const Entry* const entries = pb.valid.all()->data();
      for (std::size_t i = 0; i < jobs.size(); ++i) {
#if defined(__GNUC__)
        // The entry read (the previous round's, else the search's first): a cache miss per job,
        // fetched ahead (a hint only).
        if (i + 8 < jobs.size()) {
          const std::size_t a = pb.valid.begin_of(i + 8), b = pb.valid.begin_of(i + 9);
          const int ahead = pb.previous_position[i + 8];
          const int hint = ahead < 0 ? -1 : cache->allocated_entry[static_cast<std::size_t>(ahead)];
          const std::size_t at = a + static_cast<std::size_t>(std::max(hint, 0));
          __builtin_prefetch(entries + (at < b ? at : a + (b - a) / 2));
        }
#endif
        const int at = pb.previous_position[i];
        const std::size_t first = pb.valid.begin_of(i);
        if (at < 0) {
          out.unknown(first, pb.valid.begin_of(i + 1));
          continue;
        }
        const int config = cache->allocated[static_cast<std::size_t>(at)];
        if (config < 0) continue;
        // The entry the previous round chose, when this round's row has that configuration there
        // (a row lists each configuration once: the entry a search finds); otherwise the search.
        const std::span<const Entry> row = pb.valid[i];
        int k = cache->allocated_entry[static_cast<std::size_t>(at)];
        if (k < 0 || static_cast<std::size_t>(k) >= row.size() || row[static_cast<std::size_t>(k)].config != config)
          k = entry_index(row, config);
        if (k >= 0) out.one(first + static_cast<std::size_t>(k));
      }
      return;
    }
    for (std::size_t c = 0; c < f.cols.size(); ++c) {
      const int at = pb.previous_position[f.job_of(c)];
      if (at < 0)
        out.unknown(c, c + 1);
      else if (cache->allocated[static_cast<std::size_t>(at)] == f.entry_of(pb, c).config)
        out.one(c);
    }
  } else {
    IdIndex job_index(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) job_index.insert(jobs[i].id(), i);
    // The configuration each known job had, as a configuration index of this round's set (-1:
    // none, or one this round does not have); -2: a job the warm start does not know.
    std::vector<int> warm_config(jobs.size(), -2);
    for (const auto& a : warm.allocations) {
      const std::size_t at = job_index.find(a.job);
      if (at == IdIndex::npos) continue;
      warm_config[at] = -1;
      const int t = type_index(cluster, a.gpu_type);
      if (t < 0 || a.gpus <= 0) continue;
      if (const auto c = pb.set.index_of(ConfigurationSpec{t, a.nodes, a.gpus})) warm_config[at] = *c;
    }
    StartOut out(params, bits, f.cols.size());
    for (std::size_t c = 0; c < f.cols.size(); ++c) {
      const std::size_t i = f.job_of(c);
      if (warm_config[i] == -2)
        out.unknown(c, c + 1);
      else if (warm_config[i] == f.entry_of(pb, c).config)
        out.one(c);
    }
  }
}

WarmStartWriter::WarmStartWriter(const Problem& pb, const ClusterSpec& cluster, std::size_t jobs, const Formulation& f,
                                 const MilpResult& result, std::shared_ptr<RoundCache> cache)
    : pb_(pb), cluster_(cluster), w_(std::make_shared<WarmStart>()), cache_(std::move(cache)) {
  const auto& rows = pb.set.rows;
  w_->allocations.reserve(jobs);  // (one per job: room for all at once)
  if (result.row_duals.size() == static_cast<std::size_t>(f.milp.num_rows()))
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (f.capacity_row[r] >= 0)
        w_->prices.push_back(
            WarmStart::RowPrice{cluster.types[static_cast<std::size_t>(rows[r].type)].name(), rows[r].min_item_gpus,
                                price_of_dual(pb, result.row_duals[static_cast<std::size_t>(f.capacity_row[r])])});
  if (cache_ && cache_->jobs.size() != jobs) cache_.reset();
  if (cache_) {
    cache_->allocated.clear();
    cache_->allocated_entry.clear();
    cache_->allocated.reserve(jobs);
    cache_->allocated_entry.reserve(jobs);
  }
}

void WarmStartWriter::add(const std::string& id, int config, int entry) {
  // Built in place (a temporary per job cost a second copy of its strings).
  WarmStart::Allocation& a = w_->allocations.emplace_back();
  a.job = id;
  if (cache_) {
    // Each job's configuration once (the cache keeps the list, and the entry that names it).
    cache_->allocated.push_back(config);
    cache_->allocated_entry.push_back(config < 0 ? -1 : entry);
  }
  if (config < 0) return;
  const ConfigurationSpec& cfg = pb_.set.configs[static_cast<std::size_t>(config)];
  a.gpu_type = cluster_.types[static_cast<std::size_t>(cfg.type)].name();
  a.nodes = cfg.nodes;
  a.gpus = cfg.gpus;
}

std::shared_ptr<const WarmStart> WarmStartWriter::finish() && {
  if (cache_ && cache_->allocated.size() == w_->allocations.size()) {
    cache_->allocations = w_->allocations.data();
    w_->cache = std::move(cache_);
  }
  return std::move(w_);
}

}  // namespace sia::detail
