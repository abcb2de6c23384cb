// The COIN-OR CBC backend, through the C++ API (OsiClpSolverInterface + CbcModel::branchAndBound).
//
// Why this API and these settings (see ../shared/docs/dependencies.md §2.5 and §3):
// * Thread safety: CBC's C interface and CbcMain0/CbcMain1 share global parser state and are not
//   thread-safe in 2.10.8; a CbcModel built per solve, with setNumberThreads(0) (no CBC-internal
//   threads), is. Every solve here builds its own OsiClpSolverInterface, CbcModel, cut generators and
//   heuristics on the stack; nothing is shared between instances or threads.
// * No CglPreProcess, anywhere: Debian's CBC 2.10.8 with preprocessing hits CLP assertions
//   (SIGABRT, uncatchable) on some real Sia round ILPs (../shared/data/cbc-regressions, about one
//   round in 3,000). CbcModel::branchAndBound itself does not preprocess (CglPreProcess lives in
//   CbcMain1), but several primal heuristics run CbcHeuristic::smallBranchAndBound on sub-MIPs,
//   and that DOES run CglPreProcess::preProcessNonDefault (seen with gdb: RINS and the feasibility
//   pump called it ~200 times over the conformance tests). So only heuristics outside that call
//   graph are used (see below). The regression tests solve all three files in-process, and
//   `gdb -batch -ex 'break CglPreProcess::preProcessNonDefault' -ex run --args sia_tests -tc='milp*'`
//   never stops.
// * The bare API is weak without heuristics: rounding, two diving heuristics and greedy cover are
//   added, plus cut generators. CglClique is added with its stdout reports switched off (it prints
//   directly to stdout otherwise, bypassing the message handler).
// * All output is silenced on both message handlers (CbcModel copies the solver and with it the
//   handler settings at copy time), and on the CLP models behind them.
// * Time limit: wall clock, enforced by the ClpStop/CbcStop event handlers below (each Clp iteration — the
//   first LP relaxation's, solved before CbcModel for the duals, included — and CBC's nodes, heuristics and
//   cut passes). What lies between two checks is not limited: loading the model into Clp and a
//   factorisation (a 10 s limit ends 100,000-GPU rounds at 9.5-10.2 s). CBC's own seconds limit is
//   deliberately not set (next point).
// * No SIGSEGV in CbcNode::chooseDynamicBranch (CBC 2.10.8, Cbc/src/CbcNode.cpp of releases/2.10.8 read with
//   a rebuilt CbcNode.o interposed under gdb): when a node LP looks integral, CBC re-solves it; if integers
//   then turn fractional while a row of integers alone is violated by rounding (the "free non-integer"
//   fallback, ~line 2370), it builds the branch itself, sets iBestGot to an OBJECT index and leaves its
//   candidate list (whichObject, new int[], never written on this path) empty. Two later steps read that list
//   anyway: (a) when CBC has given up strong branching (skipAll = -1: only if numberBeforeTrust == 10, after
//   100 nodes) it sets numberToDo = 1 and uses whichObject[0]; (b) when CBC's seconds limit has passed (or
//   its passes ran out) it uses whichObject[bestChoice]. An uninitialised int used as an object index: a
//   SIGSEGV when the garbage is out of range, a branch on a random variable when it is not. The fallback is
//   frequent on objectives spanning ~1e9 (the Shockwave planning MILP with weights to 7.7e7 crashed at node
//   300; 3 of 60 generated ones took it, none at ranges 1e3/1e6), and the objective's power-of-two scaling
//   cannot help (CBC sees the same coefficients up to 2^k). So numberBeforeTrust is 11 (a) and the time
//   limit is left to the event handlers (b); the remaining trigger, passes running out, needs strong
//   branching to fix variables twice at one node and the fallback on the last pass (found by fuzzing in CI on
//   2026-12-02). No setting avoids that one for every model, so the search runs in a child process (below).
//   Optima are unchanged (the whole test suite, conformance included); node-limited incumbents can differ
//   (another search order): see docs/reliability.md, "CBC on huge objective ranges".
// * No SIGABRT in CbcBranchDynamicDecision::betterBranch (found by fuzz_milp_ranges, 2026-11-30): once an
//   incumbent exists, CBC's default branching decision asserts that the node's LP value is not above the cutoff
//   (`distance >= 0.0`, CbcBranchDynamic.cpp), and Debian builds CBC with its asserts on. It can be above: a
//   strong-branching solve cut short by its iteration limit, or an incumbent found while the node is evaluated,
//   leaves the node's value past a cutoff that has moved (coin-or/Cbc#713; CBC after 2.10 treats the distance
//   as 0). The backend installs the same decision with that one difference (ClampedDynamicDecision, below).
// * Linear programs with LpMethod::simplex or ::interior go to Clp alone (no branch and bound):
//   dual simplex, or Clp's barrier (predictor-corrector, its own Cholesky) without crossover, which
//   returns the interior solution — what Gavel's policy needs (reference §10: a vertex solution gives
//   a very different schedule). No Clp presolve, for the leak noted below.
// * Warm start of LPs solved by simplex: an instance keeps the final basis of the last simplex LP it solved
//   whose rows and columns all have names, and the next such LP starts its dual simplex from it, rows and
//   columns matched by name (new rows basic, new columns at a bound; the count of basic variables repaired). A
//   sequence of related LPs (Themis's cutting planes, round after round) then takes a few pivots each instead
//   of a solve from the slack basis. Models without names, MILPs and interior LPs are solved as before.
#include <sia/error.hpp>
#include <sia/milp/solver.hpp>

#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

// COIN-OR headers: only in this file.
#include <CbcBranchDynamic.hpp>
#include <CbcEventHandler.hpp>
#include <CbcHeuristic.hpp>
#include <CbcHeuristicDiveCoefficient.hpp>
#include <CbcHeuristicDiveFractional.hpp>
#include <CbcHeuristicGreedy.hpp>
#include <CbcModel.hpp>
#include <CbcNode.hpp>
#include <CglClique.hpp>
#include <CglFlowCover.hpp>
#include <CglKnapsackCover.hpp>
#include <CglMixedIntegerRounding2.hpp>
#include <CglProbing.hpp>
#include <ClpEventHandler.hpp>
#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinError.hpp>
#include <CoinMessageHandler.hpp>
#include <OsiClpSolverInterface.hpp>

