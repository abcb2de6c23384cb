#pragma once
/// @file sim/catalogue.hpp
/// @brief The built-in model catalogue of the embedded default: the paper's five models (cifar10, bert,
/// deepspeech2, yolov3, imagenet) with ground truth derived from the shared profiles, so that
/// `sia_simulate` runs without any file.
///
/// The numbers live in `src/sim/catalogue_data.cpp`; they were generated from
/// `../shared/data/sia-artifact/profiles` by `sia_simulate --dump-catalogue <profiles-dir>`
/// (generate_catalogue_source()): per model and GPU type, PerfParams fitted by sia's Pollux fit on all
/// placement and scalability rows, the local batch range and 1-GPU throughput; per model, the validated
/// batch sizes, sub-sampled gradient statistics and the total progress.

#include <sia/sim/simulator.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief Models of the built-in catalogue.
[[nodiscard]] std::vector<std::string> catalogue_models();
/// @brief GPU types (profile suffixes) the catalogue covers.
[[nodiscard]] std::vector<std::string> catalogue_gpu_types();

/**
 * @brief Ground truth of every catalogue model on `cluster` (step times from the fitted model).
 * @throws InvalidArgument when the cluster has a GPU type (by profile suffix) the catalogue lacks.
 */
[[nodiscard]] ApplicationSet catalogue_applications(const SimCluster& cluster);

/// @brief C++ source of catalogue_data.cpp, derived from an artifact profiles directory.
[[nodiscard]] std::string generate_catalogue_source(const std::filesystem::path& profiles_dir);

}  // namespace sia::sim
