// Gavel's round-based time-sharing mechanism (reference §6.5), shared by the Gavel and Themis policies.
#include <sia/error.hpp>
#include <sia/sim/time_sharing.hpp>

#include <algorithm>
#include <cmath>

namespace sia::sim {

std::vector<std::pair<int, int>> place_whole_gpus(std::vector<int>& free_per_node, int need,
                                                  const std::vector<std::pair<int, int>>& previous) {
  int free_total = 0;
  for (int f : free_per_node) free_total += std::max(f, 0);
  if (need <= 0 || need > free_total) return {};
  int prev_total = 0;
  bool keep = !previous.empty();
  for (const auto& [node, g] : previous) {
    prev_total += g;
    keep = keep && node >= 0 && node < static_cast<int>(free_per_node.size()) && g > 0 &&
           free_per_node[static_cast<std::size_t>(node)] >= g;
  }
  std::vector<std::pair<int, int>> out;
  if (keep && prev_total == need) {
    out = previous;
  } else {
    int left = need;
    for (std::size_t n = 0; n < free_per_node.size() && left > 0; ++n) {
      const int take = std::min(left, free_per_node[n]);
      if (take <= 0) continue;
      out.emplace_back(static_cast<int>(n), take);
      left -= take;
    }
  }
  for (const auto& [node, g] : out) free_per_node[static_cast<std::size_t>(node)] -= g;
  return out;
}

TimeSharingRounds::TimeSharingRounds(double interval_s) : interval_(interval_s) {
  if (!(interval_s > 0) || !std::isfinite(interval_s)) throw InvalidArgument("time sharing: interval must be positive");
}

std::vector<SimAllocation> TimeSharingRounds::schedule(const SimCluster& cluster, std::span<SimJob* const> jobs,
                                                       const std::vector<int>& gpus,
                                                       const std::vector<std::vector<double>>& x) {
  const std::size_t nt = cluster.types.size();
  const std::size_t nj = jobs.size();
  if (gpus.size() != nj || x.size() != nj)
    throw InvalidArgument("time sharing: one GPU count and one row of time fractions per job expected");
  for (const auto& row : x)
    if (row.size() != nt) throw InvalidArgument("time sharing: one time fraction per GPU type expected");
  if (cluster_time_.size() != nt) cluster_time_.assign(nt, 0.0);

  // Forget departed jobs; a new job starts with interval/2 on every type (the type clocks advance too).
  std::map<std::uint64_t, JobState> kept;
  for (SimJob* job : jobs) {
    auto it = jobs_.find(job->uid);
    if (it != jobs_.end()) {
      kept.emplace(job->uid, std::move(it->second));
    } else {
      JobState s;
      s.time.assign(nt, interval_ / 2);
      for (auto& c : cluster_time_) c += interval_ / 2;
      kept.emplace(job->uid, std::move(s));
    }
  }
  jobs_ = std::move(kept);

  last_priority_.assign(nj, std::vector<double>(nt, 0.0));
  struct Pair {
    double priority, x;
    std::size_t j, k;
  };
  std::vector<Pair> pairs;
  for (std::size_t j = 0; j < nj; ++j) {
    const auto& st = jobs_.at(jobs[j]->uid);
    for (std::size_t k = 0; k < nt; ++k) {
      const double xv = x[j][k];
      const double fraction = cluster_time_[k] > 0 ? st.time[k] / cluster_time_[k] : 0.0;
      double pr = 0.0;
      if (xv > 0) pr = fraction > 0 ? xv / fraction : 1e9 * xv;
      last_priority_[j][k] = pr;
      pairs.push_back({pr, xv, j, k});
    }
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.x > b.x;
  });

  std::vector<std::vector<int>> free_gpus(nt);
  for (std::size_t k = 0; k < nt; ++k)
    free_gpus[k].assign(static_cast<std::size_t>(cluster.types[k].nodes), cluster.types[k].gpus_per_node);
  std::vector<SimAllocation> out(nj);
  std::vector<char> scheduled(nj, 0);
  for (const auto& p : pairs) {
    if (scheduled[p.j]) continue;
    const int need = gpus[p.j];
    if (need < 1) continue;
    auto& st = jobs_.at(jobs[p.j]->uid);
    static const std::vector<std::pair<int, int>> none;
    auto placed = place_whole_gpus(free_gpus[p.k], need, st.type == static_cast<int>(p.k) ? st.nodes : none);
    if (placed.empty()) continue;
    st.nodes = std::move(placed);
    st.type = static_cast<int>(p.k);
    st.time[p.k] += interval_;
    cluster_time_[p.k] += interval_;
    scheduled[p.j] = 1;
    out[p.j] = SimAllocation{static_cast<int>(p.k), static_cast<int>(st.nodes.size()), need};
  }
  for (std::size_t j = 0; j < nj; ++j)
    if (!scheduled[j]) {
      auto& st = jobs_.at(jobs[j]->uid);
      st.type = -1;
      st.nodes.clear();
    }
  return out;
}

}  // namespace sia::sim
