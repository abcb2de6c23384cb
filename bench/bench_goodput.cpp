// Goodput matrix with batch-size optimisation: 1000 jobs on the paper's heterogeneous cluster x32
// (2048 GPUs: aws 4/node x 192 nodes, rtx 8/node x 96, dgx-ext 8/node x 64).
//
//   BM_GoodputMatrix/all     every configuration of the cluster (~350 columns) for every job
//   BM_GoodputMatrix/cap64   only configurations with <= 64 GPUs (the reference's replica cap)
//   BM_Optimize              one batch-size optimisation (50 candidates)
//
// Jobs are synthetic but shaped like the artifact's models (parameters in the range the fits of
// sia_fit_profiles produce): each job has a fitted model on one or two types and only a 1-GPU
// seed model on the others, so the Eq. 1 bootstrap path is exercised as much as the direct one.

#include <benchmark/benchmark.h>

#include <sia/cluster.hpp>
#include <sia/configuration_set.hpp>
#include <sia/goodput/job_model.hpp>

#include <random>
#include <vector>

namespace {

sia::ClusterSpec cluster_2048() {
  sia::ClusterSpec c;
  c.types = {sia::GpuTypeSpec("aws", 192, 4), sia::GpuTypeSpec("rtx", 96, 8), sia::GpuTypeSpec("dgx-ext", 64, 8)};
  return c;
}

struct Archetype {
  double init, max_batch;
  sia::PerfParams perf[3];  // aws, rtx, dgx-ext
  int max_local[3];
  int min_local;
};

std::vector<Archetype> archetypes() {
  return {
      // cifar10-like
      {128,
       4096,
       {{0.0176, 6.99e-4, 0.122, 2.65e-3, 0.0309, 1.23e-4, 2.05},
        {0.0358, 2.58e-4, 0.0896, 1.45e-3, 0.0653, 4.57e-3, 3.01},
        {0.0245, 8.7e-5, 0.014, 7.68e-4, 0.0127, 1.36e-3, 2.53}},
       {1024, 1024, 4096},
       32},
      // bert-like
      {12,
       384,
       {{0.172, 0.0586, 1.37, 0.0098, 0.281, 0.0114, 1.87},
        {0.16, 0.0226, 0.574, 0.0228, 0.344, 0.0697, 1.91},
        {0.0974, 0.00474, 0.0369, 0.0034, 0.0314, 0.00614, 1.61}},
       {12, 12, 48},
       4},
      // imagenet-like
      {200,
       12800,
       {{0.064, 0.00448, 0.3, 0.00646, 0.0681, 2.15e-5, 2.45},
        {0.12, 0.00186, 0.181, 0.00661, 0.102, 0.0215, 2.15},
        {0.0942, 8.44e-4, 0.00714, 0.00124, 0.0114, 0.00121, 1.0}},
       {200, 200, 800},
       20},
      // deepspeech2-like
      {20,
       640,
       {{0.306, 0.024, 0.516, 0.00948, 0.0914, 0.00186, 1.46},
        {0.382, 0.0124, 0.0552, 0.0138, 0.0583, 0.0144, 1.11},
        {0.432, 0.0135, 0.221, 0.012, 0.167, 0.0156, 1.85}},
       {80, 57, 320},
       10},
  };
}

std::vector<sia::JobModel> make_jobs(int n) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> jitter(0.8, 1.25);
  const auto arch = archetypes();
  const char* names[3] = {"aws", "rtx", "dgx-ext"};
  std::vector<sia::JobModel> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Archetype& a = arch[static_cast<std::size_t>(i) % arch.size()];
    sia::JobModel m;
    m.init_batch_size(a.init).max_batch_size(a.max_batch).grad(sia::GradParams{jitter(rng), 10.0 * jitter(rng)});
    const int known = static_cast<int>(rng() % 3);
    for (int t = 0; t < 3; ++t) {
      sia::TypeModel tm;
      tm.gpu_type = names[t];
      sia::PerfParams p = a.perf[t];
      p.alpha_c *= jitter(rng);
      p.beta_c *= jitter(rng);
      if (t == known || (i % 4 == 0 && t == (known + 1) % 3)) {
        tm.perf = p;
      } else {
        tm.seed = sia::PerfParams{p.alpha_c, p.beta_c, 1.1e-8, 1.1e-8, 1e-8, 1e-8, p.gamma};
      }
      tm.min_local = a.min_local;
      tm.max_local = a.max_local[t];
      m.add_type(tm);
    }
    jobs.push_back(std::move(m));
  }
  return jobs;
}

void BM_GoodputMatrix(benchmark::State& state) {
  const sia::ClusterSpec c = cluster_2048();
  const sia::ConfigurationSet cs = sia::make_configuration_set(c);
  std::vector<sia::ConfigurationSpec> configs;
  for (const auto& cfg : cs.configs)
    if (state.range(1) == 0 || cfg.gpus <= state.range(1)) configs.push_back(cfg);
  const std::vector<sia::JobModel> jobs = make_jobs(static_cast<int>(state.range(0)));
  std::vector<double> matrix(jobs.size() * configs.size());
  std::vector<sia::BatchChoice> batch(jobs.size() * configs.size());
  for (auto _ : state) {
    std::size_t k = 0;
    for (const auto& j : jobs)
      for (const auto& cfg : configs) {
        const sia::GoodputChoice g = j.evaluate(c.types[static_cast<std::size_t>(cfg.type)], cfg);
        matrix[k] = g.goodput;
        batch[k] = g.batch;
        ++k;
      }
    benchmark::DoNotOptimize(matrix.data());
    benchmark::DoNotOptimize(batch.data());
    benchmark::ClobberMemory();
  }
  state.counters["configs"] = static_cast<double>(configs.size());
  state.counters["evals/s"] = benchmark::Counter(static_cast<double>(jobs.size() * configs.size()),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GoodputMatrix)
    ->Args({1000, 0})
    ->Args({1000, 64})
    ->ArgNames({"jobs", "max_gpus"})
    ->Unit(benchmark::kMillisecond);

void BM_Optimize(benchmark::State& state) {
  const sia::GoodputFunction f{archetypes()[0].perf[0], sia::GradParams{0.5, 10.0}, 128.0};
  const sia::BatchLimits lim{4096, 32, 1024};
  int r = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.optimize(r <= 4 ? 1 : r / 4, r, lim));
    r = r >= 64 ? 1 : r * 2;
  }
}
BENCHMARK(BM_Optimize);

}  // namespace
