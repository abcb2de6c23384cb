#pragma once
// Private to the native backend: the machine's cores for the solver's independent work (pricing
// every job at given prices, reduced costs, candidate moves), through oneTBB.
//
// Determinism whatever the thread count: work is cut into blocks of a fixed size that depends only
// on the problem, never on the number of threads; each block writes its own partial result, and
// partial results are combined in block order on the calling thread. The floating-point sums are
// therefore the same bits with 1, 2 or 64 threads.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <memory>
#include <thread>

namespace sia::detail::native {

class Parallel {
 public:
  /// `threads` <= 0: all the machine's cores; 1: everything on the calling thread. More threads
  /// than cores are not requested (oneTBB would only warn and ignore them).
  explicit Parallel(int threads) {
    const int hw = hardware_threads();
    threads_ = threads <= 0 ? hw : std::min(threads, hw);
  }
  Parallel(const Parallel&) = delete;
  Parallel& operator=(const Parallel&) = delete;

  [[nodiscard]] int threads() const noexcept { return threads_; }

  /// Number of blocks of `block` elements covering [0, n).
  [[nodiscard]] static int num_blocks(int n, int block) noexcept { return n <= 0 ? 0 : (n + block - 1) / block; }

  /// Calls f(b, begin, end) for every block b of [0, n); blocks run concurrently when there are
  /// several threads and several blocks. f must only write to data owned by its block.
  template <class F>
  void blocks(int n, int block, F&& f) const {
    const int nb = num_blocks(n, block);
    auto run = [&](int b) { f(b, b * block, std::min(n, (b + 1) * block)); };
    if (nb <= 1 || threads_ <= 1) {
      for (int b = 0; b < nb; ++b) run(b);
      return;
    }
    // The arena on first use: a round of a few hundred jobs has one block, and a solver is made
    // per round.
    if (!arena_) arena_ = std::make_unique<tbb::task_arena>(threads_);
    arena_->execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int>(0, nb, 1),
          [&](const tbb::blocked_range<int>& r) {
            for (int b = r.begin(); b < r.end(); ++b) run(b);
          },
          tbb::simple_partitioner());
    });
  }

  /// Runs `main` on the calling thread and `side` beside it on another thread of the current task
  /// arena when there is one free (else the calling thread runs it while it waits); returns when
  /// both are done. One thread: `main`, then `side`. The two must not write to the same data.
  template <class Main, class Side>
  void alongside(Main&& main, Side&& side) const {
    if (threads_ <= 1) {
      main();
      side();
      return;
    }
    tbb::task_group group;
    group.run([&] { side(); });
    try {
      main();
    } catch (...) {
      group.wait();  // `side` reads the caller's data: it ends before the exception leaves
      throw;
    }
    group.wait();  // rethrows what `side` threw
  }

 private:
  // The machine's cores, read once: std::thread::hardware_concurrency() reads sysfs files on every
  // call, which cost 2.5 % of a 30-job round (a Parallel is made per solve).
  static int hardware_threads() noexcept {
    static const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return hw;
  }

  int threads_ = 1;
  mutable std::unique_ptr<tbb::task_arena> arena_;
};

}  // namespace sia::detail::native
