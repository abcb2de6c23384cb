// Pollux's NSGA-II search (see pollux_genetic.hpp for how it follows pymoo and adaptdl's pollux.py).
#include "sim/pollux_genetic.hpp"

#include <sia/error.hpp>
#include <sia/sim/random.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

namespace sia::sim::detail {

namespace {
constexpr double kEps = 1e-3;          // Pollux adds it to every speedup before the power mean
constexpr double kInfCrowding = 1e14;  // pymoo's stand-in for an infinite crowding distance

bool dominates(const PolluxObjectives& a, const PolluxObjectives& b) noexcept {
  const bool le = a.neg_fitness <= b.neg_fitness && a.neg_utility <= b.neg_utility;
  return le && (a.neg_fitness < b.neg_fitness || a.neg_utility < b.neg_utility);
}

std::uint64_t hash_state(const PolluxState& x) noexcept {
  // FNV-1a over the entries in four interleaved lanes, then the lanes combined: one chain of multiplies over
  // all jobs × vnodes entries was 5 % of the search (its latency). The hash only filters the exact comparison of
  // states (equal states, equal hashes), so the search's results do not depend on which function it is.
  constexpr std::uint64_t kPrime = 1099511628211ULL;
  std::uint64_t h0 = 1469598103934665603ULL, h1 = h0 ^ 1, h2 = h0 ^ 2, h3 = h0 ^ 3;
  const std::size_t n = x.size();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h0 = (h0 ^ static_cast<std::uint32_t>(x[i])) * kPrime;
    h1 = (h1 ^ static_cast<std::uint32_t>(x[i + 1])) * kPrime;
    h2 = (h2 ^ static_cast<std::uint32_t>(x[i + 2])) * kPrime;
    h3 = (h3 ^ static_cast<std::uint32_t>(x[i + 3])) * kPrime;
  }
  for (; i < n; ++i) h0 = (h0 ^ static_cast<std::uint32_t>(x[i])) * kPrime;
  std::uint64_t h = ((((h0 ^ (h1 >> 7)) * kPrime) ^ (h2 >> 13)) * kPrime ^ (h3 >> 29)) * kPrime;
  return h ^ (h >> 32);
}
}  // namespace

std::vector<int> pollux_nondominated_ranks(const std::vector<std::pair<double, double>>& f) {
  const std::size_t n = f.size();
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return f[a] < f[b]; });
  std::vector<int> rank(n, 0);
  std::vector<std::size_t> last;  // last (lowest f1) point of each front
  // Points come in (f0, f1) order, so the last point L of a front has L.f0 <= q.f0 and the lowest f1 of its
  // front: the front dominates q iff L does. Domination by front k is monotone in k, hence the binary search.
  auto dominated_by = [&](std::size_t l, std::size_t q) {
    return f[l].second < f[q].second || (f[l].second == f[q].second && f[l].first < f[q].first);
  };
  for (std::size_t q : idx) {
    std::size_t lo = 0, hi = last.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (dominated_by(last[mid], q))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == last.size())
      last.push_back(q);
    else
      last[lo] = q;
    rank[q] = static_cast<int>(lo);
  }
  return rank;
}

std::vector<double> pollux_crowding_distance(const std::vector<std::pair<double, double>>& f) {
  const std::size_t n = f.size();
  if (n <= 2) return std::vector<double>(n, kInfCrowding);
  // pymoo filters out duplicate objective vectors (they get 0) and measures the unique ones.
  std::vector<std::size_t> uniq;
  for (std::size_t i = 0; i < n; ++i) {
    bool dup = false;
    for (std::size_t u : uniq)
      if (f[u] == f[i]) {
        dup = true;
        break;
      }
    if (!dup) uniq.push_back(i);
  }
  const std::size_t m = uniq.size();
  std::vector<double> cd(m, 0.0);
  for (int obj = 0; obj < 2; ++obj) {
    auto val = [&](std::size_t k) { return obj == 0 ? f[uniq[k]].first : f[uniq[k]].second; };
    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return val(a) < val(b); });
    const double norm = val(order.back()) - val(order.front());
    if (!(norm > 0)) continue;  // pymoo: 0/0 and inf/0 become NaN, then 0
    const double inf = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < m; ++i) {
      const double to_last = i == 0 ? inf : (val(order[i]) - val(order[i - 1])) / norm;
      const double to_next = i + 1 == m ? inf : (val(order[i + 1]) - val(order[i])) / norm;
      cd[order[i]] += to_last + to_next;
    }
  }
  std::vector<double> out(n, 0.0);
  for (std::size_t k = 0; k < m; ++k) {
    const double d = cd[k] / 2.0;
    out[uniq[k]] = std::isinf(d) ? kInfCrowding : d;
  }
  return out;
}

