#include <sia/error.hpp>
#include <sia/goodput/fit.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/goodput/projection.hpp>
#include <sia/sim/application.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "sim/delaunay3.hpp"

namespace sia::sim {

ModelConstants model_constants(std::string_view m) {
  // applications.py:APPLICATIONS (max_epochs, rescale_time), sia.py:get_restart_penalty,
  // simulator_config.SLOWDOWNS — reference §7 table.
  if (m == "cifar10") return {100, 50, 30, 1.8};
  if (m == "bert") return {2, 120, 120, 1.2};
  if (m == "deepspeech2") return {80, 25, 25, 1.2};
  if (m == "yolov3") return {50, 80, 45, 1.2};
  if (m == "imagenet") return {90, 250, 250, 1.2};
  if (m == "ncf") return {10, 15, 30, 1.5};
  if (m == "gpt_pmp") return {2, 30, 30, 1.0};
  return {0, 30, 30, 1.0};
}

std::vector<int> placement_of(int nodes, int gpus) {
  if (nodes <= 0 || gpus <= 0) return {};
  if (nodes == 1) return {gpus};
  std::vector<int> p(static_cast<std::size_t>(nodes), gpus / nodes);
  for (int i = 0; i < gpus % nodes; ++i) ++p[static_cast<std::size_t>(i)];
  return p;
}

StepSync BszCurve::at(double b) const noexcept {
  if (bsz.empty()) return {};
  if (b <= bsz.front()) return {step.front(), sync.front()};
  if (b >= bsz.back()) return {step.back(), sync.back()};
  const auto it = std::upper_bound(bsz.begin(), bsz.end(), b);
  const auto hi = static_cast<std::size_t>(it - bsz.begin());
  const auto lo = hi - 1;
  const double f = (b - bsz[lo]) / (bsz[hi] - bsz[lo]);
  return {step[lo] + f * (step[hi] - step[lo]), sync[lo] + f * (sync[hi] - sync[lo])};
}

namespace {

/// Means per local batch, sorted (duplicates averaged, as the reference's groupby().mean()).
BszCurve make_curve(std::vector<std::tuple<double, double, double>> rows) {
  std::sort(rows.begin(), rows.end());
  BszCurve c;
  std::size_t i = 0;
  while (i < rows.size()) {
    std::size_t j = i;
    double s = 0, y = 0;
    while (j < rows.size() && std::get<0>(rows[j]) == std::get<0>(rows[i])) {
      s += std::get<1>(rows[j]);
      y += std::get<2>(rows[j]);
      ++j;
    }
    const double n = static_cast<double>(j - i);
    c.bsz.push_back(std::get<0>(rows[i]));
    c.step.push_back(s / n);
    c.sync.push_back(y / n);
    i = j;
  }
  return c;
}

}  // namespace

std::string TraceStepTimes::canonical_id(const std::vector<int>& placement) {
  std::string s;
  for (int g : placement)
    if (g > 0) s += std::to_string(g);
  if (s.size() < 2) return s;
  std::string best = s;
  for (std::size_t k = 1; k < s.size(); ++k) {
    std::string r = s.substr(k) + s.substr(0, k);
    if (r < best) best = std::move(r);
  }
  return best;
}

TraceStepTimes::TraceStepTimes(const TypeProfile& profile, Interpolation mode) : mode_(mode) {
  std::map<std::string, std::vector<std::tuple<double, double, double>>> by_id;
  std::map<std::pair<int, int>, std::vector<std::tuple<double, double, double>>> by_point;
  for (const auto& r : profile.placements) {
    std::vector<int> p;
    for (char ch : r.placement)
      if (ch >= '0' && ch <= '9') p.push_back(ch - '0');
    const auto id = canonical_id(p);
    by_id[id].emplace_back(r.local_bsz, r.step_time, r.sync_time);
    by_point[{std::min(r.nodes, 16), r.gpus}].emplace_back(r.local_bsz, r.step_time, r.sync_time);
    auto& m = max_local_by_replicas_[r.gpus];
    m = std::max(m, r.local_bsz);
  }
  for (const auto& r : profile.scalability)
    by_point[{std::min(r.nodes, 16), r.gpus}].emplace_back(r.local_bsz, r.step_time, r.sync_time);
  for (auto& [id, rows] : by_id) exact_[id] = make_curve(std::move(rows));
  if (mode_ == Interpolation::delaunay3d) {
    // The reference's LinearNDInterpolator input: means per (nodes clipped to 16, replicas, local batch).
    for (const auto& [key, rows] : by_point) {
      const BszCurve c = make_curve(rows);
      for (std::size_t i = 0; i < c.bsz.size(); ++i) {
        points3_.push_back({static_cast<double>(key.first), static_cast<double>(key.second), c.bsz[i]});
        values3_.push_back({c.step[i], c.sync[i]});
      }
    }
    delaunay_ = std::make_shared<const detail::Delaunay3>(points3_);
  }
  for (auto& [key, rows] : by_point) {
    Point p;
    p.nodes = key.first;
    p.replicas = key.second;
    p.curve = make_curve(std::move(rows));
    p.max_bsz = static_cast<int>(p.curve.bsz.back());
    points_.push_back(std::move(p));
  }
}

TraceStepTimes::Weights TraceStepTimes::weights_for(int nodes, int replicas) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto it = cache_.find({nodes, replicas});
    if (it != cache_.end()) return it->second;
  }
  Weights best;
  const double qx = nodes, qy = replicas;
  for (std::size_t i = 0; i < points_.size(); ++i)
    if (points_[i].nodes == nodes && points_[i].replicas == replicas) {
      best.idx[0] = static_cast<int>(i);
      best.w[0] = 1.0;
    }
  if (best.idx[0] < 0) {
    // Containing triangles; prefer one whose circumcircle holds no other point (Delaunay), then the
    // smallest circumradius.
    const std::size_t n = points_.size();
    double best_score = std::numeric_limits<double>::infinity();
    auto X = [&](std::size_t i) { return static_cast<double>(points_[i].nodes); };
    auto Y = [&](std::size_t i) { return static_cast<double>(points_[i].replicas); };
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b)
        for (std::size_t c = b + 1; c < n; ++c) {
          const double det = (Y(b) - Y(c)) * (X(a) - X(c)) + (X(c) - X(b)) * (Y(a) - Y(c));
          if (std::abs(det) < 1e-12) continue;
          const double l1 = ((Y(b) - Y(c)) * (qx - X(c)) + (X(c) - X(b)) * (qy - Y(c))) / det;
          const double l2 = ((Y(c) - Y(a)) * (qx - X(c)) + (X(a) - X(c)) * (qy - Y(c))) / det;
          const double l3 = 1.0 - l1 - l2;
          if (l1 < -1e-12 || l2 < -1e-12 || l3 < -1e-12) continue;
          // Circumcircle.
          const double ax = X(a), ay = Y(a), bx = X(b), by = Y(b), cx = X(c), cy = Y(c);
          const double d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by));
          const double ux =
              ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) + (cx * cx + cy * cy) * (ay - by)) / d;
          const double uy =
              ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) + (cx * cx + cy * cy) * (bx - ax)) / d;
          const double r2 = (ax - ux) * (ax - ux) + (ay - uy) * (ay - uy);
          bool empty = true;
          for (std::size_t k = 0; k < n && empty; ++k) {
            if (k == a || k == b || k == c) continue;
            const double dx = X(k) - ux, dy = Y(k) - uy;
            if (dx * dx + dy * dy < r2 * (1 - 1e-9)) empty = false;
          }
          const double score = (empty ? 0.0 : 1e12) + r2;
          if (score < best_score) {
            best_score = score;
            best.idx[0] = static_cast<int>(a);
            best.idx[1] = static_cast<int>(b);
            best.idx[2] = static_cast<int>(c);
            best.w[0] = l1;
            best.w[1] = l2;
            best.w[2] = l3;
          }
        }
    if (best.idx[0] < 0) {  // outside the hull: nearest point
      double bd = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < n; ++i) {
        const double dx = X(i) - qx, dy = Y(i) - qy, d2 = dx * dx + dy * dy;
        if (d2 < bd) {
          bd = d2;
          best = Weights{};
          best.idx[0] = static_cast<int>(i);
          best.w[0] = 1.0;
        }
      }
    }
  }
  std::lock_guard<std::mutex> lock(cache_mutex_);
  cache_[{nodes, replicas}] = best;
  return best;
}

