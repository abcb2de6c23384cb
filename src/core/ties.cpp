// Tie rules of the round (docs/reliability.md).
#include "core/ties.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

namespace sia::detail {

void canonicalize_ties(const Problem& pb, const Requirements& req, Choice& ch) {
  const std::size_t n = pb.num_jobs();
  auto same_entries = [&](std::size_t a, std::size_t b) {
    const auto& x = pb.valid[a];
    const auto& y = pb.valid[b];
    if (x.size() != y.size()) return false;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k].config != y[k].config || x[k].gpus != y[k].gpus || !(x[k].util == y[k].util)) return false;
    return true;
  };
  std::vector<char> done(n, 0);
  std::vector<std::size_t> group;
  std::vector<int> configs;
  for (std::size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    group.assign(1, i);
    for (std::size_t j = i + 1; j < n; ++j)
      if (!done[j] && req.pinned[j] == req.pinned[i] && req.forced[j] == req.forced[i] &&
          pb.current[j] == pb.current[i] && same_entries(i, j)) {
        group.push_back(j);
        done[j] = 1;
      }
    if (group.size() < 2) continue;
    configs.clear();
    for (std::size_t j : group) configs.push_back(pb.config_of(ch, j));
    std::sort(configs.begin(), configs.end(), [&](int a, int b) {
      if (a < 0 || b < 0) return a >= 0 && b < 0;
      const ConfigurationSpec& x = pb.set.configs[static_cast<std::size_t>(a)];
      const ConfigurationSpec& y = pb.set.configs[static_cast<std::size_t>(b)];
      if (x.gpus != y.gpus) return x.gpus < y.gpus;
      if (x.type != y.type) return x.type < y.type;
      if (x.nodes != y.nodes) return x.nodes < y.nodes;
      return a < b;
    });
    for (std::size_t k = 0; k < group.size(); ++k)
      ch[group[k]] = configs[k] < 0 ? -1 : pb.entry_of(group[k], configs[k]);
  }
}

void prefer_current_on_ties(const Problem& pb, const Requirements& req, Choice& ch) {
  const std::size_t n = pb.num_jobs();
  // Gain (bigger is better) of job i on configuration c (-1 = no GPUs); nullopt when i may not take it.
  auto gain_on = [&](std::size_t i, int c) -> std::optional<double> {
    if (c < 0) {
      if (req.forced[i] || req.pinned[i]) return std::nullopt;
      return 0.0;
    }
    if (req.pinned[i] && c != pb.current[i]) return std::nullopt;
    const int k = pb.entry_of(i, c);
    if (k < 0) return std::nullopt;
    return pb.gain(pb.valid[i][static_cast<std::size_t>(k)]);
  };
  // Jobs holding each configuration that is not their current one, latest first.
  std::unordered_map<int, std::vector<std::size_t>> holders;
  for (std::size_t i = n; i-- > 0;) {
    const int c = pb.config_of(ch, i);
    if (c >= 0 && c != pb.current[i]) holders[c].push_back(i);
  }
  for (std::size_t k = 0; k < n; ++k) {
    const int cur = pb.current[k];
    if (cur < 0 || req.pinned[k] || pb.config_of(ch, k) == cur) continue;
    const auto gk_cur = gain_on(k, cur);
    if (!gk_cur) continue;  // the current configuration is no longer usable (e.g. restart factor 0)
    const auto it = holders.find(cur);
    if (it == holders.end()) continue;
    auto& list = it->second;
    const int other = pb.config_of(ch, k);
    for (std::size_t pos = 0; pos < list.size(); ++pos) {
      const std::size_t i = list[pos];
      if (pb.config_of(ch, i) != cur) continue;  // stale: i already gave this configuration away
      const auto gi_other = gain_on(i, other);
      const auto gi_cur = gain_on(i, cur);
      const auto gk_other = gain_on(k, other);
      if (!gi_other || !gi_cur || !gk_other) continue;
      if (!(*gk_cur + *gi_other >= *gi_cur + *gk_other)) continue;
      ch[k] = pb.entry_of(k, cur);
      ch[i] = other < 0 ? -1 : pb.entry_of(i, other);
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(pos));
      if (other >= 0 && other != pb.current[i]) holders[other].push_back(i);
      break;
    }
  }
}

}  // namespace sia::detail