PolluxGenetic::PolluxGenetic(PolluxGaProblem problem, PolluxGaOptions options, std::mt19937_64& rng)
    : problem_(std::move(problem)), options_(options), rng_(rng) {
  jobs_ = problem_.jobs();
  vnodes_ = problem_.vnodes();
  const auto cells = static_cast<std::size_t>(jobs_) * static_cast<std::size_t>(vnodes_);
  if (problem_.rigid.size() != static_cast<std::size_t>(jobs_) ||
      problem_.restart_factor.size() != static_cast<std::size_t>(jobs_) || problem_.base.size() != cells)
    throw InvalidArgument("pollux genetic search: per-job vectors and the base state must match the job count");
  if (!problem_.speedup) throw InvalidArgument("pollux genetic search: no speedup function");
  if (!(problem_.p < 0)) throw InvalidArgument("pollux genetic search: p must be negative");
  if (options_.population < 1 || options_.generations < 1 || options_.max_mating_rounds < 1 ||
      !(options_.crossover_probability >= 0 && options_.crossover_probability <= 1))
    throw InvalidArgument(
        "pollux genetic search: population, generations and mating rounds must be positive, the "
        "crossover probability in [0, 1]");
  if (!(problem_.speedup_scale > 0) || !std::isfinite(problem_.speedup_scale) || problem_.max_job_vnodes < 1)
    throw InvalidArgument("pollux genetic search: speedup_scale must be a positive number, max_job_vnodes >= 1");
  for (int g : problem_.vnode_gpus)
    if (g < 0) throw InvalidArgument("pollux genetic search: negative vnode GPUs");
  max_r_.resize(static_cast<std::size_t>(jobs_));
  table_offset_.resize(static_cast<std::size_t>(jobs_));
  std::size_t total = 0;
  for (int j = 0; j < jobs_; ++j) {
    max_r_[static_cast<std::size_t>(j)] = std::max(1, problem_.max_replicas[static_cast<std::size_t>(j)]);
    table_offset_[static_cast<std::size_t>(j)] = total;
    total +=
        2 * static_cast<std::size_t>(vnodes_ + 1) * static_cast<std::size_t>(max_r_[static_cast<std::size_t>(j)] + 1);
  }
  table_.assign(total, Terms{std::numeric_limits<double>::quiet_NaN(), 0.0});
  perm_.reserve(static_cast<std::size_t>(std::max(jobs_, vnodes_)));
  distributed_.resize(static_cast<std::size_t>(jobs_));
  row_n_.resize(static_cast<std::size_t>(jobs_));
  row_total_.resize(static_cast<std::size_t>(jobs_));
}

PolluxGenetic::Terms PolluxGenetic::term(int j, int nodes, int replicas, bool changed) {
  const auto ju = static_cast<std::size_t>(j);
  const int mr = max_r_[ju];
  const bool valid =
      replicas > 0 && replicas <= mr && nodes >= 1 && nodes <= vnodes_ && (!problem_.rigid[ju] || replicas == mr);
  if (!valid) return {std::pow(kEps, problem_.p), 0.0};  // no GPUs (or an unrepaired state): speedup 0
  const std::size_t at = table_offset_[ju] +
                         (static_cast<std::size_t>(changed ? 1 : 0) * static_cast<std::size_t>(vnodes_ + 1) +
                          static_cast<std::size_t>(nodes)) *
                             static_cast<std::size_t>(mr + 1) +
                         static_cast<std::size_t>(replicas);
  Terms& t = table_[at];
  if (std::isnan(t.power)) {
    double s = problem_.speedup(j, nodes, replicas);
    if (!std::isfinite(s) || s < 0) s = 0;
    t.raw = s;
    s *= problem_.speedup_scale;
    if (changed) s *= problem_.restart_factor[ju];
    t.power = problem_.p == -1.0 ? 1.0 / (s + kEps) : std::pow(s + kEps, problem_.p);
  }
  return t;
}

