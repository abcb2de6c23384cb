#include "core/greedy.hpp"

#include "core/capacity_use.hpp"
#include "core/tenants.hpp"

namespace sia::detail {

Choice greedy_allocation(const Problem& pb, const Requirements& req) {
  Choice out(pb.num_jobs(), -1);
  CapacityUse usage(pb.set);
  TenantUse tenants(pb, tenant_rows(pb, req));
  auto pass = [&](auto&& select) {
    for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
      if (out[i] >= 0 || !select(i)) continue;
      int best = -1;
      double best_gain = 0.0;
      for (std::size_t k = 0; k < pb.valid[i].size(); ++k) {
        const int c = pb.valid[i][k].config;
        if (req.pinned[i] && c != pb.current[i]) continue;
        const double g = pb.gain(i, pb.valid[i][k]);
        const bool must = req.pinned[i] || req.forced[i];
        if (!must && !(g > 0.0)) continue;
        if ((best < 0 || g > best_gain) && usage.fits(c, pb.valid[i][k].gpus) && tenants.fits(i, pb.valid[i][k])) {
          best = static_cast<int>(k);
          best_gain = g;
        }
      }
      if (best >= 0) {
        out[i] = best;
        const Entry& e = pb.valid[i][static_cast<std::size_t>(best)];
        usage.add(e.config, e.gpus);
        tenants.add(i, e);
      }
    }
  };
  pass([&](std::size_t i) { return req.pinned[i] != 0; });
  pass([&](std::size_t i) { return req.forced[i] != 0; });
  pass([&](std::size_t) { return true; });
  return out;
}

}  // namespace sia::detail