StepSync TraceStepTimes::at(const std::vector<int>& placement, double local_bsz) const {
  const auto id = canonical_id(placement);
  const auto it = exact_.find(id);
  if (it != exact_.end()) return it->second.at(local_bsz);
  int nodes = 0, replicas = 0;
  for (int g : placement)
    if (g > 0) {
      ++nodes;
      replicas += g;
    }
  if (nodes == 0 || points_.empty()) return {};
  if (mode_ == Interpolation::delaunay3d) {
    const auto key = std::make_tuple(std::min(nodes, 16), replicas, local_bsz);
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      if (const auto it = cache3_.find(key); it != cache3_.end()) return it->second;
    }
    const auto* tri = static_cast<const detail::Delaunay3*>(delaunay_.get());
    const auto b = tri->locate({static_cast<double>(std::min(nodes, 16)), static_cast<double>(replicas), local_bsz});
    StepSync out;
    if (b) {
      for (std::size_t k = 0; k < 4; ++k) {
        out.step += b->weight[k] * values3_[static_cast<std::size_t>(b->vertex[k])].step;
        out.sync += b->weight[k] * values3_[static_cast<std::size_t>(b->vertex[k])].sync;
      }
    } else {
      out = planar_at(nodes, replicas, local_bsz);  // outside the hull (the reference would fail): planar rule
    }
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cache3_.emplace(key, out);
    return out;
  }
  return planar_at(nodes, replicas, local_bsz);
}