PolluxObjectives PolluxGenetic::evaluate(const PolluxState& x) {
  PolluxObjectives o;
  if (jobs_ == 0) return o;
  ++evaluations_;
  const auto V = static_cast<std::size_t>(vnodes_);
  double sum = 0.0, raw = 0.0;
  used_.assign(V, 0);
  char* used = used_.data();  // a plain pointer: see repair()
  const int* base_all = problem_.base.data();
  for (std::size_t j = 0; j < static_cast<std::size_t>(jobs_); ++j) {
    int r = 0, n = 0;
    bool changed = false;
    const int* row = x.data() + j * V;
    const int* base = base_all + j * V;
    for (std::size_t v = 0; v < V; ++v) {
      const int g = row[v];
      if (g > 0) {
        r += g;
        ++n;
        used[v] = 1;
      }
      changed |= g != base[v];
    }
    const Terms t = term(static_cast<int>(j), n, r, changed);
    sum += t.power;
    raw += t.raw;
  }
  const double mean = sum / static_cast<double>(jobs_);
  o.neg_fitness = -(problem_.p == -1.0 ? 1.0 / mean : std::pow(mean, 1.0 / problem_.p));
  // Pollux's cluster utility: Σ_j (s_j / r_j) · (r_j / GPUs of the vnodes in use) = Σ_j s_j / GPUs in use.
  double active = 0.0;
  for (std::size_t v = 0; v < V; ++v)
    if (used_[v]) active += problem_.vnode_gpus[v];
  o.neg_utility = active > 0 ? -raw / active : 0.0;
  return o;
}

// Departure (documented in pollux_genetic.hpp): a rigid job's partial row grows to its count — its own vnodes
// are filled first, then the vnodes after its first one, cyclically — before the repair proper. Mutation
// alone (one random entry at a time) almost never writes the exact count of a job spanning several vnodes,
// so without this rigid jobs of 8-16 GPUs never started (a rigid Philly run went on towards the simulator's
// 90-day horizon). Capacity is still enforced by the steps below, which empty the row if it does not fit.
void PolluxGenetic::complete_rigid(int* row, int count, const char* allowed) const {
  const auto V = static_cast<std::size_t>(vnodes_);
  int cum = 0;
  std::size_t first = V;
  for (std::size_t v = 0; v < V; ++v) {
    cum += row[v];
    if (row[v] > 0 && first == V) first = v;
  }
  if (cum <= 0 || cum >= count) return;
  for (std::size_t v = 0; v < V && cum < count; ++v)
    if (row[v] > 0) {
      const int add = std::min(problem_.vnode_gpus[v] - row[v], count - cum);
      if (add > 0) {
        row[v] += add;
        cum += add;
      }
    }
  for (std::size_t k = 1; k < V && cum < count; ++k) {
    const std::size_t v = (first + k) % V;
    if (row[v] > 0 || (allowed != nullptr && !allowed[v])) continue;
    const int add = std::min(problem_.vnode_gpus[v], count - cum);
    row[v] = add;
    cum += add;
  }
}

