#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/placement.hpp>

#include "placement/capacity_model.hpp"
#include "placement/min_cost_flow.hpp"
#include "placement/place_held.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <utility>

namespace sia {

namespace {

constexpr int kFree = -1;

/// One job, resolved and validated. 48 bytes: the per-type passes read the states of 20,000 jobs
/// several times, and at twice that (the request, the current allocation and `own`'s storage kept
/// here too) they no longer stayed in the cache between passes. The request is targets[j], and a
/// copy of the current placement lies in the Placer's own storage (`Owned`).
struct JobState {
  /// req->config, kept here: the placement reads it per job and type, and the requests lie apart
  /// in memory (a cache miss per read at 20,000 jobs), the job states side by side.
  std::optional<ConfigurationSpec> config;
  int used = 0;       // GPUs used (<= config->gpus)
  int cur_type = -1;  // type of the current placement, -1 = none/unknown
  /// GPUs of the current allocation (set with cur_type): keepable reads it here, not through the
  /// allocation (another cache miss per job, the allocations lying apart).
  int cur_gpus = 0;
  /// The current placement with GPU ids resolved, sorted by node (ids ascending): the given one
  /// itself when it already is (as a round's own output, reported back, always is), else a copy.
  [[nodiscard]] std::span<const NodeShare> cur() const { return {cur_data, static_cast<std::size_t>(cur_size)}; }
  void set_cur(std::span<const NodeShare> c) {
    cur_data = c.data();
    cur_size = static_cast<int>(c.size());
  }
  int own = -1;  // index of cur's storage in Owned when the given placement had to be sorted or resolved
  const NodeShare* cur_data = nullptr;  // (cur as a pointer and an int: a span's size_t made the state 56 bytes)
  int cur_size = 0;
  bool candidate = false;  // unchanged configuration with a valid placement: may be kept
  [[nodiscard]] const ConfigurationSpec& cfg() const { return *config; }
  [[nodiscard]] bool distributed() const { return config && config->nodes >= 2; }
  /// Whole virtual nodes of `s` GPUs a distributed job takes: n, or n − 1 when a rigid job uses
  /// fewer GPUs than its configuration (the rest, its tail, goes on one node as a single item).
  [[nodiscard]] int whole_shares() const {
    if (!distributed()) return 0;
    return used >= cfg().gpus ? cfg().nodes : cfg().nodes - 1;
  }
  /// GPUs of the job's single-node item (a single-node job, or a distributed job's tail; 0 = none).
  [[nodiscard]] int item_used(int s) const { return distributed() ? used - whole_shares() * s : used; }
  /// The power-of-two slot that item is placed in (its configuration's size for a single-node job).
  [[nodiscard]] int item_slot(int s) const {
    const int u = item_used(s);
    if (u <= 0) return 0;
    return distributed() ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(u))) : cfg().gpus;
  }
};
static_assert(sizeof(JobState) <= 48, "the job states' passes assume 48 bytes (see JobState)");

/// The copies of current placements that had to be sorted or resolved (JobState::own; rare: a
/// placement `place` returned is already in order). A JobState's `cur` views its copy's shares,
/// which stay where they are when this vector grows (the copies are moved, not their shares).
using Owned = std::vector<std::vector<NodeShare>>;

struct TypeInfo {
  int size = 0;  // GPUs per node (R)
  int s = 0;     // largest virtual node: largest power of two <= R
  int nodes = 0;
  std::vector<char> up;
};

std::string type_name(const ClusterSpec& c, int t) { return c.types[static_cast<std::size_t>(t)].name(); }

[[noreturn]] void fail(const std::string& msg) { throw InvalidArgument(msg); }

std::vector<TypeInfo> describe(const ClusterSpec& cluster) {
  std::vector<TypeInfo> info(cluster.types.size());
  for (int t = 0; t < cluster.num_types(); ++t) {
    const auto& spec = cluster.types[static_cast<std::size_t>(t)];
    TypeInfo& ti = info[static_cast<std::size_t>(t)];
    if (spec.num_nodes() < 0 || spec.gpus_per_node() < 0)
      fail("GPU type " + spec.name() + ": negative node count or node size");
    ti.size = spec.gpus_per_node();
    ti.nodes = spec.gpus_per_node() > 0 ? spec.num_nodes() : 0;
    ti.s = largest_virtual_node(ti.size);
    ti.up.assign(static_cast<std::size_t>(ti.nodes), 1);
    if (static_cast<std::size_t>(t) < cluster.down.size())
      for (int d : cluster.down[static_cast<std::size_t>(t)]) {
        if (d < 0 || d >= ti.nodes)
          fail("down node " + std::to_string(d) + " of GPU type " + spec.name() + " does not exist (" +
               std::to_string(ti.nodes) + " nodes)");
        ti.up[static_cast<std::size_t>(d)] = 0;
      }
  }
  return info;
}