bool TraceStepTimes::qhull_available() noexcept { return detail::Delaunay3::available(); }

StepSync TraceStepTimes::planar_at(int nodes, int replicas, double local_bsz) const {
  const auto w = weights_for(std::min(nodes, 16), replicas);
  StepSync out;
  for (int k = 0; k < 3; ++k) {
    if (w.idx[k] < 0) continue;
    const auto s = points_[static_cast<std::size_t>(w.idx[k])].curve.at(local_bsz);
    out.step += w.w[k] * s.step;
    out.sync += w.w[k] * s.sync;
  }
  return out;
}

int TraceStepTimes::max_local_bsz(const std::vector<int>& placement) const {
  const auto it = exact_.find(canonical_id(placement));
  if (it != exact_.end()) return static_cast<int>(it->second.bsz.back());
  int nodes = 0, replicas = 0;
  for (int g : placement)
    if (g > 0) {
      ++nodes;
      replicas += g;
    }
  int m = 0;
  for (const auto& p : points_)
    if (p.nodes >= std::min(nodes, 16) && p.replicas >= replicas) m = std::max(m, p.max_bsz);
  return m;
}

int TraceStepTimes::max_local_for_replicas(int replicas) const {
  const auto it = max_local_by_replicas_.find(replicas);
  return it == max_local_by_replicas_.end() ? 0 : it->second;
}

