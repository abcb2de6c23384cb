// Optimiser steps at a fixed batch size (see steps.hpp).
#include <sia/sim/steps.hpp>

#include <algorithm>
#include <limits>

namespace sia::sim {

namespace {

/// Steps from (epoch, progress) to the end of training.
double steps_from(const Application& app, int epoch, double progress, double batch) noexcept {
  const double scale = app.init_batch_size > 0 && batch > 0 ? batch / app.init_batch_size : 1.0;
  double steps = 0.0;
  for (int e = std::max(epoch, 0); e < app.num_epochs(); ++e) {
    const double from = e == epoch ? std::max(app.progress_at(e), progress) : app.progress_at(e);
    const double dp = app.progress_at(e + 1) - from;
    if (dp <= 0) continue;
    const auto g = app.grad_stats(batch, e);
    const double denom = g.var / scale + g.sqr;
    const double gain = denom > 0 ? (g.var + g.sqr) / denom : 1.0;
    if (!(gain > 0)) return std::numeric_limits<double>::infinity();
    steps += dp / gain;
  }
  return steps;
}

}  // namespace

double total_steps(const Application& app, double batch) noexcept { return steps_from(app, 0, 0.0, batch); }

double remaining_steps(const SimJob& job, double batch) noexcept {
  if (job.completed() || !job.app) return 0.0;
  return steps_from(*job.app, job.epoch, job.progress, batch);
}

}  // namespace sia::sim