/// Checks the new configuration and the used GPU count of job j.
void validate_target(const ClusterSpec& cluster, const std::vector<TypeInfo>& info, const detail::PlacementTarget& r,
                     const detail::JobName& name, std::size_t j, JobState& js) {
  js.config = r.config;
  if (!r.config) {
    js.used = 0;
    return;
  }
  const ConfigurationSpec& c = *r.config;
  if (c.type < 0 || c.type >= cluster.num_types())
    fail("job " + name(j) + ": configuration refers to GPU type index " + std::to_string(c.type) +
         ", which does not exist");
  const TypeInfo& ti = info[static_cast<std::size_t>(c.type)];
  // Written only for an error: a round places thousands of jobs, and a stream per job cost more
  // than the rest of this check.
  auto shape_text = [&] {
    std::ostringstream shape_os;  // (ostringstream: g++ 12 -O2 warns falsely on "(" + std::string)
    shape_os << '(' << c.nodes << ", " << c.gpus << ", " << type_name(cluster, c.type) << ')';
    return shape_os.str();
  };
  // The shapes every round asks for, accepted at once: (1, g) with g a power of two <= s, and
  // (n, n·s) on 2..nodes nodes — exactly what configuration_of_count accepts for such a count.
  // Anything else is asked of it (the rule's one home); its optional, written to the stack a byte
  // at a time and read back whole, stalled each call (~15 ns a job, 20,000 jobs a round).
  const bool common =
      ti.s >= 1 && ti.nodes >= 1 && c.gpus >= 1 &&
      (c.nodes == 1 ? c.gpus <= ti.s && (c.gpus & (c.gpus - 1)) == 0
                    : c.nodes >= 2 && c.nodes <= ti.nodes && static_cast<long long>(c.nodes) * ti.s == c.gpus);
  if (!common && [&] {
        const auto shape = configuration_of_count(c.type, ti.s, ti.nodes, c.gpus, CountMatch::exact);
        return !shape || shape->nodes != c.nodes;
      }())
    fail("job " + name(j) + ": configuration " + shape_text() +
         " is not in the configuration set (single-node: powers of two up to " + std::to_string(ti.s) +
         "; multi-node: n x " + std::to_string(ti.s) + " GPUs on 2.." + std::to_string(ti.nodes) + " nodes)");
  js.used = r.gpus == 0 ? c.gpus : r.gpus;
  if (js.used < 1 || js.used > c.gpus)
    fail("job " + name(j) + ": uses " + std::to_string(r.gpus) + " GPUs, outside 1.." + std::to_string(c.gpus) +
         " of its configuration " + shape_text());
  if (c.nodes >= 2 && js.used <= (c.nodes - 1) * ti.s)
    fail("job " + name(j) + ": uses " + std::to_string(js.used) +
         " GPUs, which fit on fewer nodes than its configuration " + shape_text());
}

/// Checks a current placement's shape (everything that does not involve other jobs). `current`:
/// what the job holds now (held[j]: the request's, or the caller's own: detail::place_held).
void validate_current_shape(const ClusterSpec& cluster, const std::vector<TypeInfo>& info, const detail::JobName& name,
                            std::size_t j, const CurrentAllocation* current, JobState& js, Owned& owned) {
  if (current == nullptr || current->placement.empty()) return;
  const CurrentAllocation& cur = *current;
  if (cur.type < 0 || cur.type >= cluster.num_types())
    fail("job " + name(j) + ": current allocation refers to GPU type index " + std::to_string(cur.type) +
         ", which does not exist");
  const TypeInfo& ti = info[static_cast<std::size_t>(cur.type)];
  // Node names only for a message: a round checks the placements of thousands of jobs.
  auto node_text = [&](const NodeShare& sh) { return cluster.node_name(cur.type, sh.node); };
  long long total = 0;
  for (std::size_t k = 0; k < cur.placement.size(); ++k) {
    const NodeShare& sh = cur.placement[k];
    if (sh.node < 0 || sh.node >= ti.nodes)
      fail("job " + name(j) + ": current placement on node " + node_text(sh) + ", which does not exist (GPU type " +
           type_name(cluster, cur.type) + " has " + std::to_string(ti.nodes) + " nodes)");
    for (std::size_t e = 0; e < k; ++e)  // a job holds a few nodes: earlier shares, not a set
      if (cur.placement[e].node == sh.node)
        fail("job " + name(j) + ": node " + node_text(sh) + " appears twice in its current placement");
    if (sh.gpus < 1 || sh.gpus > ti.size)
      fail("job " + name(j) + ": current placement holds " + std::to_string(sh.gpus) + " GPUs on node " +
           node_text(sh) + ", which has " + std::to_string(ti.size));
    if (!sh.gpu_ids.empty()) {
      if (static_cast<int>(sh.gpu_ids.size()) != sh.gpus)
        fail("job " + name(j) + ": node " + node_text(sh) + " lists " + std::to_string(sh.gpu_ids.size()) +
             " GPU ids but " + std::to_string(sh.gpus) + " GPUs");
      // Ids seen so far, a bit each (ids are checked to lie in [0, ti.size) first): one word for
      // nodes of up to 64 GPUs, more words only for larger ones.
      std::uint64_t small = 0;
      std::vector<std::uint64_t> large(ti.size > 64 ? (static_cast<std::size_t>(ti.size) + 63) / 64 : 0, 0);
      for (int id : sh.gpu_ids) {
        if (id < 0 || id >= ti.size)
          fail("job " + name(j) + ": GPU " + std::to_string(id) + " of node " + node_text(sh) + " does not exist (" +
               std::to_string(ti.size) + " GPUs)");
        std::uint64_t& w = large.empty() ? small : large[static_cast<std::size_t>(id) / 64];
        const std::uint64_t b = std::uint64_t{1} << (static_cast<unsigned>(id) % 64);
        if ((w & b) != 0)
          fail("job " + name(j) + ": GPU " + std::to_string(id) + " of node " + node_text(sh) + " listed twice");
        w |= b;
      }
    }
    total += sh.gpus;
  }
  if (total != cur.gpus)
    fail("job " + name(j) + ": current placement holds " + std::to_string(total) + " GPUs (nodes " +
         cluster.node_name(cur.type, cur.placement.front().node) + ", ...) but its current allocation has " +
         std::to_string(cur.gpus));
  if (cur.nodes > 0 && cur.nodes != static_cast<int>(cur.placement.size()))
    fail("job " + name(j) + ": current placement spans " + std::to_string(cur.placement.size()) + " nodes (first " +
         cluster.node_name(cur.type, cur.placement.front().node) + ") but its current allocation has " +
         std::to_string(cur.nodes));
  js.cur_type = cur.type;
  js.cur_gpus = cur.gpus;
  // A copy only when the placement is not already in the result's form: shares by node, every
  // share's ids named and ascending (a copy per job was 2 allocations per job and round).
  const auto by_node = [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; };
  bool as_is = std::is_sorted(cur.placement.begin(), cur.placement.end(), by_node);
  for (std::size_t k = 0; as_is && k < cur.placement.size(); ++k) {
    const auto& ids = cur.placement[k].gpu_ids;
    as_is = !ids.empty() && std::is_sorted(ids.begin(), ids.end());
  }
  if (as_is) {
    js.set_cur(cur.placement);
    return;
  }
  js.own = static_cast<int>(owned.size());
  std::vector<NodeShare>& own = owned.emplace_back(cur.placement);
  std::sort(own.begin(), own.end(), by_node);
  js.set_cur(own);
}

