// Configuration sets (paper §3.3): shapes, virtual nodes, failed nodes, reservations, rows.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/valid_configs.hpp>

#include <string>
#include <vector>

namespace {

using namespace sia;

ClusterSpec one_type(int nodes, int per_node) {
  ClusterSpec c;
  c.types = {GpuTypeSpec("t", nodes, per_node)};
  return c;
}

std::vector<ConfigurationSpec> shapes(std::initializer_list<std::pair<int, int>> l, int type = 0) {
  std::vector<ConfigurationSpec> out;
  for (auto [n, g] : l) out.push_back(ConfigurationSpec{type, n, g});
  return out;
}

void check_throws_with(const ClusterSpec& c, const std::string& needle) {
  try {
    (void)make_configuration_set(c);
    FAIL("no exception; expected one mentioning '" << needle << "'");
  } catch (const InvalidArgument& e) {
    CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
  }
}

}  // namespace

TEST_CASE("configset.power_of_two_nodes") {
  const auto s = make_configuration_set(one_type(3, 8));
  CHECK(s.configs == shapes({{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 16}, {3, 24}}));
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].capacity == 24);
  CHECK(s.rows[0].min_item_gpus == 1);
  CHECK(s.free_gpus == std::vector<int>{24});
  CHECK(s.vnode_size == std::vector<int>{8});
}

TEST_CASE("configset.reference_default_cluster") {
  // sia-reference-behaviour.md §3: 19 configs for 6x aws(4), 2x dgx-ext(8), 3x rtx(8).
  ClusterSpec c;
  c.types = {GpuTypeSpec("aws", 6, 4), GpuTypeSpec("dgx-ext", 2, 8), GpuTypeSpec("rtx", 3, 8)};
  const auto s = make_configuration_set(c);
  CHECK(s.configs.size() == 19);
  CHECK(s.configs[7] == ConfigurationSpec{0, 6, 24});
  CHECK(s.configs[12] == ConfigurationSpec{1, 2, 16});
  CHECK(s.configs[18] == ConfigurationSpec{2, 3, 24});
  CHECK(s.rows.size() == 3);
}

TEST_CASE("configset.non_power_of_two.r6") {
  // 6 = 4 + 2: shapes of whole 4-GPU virtual nodes; an extra row keeps 4-GPU items in 4-GPU bins.
  const auto s = make_configuration_set(one_type(2, 6));
  CHECK(s.configs == shapes({{1, 1}, {1, 2}, {1, 4}, {2, 8}}));
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].min_item_gpus == 1);
  CHECK(s.rows[0].capacity == 12);
  CHECK(s.rows[1].min_item_gpus == 4);
  CHECK(s.rows[1].capacity == 8);
  CHECK(s.vnode_size[0] == 4);
  CHECK(s.row_usage(s.rows[1], ConfigurationSpec{0, 1, 2}) == 0);
  CHECK(s.row_usage(s.rows[1], ConfigurationSpec{0, 1, 4}) == 4);
  CHECK(s.row_usage(s.rows[1], ConfigurationSpec{0, 2, 8}) == 8);
  CHECK(s.row_usage(s.rows[0], ConfigurationSpec{0, 1, 2}) == 2);
}

TEST_CASE("configset.non_power_of_two.r3") {
  // 3 = 2 + 1: items of 2 GPUs only fit the 2-GPU virtual nodes.
  const auto s = make_configuration_set(one_type(3, 3));
  CHECK(s.configs == shapes({{1, 1}, {1, 2}, {2, 4}, {3, 6}}));
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].capacity == 9);
  CHECK(s.rows[1].min_item_gpus == 2);
  CHECK(s.rows[1].capacity == 6);
}

TEST_CASE("configset.non_power_of_two.r12") {
  // 12 = 8 + 4.
  const auto s = make_configuration_set(one_type(2, 12));
  CHECK(s.configs == shapes({{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 16}}));
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].capacity == 24);
  CHECK(s.rows[1].min_item_gpus == 8);
  CHECK(s.rows[1].capacity == 16);
}

TEST_CASE("configset.non_power_of_two.r7") {
  // 7 = 4 + 2 + 1: rows for items >= 1 (7/node), >= 2 (6/node), >= 4 (4/node).
  const auto s = make_configuration_set(one_type(1, 7));
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[1].min_item_gpus == 2);
  CHECK(s.rows[1].capacity == 6);
  CHECK(s.rows[2].min_item_gpus == 4);
  CHECK(s.rows[2].capacity == 4);
}

