#pragma once
// The rounds before the bench's warm round (bench_solver.cpp's Warm rows, warm_digest.cpp): a fresh instance solved,
// then three unchanged rounds each from the previous one's warm start (the cluster settles), then 5 % of the jobs
// changed (round_instances.hpp, next_round). Shared so that the digest tool measures exactly the bench's round.
#include <sia/allocation.hpp>
#include <sia/configuration.hpp>
#include <sia/round.hpp>

#include <optional>
#include <string>
#include <vector>

#include "round_instances.hpp"

namespace sia::bench {

struct WarmSequence {
  RoundInstance settled;  ///< the last unchanged round's input
  RoundResult last;       ///< its result (its warm_start starts the changed round)
  RoundInstance changed;  ///< the round after it, 5 % of its jobs changed
};

/// With `placed`, every job reports the GPUs it was placed on (the WarmPlaced rows).
inline WarmSequence warm_sequence(const std::string& family, int gpus, unsigned seed, const RoundOptions& options,
                                  bool placed) {
  auto given = [](const RoundResult& res) {
    std::vector<std::optional<ConfigurationSpec>> g;
    for (const auto& d : res.decisions) g.push_back(d.config);
    return g;
  };
  std::vector<std::vector<NodeShare>> where;
  auto reported = [&](const RoundResult& res) -> const std::vector<std::vector<NodeShare>>* {
    if (!placed) return nullptr;
    where.clear();
    for (const auto& d : res.decisions) where.push_back(d.placement);
    return &where;
  };
  WarmSequence s;
  s.settled = make_instance(family, gpus, seed);
  s.last = run_round(s.settled.cluster, s.settled.jobs, options);
  for (int k = 0; k < 3; ++k) {
    s.settled =
        next_round(s.settled, given(s.last), 0.0, seed * 100 + static_cast<unsigned>(k), gpus, reported(s.last));
    RoundOptions warm = options;
    warm.warm_start = s.last.warm_start;
    s.last = run_round(s.settled.cluster, s.settled.jobs, warm);
  }
  s.changed = next_round(s.settled, given(s.last), 0.05, seed * 100 + 50, gpus, reported(s.last));
  return s;
}

}  // namespace sia::bench