// The passes over the jobs' held placements wait on memory: each job's state, its shares and
// their GPU ids lie apart (one allocation each, 20,000 jobs). Fetched ahead in three steps, each
// reading what the step before fetched: the state 16 jobs ahead, its shares 8 ahead, their first
// share's ids 4 ahead (a hint only: nothing is written, no result changes). `order(k)` is the
// k-th job of the pass, `n` their number. Always inlined: g++ 12 takes a function that only
// prefetches for one without effects and drops its calls.
template <class Order>
[[gnu::always_inline]] inline void prefetch_ahead(const std::vector<JobState>& jobs, const Order& order, std::size_t n,
                                                  std::size_t k) {
  if (k + 16 < n) {
    const JobState& js = jobs[static_cast<std::size_t>(order(k + 16))];
    __builtin_prefetch(&js);
    __builtin_prefetch(reinterpret_cast<const char*>(&js) + sizeof(JobState) - 1);  // (it may span two lines)
  }
  if (k + 8 < n) __builtin_prefetch(jobs[static_cast<std::size_t>(order(k + 8))].cur().data());
  if (k + 4 < n)
    if (const JobState& js = jobs[static_cast<std::size_t>(order(k + 4))]; !js.cur().empty())
      __builtin_prefetch(js.cur().front().gpu_ids.data());
}

/// GPU ownership of every node of every type (job index or kFree): per type, node by node, one
/// array (GPU id g of node n at n * size + g; a vector per node cost an allocation per node).
using Grid = std::vector<std::vector<int>>;

/// Resolves unnamed GPU ids and rejects two jobs on one GPU. Explicit ids first (they are facts),
/// then unnamed shares take the lowest GPUs nobody named, in request order.
void resolve_current(const ClusterSpec& cluster, const std::vector<TypeInfo>& info, const detail::JobName& name,
                     std::vector<JobState>& jobs, Owned& owned) {
  Grid owner(info.size());
  for (std::size_t t = 0; t < info.size(); ++t)
    owner[t].assign(static_cast<std::size_t>(info[t].nodes) * static_cast<std::size_t>(info[t].size), kFree);
  auto gpus_of = [&](int t, int node) {
    const auto size = static_cast<std::size_t>(info[static_cast<std::size_t>(t)].size);
    return std::span<int>(owner[static_cast<std::size_t>(t)].data() + static_cast<std::size_t>(node) * size, size);
  };
  const auto in_order = [](std::size_t k) { return k; };
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    prefetch_ahead(jobs, in_order, jobs.size(), j);  // (each job's shares and ids lie apart)
    JobState& js = jobs[j];
    for (const NodeShare& sh : js.cur())
      for (int id : sh.gpu_ids) {
        int& o = gpus_of(js.cur_type, sh.node)[static_cast<std::size_t>(id)];
        if (o != kFree)
          fail("jobs " + name(static_cast<std::size_t>(o)) + " and " + name(j) + " both hold GPU " +
               std::to_string(id) + " of node " + cluster.node_name(js.cur_type, sh.node));
        o = static_cast<int>(j);
      }
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    JobState& js = jobs[j];
    if (js.own < 0) continue;  // (ids named and ascending already)
    for (NodeShare& sh : owned[static_cast<std::size_t>(js.own)]) {
      if (!sh.gpu_ids.empty()) {
        std::sort(sh.gpu_ids.begin(), sh.gpu_ids.end());
        continue;
      }
      const std::span<int> node = gpus_of(js.cur_type, sh.node);
      for (std::size_t id = 0; id < node.size() && static_cast<int>(sh.gpu_ids.size()) < sh.gpus; ++id)
        if (node[id] == kFree) {
          node[id] = static_cast<int>(j);
          sh.gpu_ids.push_back(static_cast<int>(id));
        }
      if (static_cast<int>(sh.gpu_ids.size()) < sh.gpus)
        fail("job " + name(j) + ": node " + cluster.node_name(js.cur_type, sh.node) +
             " is over-subscribed: the current placements on it hold more than its " +
             std::to_string(info[static_cast<std::size_t>(js.cur_type)].size) + " GPUs");
    }
  }
}

/// May the job keep exactly its GPUs? Same type and GPU count, and a placement that follows the
/// rules for its configuration on nodes that are up.
bool keepable(const std::vector<TypeInfo>& info, const JobState& js) {
  if (!js.config || js.cur().empty() || js.cur_type != js.config->type) return false;
  if (js.cur_gpus != js.used) return false;
  const TypeInfo& ti = info[static_cast<std::size_t>(js.cur_type)];
  for (const NodeShare& sh : js.cur())
    if (!ti.up[static_cast<std::size_t>(sh.node)]) return false;
  const ConfigurationSpec& c = *js.config;
  if (c.nodes == 1) return js.cur().size() == 1;
  // A rigid job using fewer GPUs than its configuration may hold its remainder on a node of its
  // whole shares (nodes larger than s): n − 1 nodes then.
  if (js.used < c.gpus && static_cast<int>(js.cur().size()) == c.nodes - 1) return true;
  if (static_cast<int>(js.cur().size()) != c.nodes) return false;
  for (const NodeShare& sh : js.cur())
    if (sh.gpus > ti.s) return false;
  return true;
}

