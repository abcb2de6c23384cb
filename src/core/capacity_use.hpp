#pragma once
// Private to the round: GPUs a set of chosen configurations takes in every capacity row of the
// configuration set (CapacityRow), to check an allocation or grow one greedily. Every entry is a
// configuration and the GPUs its job uses there: a rigid job on its footprint is charged its count
// (rigid_row_usage), not the footprint.
#include <sia/configuration_set.hpp>

#include <array>
#include <span>
#include <utility>
#include <vector>

namespace sia::detail {

class CapacityUse {
 public:
  /// `s` must outlive this object and keep its configurations and rows while it is used.
  explicit CapacityUse(const ConfigurationSet& s);
  /// Would configuration `c`, used with `gpus` GPUs (a rigid job may use fewer than c has;
  /// ConfigurationSet::row_usage), still fit?
  [[nodiscard]] bool fits(int c, int gpus) const { return fits(handle(c, gpus)); }
  /// Takes configuration `c` used with `gpus` GPUs.
  void add(int c, int gpus) { change(c, gpus, +1); }
  /// Gives configuration `c` used with `gpus` GPUs back (taken before with add()).
  void remove(int c, int gpus) { change(c, gpus, -1); }
  /// Is every row within its capacity?
  [[nodiscard]] bool within_capacity() const;
  /// Nothing taken any more.
  void clear();

  /// A handle on the charges of configuration `c` used with `gpus` GPUs, for searches that ask
  /// for the same pairs over and over: fits(handle), add(handle), remove(handle).
  [[nodiscard]] int handle(int c, int gpus) const;
  [[nodiscard]] bool fits(int handle) const {  // inline: the tie rules' searches call it millions of times
    const auto h = static_cast<std::size_t>(handle);
    const std::pair<int, int>* q = charges_.data() + first_[h];
    const std::pair<int, int>* const e = charges_.data() + first_[h + 1];
    for (; q != e; ++q)
      if (q->second > 0 &&
          used_[static_cast<std::size_t>(q->first)] + q->second > used_[rows_ + static_cast<std::size_t>(q->first)])
        return false;
    return true;
  }
  void add(int handle) { change(handle, +1); }
  void remove(int handle) { change(handle, -1); }
  /// The rows `handle` is charged in, with the charge (nonzero; fits() checks only positive ones).
  [[nodiscard]] std::span<const std::pair<int, int>> charges(int handle) const {
    const auto h = static_cast<std::size_t>(handle);
    return {charges_.data() + first_[h], charges_.data() + first_[h + 1]};
  }

 private:
  // The rows a (configuration, GPUs) pair is charged in, with the charge: a configuration touches
  // the few rows of its type, and the tie rules' searches ask for the same pairs millions of
  // times, so they are worked out once (row_usage, rigid_row_usage) instead of over every row.
  void change(int c, int gpus, int sign) { change(handle(c, gpus), sign); }
  void change(int handle, int sign) {
    const auto h = static_cast<std::size_t>(handle);
    const std::pair<int, int>* q = charges_.data() + first_[h];
    const std::pair<int, int>* const e = charges_.data() + first_[h + 1];
    for (; q != e; ++q) used_[static_cast<std::size_t>(q->first)] += sign * q->second;
  }
  const ConfigurationSet* set_;
  // Per row its use, then per row its capacity (the set's, at hand): one array, one allocation (a
  // round builds several of these).
  std::size_t rows_;
  std::vector<long long> used_;
  // Per configuration: its first (GPUs, handle) pair ((0, -1): none yet); the others — a rigid job's count on a
  // footprint besides the configuration's own — in `more_handles_` as (configuration, GPUs, handle). Flat: a
  // vector per configuration cost an allocation per configuration touched, and a round builds several of these.
  mutable std::vector<std::pair<int, int>> handles_;
  mutable std::vector<std::array<int, 3>> more_handles_;
  mutable std::vector<std::pair<int, int>> charges_;  // (row, GPUs charged), charge != 0
  mutable std::vector<int> first_;                    // per handle: its first charge (+ end)
};

}  // namespace sia::detail