GradParams GradTable::at(double batch, int epoch) const noexcept {
  if (batch_sizes.empty() || epochs.empty()) return {};
  auto row_value = [&](const std::vector<std::vector<double>>& t, std::size_t bi) {
    const auto& col = t[bi];
    if (epoch <= epochs.front()) return col.front();
    if (epoch >= epochs.back()) return col.back();
    const auto it = std::upper_bound(epochs.begin(), epochs.end(), epoch);
    const auto hi = static_cast<std::size_t>(it - epochs.begin());
    const auto lo = hi - 1;
    const double f = static_cast<double>(epoch - epochs[lo]) / static_cast<double>(epochs[hi] - epochs[lo]);
    return col[lo] + f * (col[hi] - col[lo]);
  };
  std::size_t lo = 0, hi = 0;
  double f = 0.0;
  if (batch <= batch_sizes.front()) {
    lo = hi = 0;
  } else if (batch >= batch_sizes.back()) {
    lo = hi = batch_sizes.size() - 1;
  } else {
    const auto it = std::upper_bound(batch_sizes.begin(), batch_sizes.end(), batch);
    hi = static_cast<std::size_t>(it - batch_sizes.begin());
    lo = hi - 1;
    f = (batch - batch_sizes[lo]) / (batch_sizes[hi] - batch_sizes[lo]);
  }
  GradParams g;
  g.sqr = row_value(sqr, lo) + f * (row_value(sqr, hi) - row_value(sqr, lo));
  g.var = row_value(var, lo) + f * (row_value(var, hi) - row_value(var, lo));
  return g;
}

Application Application::from_profile(const ModelProfile& mp, const SimCluster& cluster, Interpolation interpolation) {
  Application a;
  a.name = mp.model;
  if (mp.validation.empty()) throw InvalidArgument("profiles of '" + mp.model + "': no validation-<bsz>.csv file");
  a.init_batch_size = static_cast<double>(mp.init_batch_size());
  a.max_batch_size = static_cast<double>(mp.max_batch_size());
  a.constants = model_constants(mp.model);
  std::size_t rows = std::numeric_limits<std::size_t>::max();
  for (const auto& v : mp.validation) rows = std::min(rows, v.rows.size());
  if (rows == 0) throw InvalidArgument("profiles of '" + mp.model + "': a validation file has no rows");
  for (const auto& v : mp.validation) {
    a.grad.batch_sizes.push_back(static_cast<double>(v.batch_size));
    std::vector<double> s, r;
    for (const auto& row : v.rows) {
      s.push_back(row.grad_sqr);
      r.push_back(row.grad_var);
    }
    // Epoch rows beyond the shortest file are kept: clamping uses the last row of each file.
    s.resize(rows);
    r.resize(rows);
    a.grad.sqr.push_back(std::move(s));
    a.grad.var.push_back(std::move(r));
  }
  for (std::size_t e = 0; e < rows; ++e) {
    a.grad.epochs.push_back(static_cast<int>(e));
    double m = std::numeric_limits<double>::infinity();
    for (const auto& v : mp.validation) m = std::min(m, v.rows[e].progress);
    a.grad.progress_per_epoch.push_back(m);
  }
  if (a.constants.max_epochs <= 0) a.constants.max_epochs = static_cast<int>(rows);
  a.pipeline = mp.is_pipeline();
  for (const auto& t : cluster.types) {
    const TypeProfile* tp = mp.type(t.profile);
    if (tp == nullptr || tp->placements.empty()) {
      // A pipeline model may lack types (gpt_pmp has no T4 profiles): its jobs cannot run there.
      if (a.pipeline) {
        TypeTruth none;
        none.profile = t.profile;
        none.available = false;
        none.stages = 0;
        a.types.push_back(std::move(none));
        continue;
      }
      throw InvalidArgument("profiles of '" + mp.model + "': no placements-" + t.profile + ".csv for GPU type '" +
                            t.name + "' of the cluster");
    }
    TypeTruth tt;
    tt.profile = t.profile;
    tt.min_local = tp->min_local_bsz();
    tt.max_local = tp->max_local_bsz();
    if (mp.model == "deepspeech2" && t.profile == "rtx") tt.max_local = 57;  // reference hack (§1.7)
    const int unit = a.pipeline ? std::max(1, tp->smallest_gpus()) : 1;      // one pipeline, or one GPU
    // Paper §5.3: each pipeline runs 48 micro-batches of size 1 (the reference's executor fixes it too); the
    // larger profiled micro-batch only doubles the forward time.
    if (a.pipeline) tt.max_local = tt.min_local;
    tt.stages = unit;
    std::vector<OneGpuSample> one_gpu;
    std::vector<PerfObservation> seed_rows;
    std::vector<PipelineObservation> seed_pipes;
    for (const auto& r : tp->placements) {
      if (r.gpus != unit || r.nodes != 1) continue;
      one_gpu.push_back({static_cast<double>(r.local_bsz), r.step_time});
      if (a.pipeline)
        seed_pipes.push_back(pipeline_observation(r, unit));
      else
        seed_rows.push_back(PerfObservation{1, 1, static_cast<double>(r.local_bsz), r.step_time,
                                            std::clamp(r.sync_time, 0.0, r.step_time * (1.0 - 1e-9))});
    }
    tt.xput1 = one_gpu_throughput(one_gpu);
    if (a.pipeline && !seed_pipes.empty())
      tt.seed = fit_pipeline_params(seed_pipes, unit, a.microbatches).perf;
    else if (!seed_rows.empty())
      tt.seed = fit_perf_params(seed_rows);
    tt.trace = std::make_shared<const TraceStepTimes>(*tp, interpolation);
    a.types.push_back(std::move(tt));
  }
  if (a.pipeline && std::none_of(a.types.begin(), a.types.end(), [](const TypeTruth& t) { return t.available; }))
    throw InvalidArgument("profiles of '" + mp.model + "': none for any GPU type of the cluster");
  return a;
}

