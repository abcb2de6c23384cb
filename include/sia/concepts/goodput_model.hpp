#pragma once
/// @file concepts/goodput_model.hpp
/// @brief The GoodputModel concept: estimated goodput of a job on a configuration.

#include <sia/concepts/configuration.hpp>
#include <sia/concepts/gpu_type.hpp>

#include <concepts>

namespace sia {

/**
 * @brief Estimates a job's goodput (samples/s of useful progress) on a configuration of a GPU type.
 *
 * Satisfied when, for `const M& m`, `const G& t` (GpuType) and `const C& c` (Configuration, whose
 * type is `t`):
 * @code
 * m.goodput(t, c) -> convertible_to<double>   // > 0: usable; 0: not usable on this configuration
 * @endcode
 * The library's own types are `GoodputModel<M, GpuTypeSpec, ConfigurationSpec>`.
 */
template <class M, class G, class C>
concept GoodputModel = GpuType<G> && Configuration<C> && requires(const M& m, const G& t, const C& c) {
  { m.goodput(t, c) } -> std::convertible_to<double>;
};

/**
 * @brief Detects the optional batch-size query of a goodput model or job, which the round reports with
 * the chosen configuration:
 * @code
 * m.batch_size(t, c).global_batch        -> convertible_to<long long>  // samples per optimiser step
 * m.batch_size(t, c).local_batch         -> convertible_to<int>        // per GPU and micro-step
 * m.batch_size(t, c).accumulation_steps  -> convertible_to<int>        // extra micro-steps
 * @endcode
 */
template <class M, class G, class C>
concept HasBatchSize = requires(const M& m, const G& t, const C& c) {
  { m.batch_size(t, c).global_batch } -> std::convertible_to<long long>;
  { m.batch_size(t, c).local_batch } -> std::convertible_to<int>;
  { m.batch_size(t, c).accumulation_steps } -> std::convertible_to<int>;
};

/**
 * @brief Detects the optional count limit of a goodput model or job:
 * @code
 * m.gpu_limit(t) -> convertible_to<int>   // no configuration of type t with more GPUs has goodput > 0
 * @endcode
 * (0: nothing of the type is usable.) The round then never enumerates, nor asks the goodput of,
 * the configurations above it: a job given as a table of counts up to 64 on a 100,000-GPU
 * cluster has about 30 configurations to look at instead of 60,000. A limit that is too low hides
 * configurations from the round; one that is too high only costs time.
 */
template <class M, class G>
concept HasGpuLimit = requires(const M& m, const G& t) {
  { m.gpu_limit(t) } -> std::convertible_to<int>;
};

}  // namespace sia
