#pragma once
// Private to the native backend: symmetry. Groups with the same items (bit-identical values, the
// same usages, the same "none" item) are interchangeable: any permutation of their choices has
// the same value and uses the same capacity. They form one class with a multiplicity, and the
// search decides how many members of a class take each item (a count), never which member:
// thousands of identical jobs are one variable vector instead of thousands of permutations.
//
// A class refers to the items of its representative (its first member); item t of the class is
// item begin(g) + t of every member g.
#include <algorithm>
#include <cstdint>
#include <limits>
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
/// `box` false: Classes::box_ratio, box_amin and spread are left empty, for a caller that gathers
/// them in a pass of its own over the items (gather_group_box(), set_price_box()).
[[nodiscard]] Classes find_classes(const Problem& p, const Parallel& par, bool box = true);

/// Group g's part of what Relaxation::price_box() reads of the items: for each usage (k, u) of its
/// items, r[k] = max(r[k], max(v, 0) / u) and a[k] = min(a[k], u); returns its largest value less
/// its smallest (Classes::spread). Maxima and minima: the same numbers in any order of the groups.
/// With `lam` (kReduced): also each item's reduced value into `red` (Relaxation::reduced(), the same
/// operations) and the group's first item of largest reduced value into *best (-1: none above
/// -inf), in the same pass over the items.
template <bool kReduced = false>
inline double gather_group_box(const Problem& p, int g, double* r, double* a, const double* lam = nullptr,
                               double* red = nullptr, int* best = nullptr) noexcept {
  const int* const ub = p.use_begin.data();
  const int* const ur = p.use_row.data();
  const double* const uv = p.use_val.data();
  const double* const val = p.value.data();
  const int ib = p.begin(g), ie = p.end(g);
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  double vmax = -kInfinity, vmin = kInfinity, bv = -kInfinity;
  int bi = -1;
  int q = ub[ib];
  for (int it = ib; it < ie; ++it) {
    const double v = val[it], vp = std::max(v, 0.0);
    vmax = std::max(vmax, v);
    vmin = std::min(vmin, v);
    double rv = v;
    for (const int qe = ub[it + 1]; q < qe; ++q) {
      const auto k = static_cast<std::size_t>(ur[q]);
      const double u = uv[q];
      if constexpr (kReduced) rv -= lam[k] * u;
      // (vp / u cannot exceed r[k] when vp is below r[k]·u·(1 − 2^-50), a product of two
      // roundings of a normal number: then vp / u < r[k] exactly. Most items are, once a row's
      // largest ratio is found; the division is left out, the same maximum.)
      const double below = r[k] * u * (1.0 - 0x1p-50);
      if (!(vp < below && below > 0x1p-1000)) r[k] = std::max(r[k], vp / u);
      a[k] = std::min(a[k], u);
    }
    if constexpr (kReduced) {
      red[it] = rv;
      if (rv > bv) {
        bv = rv;
        bi = it;
      }
    }
  }
  if constexpr (kReduced) *best = bi;
  return vmax - vmin;
}

/// Per-block parts of gather_group_box() (`blocks` blocks of `rows` rows each, one after the
/// other: ratios from 0, least amounts from +inf), then combined into `c`'s box_ratio and box_amin;
/// `spread` per group becomes its spread.
struct PriceBoxParts {
  std::size_t rows = 0;
  std::vector<double> ratio, amin, spread;
  PriceBoxParts() = default;
  PriceBoxParts(std::size_t blocks, std::size_t k, std::size_t groups)
      : rows(k), ratio(blocks * k, 0.0), amin(blocks * k, std::numeric_limits<double>::infinity()), spread(groups) {}
  [[nodiscard]] double* ratio_of(int blk) noexcept { return ratio.data() + static_cast<std::size_t>(blk) * rows; }
  [[nodiscard]] double* amin_of(int blk) noexcept { return amin.data() + static_cast<std::size_t>(blk) * rows; }
  void set_price_box(Classes& c) {
    c.box_ratio.assign(rows, 0.0);
    c.box_amin.assign(rows, std::numeric_limits<double>::infinity());
    for (std::size_t blk = 0; rows > 0 && blk < ratio.size() / rows; ++blk)
      for (std::size_t k = 0; k < rows; ++k) {
        c.box_ratio[k] = std::max(c.box_ratio[k], ratio[blk * rows + k]);
        c.box_amin[k] = std::min(c.box_amin[k], amin[blk * rows + k]);
      }
    c.spread = std::move(spread);
  }
};

/// Gathers `c`'s box_ratio, box_amin and spread (as find_classes() does) in a pass over the items.
void gather_price_box(const Problem& p, Classes& c, const Parallel& par);

/// One class per group (no symmetry handling), for comparison in tests.
[[nodiscard]] Classes singleton_classes(const Problem& p);

}  // namespace sia::detail::native