// Up nodes by free GPUs, visited in (free, node) order — the order of a set of (free, node)
// pairs — as one bit per node per free count: inserting and erasing a node cost a bit each, not a
// tree node (place_single re-indexes every node of the type, thousands at 100,000 GPUs, and moves
// one node per job it places). A second level, one bit per word that has a node, lets a visit
// skip the empty words: at 100,000 GPUs most nodes are full, and a best-fit search for each
// placed job otherwise read every word of every free count below the first node with room.
class FreeIndex {
 public:
  FreeIndex(int max_free, int nodes)
      : words_((static_cast<std::size_t>(nodes) + 63) / 64),
        summary_words_((words_ + 63) / 64),
        bits_((static_cast<std::size_t>(max_free) + 1) * words_, 0),
        summary_((static_cast<std::size_t>(max_free) + 1) * summary_words_, 0) {}
  void insert(int free, int node) {
    word(free, node) |= bit(node);
    summary(free, node) |= bit(node / 64);
  }
  void erase(int free, int node) {
    std::uint64_t& w = word(free, node);
    w &= ~bit(node);
    if (w == 0) summary(free, node) &= ~bit(node / 64);
  }
  /// f(node) for every node with `free` or more free GPUs, in (free, node) order, while f returns
  /// true. (f may not change the index.)
  template <class F>
  void visit_from(int free, F&& f) const {
    const std::size_t counts = words_ == 0 ? 0 : bits_.size() / words_;
    for (std::size_t c = static_cast<std::size_t>(std::max(free, 0)); c < counts; ++c)
      for (std::size_t sw = 0; sw < summary_words_; ++sw)
        for (std::uint64_t s = summary_[c * summary_words_ + sw]; s != 0; s &= s - 1) {
          const std::size_t w = sw * 64 + static_cast<std::size_t>(std::countr_zero(s));
          for (std::uint64_t b = bits_[c * words_ + w]; b != 0; b &= b - 1)
            if (!f(static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(b))))) return;
        }
  }

 private:
  static std::uint64_t bit(int node) { return std::uint64_t{1} << (static_cast<unsigned>(node) % 64); }
  std::uint64_t& word(int free, int node) {
    return bits_[static_cast<std::size_t>(free) * words_ + static_cast<std::size_t>(node) / 64];
  }
  std::uint64_t& summary(int free, int node) {
    return summary_[static_cast<std::size_t>(free) * summary_words_ + static_cast<std::size_t>(node) / 4096];
  }
  std::size_t words_;
  std::size_t summary_words_;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint64_t> summary_;  ///< per free count, bit w: word w of bits_ is not 0
};

/// The construction of one type's placement once the kept set is known.
class TypePlacer {
 public:
  TypePlacer(const TypeInfo& ti, std::vector<JobState>& jobs, Owned& owned, std::vector<std::vector<NodeShare>>& out)
      : ti_(ti),
        jobs_(jobs),
        owned_(owned),
        out_(out),
        owner_(static_cast<std::size_t>(ti.nodes) * static_cast<std::size_t>(ti.size), kFree),
        free_(static_cast<std::size_t>(ti.nodes), 0),
        dist_(static_cast<std::size_t>(ti.nodes), 0) {
    for (int i = 0; i < ti.nodes; ++i)
      free_[static_cast<std::size_t>(i)] = ti.up[static_cast<std::size_t>(i)] ? ti.size : 0;
  }

  void keep(int j) {
    JobState& js = jobs_[static_cast<std::size_t>(j)];
    for (const NodeShare& sh : js.cur()) {
      for (int id : sh.gpu_ids) take(sh.node, id, j);
      if (js.distributed() && sh.gpus >= ti_.s) ++dist_[static_cast<std::size_t>(sh.node)];
    }
    // Its current placement is not read again (kept jobs are no movers): moved when it is the
    // job's own copy.
    if (js.own >= 0)
      out_[static_cast<std::size_t>(j)] = std::move(owned_[static_cast<std::size_t>(js.own)]);
    else
      out_[static_cast<std::size_t>(j)].assign(js.cur().begin(), js.cur().end());
  }