TEST_CASE("configset.down_nodes_and_reservations") {
  ClusterSpec c;
  c.types = {GpuTypeSpec("a", 4, 8), GpuTypeSpec("b", 2, 6)};
  c.down = {{1, 3}};
  c.reserved = {3, 2};
  const auto s = make_configuration_set(c);
  CHECK(s.configs ==
        std::vector<ConfigurationSpec>{
            {0, 1, 1}, {0, 1, 2}, {0, 1, 4}, {0, 1, 8}, {0, 2, 16}, {1, 1, 1}, {1, 1, 2}, {1, 1, 4}, {1, 2, 8}});
  CHECK(s.free_gpus == std::vector<int>{13, 10});
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[0].capacity == 13);
  CHECK(s.rows[1].capacity == 10);  // b: every item
  CHECK(s.rows[2].capacity == 6);   // b: 4-GPU items into the 4-GPU virtual nodes, minus reserved
}

TEST_CASE("configset.all_nodes_down") {
  ClusterSpec c;
  c.types = {GpuTypeSpec("a", 1, 8), GpuTypeSpec("b", 2, 4)};
  c.down = {{0}};
  const auto s = make_configuration_set(c);
  CHECK(s.configs.size() == 4);
  CHECK(s.free_gpus == std::vector<int>{0, 8});
  CHECK(s.vnode_size == std::vector<int>{0, 4});
}

TEST_CASE("configset.validation") {
  check_throws_with(ClusterSpec{}, "empty cluster");
  check_throws_with(one_type(0, 8), "no GPUs");
  check_throws_with(one_type(-1, 8), "negative node count");
  check_throws_with(one_type(1, 0), "gpus_per_node");
  ClusterSpec dup;
  dup.types = {GpuTypeSpec("x", 1, 4), GpuTypeSpec("x", 1, 4)};
  check_throws_with(dup, "duplicate");
  ClusterSpec empty_name;
  empty_name.types = {GpuTypeSpec("", 1, 4)};
  check_throws_with(empty_name, "empty name");
  auto down = one_type(2, 4);
  down.down = {{2}};
  check_throws_with(down, "down node index 2");
  auto res = one_type(2, 4);
  res.reserved = {9};
  check_throws_with(res, "GPU type 't'");
  res.reserved = {-1};
  check_throws_with(res, "negative reserved");
  auto big = one_type(1 << 21, 8);
  check_throws_with(big, "exceeds");
}

TEST_CASE("configset.valid_configs.rules") {
  const auto s = make_configuration_set(one_type(4, 8));  // 1 2 4 8 16 24 32
  auto gpus = [&](const JobLimits& l) {
    std::vector<int> out;
    for (auto v : valid_configs(s, l)) out.push_back(v.gpus);
    return out;
  };
  CHECK(gpus({1, 16, JobKind::adaptive, 1, std::nullopt}) == std::vector<int>{1, 2, 4, 8, 16});
  CHECK(gpus({2, 100, JobKind::strong_scaling, 1, std::nullopt}) == std::vector<int>{2, 4, 8, 16, 24, 32});
  // 2x rule: never ran -> only its minimum; ran with 4 -> up to 8.
  CHECK(gpus({1, 64, JobKind::adaptive, 1, 0}) == std::vector<int>{1});
  CHECK(gpus({2, 64, JobKind::adaptive, 1, 0}) == std::vector<int>{2});
  CHECK(gpus({1, 64, JobKind::adaptive, 1, 4}) == std::vector<int>{1, 2, 4, 8});
  CHECK(gpus({8, 64, JobKind::adaptive, 1, 1}) == std::vector<int>{8});
  // hybrid: multiples of P, at least one pipeline.
  CHECK(gpus({1, 64, JobKind::hybrid, 8, std::nullopt}) == std::vector<int>{8, 16, 24, 32});
  CHECK(gpus({1, 64, JobKind::hybrid, 4, std::nullopt}) == std::vector<int>{4, 8, 16, 24, 32});
  CHECK(gpus({1, 4, JobKind::hybrid, 8, std::nullopt}).empty());
  CHECK(effective_min_gpus({1, 64, JobKind::hybrid, 3, std::nullopt}) == 3);
  CHECK(effective_min_gpus({4, 64, JobKind::hybrid, 3, std::nullopt}) == 6);
  // rigid: one per type, footprint when the count is not a shape.
  auto rigid3 = valid_configs(s, {3, 3, JobKind::rigid, 1, std::nullopt});
  REQUIRE(rigid3.size() == 1);
  CHECK(s.configs[static_cast<std::size_t>(rigid3[0].config)] == ConfigurationSpec{0, 1, 4});
  CHECK(rigid3[0].gpus == 3);
  auto rigid12 = valid_configs(s, {12, 12, JobKind::rigid, 1, 0});
  REQUIRE(rigid12.size() == 1);
  CHECK(s.configs[static_cast<std::size_t>(rigid12[0].config)] == ConfigurationSpec{0, 2, 16});
  CHECK(valid_configs(s, {40, 40, JobKind::rigid, 1, std::nullopt}).empty());
}