#include "milp/builtin_backends.hpp"
#include "milp/compressed_matrix.hpp"

namespace sia::detail {
namespace {

// Absolute tolerances on the objective as CBC sees it (divided by a power of two so that its largest
// magnitude is near 1, below): the gap at which the search may stop, and the improvement a node must
// promise to be explored. The round's own absolute tolerance is 1e-9 of the objective's scale
// (docs/decision.md), so the backend works ten times finer.
constexpr double kAbsoluteGap = 1e-10;
constexpr double kDualTolerance = 1e-10;

// Strong-branching evaluations before CBC trusts a variable's pseudo-costs: 11, not CBC's default 10, whose
// "give up strong branching" step reads an uninitialised candidate (header comment, (a)). Any other value
// never takes that step; 11 is the nearest (trust a little later than CBC's default).
constexpr int kNumberBeforeTrust = 11;

void quiet(CoinMessageHandler* h, bool verbose) {
  if (h == nullptr) return;
  h->setLogLevel(verbose ? 1 : 0);
  if (verbose) h->setFilePointer(stderr);
}

// Stops Clp (each LP solve: the root relaxation, CBC's own copies of it) and CBC (between nodes,
// heuristics and cut passes) at the deadline or when a stop is requested from another thread. CBC's
// own seconds limit (no longer set: header comment) is checked only between nodes, after the root (cuts
// included) is done, which let a 1 s limit run 48.7 s on a 20,000-job round.
// In the child process of an isolated search (below) the caller's stop token is a copy that no other thread
// can reach; the parent raises `flag`, in memory both processes share, when a stop is requested.
struct StopRule {
  std::optional<std::chrono::steady_clock::time_point> at;
  std::stop_token stop;
  const std::atomic<int>* flag = nullptr;
  [[nodiscard]] bool reached() const noexcept {
    return stop.stop_requested() || (flag != nullptr && flag->load(std::memory_order_relaxed) != 0) ||
           (at && std::chrono::steady_clock::now() > *at);
  }
};

class ClpStop final : public ClpEventHandler {
 public:
  explicit ClpStop(StopRule rule) : rule_(std::move(rule)) {}
  int event(Event e) override {
    // 0 = stop (status 5, "stopped by event"); -1 = carry on.
    if (e == endOfIteration && rule_.reached()) return 0;
    return -1;
  }
  ClpEventHandler* clone() const override { return new ClpStop(*this); }

 private:
  StopRule rule_;
};

// CBC's default dynamic branching decision, except that a node whose LP value lies above the cutoff is
// compared as if it lay at the cutoff (header comment: the assert CBC 2.10.8 makes there aborts the process).
// The value is the only thing of the node that betterBranch reads in that comparison; it is restored at once.
// Everything else (pseudo-cost updates, the search's choices for nodes below the cutoff) is CBC's own.
class ClampedDynamicDecision final : public CbcBranchDynamicDecision {
 public:
  ClampedDynamicDecision() = default;
  ClampedDynamicDecision(const ClampedDynamicDecision&) = default;
  ClampedDynamicDecision& operator=(const ClampedDynamicDecision&) = delete;
  ~ClampedDynamicDecision() override = default;
  CbcBranchDecision* clone() const override { return new ClampedDynamicDecision(*this); }
  int betterBranch(CbcBranchingObject* candidate, CbcBranchingObject* best_so_far, double change_up, int infeasible_up,
                   double change_down, int infeasible_down) override {
    CbcNode* node = candidate->model()->currentNode();
    const double cutoff = candidate->model()->getCutoff();
    if (node == nullptr || !(node->objectiveValue() > cutoff))
      return CbcBranchDynamicDecision::betterBranch(candidate, best_so_far, change_up, infeasible_up, change_down,
                                                    infeasible_down);
    const double value = node->objectiveValue();
    node->setObjectiveValue(cutoff);
    const int way = CbcBranchDynamicDecision::betterBranch(candidate, best_so_far, change_up, infeasible_up,
                                                           change_down, infeasible_down);
    node->setObjectiveValue(value);
    return way;
  }
};

// An object of the model that never asks for a branch: its infeasibility is always 0, so CBC never branches on
// it, never counts it unsatisfied and never asks it for a branch. Its only effect is that not every object of the
// model is a dynamic pseudo-cost integer, so CbcModel::allDynamic() is false and CbcNode::chooseDynamicBranch
// never takes its "free non-integer" fallback, the one path that leaves an object index where its candidate list
// is read (header comment). Used only for a second search after the first died in its child process: with it on
// every model, two identical solves of one round ILP gave two different answers under AddressSanitizer in CI
// (2026-12-02, unexplained; docs/reliability.md), so the first search is CBC's own.
class InertObject final : public CbcObject {
 public:
  explicit InertObject(CbcModel* model) : CbcObject(model) {}
  CbcObject* clone() const override { return new InertObject(*this); }
  using CbcObject::infeasibility;
  double infeasibility(const OsiBranchingInformation* /*info*/, int& preferred_way) const override {
    preferred_way = 1;
    return 0.0;
  }
  using CbcObject::feasibleRegion;
  void feasibleRegion() override {}
  using CbcObject::createCbcBranch;
  CbcBranchingObject* createCbcBranch(OsiSolverInterface* /*solver*/, const OsiBranchingInformation* /*info*/,
                                      int /*way*/) override {
    return nullptr;  // never called: never infeasible
  }
};

class CbcStop final : public CbcEventHandler {
 public:
  explicit CbcStop(StopRule rule) : rule_(std::move(rule)) {}
  CbcAction event(CbcEvent e) override {
    if (e != endSearch && rule_.reached()) return stop;
    return noAction;
  }
  CbcEventHandler* clone() const override { return new CbcStop(*this); }