  /// Distributed movers: s GPUs on each of n eligible nodes. Overlap with previous nodes is
  /// maximised by a min-cost flow; the remaining shares take the eligible nodes where the
  /// single-node movers held the fewest GPUs (so those can go back), then the fullest ones.
  void place_distributed(const std::vector<int>& movers, const std::vector<int>& single_movers) {
    if (movers.empty()) return;
    const int s = ti_.s;
    std::vector<int> eligible;
    for (int i = 0; i < ti_.nodes; ++i)
      if (ti_.up[static_cast<std::size_t>(i)] && dist_[static_cast<std::size_t>(i)] == 0 &&
          free_[static_cast<std::size_t>(i)] >= s)
        eligible.push_back(i);
    std::vector<char> is_eligible(static_cast<std::size_t>(ti_.nodes), 0);
    for (int i : eligible) is_eligible[static_cast<std::size_t>(i)] = 1;

    std::vector<std::vector<int>> assigned(movers.size());
    std::vector<char> used_node(static_cast<std::size_t>(ti_.nodes), 0);
    // Flow network: source -> job (n_j) -> previous eligible node (1, cost s - overlap) -> sink (1),
    // plus a bypass source -> sink of cost s: min cost = maximum total overlap.
    std::vector<detail::FlowArc> arcs;
    std::map<int, int> node_vertex;
    std::vector<std::pair<std::size_t, int>> arc_meaning;  // (mover, node) of job->node arcs
    const int source = 0, sink = 1;
    int next_vertex = 2 + static_cast<int>(movers.size());
    long total = 0;
    for (std::size_t m = 0; m < movers.size(); ++m) {
      const JobState& js = jobs_[static_cast<std::size_t>(movers[m])];
      bool any = false;
      for (const NodeShare& sh : prev_shares(js)) {
        if (!is_eligible[static_cast<std::size_t>(sh.node)]) continue;
        auto [it, inserted] = node_vertex.emplace(sh.node, next_vertex);
        if (inserted) ++next_vertex;
        arcs.push_back({2 + static_cast<int>(m), it->second, 1, s - std::min(sh.gpus, s)});
        arc_meaning.emplace_back(m, sh.node);
        any = true;
      }
      if (any) {
        arcs.push_back({source, 2 + static_cast<int>(m), js.whole_shares(), 0});
        arc_meaning.emplace_back(m, -1);
        total += js.whole_shares();
      }
    }
    if (total > 0) {
      for (const auto& [node, v] : node_vertex) {
        arcs.push_back({v, sink, 1, 0});
        arc_meaning.emplace_back(0, -1);
      }
      arcs.push_back({source, sink, total, s});
      arc_meaning.emplace_back(0, -1);
      const std::vector<long> flow = detail::min_cost_max_flow(next_vertex, arcs, source, sink);
      for (std::size_t a = 0; a < arcs.size(); ++a)
        if (arc_meaning[a].second >= 0 && flow[a] > 0) {
          assigned[arc_meaning[a].first].push_back(arc_meaning[a].second);
          used_node[static_cast<std::size_t>(arc_meaning[a].second)] = 1;
        }
    }
    // Remaining shares: nodes the single-node movers did not use, then the fullest eligible
    // nodes (keeps empty nodes whole), then the lowest index.
    std::vector<int> claimed(static_cast<std::size_t>(ti_.nodes), 0);
    for (int j : single_movers)
      for (const NodeShare& sh : prev_shares(jobs_[static_cast<std::size_t>(j)]))
        claimed[static_cast<std::size_t>(sh.node)] += sh.gpus;
    std::vector<int> rest;
    for (int i : eligible)
      if (!used_node[static_cast<std::size_t>(i)]) rest.push_back(i);
    std::stable_sort(rest.begin(), rest.end(), [&](int a, int b) {
      const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
      return std::pair(claimed[ua], free_[ua]) < std::pair(claimed[ub], free_[ub]);
    });
    std::size_t next = 0;
    for (std::size_t m = 0; m < movers.size(); ++m) {
      const JobState& js = jobs_[static_cast<std::size_t>(movers[m])];
      while (static_cast<int>(assigned[m].size()) < js.whole_shares()) {
        if (next >= rest.size()) throw Error("internal error: placement ran out of eligible nodes");
        assigned[m].push_back(rest[next++]);
      }
      std::sort(assigned[m].begin(), assigned[m].end());
      // Whole shares only: a rigid job's tail is placed with the single-node items of its slot.
      std::vector<NodeShare> shares;
      shares.reserve(assigned[m].size() + (js.item_slot(s) > 0 ? 1 : 0));  // (and its tail, placed later)
      for (int node : assigned[m]) {
        shares.push_back(fill(node, movers[m], s, s, js));
        ++dist_[static_cast<std::size_t>(node)];
      }
      out_[static_cast<std::size_t>(movers[m])] = std::move(shares);
    }
  }