void PolluxGenetic::repair(PolluxState& x) {
  const auto V = static_cast<std::size_t>(vnodes_);
  const auto J = static_cast<std::size_t>(jobs_);
  if (x.size() != J * V) throw InvalidArgument("pollux genetic search: state of the wrong size");
  bool any_distributed = false;
  for (std::size_t j = 0; j < J; ++j) {
    int* row = x.data() + j * V;
    for (std::size_t v = 0; v < V; ++v) row[v] = std::max(row[v], 0);
    if (!problem_.allowed.empty())
      for (std::size_t v = 0; v < V; ++v)
        if (!problem_.allowed[j * V + v]) row[v] = 0;
    if (problem_.rigid[j])
      complete_rigid(row, max_r_[j], problem_.allowed.empty() ? nullptr : problem_.allowed.data() + j * V);
    int n = 0, total = 0;
    for (std::size_t v = 0; v < V; ++v) {
      n += row[v] > 0;
      total += row[v];
    }
    distributed_[j] = n >= 2;
    any_distributed |= n >= 2;
    row_n_[j] = n;  // kept up to date by step (1): step (2) needs no new pass over the rows
    row_total_[j] = total;
  }
  // (1) On each vnode only the first distributed job in row order keeps its GPUs (Pollux: cumulative count of
  // distributed jobs along the jobs axis > 1 -> zero).
  if (any_distributed) {
    used_.assign(V, 0);
    // Plain pointers: through the vectors, every store to `used` (a char, which may alias anything) made the
    // compiler reload the vectors' data pointers in this, the search's hottest loop.
    char* used = used_.data();
    const char* distributed = distributed_.data();
    int* n_of = row_n_.data();
    int* total_of = row_total_.data();
    for (std::size_t j = 0; j < J; ++j) {
      if (!distributed[j]) continue;
      int* row = x.data() + j * V;
      int n = n_of[j], total = total_of[j];
      // Branch-free (whether a vnode is taken is a coin flip to the branch predictor): a positive entry on a
      // vnode already used is zeroed and leaves the row's counts, else it marks the vnode used.
      for (std::size_t v = 0; v < V; ++v) {
        const int g = row[v];
        const int pos = g > 0 ? 1 : 0;
        const int clash = pos & (used[v] != 0 ? 1 : 0);
        total -= clash * g;
        n -= clash;
        row[v] = clash != 0 ? 0 : g;
        used[v] = static_cast<char>(used[v] | pos);
      }
      n_of[j] = n;
      total_of[j] = total;
    }
  }
  // (2) At most max_replicas GPUs and max_job_vnodes vnodes per job; the vnodes are visited in a random order
  // (Pollux shuffles the nodes of every row, caps the running sums, and unshuffles).
  const int max_nodes = problem_.max_job_vnodes;
  for (std::size_t j = 0; j < J; ++j) {
    int* row = x.data() + j * V;
    if (row_total_[j] <= max_r_[j] && row_n_[j] <= max_nodes) continue;
    perm_.clear();
    for (std::size_t v = 0; v < V; ++v)
      if (row[v] > 0) perm_.push_back(static_cast<int>(v));
    for (std::size_t k = perm_.size(); k > 1; --k) std::swap(perm_[k - 1], perm_[uniform(k)]);
    int cum = 0, kept = 0;
    for (int v : perm_) {
      int& g = row[static_cast<std::size_t>(v)];
      g = kept < max_nodes ? std::min(g, max_r_[j] - cum) : 0;
      cum += g;
      kept += g > 0;
    }
  }
  // (3) Vnode capacity: jobs in row order keep their GPUs until the vnode is full.
  col_.assign(V, 0);
  for (std::size_t j = 0; j < J; ++j) {
    int* row = x.data() + j * V;
    for (std::size_t v = 0; v < V; ++v) {
      const int keep = std::min(row[v], problem_.vnode_gpus[v] - col_[v]);
      row[v] = keep;
      col_[v] += keep;
    }
  }
  // (4) A rigid row below its count cannot run at all (also when step (2) cut it).
  for (std::size_t j = 0; j < J; ++j) {
    if (!problem_.rigid[j]) continue;
    int* row = x.data() + j * V;
    int cum = 0;
    for (std::size_t v = 0; v < V; ++v) cum += row[v];
    if (cum != 0 && cum < max_r_[j]) std::fill_n(row, V, 0);
  }
}

std::pair<PolluxState, PolluxState> PolluxGenetic::crossover(const PolluxState& a, const PolluxState& b) {
  PolluxState c0, c1;
  crossover_into(a, b, c0, c1);
  return {std::move(c0), std::move(c1)};
}

void PolluxGenetic::crossover_into(const PolluxState& a, const PolluxState& b, PolluxState& c0, PolluxState& c1) {
  const auto V = static_cast<std::size_t>(vnodes_);
  const auto k = static_cast<std::size_t>(uniform(static_cast<std::uint64_t>(std::max(jobs_, 1))));
  const auto cut = static_cast<std::ptrdiff_t>(std::min(k * V, a.size()));
  // assign() into recycled buffers: no allocation once they have the state's size.
  c0.assign(a.begin(), a.begin() + cut);
  c0.insert(c0.end(), b.begin() + cut, b.end());
  c1.assign(b.begin(), b.begin() + cut);
  c1.insert(c1.end(), a.begin() + cut, a.end());
}