 private:
  StopRule rule_;
};

/// What the result is built from once CBC's branch and bound has ended: read from the CbcModel in process, or
/// in the child process and handed back through shared memory (trivially copyable for that reason).
struct SearchOutcome {
  long long nodes = 0;
  double best_possible = std::numeric_limits<double>::quiet_NaN();  ///< CBC's, on its scaled objective
  int status = 0, secondary = 0;
  bool has_solution = false, proven_optimal = false, node_limit_reached = false, proven_infeasible = false,
       continuous_unbounded = false, stopped = false;
};

/// Runs the search and reads what the result needs; the best solution (when there is one) goes to `values`,
/// which has room for the model's `columns`.
SearchOutcome run_search(CbcModel& cbc, const StopRule& rule, int columns, double* values) {
  cbc.branchAndBound();
  SearchOutcome o;
  o.nodes = cbc.getNodeCount();
  if (const double* best = cbc.bestSolution(); best != nullptr) {
    o.has_solution = true;
    std::copy(best, best + columns, values);
  }
  o.best_possible = cbc.getBestPossibleObjValue();
  o.proven_optimal = cbc.isProvenOptimal();
  o.node_limit_reached = cbc.isNodeLimitReached();
  o.status = cbc.status();
  o.secondary = cbc.secondaryStatus();
  o.proven_infeasible = cbc.isProvenInfeasible();
  o.continuous_unbounded = cbc.isContinuousUnbounded();
  o.stopped = rule.reached();
  return o;
}

// ---- The search in a child process -------------------------------------------------------------------------
// CBC 2.10.8 has faults that no setting of its API avoids for certain (header comment: three triggers of one
// uninitialised read in chooseDynamicBranch, the last found by fuzzing after two guards were in place). A fault
// in the host's process takes the whole scheduler down with it, so the branch and bound runs in a child made by
// fork(): it shares the parent's pages copy-on-write (the model, the root LP and CbcModel are built once, in the
// parent), writes its outcome and solution to an anonymous shared mapping and leaves with _exit. A child that
// dies of a signal, throws or ends without writing its outcome gives MilpStatus::error naming why; the host
// carries on (the round then uses its fallback). Optima, search order and time limits are the in-process ones:
// the child runs the very same code on the very same state. Off with SIA_CBC_IN_PROCESS=1 (to debug CBC in
// gdb), and where fork() or the mapping fails (the search then runs in process, as before).

/// The shared mapping's head; the best solution's values follow it.
struct ChildReport {
  std::atomic<int> stop{0};  ///< raised by the parent when a stop is requested; read by the child's StopRule
  std::atomic<int> done{0};  ///< 1: `outcome` and the values are written; 2: the search threw (`message`)
  SearchOutcome outcome;
  std::array<char, 512> message{};
};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag is shared between two processes");

/// What one child does instead of searching, for the tests.
enum class ChildFault { none, segv, hang };

/// Fault injection for the tests (tests/unit/test_milp_cbc_isolation.cpp), for child `k` (0: the first) of a
/// solve: SIA_CBC_INJECT_FAULT=first makes the first child die of SIGSEGV before it searches, =all every child,
/// =hang makes the first child wait forever instead (the parent's watchdog must kill it).
ChildFault injected_fault(int k) noexcept {
  const char* v = std::getenv("SIA_CBC_INJECT_FAULT");  // NOLINT(concurrency-mt-unsafe): read, never set, here
  const std::string_view s(v == nullptr ? "" : v);
  if (s == "all" || (k == 0 && s == "first")) return ChildFault::segv;
  return k == 0 && s == "hang" ? ChildFault::hang : ChildFault::none;
}

/// Whether this library was built with a sanitizer whose runtime is not fork-safe in a multi-threaded process:
/// the sanitizers of clang 14 (Debian 12) take no allocator locks around fork(), so a child forked while
/// another thread allocates can wait forever on a lock that no thread of the child will release (the clean
/// clone CI of 2026-12-02 hung in milp.threads.*: four threads forking CBC children at once). glibc's own
/// malloc is safe there: fork() takes and releases its arena locks.
constexpr bool fork_unsafe_runtime() noexcept {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

/// The number of threads of this process (/proc/self/stat, field 20); 0 when it cannot be read.
int thread_count() noexcept {
  std::FILE* f = std::fopen("/proc/self/stat", "r");
  if (f == nullptr) return 0;
  std::array<char, 1024> buf{};
  const std::size_t k = std::fread(buf.data(), 1, buf.size() - 1, f);
  std::fclose(f);
  const std::string_view stat(buf.data(), k);
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields count from the last ')'.
  std::size_t at = stat.rfind(')');
  if (at == std::string_view::npos) return 0;
  for (int field = 2; field < 20; ++field) {  // field 2 is comm; skip to the space before field 20
    at = stat.find(' ', at + 1);
    if (at == std::string_view::npos) return 0;
  }
  return std::atoi(stat.data() + at + 1);
}

/// Whether this search goes to a child process. SIA_CBC_ISOLATION: `fork` always, `off` never (also
/// SIA_CBC_IN_PROCESS=1, to debug CBC in gdb), `auto` (the default) always but where the runtime is not
/// fork-safe (a sanitizer build) and other threads run.
bool fork_wanted() noexcept {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read, never set, here
    return std::string_view(v == nullptr ? "" : v);
  };
  const std::string_view in_process = set("SIA_CBC_IN_PROCESS"), mode = set("SIA_CBC_ISOLATION");
  if ((!in_process.empty() && in_process != "0") || mode == "off") return false;
  if (mode == "fork") return true;
  return !fork_unsafe_runtime() || thread_count() == 1;
}

/// An anonymous mapping shared with the child: the report, then one double per column.
class SharedArea {
 public:
  static std::unique_ptr<SharedArea> make(int columns) {
    const std::size_t bytes = values_offset() + sizeof(double) * static_cast<std::size_t>(columns);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return std::unique_ptr<SharedArea>(new SharedArea(p, bytes));
  }
  SharedArea(const SharedArea&) = delete;
  SharedArea& operator=(const SharedArea&) = delete;
  ~SharedArea() {
    report().~ChildReport();
    ::munmap(base_, bytes_);
  }
  ChildReport& report() noexcept { return *static_cast<ChildReport*>(base_); }
  double* values() noexcept { return reinterpret_cast<double*>(static_cast<char*>(base_) + values_offset()); }

 private:
  SharedArea(void* base, std::size_t bytes) : base_(base), bytes_(bytes) { new (base_) ChildReport(); }
  static constexpr std::size_t values_offset() noexcept {
    return (sizeof(ChildReport) + alignof(double) - 1) / alignof(double) * alignof(double);
  }
  void* base_;
  std::size_t bytes_;
};

/// Raises the shared stop flag; registered on the caller's stop token while the child searches.
struct RaiseFlag {
  std::atomic<int>* flag;
  void operator()() const noexcept { flag->store(1, std::memory_order_relaxed); }
};

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
  }
}