StepSync Application::step_time(int type, const std::vector<int>& placement, double local_bsz) const {
  const auto& t = types[static_cast<std::size_t>(type)];
  if (t.trace) return t.trace->at(placement, local_bsz);
  if (t.model) {
    int nodes = 0, replicas = 0;
    for (int g : placement)
      if (g > 0) {
        ++nodes;
        replicas += g;
      }
    const double step = optim_time(*t.model, nodes, replicas, local_bsz);
    return {step, std::max(0.0, step - accum_time(*t.model, local_bsz))};
  }
  return {};
}

double Application::pipeline_step_time(int type, const std::vector<int>& placement, double micro_bsz) const {
  int gpus = 0;
  for (int g : placement) gpus += std::max(0, g);
  if (!usable(type, gpus)) return 0.0;
  const auto& t = types[static_cast<std::size_t>(type)];
  const StepSync s = step_time(type, placement, micro_bsz);  // per-stage forward time of one micro-batch, sync
  return 3.0 * ((t.stages - 1) + microbatches) * s.step + s.sync;
}

bool Application::usable(int t, int gpus) const noexcept {
  if (t < 0 || static_cast<std::size_t>(t) >= types.size()) return false;
  const auto& tt = types[static_cast<std::size_t>(t)];
  if (!tt.available) return false;
  return !pipeline || gpus <= 0 || (tt.stages > 0 && gpus % tt.stages == 0);
}

int Application::max_local_bsz(int type, const std::vector<int>& placement) const {
  const auto& t = types[static_cast<std::size_t>(type)];
  if (t.trace) {
    const int m = t.trace->max_local_bsz(placement);
    return m > 0 ? m : t.max_local;
  }
  return t.max_local;
}

int Application::max_local_for_replicas(int type, int replicas) const {
  const auto& t = types[static_cast<std::size_t>(type)];
  return t.trace ? t.trace->max_local_for_replicas(replicas) : 0;
}

int Application::num_epochs() const noexcept {
  const int rows = static_cast<int>(grad.progress_per_epoch.size());
  return constants.max_epochs > 0 ? std::min(constants.max_epochs, rows) : rows;
}

double Application::progress_at(int e) const noexcept {
  if (e <= 0 || grad.progress_per_epoch.empty()) return 0.0;
  const auto n = grad.progress_per_epoch.size();
  return grad.progress_per_epoch[std::min(static_cast<std::size_t>(e - 1), n - 1)];
}

}  // namespace sia::sim