void PolluxGenetic::mutate(PolluxState& x) {
  const auto V = static_cast<std::size_t>(vnodes_);
  const auto J = static_cast<std::size_t>(jobs_);
  if (V == 0 || J == 0 || x.size() != J * V) return;
  // (1) Reset a row to the current allocation (probability 0.1); (2) zero out a row's entries with
  // probability 0.1 each, in 10 % of the rows.
  for (std::size_t j = 0; j < J; ++j) {
    int* row = x.data() + j * V;
    if (real() < 0.1) std::copy_n(problem_.base.data() + j * V, V, row);
    if (real() < 0.1)
      for (std::size_t v = 0; v < V; ++v)
        if (real() < 0.1) row[v] = 0;
  }
  // (3) Grow entries towards vnodes with free GPUs (free GPUs measured once, after (1) and (2)).
  free_.assign(problem_.vnode_gpus.begin(), problem_.vnode_gpus.end());
  for (std::size_t j = 0; j < J; ++j)
    for (std::size_t v = 0; v < V; ++v) free_[v] -= x[j * V + v];
  grow_.clear();  // vnodes with a free GPU
  for (std::size_t v = 0; v < V; ++v)
    if (free_[v] >= 1) grow_.push_back(static_cast<int>(v));
  if (grow_.empty()) return;
  const double p1 = 1.0 / static_cast<double>(grow_.size());
  // log1p(−1/k) per number k of vnodes with a free GPU, computed once per search (the same values).
  if (log_q1_.size() <= grow_.size()) {
    const std::size_t from = log_q1_.size();
    log_q1_.resize(grow_.size() + 1);
    for (std::size_t k = from; k < log_q1_.size(); ++k)
      log_q1_[k] = k > 1 ? std::log1p(-(1.0 / static_cast<double>(k))) : 0.0;
  }
  const double log_q1 = log_q1_[grow_.size()];
  auto grow = [&](int& g, int v) {
    const int cap = problem_.vnode_gpus[static_cast<std::size_t>(v)];
    if (g < cap) g += static_cast<int>(uniform(static_cast<std::uint64_t>(cap - g + 1)));
  };
  for (std::size_t j = 0; j < J; ++j) {
    int* row = x.data() + j * V;
    // Entries where the job already is grow with probability p1 + p2 − p1·p2 (p2 = 1 / #such vnodes), the
    // others with p1, decided on the row as it was before any of them grows (numpy's vectorised mask). The
    // others' Bernoulli trials are drawn as geometric gaps: the same distribution, far fewer random numbers.
    perm_.clear();  // vnodes with a free GPU where the job is
    nz_.clear();    // the other vnodes with a free GPU
    for (int v : grow_) (row[v] > 0 ? perm_ : nz_).push_back(v);
    const double p2 = perm_.empty() ? 0.0 : 1.0 / static_cast<double>(perm_.size());
    for (int v : perm_)
      if (real() < p1 + p2 - p1 * p2) grow(row[v], v);
    if (nz_.empty()) continue;
    if (!(p1 < 1.0)) {  // a single vnode with a free GPU
      for (int v : nz_) grow(row[v], v);
      continue;
    }
    for (std::size_t i = 0; i < nz_.size(); ++i) {
      const double gap = std::floor(std::log(1.0 - real()) / log_q1);
      if (!(gap < static_cast<double>(nz_.size() - i))) break;
      i += static_cast<std::size_t>(gap);
      grow(row[nz_[i]], nz_[i]);
    }
  }
}

std::size_t PolluxGenetic::tournament(const std::vector<Individual>& pop, std::size_t a, std::size_t b) {
  if (dominates(pop[a].f, pop[b].f)) return a;
  if (dominates(pop[b].f, pop[a].f)) return b;
  if (pop[a].crowding > pop[b].crowding) return a;
  if (pop[b].crowding > pop[a].crowding) return b;
  return uniform(2) == 0 ? a : b;
}

