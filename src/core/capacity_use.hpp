#pragma once
// Private to the round: GPUs a set of chosen configurations takes in every capacity row of the
// configuration set (CapacityRow), to check an allocation or grow one greedily.
#include <sia/configuration_set.hpp>

#include <vector>

namespace sia::detail {

class CapacityUse {
 public:
  explicit CapacityUse(const ConfigurationSet& s) : set_(&s), used_(s.rows.size(), 0) {}
  /// Would configuration `c` still fit?
  [[nodiscard]] bool fits(int c) const;
  /// Takes configuration `c`.
  void add(int c);
  /// Gives configuration `c` back (taken before with add()).
  void remove(int c);
  /// Is every row within its capacity?
  [[nodiscard]] bool within_capacity() const;

 private:
  const ConfigurationSet* set_;
  std::vector<long long> used_;
};

}  // namespace sia::detail
