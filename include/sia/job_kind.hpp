#pragma once
/// @file job_kind.hpp
/// @brief JobKind, the adaptivity kind of a job (paper §3.4), and its names: the one place
/// where the kinds are spelled out (request JSON, workload CSV, reports and command lines use it).

#include <array>
#include <optional>
#include <string_view>

namespace sia {

/// Adaptivity kind of a job (paper §3.4).
enum class JobKind {
  adaptive,        ///< GPU type, count and batch size chosen by sia
  strong_scaling,  ///< fixed batch size; type and count chosen
  rigid,           ///< fixed batch size and count; only the type chosen
  hybrid,          ///< pipeline of P GPUs replicated by data parallelism: counts are multiples of P
};

/// Every kind, in declaration order.
inline constexpr std::array<JobKind, 4> all_job_kinds{JobKind::adaptive, JobKind::strong_scaling, JobKind::rigid,
                                                      JobKind::hybrid};

/// The name of a kind: "adaptive", "strong-scaling", "rigid", "hybrid".
[[nodiscard]] constexpr std::string_view to_string(JobKind k) noexcept {
  switch (k) {
    case JobKind::adaptive:
      return "adaptive";
    case JobKind::strong_scaling:
      return "strong-scaling";
    case JobKind::rigid:
      return "rigid";
    case JobKind::hybrid:
      return "hybrid";
  }
  return "adaptive";
}

/// The kind called `name`: a name of to_string(), or the reference implementation's alias
/// "scale-gpus" for strong-scaling. Empty for anything else (names are case-sensitive).
[[nodiscard]] constexpr std::optional<JobKind> parse_job_kind(std::string_view name) noexcept {
  if (name == "scale-gpus") return JobKind::strong_scaling;
  for (JobKind k : all_job_kinds)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

/// The accepted names, for messages: "adaptive, strong-scaling, scale-gpus, rigid, hybrid".
inline constexpr std::string_view job_kind_names = "adaptive, strong-scaling, scale-gpus, rigid, hybrid";

}  // namespace sia
