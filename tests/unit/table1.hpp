#pragma once
// The paper's Table 1 (two jobs, one node of 2 A GPUs and one of 4 B GPUs): the smallest round with a
// known answer, shared by the round, placement and logging tests.

#include <sia/sia.hpp>

#include <vector>

namespace sia::test {

inline ClusterSpec table1_cluster() {
  ClusterSpec c;
  c.types = {GpuTypeSpec("A", 1, 2), GpuTypeSpec("B", 1, 4)};
  return c;
}

inline std::vector<JobSpec> table1_jobs() {
  GoodputTable j1, j2;
  j1.set("A", 1, 1).set("A", 2, 1).set("B", 1, 2).set("B", 2, 3).set("B", 4, 4);
  j2.set("A", 1, 2).set("A", 2, 4).set("B", 1, 1).set("B", 2, 2).set("B", 4, 3);
  return {JobSpec("J1").goodput_model(j1), JobSpec("J2").goodput_model(j2)};
}

}  // namespace sia::test
