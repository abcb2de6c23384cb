// Checks shared by the native reading's tests (test_native_engine.cpp, test_model_layout.cpp): two
// readings of a model give the same Shape, bit for bit.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "milp/native/problem.hpp"

namespace sia::test {

/// The same doubles, bit for bit (NaNs and signed zeros included).
template <class A, class B>
inline bool bits_equal(const std::vector<double, A>& a, const std::vector<double, B>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::bit_cast<std::uint64_t>(a[k]) != std::bit_cast<std::uint64_t>(b[k])) return false;
  return true;
}

/// How much of two Shapes must agree: the knapsack alone (two different readings, e.g. against the
/// general reading by rows), also the reason a model is not round-shaped, or also the way it was
/// read (in layout or not, and the entry index kept then).
enum class ShapeCheck { knapsack, and_why, whole_reading };

inline void check_same_shape(const sia::detail::native::Shape& a, const sia::detail::native::Shape& b,
                             ShapeCheck what = ShapeCheck::and_why) {
  CHECK(a.round_shaped == b.round_shaped);
  CHECK(a.infeasible == b.infeasible);
  if (what != ShapeCheck::knapsack) CHECK(a.why == b.why);
  CHECK(a.sign == b.sign);
  CHECK(a.cap_rows == b.cap_rows);
  CHECK(a.pinned_cols == b.pinned_cols);
  const sia::detail::native::Problem &p = a.problem, &q = b.problem;
  CHECK(p.num_rows == q.num_rows);
  CHECK(bits_equal(p.cap, q.cap));
  CHECK(std::bit_cast<std::uint64_t>(p.fixed_value) == std::bit_cast<std::uint64_t>(q.fixed_value));
  CHECK(p.group_begin == q.group_begin);
  CHECK(p.group_row == q.group_row);
  CHECK(bits_equal(p.value, q.value));
  CHECK(p.column == q.column);
  CHECK(p.use_begin == q.use_begin);
  CHECK(p.use_row == q.use_row);
  CHECK(bits_equal(p.use_val, q.use_val));
  if (what != ShapeCheck::whole_reading) return;
  CHECK(a.in_layout == b.in_layout);
  CHECK(a.entries.cap_begin == b.entries.cap_begin);
  CHECK(a.entries.choice_of == b.entries.choice_of);
  CHECK(a.entries.choice_rows == b.entries.choice_rows);
  CHECK(a.entries.choice_begin == b.entries.choice_begin);
  CHECK(a.entries.bounds_listed == b.entries.bounds_listed);
  CHECK(a.entries.other_bounds == b.entries.other_bounds);
}

}  // namespace sia::test