  /// Single-node movers, largest footprint first (any node with room keeps the rest placeable).
  /// Within a footprint class, a min-cost flow puts as many jobs as possible back on their
  /// previous nodes; the others go best-fit (node with the fewest free GPUs that has room).
  void place_single(const std::vector<int>& movers) {
    FreeIndex by_free(ti_.size, ti_.nodes);  // up nodes in (free, node) order
    for (int i = 0; i < ti_.nodes; ++i)
      if (ti_.up[static_cast<std::size_t>(i)]) by_free.insert(free_[static_cast<std::size_t>(i)], i);
    const int s = ti_.s;
    auto put = [&](int j, int node, int g) {
      by_free.erase(free_[static_cast<std::size_t>(node)], node);
      const JobState& js = jobs_[static_cast<std::size_t>(j)];
      auto& out = out_[static_cast<std::size_t>(j)];
      if (!js.distributed()) {  // its one share (no other to join or sort among)
        out.clear();
        out.push_back(fill(node, j, js.item_used(s), g, js));
        by_free.insert(free_[static_cast<std::size_t>(node)], node);
        return;
      }
      NodeShare sh = fill(node, j, js.item_used(s), g, js);  // a distributed job's tail joins its whole shares
      const auto same = std::find_if(out.begin(), out.end(), [&](const NodeShare& x) { return x.node == node; });
      if (same != out.end()) {  // the tail on a node of its own whole shares (nodes larger than s)
        same->gpus += sh.gpus;
        same->gpu_ids.insert(same->gpu_ids.end(), sh.gpu_ids.begin(), sh.gpu_ids.end());
        std::sort(same->gpu_ids.begin(), same->gpu_ids.end());
      } else {
        out.push_back(std::move(sh));
      }
      std::sort(out.begin(), out.end(), [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
      by_free.insert(free_[static_cast<std::size_t>(node)], node);
    };
    // A tail goes on a node the job does not hold yet, where there is one (else it joins a share:
    // possible only on nodes larger than s, and then the job spans fewer nodes).
    // (Only a distributed job holds shares before its item is placed: a single-node mover's
    // placement is still empty, and not reading it saves a cache miss per job.)
    auto holds = [&](int j, int node) {
      if (!jobs_[static_cast<std::size_t>(j)].distributed()) return false;
      for (const NodeShare& sh : out_[static_cast<std::size_t>(j)])
        if (sh.node == node) return true;
      return false;
    };
    // The movers by slot (a power of two up to s; any other slot is never placed here), each in
    // the movers' order: one pass over them, not one per slot.
    std::vector<std::vector<int>> by_slot(
        static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(std::max(s, 0)))));
    // (And whether any of them held GPUs of the type: when none did, as when no placement is
    // reported, no class has a flow to build, and its jobs' states are not read for one.)
    bool any_prev = false;
    for (int j : movers) {
      const JobState& js = jobs_[static_cast<std::size_t>(j)];
      const int slot = js.item_slot(s);
      if (slot >= 1 && slot <= s && (slot & (slot - 1)) == 0)  // (a power of two; no popcount call)
        by_slot[static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(slot)))].push_back(j);
      any_prev = any_prev || !prev_shares(js).empty();
    }
    for (int g = s; g >= 1; g /= 2) {
      const std::vector<int>& cls = by_slot[static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(g)))];
      if (cls.empty()) continue;
      std::vector<char> done(cls.size(), 0);
      // Flow: source -> job (1) -> previous node with room (1, cost g - overlap)
      //       -> sink (free / g), bypass source -> sink (cost g).
      std::vector<detail::FlowArc> arcs;
      std::vector<std::pair<std::size_t, int>> meaning;
      std::map<int, int> node_vertex;
      const int source = 0, sink = 1;
      int next_vertex = 2 + static_cast<int>(cls.size());
      long total = 0;
      for (std::size_t k = 0; any_prev && k < cls.size(); ++k) {
        bool any = false;
        for (const NodeShare& sh : prev_shares(jobs_[static_cast<std::size_t>(cls[k])])) {
          if (!ti_.up[static_cast<std::size_t>(sh.node)] || free_[static_cast<std::size_t>(sh.node)] < g) continue;
          if (holds(cls[k], sh.node)) continue;
          auto [it, inserted] = node_vertex.emplace(sh.node, next_vertex);
          if (inserted) ++next_vertex;
          arcs.push_back({2 + static_cast<int>(k), it->second, 1, g - std::min(sh.gpus, g)});
          meaning.emplace_back(k, sh.node);
          any = true;
        }
        if (any) {
          arcs.push_back({source, 2 + static_cast<int>(k), 1, 0});
          meaning.emplace_back(0, -1);
          ++total;
        }
      }
      if (total > 0) {
        for (const auto& [node, v] : node_vertex) {
          arcs.push_back({v, sink, free_[static_cast<std::size_t>(node)] / g, 0});
          meaning.emplace_back(0, -1);
        }
        arcs.push_back({source, sink, total, g});
        meaning.emplace_back(0, -1);
        const std::vector<long> flow = detail::min_cost_max_flow(next_vertex, arcs, source, sink);
        for (std::size_t a = 0; a < arcs.size(); ++a)
          if (meaning[a].second >= 0 && flow[a] > 0) {
            put(cls[meaning[a].first], meaning[a].second, g);
            done[meaning[a].first] = 1;
          }
      }
      for (std::size_t k = 0; k < cls.size(); ++k) {
        // The job states and placements of the jobs placed next lie apart (every type's jobs are
        // spread over the input): fetched ahead.
        if (k + 8 < cls.size()) {
          __builtin_prefetch(&jobs_[static_cast<std::size_t>(cls[k + 8])]);
          __builtin_prefetch(&out_[static_cast<std::size_t>(cls[k + 8])], 1);
        }
        if (done[k]) continue;
        // Best fit: the first node in (free, node) order with at least g free GPUs that the job
        // does not hold yet, else the first with g free.
        int first = -1, chosen = -1;
        by_free.visit_from(g, [&](int node) {
          if (first < 0) first = node;
          if (holds(cls[k], node)) return true;
          chosen = node;
          return false;
        });
        if (first < 0) throw Error("internal error: placement found no node with room");
        put(cls[k], chosen >= 0 ? chosen : first, g);
      }
    }
  }

  /// Reserved GPUs go into the smallest holes: fewest free GPUs first, then lowest node index.
  std::vector<NodeShare> place_reserved(long long r) {
    std::vector<NodeShare> res;
    std::vector<int> order;
    for (int i = 0; i < ti_.nodes; ++i)
      if (ti_.up[static_cast<std::size_t>(i)] && free_[static_cast<std::size_t>(i)] > 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return free_[static_cast<std::size_t>(a)] < free_[static_cast<std::size_t>(b)];
    });
    for (int node : order) {
      if (r <= 0) break;
      NodeShare sh{node, 0, {}};
      const std::span<int> o = gpus_of(node);
      for (std::size_t id = 0; id < o.size() && r > 0; ++id)
        if (o[id] == kFree) {
          sh.gpu_ids.push_back(static_cast<int>(id));
          o[id] = -2;
          --r;
        }
      sh.gpus = static_cast<int>(sh.gpu_ids.size());
      free_[static_cast<std::size_t>(node)] -= sh.gpus;
      res.push_back(std::move(sh));
    }
    if (r > 0) throw Error("internal error: no room for reserved GPUs");
    std::sort(res.begin(), res.end(), [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
    return res;
  }

 private:
  /// The job's previous shares on this type (empty when it was elsewhere or nowhere).
  std::span<const NodeShare> prev_shares(const JobState& js) const {
    if (js.cur().empty() || js.cur_type != js.cfg().type) return {};
    return js.cur();
  }

  void take(int node, int id, int j) {
    gpus_of(node)[static_cast<std::size_t>(id)] = j;
    --free_[static_cast<std::size_t>(node)];
  }

  /// Takes `count` GPUs on `node` for job j whose item has `block` GPUs: its previous GPUs on
  /// the node first, else a free aligned block (the buddy layout of the node's virtual nodes),
  /// else the lowest free ids.
  NodeShare fill(int node, int j, int count, int block, const JobState& js) {
    const std::span<int> o = gpus_of(node);
    NodeShare sh{node, count, {}};
    sh.gpu_ids.reserve(static_cast<std::size_t>(std::max(count, 0)));  // one allocation, not one per doubling
    if (js.cur_type == js.cfg().type)
      for (const NodeShare& prev : js.cur())
        if (prev.node == node)
          for (int id : prev.gpu_ids)
            if (static_cast<int>(sh.gpu_ids.size()) < count && o[static_cast<std::size_t>(id)] == kFree) {
              take(node, id, j);
              sh.gpu_ids.push_back(id);
            }
    if (sh.gpu_ids.empty()) {
      for (int off = 0; off + block <= ti_.size; off += block) {
        bool all_free = true;
        for (int id = off; id < off + block; ++id)
          if (o[static_cast<std::size_t>(id)] != kFree) all_free = false;
        if (!all_free) continue;
        for (int id = off; id < off + count; ++id) {
          take(node, id, j);
          sh.gpu_ids.push_back(id);
        }
        break;
      }
    }
    for (int id = 0; id < ti_.size && static_cast<int>(sh.gpu_ids.size()) < count; ++id)
      if (o[static_cast<std::size_t>(id)] == kFree) {
        take(node, id, j);
        sh.gpu_ids.push_back(id);
      }
    if (static_cast<int>(sh.gpu_ids.size()) < count) throw Error("internal error: node has too few free GPUs");
    // (Ascending already when taken from one block or the lowest ids, as for every job placed
    // afresh: only previous GPUs taken first need the sort.)
    if (!std::is_sorted(sh.gpu_ids.begin(), sh.gpu_ids.end())) std::sort(sh.gpu_ids.begin(), sh.gpu_ids.end());
    return sh;
  }

  const TypeInfo& ti_;
  std::vector<JobState>& jobs_;
  Owned& owned_;
  std::vector<std::vector<NodeShare>>& out_;
  /// The owner of every GPU of the type (job index, kFree, or -2: reserved), node by node.
  std::span<int> gpus_of(int node) {
    const auto size = static_cast<std::size_t>(ti_.size);
    return {owner_.data() + static_cast<std::size_t>(node) * size, size};
  }

  std::vector<int> owner_;
  std::vector<int> free_;
  std::vector<int> dist_;
};

