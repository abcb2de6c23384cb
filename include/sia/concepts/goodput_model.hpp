#pragma once
/// @file concepts/goodput_model.hpp
/// @brief The GoodputModel concept: estimated goodput of a job on a configuration.

#include <sia/concepts/configuration.hpp>
#include <sia/concepts/gpu_type.hpp>
#include <sia/configuration.hpp>
#include <sia/gpu_type_spec.hpp>

#include <concepts>

namespace sia {

/**
 * @brief Estimates a job's goodput (samples/s of useful progress) on a configuration.
 *
 * Satisfied when, for `const M& m`, `const G& t` (GpuType) and `const C& c` (Configuration, whose
 * type is `t`):
 * @code
 * m.goodput(t, c) -> convertible_to<double>   // > 0: usable; 0: not usable on this configuration
 * @endcode
 * Optionally (detected, not required) `m.batch_size(t, c) -> BatchChoice`, which the round reports
 * with the chosen configuration.
 */
template <class M, class G, class C>
concept GoodputModelFor = GpuType<G> && Configuration<C> && requires(const M& m, const G& t, const C& c) {
  { m.goodput(t, c) } -> std::convertible_to<double>;
};

/// GoodputModelFor sia's own GPU type and configuration types.
template <class M>
concept GoodputModel = GoodputModelFor<M, GpuTypeSpec, Config>;

/// Detects the optional batch-size query of a goodput model or job.
template <class M, class G = GpuTypeSpec, class C = Config>
concept HasBatchSize = requires(const M& m, const G& t, const C& c) {
  { m.batch_size(t, c) } -> std::convertible_to<BatchChoice>;
};

}  // namespace sia