void copy_message(std::array<char, 512>& to, std::string_view what) {
  const std::size_t k = std::min(what.size(), to.size() - 1);
  std::memcpy(to.data(), what.data(), k);
  to[k] = '\0';
}

/// The child's whole life: search, report, leave without running the parent's exit handlers (no stdio
/// flush, no leak check of a copy of the parent's heap).
[[noreturn]] void child_search(CbcModel& cbc, const StopRule& rule, int columns, SharedArea& area, ChildFault fault) {
  // Die of the signal itself, quietly, whatever the host installed (a test framework's crash report, a
  // sanitizer's): the parent names the signal. And leave no core file for a fault the parent survives.
  struct sigaction plain {};
  plain.sa_handler = SIG_DFL;
  sigemptyset(&plain.sa_mask);
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::sigaction(sig, &plain, nullptr);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (fault == ChildFault::segv) ::raise(SIGSEGV);
  while (fault == ChildFault::hang) ::pause();
  ChildReport& report = area.report();
  try {
    report.outcome = run_search(cbc, rule, columns, area.values());
    report.done.store(1, std::memory_order_release);
  } catch (const CoinError& e) {
    copy_message(report.message,
                 "CBC threw CoinError in " + e.className() + "::" + e.methodName() + ": " + e.message());
    report.done.store(2, std::memory_order_release);
  } catch (const std::exception& e) {
    copy_message(report.message, std::string("CBC threw: ") + e.what());
    report.done.store(2, std::memory_order_release);
  } catch (...) {
    copy_message(report.message, "CBC threw an unknown exception");
    report.done.store(2, std::memory_order_release);
  }
  ::_exit(0);
}

/// Why a child gave no outcome: `message` empty when no child could be made (the caller searches in process).
struct ChildFailure {
  std::string message;
  bool died = false;  ///< of a signal (a fault of CBC's), not an exception or an exit
};

/// How the parent's wait for its child ended.
struct ChildEnd {
  pid_t waited = -1;  ///< waitpid's answer: the child's pid, or -1 (ECHILD: a host that ignores SIGCHLD)
  int wstatus = 0;
  bool killed = false;  ///< by the parent, for outliving its deadline or a stop by kChildGrace
};

/// How long a child may outlive its search's deadline, or a requested stop, before it is killed. The child
/// checks both at every simplex iteration and node, so only a child that hangs gets near it.
constexpr std::chrono::seconds kChildGrace{10};

/// Waits for the child, never forever when there is a deadline or a stop: a child that hangs (a lock held by
/// another thread of the host at fork time, a loop of CBC's) is killed kChildGrace after either, and the round
/// goes on without it. Wakes when the child ends through a pidfd (Linux 5.3), else polls every 2 ms.
ChildEnd wait_for_child(pid_t pid, std::optional<std::chrono::steady_clock::time_point> deadline,
                        const std::stop_token& stop) {
  using Clock = std::chrono::steady_clock;
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  std::optional<Clock::time_point> kill_at;
  if (deadline) kill_at = *deadline + kChildGrace;
  bool stop_seen = false;
  ChildEnd end;
  for (;;) {
    end.waited = ::waitpid(pid, &end.wstatus, WNOHANG);
    if (end.waited == pid || (end.waited < 0 && errno != EINTR)) break;  // ended (ECHILD: reaped by the kernel)
    const auto now = Clock::now();
    if (!stop_seen && stop.stop_requested()) {
      stop_seen = true;
      if (!kill_at || now + kChildGrace < *kill_at) kill_at = now + kChildGrace;
    }
    if (kill_at && now >= *kill_at) {
      ::kill(pid, SIGKILL);
      end.killed = true;
      do {
        end.waited = ::waitpid(pid, &end.wstatus, 0);
      } while (end.waited < 0 && errno == EINTR);
      break;
    }
    if (pidfd >= 0) {
      // Wake at least every 100 ms to see a stop (its callback cannot reach this wait) and the kill time.
      long long ms = 100;
      if (kill_at) ms = std::min<long long>(ms, std::chrono::ceil<std::chrono::milliseconds>(*kill_at - now).count());
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::max<long long>(ms, 1)));
    } else {
      const timespec pause{0, 2'000'000};
      ::nanosleep(&pause, nullptr);
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return end;
}

/// The search in a child (see above). Returns the outcome with the best solution in `values`, or std::nullopt
/// with the reason in `failure`.
std::optional<SearchOutcome> search_in_child(CbcModel& cbc, const StopRule& rule, SharedArea& area,
                                             std::vector<double>& values, ChildFailure& failure, ChildFault fault) {
  const std::stop_token& stop = rule.stop;
  area.report().done.store(0, std::memory_order_relaxed);
  const std::stop_callback<RaiseFlag> on_stop(stop, RaiseFlag{&area.report().stop});
  const pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) child_search(cbc, rule, static_cast<int>(values.size()), area, fault);
  const ChildEnd end = wait_for_child(pid, rule.at, stop);
  const pid_t waited = end.waited;
  const int wstatus = end.wstatus;
  if (end.killed) {
    failure.message = "CBC's branch and bound was still running in its child process " +
                      std::to_string(kChildGrace.count()) + " s after its " +
                      (stop.stop_requested() ? "stop was requested" : "time limit") + "; the child was killed";
    return std::nullopt;
  }
  // A host that ignores SIGCHLD has its children reaped by the kernel (waitpid: ECHILD); the report alone
  // then says whether the child finished.
  const int done = area.report().done.load(std::memory_order_acquire);
  const bool exited_cleanly = waited < 0 || (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  if (done == 1 && exited_cleanly) {
    const SearchOutcome outcome = area.report().outcome;
    if (outcome.has_solution) values.assign(area.values(), area.values() + values.size());
    return outcome;
  }
  if (done == 2) {
    failure.message = area.report().message.data();
  } else if (waited >= 0 && WIFSIGNALED(wstatus)) {
    failure.died = true;
    failure.message = "CBC's branch and bound died of " + signal_name(WTERMSIG(wstatus)) + " in its child process";
  } else {
    failure.message = "CBC's branch and bound ended in its child process without a result (exit status " +
                      std::to_string(waited >= 0 && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) + ")";
  }
  return std::nullopt;
}

