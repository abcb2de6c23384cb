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

}  // namespace sia
