#pragma once
/// @file goodput/goodput_memo.hpp
/// @brief GoodputMemo: a bounded, thread-safe memo of GoodputFunction::optimize keyed on the exact bits of its
/// inputs, shared by the job models of one scheduler (JobModel::memo).
///
/// A batch-size optimisation is a pure function of (throughput model, gradient statistics, initial batch size,
/// batch limits, nodes, replicas). Jobs of the same application that observed the same placements get the same
/// fitted model (fits are memoised by their observations), the gradient statistics come from a per-epoch table,
/// and projections to types a job has not run on map several configurations onto one: on the simulator's 936-job
/// trace two thirds of the round's optimisations repeat an earlier one. The key is the inputs' bits (no
/// tolerance; -0 and +0, or two NaN payloads, are different keys), so a hit returns the bits a fresh
/// optimisation would give.
///
/// Usage:
/// @code
/// auto memo = std::make_shared<sia::GoodputMemo>();
/// sia::GoodputChoice c = memo->optimize(sia::GoodputFunction{perf, grad, 128.0}, /*nodes=*/1, /*replicas=*/4, lim);
/// @endcode

#include <sia/goodput/goodput_function.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace sia {

class GoodputMemo {
 public:
  /// Keeps about the last `capacity` distinct optimisations, in 16 shards picked by the key's hash, each with a lock
  /// of its own (threads asking for different keys rarely wait for each other): each shard keeps at least the last
  /// ceil(capacity / 16) of its keys (up to twice as many: two generations, the older one dropped when the newer is
  /// full; a hit in the older one moves to the newer). `capacity` >= 1.
  explicit GoodputMemo(std::size_t capacity = std::size_t{1} << 15);
  ~GoodputMemo();
  GoodputMemo(const GoodputMemo&) = delete;
  GoodputMemo& operator=(const GoodputMemo&) = delete;

  /// f.optimize(nodes, replicas, lim), from the memo when these inputs were optimised before. Safe to call from
  /// several threads at once (the optimisation itself runs outside the lock).
  [[nodiscard]] GoodputChoice optimize(const GoodputFunction& f, int nodes, int replicas,
                                       const BatchLimits& lim) noexcept;

  struct Stats {
    std::uint64_t lookups = 0;  ///< calls of optimize()
    std::uint64_t hits = 0;     ///< of which answered from the memo
  };
  [[nodiscard]] Stats stats() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sia