/// The final simplex basis of an LP, by the names of its columns and rows (Clp's status codes).
struct NamedBasis {
  std::vector<std::string> col_names, row_names;
  std::vector<unsigned char> col_status, row_status;
  [[nodiscard]] bool empty() const noexcept { return col_names.empty() && row_names.empty(); }
};

constexpr unsigned char kNoStatus = 0xff;

/// The status `old` gave each of `names` (kNoStatus when absent): by position while the names agree (an LP
/// that only appended rows), else through a map built on first need.
std::vector<unsigned char> statuses_by_name(const std::vector<std::string>& names,
                                            const std::vector<std::string>& old_names,
                                            const std::vector<unsigned char>& old_status) {
  std::vector<unsigned char> out(names.size(), kNoStatus);
  std::unordered_map<std::string_view, std::size_t> where;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i < old_names.size() && names[i] == old_names[i]) {
      out[i] = old_status[i];
      continue;
    }
    if (where.empty())
      for (std::size_t k = 0; k < old_names.size(); ++k) where.emplace(old_names[k], k);
    if (auto it = where.find(names[i]); it != where.end()) out[i] = old_status[it->second];
  }
  return out;
}

/// A nonbasic status that `lower`/`upper` admit: `s` when it does.
ClpSimplex::Status nonbasic_status(ClpSimplex::Status s, double lower, double upper) {
  const bool lo = std::isfinite(lower), up = std::isfinite(upper);
  if (s == ClpSimplex::atUpperBound && up) return s;
  if (s == ClpSimplex::atLowerBound && lo) return s;
  return lo ? ClpSimplex::atLowerBound : up ? ClpSimplex::atUpperBound : ClpSimplex::isFree;
}

/// Sets Clp's starting basis from `old` by name: columns and rows found keep their status, new columns start
/// at a bound and new rows basic; then basic variables are added (rows) or removed (the last basic columns)
/// until there are as many as rows. Clp repairs a singular start itself (slacks replace dependent columns).
void start_from(ClpSimplex& clp, const MilpModel& model, const NamedBasis& old) {
  const auto cs = statuses_by_name(model.col_names, old.col_names, old.col_status);
  const auto rs = statuses_by_name(model.row_names, old.row_names, old.row_status);
  const int n = model.num_cols(), m = model.num_rows();
  std::vector<ClpSimplex::Status> col(static_cast<std::size_t>(n)), row(static_cast<std::size_t>(m));
  int basic = 0;
  for (std::size_t j = 0; j < col.size(); ++j) {
    const auto s = cs[j] == kNoStatus ? ClpSimplex::atLowerBound : static_cast<ClpSimplex::Status>(cs[j]);
    col[j] = s == ClpSimplex::basic ? s : nonbasic_status(s, model.col_lower[j], model.col_upper[j]);
    basic += col[j] == ClpSimplex::basic;
  }
  for (std::size_t i = 0; i < row.size(); ++i) {
    const auto s = rs[i] == kNoStatus ? ClpSimplex::basic : static_cast<ClpSimplex::Status>(rs[i]);
    row[i] = s == ClpSimplex::basic ? s : nonbasic_status(s, model.row_lower[i], model.row_upper[i]);
    basic += row[i] == ClpSimplex::basic;
  }
  for (std::size_t i = 0; i < row.size() && basic < m; ++i)
    if (row[i] != ClpSimplex::basic) row[i] = ClpSimplex::basic, ++basic;
  for (std::size_t j = col.size(); j-- > 0 && basic > m;)
    if (col[j] == ClpSimplex::basic)
      col[j] = nonbasic_status(ClpSimplex::atLowerBound, model.col_lower[j], model.col_upper[j]), --basic;
  clp.createStatus();
  // Nonbasic variables sit at their bound: Clp takes their values from the solution arrays.
  double* x = clp.primalColumnSolution();
  for (int j = 0; j < n; ++j) {
    const auto s = col[static_cast<std::size_t>(j)];
    clp.setColumnStatus(j, s);
    if (s == ClpSimplex::atLowerBound) x[j] = model.col_lower[static_cast<std::size_t>(j)];
    if (s == ClpSimplex::atUpperBound) x[j] = model.col_upper[static_cast<std::size_t>(j)];
    if (s == ClpSimplex::isFree) x[j] = 0.0;
  }
  double* a = clp.primalRowSolution();
  for (int i = 0; i < m; ++i) {
    const auto s = row[static_cast<std::size_t>(i)];
    clp.setRowStatus(i, s);
    if (s == ClpSimplex::atLowerBound) a[i] = model.row_lower[static_cast<std::size_t>(i)];
    if (s == ClpSimplex::atUpperBound) a[i] = model.row_upper[static_cast<std::size_t>(i)];
  }
}

class CbcSolver final : public MilpSolver {
  std::string_view do_name() const noexcept override { return "cbc"; }
  MilpResult do_solve(const MilpModel& model, const MilpParams& params) override;
  bool do_supports(LpMethod) const noexcept override { return true; }
  NamedBasis basis_;  ///< of the last named LP solved by simplex (the warm start of the next one)
};

