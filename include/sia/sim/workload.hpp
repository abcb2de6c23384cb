#pragma once
/// @file sim/workload.hpp
/// @brief Workloads: the CSV format of product.md §4 (`name,time,application,num_replicas,batch_size[,category]`),
/// a file or a directory of files, and the synthetic Philly-like workload of the embedded default.

#include <sia/concepts/job.hpp>

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
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
 * and accepts `adaptive`, `strong-scaling` (or the reference's `scale-gpus`) and `rigid`.
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
[[nodiscard]] Workload synthetic_philly_workload(std::uint64_t seed, double jobs_per_hour = 20.0, double hours = 8.0);

}  // namespace sia::sim
