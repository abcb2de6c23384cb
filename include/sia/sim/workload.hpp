#pragma once
/// @file sim/workload.hpp
/// @brief Workloads: the CSV format (`name,time,application,num_replicas,batch_size[,category]`),
/// a file or a directory of files, and the synthetic Philly-like workload of the embedded default.

#include <sia/concepts/job.hpp>

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sia::sim {

/// @brief One job of a workload.
struct WorkloadJob {
  std::string name;          ///< unique job name, e.g. "cifar10-3"
  double time = 0.0;         ///< submission time, seconds from the start of the workload
  std::string application;   ///< model name (profile directory), e.g. "cifar10"
  int num_replicas = 1;      ///< GPUs of the "TunedJobs" configuration (rigid / strong-scaling count)
  long long batch_size = 0;  ///< global batch size (caps the scheduler's batch-size search)
  JobKind category = JobKind::adaptive;
  /// Hybrid jobs (`pipeline_size` column, optional): GPUs per pipeline by GPU type name or profile suffix
  /// (`dgx-ext:2;rtx:8`), or one size for every type (`{"", 8}`). Empty = the sizes the model's profiles were
  /// measured with; types not listed are not used by the job. For the other kinds: empty.
  std::vector<std::pair<std::string, int>> pipeline_sizes;
  int line = 0;  ///< line in the source file (for error messages)
};

/// @brief A workload: a named list of jobs sorted by submission time.
struct Workload {
  std::string name;  ///< file stem, e.g. "workload-1"
  std::string source;
  std::vector<WorkloadJob> jobs;
};

/**
 * @brief Parses a workload CSV. Columns are found by header name (order free); `category` is optional
 * and accepts `adaptive`, `strong-scaling` (or the reference's `scale-gpus`), `rigid` and `hybrid`; the
 * optional `pipeline_size` column gives a hybrid job's GPUs per pipeline (`8`, or `dgx-ext:2;rtx:8` per type).
 * @throws InvalidArgument naming `source`, line and column on a missing column, a bad number, a
 * negative time, unsorted submission times, a duplicate name or an unknown category.
 */
[[nodiscard]] Workload parse_workload_csv(std::istream& in, std::string_view source);

/// @brief Reads a workload file, or every `*.csv` of a directory (sorted by name).
[[nodiscard]] std::vector<Workload> load_workloads(const std::filesystem::path& path);

/**
 * @brief The embedded default: Poisson arrivals of `jobs_per_hour` for `hours`, with the model mix of the
 * shipped Philly workloads (998 cifar10, 111 deepspeech2, 86 bert, 59 yolov3, 26 imagenet of 1280 jobs) and
 * their TunedJobs batch sizes/replicas. Deterministic for a given seed.
 */
/// @brief Shares of job kinds in a workload (`--mix adaptive=60,strong-scaling=20,rigid=20`, paper Fig. 11).
struct KindMix {
  double adaptive = 100, strong_scaling = 0, rigid = 0;  ///< percent, summing to 100
};

/**
 * @brief Parses `kind=percent,...` (kinds adaptive, strong-scaling or scale-gpus, rigid; each in [0, 100],
 * summing to 100 within 1e-6; unnamed kinds 0). @throws InvalidArgument naming the bad entry.
 */
[[nodiscard]] KindMix parse_kind_mix(std::string_view text);

/**
 * @brief Gives the data-parallel jobs of `w` the kinds of `mix`: a seeded shuffle of its jobs, the first
 * round(n·strong%) become strong-scaling, the next round(n·rigid%) rigid, the rest adaptive (exact counts, the
 * same for every policy, reproducible from `seed`). Hybrid jobs keep their kind.
 */
void apply_kind_mix(Workload& w, const KindMix& mix, std::uint64_t seed);

/// @brief A synthetic workload with the artifact's job mix (the 8 Philly workloads' models and TunedJobs
/// configurations): Poisson arrivals at `jobs_per_hour` for `hours`; with `max_jobs` > 0 at most that many jobs
/// (`hours` may then be infinite: arrivals go on until `max_jobs`). Sizes: sim/limits.hpp's check_synthetic.
[[nodiscard]] Workload synthetic_philly_workload(std::uint64_t seed, double jobs_per_hour = 20.0, double hours = 8.0,
                                                 long long max_jobs = 0);

}  // namespace sia::sim