// `held`: where the job's holdings go (with_held); m.held views them once `held` is complete.
detail::ModelJob model_job(const TypeInfo& ti, const JobState& js, bool with_held,
                           std::vector<std::pair<int, int>>* held = nullptr) {
  detail::ModelJob m;
  m.distributed = js.distributed();
  m.nodes = js.whole_shares();
  m.footprint = m.distributed ? js.cfg().nodes * ti.s : js.cfg().gpus;
  m.slot = js.item_slot(ti.s);
  m.used = js.item_used(ti.s);
  if (with_held)
    for (const NodeShare& sh : js.cur()) held->emplace_back(sh.node, sh.gpus);
  return m;
}

// Job indices in ascending order. The lists are gathered in index order per part (candidates,
// then movers): usually one of the parts is empty and the list sorted already, and sorting 20,000
// sorted indices cost more than checking them.
void sort_indices(std::vector<int>& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
}

}  // namespace

namespace {

// `held` as long as `targets`.
PlacementResult place_jobs(const ClusterSpec& cluster, std::span<const detail::PlacementTarget> targets,
                           std::span<const CurrentAllocation* const> held, const detail::JobName& name,
                           const PlacementOptions& options) {
  const std::vector<TypeInfo> info = describe(cluster);
  // Made one by one in the pass that fills them (a vector of n default states first wrote
  // 20,000 states' memory once more, out of the cache by the time the pass came).
  std::vector<JobState> jobs;
  jobs.reserve(targets.size());
  Owned owned;
  bool any_held = false;
  // Each type's candidates and movers, in index order, gathered as the jobs are read.
  std::vector<std::vector<int>> cand_of(info.size()), movers_of(info.size());
  auto current_of = [&](std::size_t j) { return held[j]; };
  for (std::size_t j = 0; j < targets.size(); ++j) {
    // The held placements, fetched ahead as in prefetch_ahead: the allocation 12 jobs ahead, its
    // shares 6 ahead, their first share's ids 3 ahead.
    if (j + 12 < targets.size()) __builtin_prefetch(current_of(j + 12));
    if (j + 6 < targets.size())
      if (const CurrentAllocation* a = current_of(j + 6)) __builtin_prefetch(a->placement.data());
    if (j + 3 < targets.size())
      if (const CurrentAllocation* a = current_of(j + 3); a && !a->placement.empty())
        __builtin_prefetch(a->placement.front().gpu_ids.data());
    JobState& js = jobs.emplace_back();
    validate_target(cluster, info, targets[j], name, j, js);
    validate_current_shape(cluster, info, name, j, current_of(j), js, owned);
    // Here, while its shares are in the cache (keepable reads no GPU id, which is all that
    // resolve_current may add; nor does it throw, so the errors stay those of the passes' order).
    js.candidate = keepable(info, js);
    any_held = any_held || !js.cur().empty();
    if (js.config)  // (validate_target: a type of the cluster)
      (js.candidate ? cand_of : movers_of)[static_cast<std::size_t>(js.config->type)].push_back(static_cast<int>(j));
  }
  // (Nothing to resolve or to find in conflict when no job holds GPUs, as when no placement is
  // reported back: the owners of every GPU of the cluster are then not written.)
  if (any_held) resolve_current(cluster, info, name, jobs, owned);

  PlacementResult result;
  result.placements.resize(targets.size());
  result.status.assign(targets.size(), PlacementStatus::unallocated);
  result.reserved.resize(info.size());

  for (int t = 0; t < cluster.num_types(); ++t) {
    const TypeInfo& ti = info[static_cast<std::size_t>(t)];
    const std::vector<int>& cand = cand_of[static_cast<std::size_t>(t)];
    const std::vector<int>& movers = movers_of[static_cast<std::size_t>(t)];
    std::vector<int> node_size(static_cast<std::size_t>(ti.nodes), -1);
    long long up_gpus = 0;
    for (int i = 0; i < ti.nodes; ++i)
      if (ti.up[static_cast<std::size_t>(i)]) {
        node_size[static_cast<std::size_t>(i)] = ti.size;
        up_gpus += ti.size;
      }
    // More reserved GPUs than the type has up: reserve them all.
    const long long reserved = std::clamp<long long>(cluster.reserved_gpus(t), 0, up_gpus);
    if (cand.empty() && movers.empty() && reserved == 0) continue;

    std::vector<detail::ModelJob> mc, mm;
    mc.reserve(cand.size());
    mm.reserve(movers.size());
    // The candidates' holdings, one after the other; each ModelJob views its part.
    std::vector<std::pair<int, int>> held;
    const auto cand_at = [&](std::size_t k) { return cand[k]; };
    std::vector<std::size_t> held_begin;
    held_begin.reserve(cand.size() + 1);
    for (std::size_t c = 0; c < cand.size(); ++c) {
      prefetch_ahead(jobs, cand_at, cand.size(), c);
      held_begin.push_back(held.size());
      mc.push_back(model_job(ti, jobs[static_cast<std::size_t>(cand[c])], true, &held));
    }
    held_begin.push_back(held.size());
    for (std::size_t c = 0; c < cand.size(); ++c)
      mc[c].held = std::span<const std::pair<int, int>>(held.data() + held_begin[c], held_begin[c + 1] - held_begin[c]);
    for (int j : movers) mm.push_back(model_job(ti, jobs[static_cast<std::size_t>(j)], false));
    const detail::EvictionPlan plan =
        detail::plan_evictions(ti.s, node_size, reserved, mc, mm, options.exact_eviction_budget);

    std::vector<char> evicted(cand.size(), 0), cand_dropped(cand.size(), 0), mover_dropped(movers.size(), 0);
    for (int c : plan.evicted) evicted[static_cast<std::size_t>(c)] = 1;
    for (int c : plan.dropped_candidates) cand_dropped[static_cast<std::size_t>(c)] = 1;
    for (int m : plan.dropped_movers) mover_dropped[static_cast<std::size_t>(m)] = 1;

    TypePlacer placer(ti, jobs, owned, result.placements);
    std::vector<int> dist_movers, single_movers;
    auto add_mover = [&](int j) {
      (jobs[static_cast<std::size_t>(j)].distributed() ? dist_movers : single_movers).push_back(j);
    };
    for (std::size_t c = 0; c < cand.size(); ++c) {
      prefetch_ahead(jobs, cand_at, cand.size(), c);
      const auto j = static_cast<std::size_t>(cand[c]);
      if (cand_dropped[c]) {
        result.status[j] = PlacementStatus::dropped;
      } else if (evicted[c]) {
        result.status[j] = PlacementStatus::evicted;
        add_mover(cand[c]);
      } else {
        result.status[j] = PlacementStatus::kept;
        placer.keep(cand[c]);
      }
    }
    for (std::size_t m = 0; m < movers.size(); ++m) {
      const auto j = static_cast<std::size_t>(movers[m]);
      if (mover_dropped[m]) {
        result.status[j] = PlacementStatus::dropped;
      } else {
        result.status[j] = PlacementStatus::placed;
        add_mover(movers[m]);
      }
    }
    sort_indices(dist_movers);
    sort_indices(single_movers);
    placer.place_distributed(dist_movers, single_movers);
    // Single-node items: single-node jobs and the tails of distributed rigid jobs.
    std::vector<int> item_movers = single_movers;
    for (int j : dist_movers)
      if (jobs[static_cast<std::size_t>(j)].item_slot(ti.s) > 0) item_movers.push_back(j);
    sort_indices(item_movers);
    placer.place_single(item_movers);
    result.reserved[static_cast<std::size_t>(t)] = placer.place_reserved(reserved);

    // An evicted job that landed on exactly its old GPUs did not move after all.
    for (std::size_t c = 0; c < cand.size(); ++c) {
      const auto j = static_cast<std::size_t>(cand[c]);
      if (result.status[j] == PlacementStatus::evicted && std::ranges::equal(result.placements[j], jobs[j].cur()))
        result.status[j] = PlacementStatus::kept;
    }
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (result.status[j] == PlacementStatus::evicted) result.evicted.push_back(j);
    if (result.status[j] == PlacementStatus::dropped) result.dropped.push_back(j);
  }
  return result;
}

}  // namespace

PlacementResult place(const ClusterSpec& cluster, std::span<const PlacementRequest> requests,
                      const PlacementOptions& options) {
  std::vector<detail::PlacementTarget> targets;
  std::vector<const CurrentAllocation*> held;
  targets.reserve(requests.size());
  held.reserve(requests.size());
  for (const PlacementRequest& r : requests) {
    targets.push_back({r.config, r.gpus});
    held.push_back(r.current ? &*r.current : nullptr);
  }
  return place_jobs(
      cluster, targets, held, [&](std::size_t j) { return requests[j].job; }, options);
}

namespace detail {

PlacementResult place_held(const ClusterSpec& cluster, std::span<const PlacementTarget> targets,
                           std::span<const CurrentAllocation* const> held, const JobName& name,
                           const PlacementOptions& options) {
  if (held.size() != targets.size())
    throw InvalidArgument("place_held: " + std::to_string(held.size()) + " current allocations for " +
                          std::to_string(targets.size()) + " jobs");
  return place_jobs(cluster, targets, held, name, options);
}

}  // namespace detail

}  // namespace sia