void PolluxGenetic::survive(std::vector<Individual>& pop, std::size_t n) {
  std::vector<std::pair<double, double>> f(pop.size());
  for (std::size_t i = 0; i < pop.size(); ++i) f[i] = {pop[i].f.neg_fitness, pop[i].f.neg_utility};
  const auto rank = pollux_nondominated_ranks(f);
  int fronts = 0;
  for (int r : rank) fronts = std::max(fronts, r + 1);
  std::vector<std::vector<std::size_t>> by_front(static_cast<std::size_t>(fronts));
  for (std::size_t i = 0; i < pop.size(); ++i) by_front[static_cast<std::size_t>(rank[i])].push_back(i);
  std::vector<Individual> out;
  out.reserve(std::min(n, pop.size()));
  for (std::size_t k = 0; k < by_front.size() && out.size() < n; ++k) {
    const auto& front = by_front[k];
    std::vector<std::pair<double, double>> ff(front.size());
    for (std::size_t i = 0; i < front.size(); ++i) ff[i] = f[front[i]];
    const auto cd = pollux_crowding_distance(ff);
    std::vector<std::size_t> order(front.size());
    std::iota(order.begin(), order.end(), 0);
    if (out.size() + front.size() > n) {
      // pymoo's randomized argsort: shuffle, then sort by crowding distance (descending).
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[uniform(i)]);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cd[a] > cd[b]; });
      order.resize(n - out.size());
    }
    for (std::size_t i : order) {
      Individual ind = std::move(pop[front[i]]);
      ind.rank = static_cast<int>(k);
      ind.crowding = cd[i];
      out.push_back(std::move(ind));
    }
  }
  for (auto& ind : pop)  // the individuals not selected: their buffers serve the next offspring
    if (ind.x.capacity() > 0) recycle(std::move(ind.x));
  pop = std::move(out);
}

PolluxState PolluxGenetic::take_state() {
  if (spare_.empty()) {
    PolluxState x;
    x.reserve(static_cast<std::size_t>(jobs_) * static_cast<std::size_t>(vnodes_));
    return x;
  }
  PolluxState x = std::move(spare_.back());
  spare_.pop_back();
  return x;
}

void PolluxGenetic::recycle(PolluxState&& x) {
  x.clear();
  spare_.push_back(std::move(x));
}

void PolluxGenetic::HashSet::clear(std::size_t expected) {
  std::size_t n = 16;
  while (n < 2 * expected + 2) n *= 2;
  if (slots_.size() != n)
    slots_.assign(n, 0);
  else
    std::fill(slots_.begin(), slots_.end(), std::uint64_t{0});
  has_zero_ = false;
  used_ = 0;
}

