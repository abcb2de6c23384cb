// formulate() writes into the arrays recycle() kept on its thread without clearing them first
// (formulation.cpp: only the elements past the recycled size are value-initialised): every element
// of the model it returns must be written by it, whatever the recycled arrays held.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/round.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/formulation.hpp"
#include "core/problem.hpp"
#include "round_instances.hpp"

namespace {

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

bool same_doubles(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!same_bits(a[k], b[k])) return false;
  return true;
}

// Every array of the two formulations, bit for bit.
bool same(const sia::detail::Formulation& a, const sia::detail::Formulation& b) {
  const auto& x = a.milp;
  const auto& y = b.milp;
  bool entries = x.entries.size() == y.entries.size();
  for (std::size_t k = 0; entries && k < x.entries.size(); ++k)
    entries = x.entries[k].row == y.entries[k].row && x.entries[k].col == y.entries[k].col &&
              same_bits(x.entries[k].value, y.entries[k].value);
  bool cols = a.cols.size() == b.cols.size();
  for (std::size_t c = 0; cols && c < a.cols.size(); ++c)
    cols = a.cols[c].job == b.cols[c].job && a.cols[c].entry == b.cols[c].entry;
  return entries && cols && same_doubles(x.obj, y.obj) && same_doubles(x.col_lower, y.col_lower) &&
         same_doubles(x.col_upper, y.col_upper) && x.is_integer == y.is_integer &&
         same_doubles(x.row_lower, y.row_lower) && same_doubles(x.row_upper, y.row_upper) &&
         same_bits(x.obj_offset, y.obj_offset) && x.sense == y.sense && a.column_charge == b.column_charge &&
         a.charges == b.charges && a.choice_row == b.choice_row && a.pinned_cols == b.pinned_cols &&
         a.capacity_row == b.capacity_row && a.tenant_row == b.tenant_row && a.exponent == b.exponent &&
         a.columns_are_entries == b.columns_are_entries && a.layout_known == b.layout_known && a.choice == b.choice &&
         a.cap_begin == b.cap_begin;
}

// Overwrites every element of every array recycle() keeps with values formulate() never writes.
void spoil(sia::detail::Formulation& f) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double& v : f.milp.obj) v = nan;
  for (double& v : f.milp.col_lower) v = -7.0;
  for (double& v : f.milp.col_upper) v = nan;
  for (char& v : f.milp.is_integer) v = 5;
  for (auto& e : f.milp.entries) e = {-3, -4, nan};
  for (auto& c : f.cols) c = {-1, -2};
  for (auto& q : f.column_charge) q = {-5, -6};
  for (auto& q : f.charges) q = {-7, -8};
  for (auto& c : f.choice) c = {-9, -10, -11};
  for (int& b : f.cap_begin) b = -12;
}

}  // namespace

TEST_CASE("formulation.recycled_arrays_fully_written") {
  std::vector<sia::detail::Problem> problems;
  sia::RoundOptions options;
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 512, 2048}) {
      const auto in = sia::bench::make_instance(family, gpus, 5);
      problems.push_back(
          sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, options));
    }
  REQUIRE(problems.size() > 10);
  // The models a thread that never recycled anything formulates.
  std::vector<sia::detail::Formulation> fresh(problems.size());
  std::thread([&] {
    for (std::size_t k = 0; k < problems.size(); ++k)
      fresh[k] = sia::detail::formulate(problems[k], problems[k].required);
  }).join();
  std::size_t pinned = 0;
  for (const auto& f : fresh) pinned += f.pinned_cols.size();
  CHECK(pinned > 0);
  // Each problem after every other's spoiled arrays (larger and smaller ones, in both orders), and
  // after its own.
  for (std::size_t a = 0; a < problems.size(); ++a)
    for (std::size_t b = 0; b < problems.size(); ++b) {
      sia::detail::Formulation old = sia::detail::formulate(problems[b], problems[b].required);
      spoil(old);
      sia::detail::recycle(std::move(old));
      const auto f = sia::detail::formulate(problems[a], problems[a].required);
      CHECK_MESSAGE(same(f, fresh[a]), "problem ", a, " after problem ", b, "'s spoiled arrays");
    }
}