/// A linear program solved by Clp alone, with the method `params.lp_method` (simplex or interior). A simplex
/// LP whose rows and columns all have names starts from `basis` (when not empty) and leaves its own there.
MilpResult solve_lp(OsiClpSolverInterface& lp, const MilpModel& model, const MilpParams& params, double sign,
                    int exponent, NamedBasis& basis) {
  MilpResult result;
  ClpSimplex& clp = *lp.getModelPtr();
  const bool named = params.lp_method == LpMethod::simplex &&
                     model.col_names.size() == static_cast<std::size_t>(model.num_cols()) &&
                     model.row_names.size() == static_cast<std::size_t>(model.num_rows());
  if (params.time_limit) clp.setMaximumSeconds(static_cast<double>(params.time_limit->count()) / 1000.0);
  if (named && !basis.empty()) {
    start_from(clp, model, basis);
    clp.dual(0);
    // Optimal for the scaled problem but not within the tolerances unscaled (secondary status 2; seen on
    // nearly parallel rows): carry on from that basis without scaling.
    if (clp.status() == 0 && clp.secondaryStatus() == 2) {
      clp.scaling(0);
      clp.dual(0);
    }
    // A warm start must never cost an answer: when Clp ends on anything but optimal, infeasible, unbounded or
    // a stop (numerical trouble from a poor starting basis), solve again from the slack basis.
    if (const int st = clp.status(); st != 0 && st != 1 && st != 2 && st != 5) {
      clp.allSlackBasis(true);
      ClpSolve options;
      options.setSolveType(ClpSolve::useDual);
      options.setPresolveType(ClpSolve::presolveOff);
      clp.initialSolve(options);
    }
  } else {
    ClpSolve options;
    options.setSolveType(params.lp_method == LpMethod::interior ? ClpSolve::useBarrierNoCross : ClpSolve::useDual);
    options.setPresolveType(ClpSolve::presolveOff);
    clp.initialSolve(options);
  }
  if (params.lp_method == LpMethod::simplex) {
    basis = NamedBasis{};
    if (named && clp.status() == 0) {
      basis.col_names = model.col_names;
      basis.row_names = model.row_names;
      basis.col_status.resize(model.col_names.size());
      basis.row_status.resize(model.row_names.size());
      for (int j = 0; j < model.num_cols(); ++j)
        basis.col_status[static_cast<std::size_t>(j)] = static_cast<unsigned char>(clp.getColumnStatus(j));
      for (int i = 0; i < model.num_rows(); ++i)
        basis.row_status[static_cast<std::size_t>(i)] = static_cast<unsigned char>(clp.getRowStatus(i));
    }
  }
  if (clp.status() == 5) {  // stopped by ClpStop
    result.status = MilpStatus::no_solution;
    result.message = "stopped at the time limit or on request";
    return result;
  }
  switch (clp.status()) {
    case 0:
      break;
    case 1:
      result.status = MilpStatus::infeasible;
      result.message = "the LP is infeasible";
      return result;
    case 2:
      result.status = MilpStatus::unbounded;
      result.message = "the LP is unbounded";
      return result;
    case 3:
      result.status = MilpStatus::no_solution;
      result.message = "Clp stopped on a limit";
      return result;
    default:
      result.status = MilpStatus::error;
      result.message =
          "Clp stopped with status " + std::to_string(clp.status()) + "/" + std::to_string(clp.secondaryStatus());
      return result;
  }
  const double* x = clp.primalColumnSolution();
  result = lp_optimum(model, std::vector<double>(x, x + model.num_cols()), "Clp");
  if (result.status == MilpStatus::optimal && params.lp_duals) {
    const double* price = clp.dualRowSolution();
    result.row_duals.resize(static_cast<std::size_t>(model.num_rows()));
    for (std::size_t i = 0; i < result.row_duals.size(); ++i)
      result.row_duals[i] = std::ldexp(sign * price[i], exponent);
  }
  return result;
}