std::size_t PolluxGenetic::HashSet::find(std::uint64_t h) const noexcept {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = static_cast<std::size_t>((h * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
  while (slots_[i] != 0 && slots_[i] != h) i = (i + 1) & mask;
  return i;
}

bool PolluxGenetic::HashSet::contains(std::uint64_t h) const noexcept {
  if (h == 0) return has_zero_;
  return slots_[find(h)] == h;
}

void PolluxGenetic::HashSet::insert(std::uint64_t h) {
  if (h == 0) {
    has_zero_ = true;
    return;
  }
  if (2 * (used_ + 1) > slots_.size()) {  // keep the load under 1/2 (the caller sizes it; this is a guard)
    std::vector<std::uint64_t> old(2 * slots_.size(), 0);
    old.swap(slots_);
    used_ = 0;
    for (std::uint64_t k : old)
      if (k != 0) slots_[find(k)] = k, ++used_;
  }
  const std::size_t i = find(h);
  if (slots_[i] != h) {
    slots_[i] = h;
    ++used_;
  }
}

PolluxGaResult PolluxGenetic::run(const std::vector<PolluxState>& seeds) {
  const auto cells = static_cast<std::size_t>(jobs_) * static_cast<std::size_t>(vnodes_);
  const auto npop = static_cast<std::size_t>(options_.population);
  evaluations_ = 0;
  std::vector<Individual> pop;
  auto is_dup = [](const std::vector<Individual>& in, const Individual& c) {
    for (const auto& o : in)
      if (o.hash == c.hash && o.x == c.x) return true;
    return false;
  };
  auto add_seed = [&](const PolluxState& s) {
    Individual ind;
    ind.x = s;
    repair(ind.x);
    ind.hash = hash_state(ind.x);
    if (is_dup(pop, ind)) return;
    ind.f = evaluate(ind.x);
    pop.push_back(std::move(ind));
  };
  for (const auto& s : seeds)
    if (s.size() == cells) add_seed(s);
  if (pop.empty()) add_seed(problem_.base);
  survive(pop, pop.size());

  PolluxGaResult res;
  std::vector<std::size_t> perm;
  std::vector<Individual> off, batch;
  off.reserve(npop);
  for (int gen = 1; gen < options_.generations; ++gen) {
    off.clear();
    // Hashes of the population and the offspring so far: the full comparison runs only on a hash match.
    seen_.clear(pop.size() + npop);
    for (const auto& ind : pop) seen_.insert(ind.hash);
    for (int round = 0; round < options_.max_mating_rounds && off.size() < npop; ++round) {
      const std::size_t remaining = npop - off.size();
      const std::size_t matings = (remaining + 1) / 2;
      // Binary tournaments over concatenated random permutations of the population (pymoo TournamentSelection).
      const std::size_t draws = matings * 4;
      perm.clear();
      while (perm.size() < draws) {
        const std::size_t start = perm.size();
        for (std::size_t i = 0; i < pop.size(); ++i) perm.push_back(i);
        for (std::size_t i = pop.size(); i > 1; --i) std::swap(perm[start + i - 1], perm[start + uniform(i)]);
      }
      for (std::size_t i = matings * 2; i < batch.size(); ++i)
        if (batch[i].x.capacity() > 0) recycle(std::move(batch[i].x));
      batch.resize(matings * 2);
      for (std::size_t m = 0; m < matings; ++m) {
        const std::size_t a = tournament(pop, perm[4 * m], perm[4 * m + 1]);
        const std::size_t b = tournament(pop, perm[4 * m + 2], perm[4 * m + 3]);
        PolluxState& c0 = batch[2 * m].x;
        PolluxState& c1 = batch[2 * m + 1].x;
        if (c0.capacity() == 0) c0 = take_state();
        if (c1.capacity() == 0) c1 = take_state();
        if (real() < options_.crossover_probability) {
          crossover_into(pop[a].x, pop[b].x, c0, c1);
        } else {
          c0.assign(pop[a].x.begin(), pop[a].x.end());
          c1.assign(pop[b].x.begin(), pop[b].x.end());
        }
      }
      for (auto& c : batch) mutate(c.x);
      for (auto& c : batch) {
        repair(c.x);
        c.hash = hash_state(c.x);
      }
      for (auto& c : batch) {
        if (off.size() >= npop) break;
        if (seen_.contains(c.hash) && (is_dup(pop, c) || is_dup(off, c))) continue;
        seen_.insert(c.hash);
        c.f = evaluate(c.x);
        c.rank = 0;  // a slot reused across mating rounds: fields as a new individual's
        c.crowding = 0.0;
        off.push_back(std::move(c));
        c.x = PolluxState{};  // moved from: takes a pooled buffer in the next mating round
      }
    }
    for (auto& c : batch)  // children not kept: their buffers go back to the pool
      if (c.x.capacity() > 0) recycle(std::move(c.x));
    batch.clear();
    if (off.empty()) break;  // pymoo terminates when mating cannot produce a new individual
    for (auto& o : off) pop.push_back(std::move(o));
    survive(pop, npop);
    ++res.generations_run;
  }

  // pymoo's optimum set: the non-dominated front of the final population (survival ranked it).
  std::size_t best = pop.size();
  for (std::size_t i = 0; i < pop.size(); ++i) {
    if (pop[i].rank != 0) continue;
    const auto& a = pop[i].f;
    if (best == pop.size()) {
      best = i;
      continue;
    }
    const auto& b = pop[best].f;
    if (a.neg_fitness < b.neg_fitness || (a.neg_fitness == b.neg_fitness && a.neg_utility < b.neg_utility)) best = i;
  }
  if (best == pop.size()) best = 0;
  res.best = pop[best].x;
  res.best_objectives = pop[best].f;
  res.population.reserve(pop.size());
  for (auto& ind : pop) {
    if (ind.rank == 0) res.front.push_back(ind.x);
    res.population.push_back(std::move(ind.x));
  }
  res.evaluations = evaluations_;
  return res;
}

}  // namespace sia::sim::detail
