#pragma once
// Private to the native backend: symmetry. Groups with the same items (bit-identical values, the
// same usages, the same "none" item) are interchangeable: any permutation of their choices has
// the same value and uses the same capacity. They form one class with a multiplicity, and the
// search decides how many members of a class take each item (a count), never which member:
// thousands of identical jobs are one variable vector instead of thousands of permutations.
//
// A class refers to the items of its representative (its first member); item t of the class is
// item begin(g) + t of every member g.
#include <cstdint>
#include <vector>

#include "milp/native/parallel.hpp"
#include "milp/native/problem.hpp"

namespace sia::detail::native {

struct Classes {
  std::vector<int> rep;              ///< per class: representative group (its first member)
  std::vector<int> mult;             ///< per class: number of members
  std::vector<int> member_begin{0};  ///< per class: members [member_begin[c], member_begin[c+1])
  std::vector<int> members;          ///< groups, ascending within a class
  std::vector<int> class_of;         ///< per group
  /// What Relaxation::price_box() reads of the items, gathered by find_classes() in its pass over
  /// them (empty otherwise): per capacity row the largest max(value, 0) / amount and the least
  /// amount over every group's items (equal groups have equal items: the same maxima as over the
  /// classes' representatives), and per group its largest value less its smallest.
  std::vector<double> box_ratio, box_amin, spread;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(rep.size()); }
  /// Number of items of class c (those of its representative).
  [[nodiscard]] int items(const Problem& p, int c) const noexcept {
    const int g = rep[static_cast<std::size_t>(c)];
    return p.end(g) - p.begin(g);
  }
  /// First item of class c in the problem's item arrays.
  [[nodiscard]] int first_item(const Problem& p, int c) const noexcept {
    return p.begin(rep[static_cast<std::size_t>(c)]);
  }
};

/// Groups the interchangeable groups of `p` into classes; classes are ordered by their first member.
[[nodiscard]] Classes find_classes(const Problem& p, const Parallel& par);

/// One class per group (no symmetry handling), for comparison in tests.
[[nodiscard]] Classes singleton_classes(const Problem& p);

}  // namespace sia::detail::native