MilpResult CbcSolver::do_solve(const MilpModel& model, const MilpParams& params) {
  MilpResult result;
  const int n = model.num_cols();
  const int m = model.num_rows();
  const bool maximize = model.sense == MilpSense::maximize;
  // CBC minimises; a maximisation is solved as min -c·x and mapped back.
  const double sign = maximize ? -1.0 : 1.0;

  if (n == 0) return empty_model_result(model, params);  // CBC has nothing to branch on

  // Magnitudes: Clp asserts (SIGABRT, uncatchable) on coefficients above ~1e25. The objective is
  // divided by a power of two (exact) so that its largest magnitude is near 1, and mapped back;
  // constraint coefficients and finite bounds beyond `safe` are refused.
  constexpr double safe = 1e20;
  for (const auto& e : model.entries)
    if (std::abs(e.value) > safe) {
      result.status = MilpStatus::error;
      result.message = "constraint coefficient " + std::to_string(e.value) + " at row " + std::to_string(e.row) +
                       ", column " + std::to_string(e.col) + " is beyond CBC's safe range [-1e20, 1e20]";
      return result;
    }
  for (const auto* bounds : {&model.col_lower, &model.col_upper, &model.row_lower, &model.row_upper})
    for (double b : *bounds)
      if (std::isfinite(b) && std::abs(b) > safe) {
        result.status = MilpStatus::error;
        result.message = "bound " + std::to_string(b) + " is beyond CBC's safe range [-1e20, 1e20]";
        return result;
      }
  double biggest = 0.0;
  for (double c : model.obj) biggest = std::max(biggest, std::abs(c));
  const int exponent = biggest > 1e6 ? std::ilogb(biggest) : 0;  // cost = obj * 2^-exponent

  const bool is_lp = std::none_of(model.is_integer.begin(), model.is_integer.end(), [](char v) { return v != 0; });
  const bool lp_alone = is_lp && params.lp_method != LpMethod::automatic;
  // The branch and bound's child process shares this mapping (made before the stop rule, which reads its flag).
  const std::unique_ptr<SharedArea> area = !lp_alone && fork_wanted() ? SharedArea::make(n) : nullptr;
  const StopRule rule{
      params.time_limit ? std::optional(std::chrono::steady_clock::now() + *params.time_limit) : std::nullopt,
      params.stop, area ? &area->report().stop : nullptr};
  const ClpStop clp_stop(rule);
  OsiClpSolverInterface lp;
  lp.getModelPtr()->passInEventHandler(&clp_stop);  // copied, and copied on with the model into CBC
  quiet(lp.messageHandler(), params.verbose);
  lp.getModelPtr()->setLogLevel(params.verbose ? 1 : 0);
  quiet(lp.getModelPtr()->messageHandler(), params.verbose);
  lp.setHintParam(OsiDoReducePrint, !params.verbose, OsiHintTry);
  // No ClpPresolve: CoinUtils 2.11.4's doubleton presolve leaks (LSan: presolve_dupmajor, found
  // by the random conformance test under ASan), and sia's LPs are small enough without it.
  lp.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  lp.setHintParam(OsiDoPresolveInResolve, false, OsiHintDo);
  // Clp's default dual tolerance (1e-7) treats reduced costs below it as zero: objective differences
  // that small (utilities of 1e-9 beside a coefficient near 1, or drowned by λ) were invisible and
  // CBC proved a wrong "optimal" (decision.recompute). The matrix is small integers, so reduced
  // costs carry rounding errors near 1e-15: a tighter tolerance is safe. CBC copies it to its LPs.
  lp.setDblParam(OsiDualTolerance, kDualTolerance);

  const double inf = lp.getInfinity();
  auto finite = [inf](double v) { return std::isinf(v) ? (v > 0 ? inf : -inf) : v; };
  const auto csc = compress_columns(model);
  std::vector<double> cost(static_cast<std::size_t>(n)), cl(cost.size()), cu(cost.size());
  std::vector<double> rl(static_cast<std::size_t>(m)), ru(rl.size());
  for (std::size_t j = 0; j < cost.size(); ++j) {
    cost[j] = std::ldexp(sign * model.obj[j], -exponent);
    cl[j] = finite(model.col_lower[j]);
    cu[j] = finite(model.col_upper[j]);
  }
  for (std::size_t i = 0; i < rl.size(); ++i) {
    rl[i] = finite(model.row_lower[i]);
    ru[i] = finite(model.row_upper[i]);
  }
  // CoinPackedMatrix wants per-column lengths; build it explicitly (column-ordered, no gaps).
  std::vector<int> lengths(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < lengths.size(); ++j) lengths[j] = csc.start[j + 1] - csc.start[j];
  CoinPackedMatrix matrix(true, m, n, static_cast<CoinBigIndex>(csc.value.size()), csc.value.data(),
                          csc.row_index.data(), csc.start.data(), lengths.data());
  lp.loadProblem(matrix, cl.data(), cu.data(), cost.data(), rl.data(), ru.data());
  for (int j = 0; j < n; ++j)
    if (model.is_integer[static_cast<std::size_t>(j)]) lp.setInteger(j);

  if (lp_alone) return solve_lp(lp, model, params, sign, exponent, basis_);

  // Root LP relaxation: detects infeasible/unbounded relaxations early and gives the duals.
  lp.initialSolve();
  if (rule.reached()) {
    result.status = MilpStatus::no_solution;
    result.message = "stopped at the time limit or on request in the root LP relaxation";
    return result;
  }
  const double root_bound = lp.isProvenOptimal() ? std::ldexp(sign * lp.getObjValue(), exponent) + model.obj_offset
                                                 : std::numeric_limits<double>::quiet_NaN();
  if (lp.isProvenPrimalInfeasible()) {
    result.status = MilpStatus::infeasible;
    result.message = "the LP relaxation is infeasible";
    return result;
  }
  if (lp.isProvenDualInfeasible()) {
    result.status = MilpStatus::unbounded;
    result.message = "the LP relaxation is unbounded";
    return result;
  }
  if (lp.isProvenOptimal() && params.lp_duals) {
    const double* price = lp.getRowPrice();
    result.row_duals.resize(static_cast<std::size_t>(m));
    // Clp's price is d(min objective)/d(rhs); map it to the model's own objective direction.
    for (int i = 0; i < m; ++i) result.row_duals[static_cast<std::size_t>(i)] = std::ldexp(sign * price[i], exponent);
  }

  CbcModel cbc(lp);  // copies `lp`
  const CbcStop cbc_stop(rule);
  cbc.passInEventHandler(&cbc_stop);
  quiet(cbc.messageHandler(), params.verbose);
  cbc.setLogLevel(params.verbose ? 1 : 0);
  quiet(cbc.solver()->messageHandler(), params.verbose);
  cbc.solver()->setHintParam(OsiDoReducePrint, !params.verbose, OsiHintTry);
  cbc.solver()->setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  cbc.solver()->setHintParam(OsiDoPresolveInResolve, false, OsiHintDo);
  if (auto* clp = dynamic_cast<OsiClpSolverInterface*>(cbc.solver())) {
    clp->getModelPtr()->setLogLevel(params.verbose ? 1 : 0);
    quiet(clp->getModelPtr()->messageHandler(), params.verbose);
  }
  cbc.setNumberThreads(0);  // sequential inside; parallelism is across models
  cbc.setAllowableFractionGap(params.relative_gap);
  cbc.setAllowableGap(kAbsoluteGap);
  // CBC's default cutoff increment (1e-5) makes it prune every node whose bound is within 1e-5 of
  // the incumbent, absolute, on the scaled objective (coefficients near 1): improvements smaller
  // than that were never looked for, yet the search ended "optimal" (decision.recompute: λ = 1e9
  // beside utilities near 1, objectives near 1e-9). Cut off at the absolute gap instead.
  cbc.setCutoffIncrement(kAbsoluteGap);
  // CBC's own seconds limit is NOT set: CbcStop/ClpStop enforce the time limit (the same deadline, which
  // they reach first), because past CBC's limit chooseDynamicBranch may read an uninitialised candidate
  // (header comment, (b)).
  cbc.setUseElapsedTime(true);  // wall clock, not CPU time
  cbc.setNumberBeforeTrust(kNumberBeforeTrust);
  ClampedDynamicDecision decision;
  cbc.setBranchingMethod(decision);  // CbcModel keeps a clone
  if (params.node_limit > 0)
    cbc.setMaximumNodes(static_cast<int>(std::min<long long>(params.node_limit, std::numeric_limits<int>::max())));

  // Cut generators (owned here; CbcModel stores copies). No Gomory cuts: on multi-resource
  // assignment models their root passes took most of a 0.3-1 s budget and left worse incumbents
  // (measured: sum of 4 incumbents 25618 with Gomory vs 26220 without, GLPK 26206).
  // CglProbing keeps its defaults; NOT setRowCuts(3) (as in CBC's sample2.cpp): with it CBC 2.10.8
  // returned a wrong "optimal" answer on a tiny binary model with a ranged row (found by the
  // brute-force conformance test).
  CglProbing probing;
  probing.setUsingObjective(1);
  CglKnapsackCover knapsack;
  CglClique clique;
  clique.setStarCliqueReport(false);  // prints straight to stdout otherwise
  clique.setRowCliqueReport(false);
  CglMixedIntegerRounding2 mir;
  CglFlowCover flow;
  cbc.addCutGenerator(&probing, -1, "Probing");
  cbc.addCutGenerator(&knapsack, -1, "Knapsack");
  cbc.addCutGenerator(&clique, -1, "Clique");
  cbc.addCutGenerator(&mir, -1, "MixedIntegerRounding2");
  cbc.addCutGenerator(&flow, -1, "FlowCover");

  // Primal heuristics: without them the bare API finds much worse incumbents under a time limit.
  // Only heuristics that never run CbcHeuristic::smallBranchAndBound, because that runs
  // CglPreProcess on a sub-MIP, i.e. the very path on which Debian's CBC 2.10.8 hits CLP
  // assertions (SIGABRT). Per the call graph of libCbc.so (objdump) and a gdb count over the test
  // suite, FPump, RINS, RENS, DINS, local search (solutionFix), VND, naive, crossover, proximity
  // and greedy-equality do; rounding, the diving heuristics and greedy-cover do not.
  CbcRounding rounding(cbc);
  CbcHeuristicDiveCoefficient dive_coefficient(cbc);
  CbcHeuristicDiveFractional dive_fractional(cbc);
  CbcHeuristicGreedyCover greedy_cover(cbc);
  cbc.addHeuristic(&rounding, "Rounding");
  cbc.addHeuristic(&dive_coefficient, "DiveCoefficient");
  cbc.addHeuristic(&dive_fractional, "DiveFractional");
  cbc.addHeuristic(&greedy_cover, "GreedyCover");

  std::vector<double> found(static_cast<std::size_t>(n));
  std::optional<SearchOutcome> searched;
  std::string retried;  // why the search was run a second time, for the result's message
  if (area) {
    ChildFailure failure;
    searched = search_in_child(cbc, rule, *area, found, failure, injected_fault(0));
    if (failure.died && !rule.reached()) {
      // A fault of CBC's (header comment): search again, in a new child, without the fallback that leads to the
      // known one (InertObject). The parent's CbcModel has not searched yet: the child's search was on its copy.
      retried = failure.message + "; searched again with CBC's free-non-integer fallback off";
      cbc.findIntegers(false);  // (first, so that branchAndBound keeps the integers and the object)
      InertObject inert(&cbc);
      OsiObject* extra[] = {&inert};
      cbc.addObjects(1, extra);  // (cloned)
      failure = ChildFailure{};
      searched = search_in_child(cbc, rule, *area, found, failure, injected_fault(1));
    }
    if (!failure.message.empty()) {
      result.status = MilpStatus::error;
      result.message = retried.empty() ? failure.message : retried + ": " + failure.message;
      result.message += " (this process is unharmed; docs/reliability.md)";
      result.best_bound = root_bound;
      return result;
    }
  }
  const SearchOutcome outcome = searched ? *searched : run_search(cbc, rule, n, found.data());

  result.nodes = outcome.nodes;
  // Stopped by CbcStop/ClpStop: an LP cut short may have been taken for an infeasible node, so
  // neither "infeasible" nor CBC's best possible value can be trusted; the root LP's bound can.
  const bool stopped = outcome.stopped;
  const bool limited = outcome.node_limit_reached || outcome.status == 1 || stopped;
  if (outcome.has_solution) {
    result.values = std::move(found);
    polish_values(model, result.values);
    if (!solution_is_valid(model, result.values)) {  // never hand a wrong allocation to the round
      result.values.clear();
      result.status = MilpStatus::error;
      result.message = "CBC returned a solution that violates the model";
      return result;
    }
    result.objective = model.objective_of(result.values);
    const double bound = outcome.best_possible;
    if (std::isfinite(bound) && std::abs(bound) < 1e49)
      result.best_bound = std::ldexp(sign * bound, exponent) + model.obj_offset;
    if (stopped) result.best_bound = root_bound;
    bool proven = outcome.proven_optimal && !limited;
    if (proven) {
      // A finished search proves only what its pruning allowed: nodes within the allowable gaps of
      // the incumbent were discarded, and getBestPossibleObjValue() may then report the incumbent
      // itself (a false zero gap, found by the decision.recompute test). The bound it proves: the
      // incumbent plus the allowable gap (CBC measures it on its own, scaled, objective without the
      // constant), which is the tighter valid bound whenever CBC reports a tighter one.
      const double slack =
          std::max(std::ldexp(kAbsoluteGap, exponent),
                   params.relative_gap * (1.0 + params.relative_gap) * std::abs(result.objective - model.obj_offset));
      const double guaranteed = maximize ? result.objective + slack : result.objective - slack;
      if (!std::isfinite(result.best_bound) ||
          (maximize ? result.best_bound < guaranteed : result.best_bound > guaranteed))
        result.best_bound = guaranteed;
    }
    if (!proven && std::isfinite(result.best_bound)) {
      // isProvenOptimal() is false after a limit even when the incumbent is within the gap.
      const double gap = std::abs(result.best_bound - result.objective);
      proven = gap <= params.relative_gap * std::max(std::abs(result.objective), 1e-9) + 1e-9;
    }
    if (proven) {
      result.status = MilpStatus::optimal;
    } else {
      result.status = MilpStatus::feasible;
      result.message = limited ? "time limit reached" : "stopped before proving optimality";
    }
    if (!std::isfinite(result.best_bound) && result.status == MilpStatus::optimal) result.best_bound = result.objective;
  } else if (stopped) {
    result.status = MilpStatus::no_solution;
    result.message = "stopped at the time limit or on request without an integer solution";
  } else if (outcome.proven_infeasible || (outcome.status == 0 && !limited)) {
    result.status = MilpStatus::infeasible;
    result.message = "no integer solution exists";
  } else if (outcome.continuous_unbounded) {
    result.status = MilpStatus::unbounded;
    result.message = "the LP relaxation is unbounded";
  } else if (limited) {
    result.status = MilpStatus::no_solution;
    result.message = "time limit reached without an integer solution";
  } else {
    result.status = MilpStatus::error;
    result.message = "CBC stopped with status " + std::to_string(outcome.status) + "/" +
                     std::to_string(outcome.secondary) + " and no solution";
  }
  if (!retried.empty()) result.message = result.message.empty() ? retried : retried + "; " + result.message;
  return result;
}

}  // namespace

std::unique_ptr<MilpSolver> make_cbc_solver() { return std::make_unique<CbcSolver>(); }

}  // namespace sia::detail
