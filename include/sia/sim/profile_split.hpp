#pragma once
/// @file sim/profile_split.hpp
/// @brief The seeded split of one (model, GPU type)'s profile rows into fitted and held-out rows, shared by
/// `sia_fit_profiles` and the Python package's `sia.fit_profiles` so that both report the same numbers for the same
/// directory and seed.
///
/// The rows are shuffled by Fisher-Yates with the simulator's portable draws (sim/random.hpp; std::shuffle's sequence
/// differs between standard libraries), from a generator seeded by `seed ^ profile_split_hash("<model>/<gpu_type>")`: one seed per
/// (model, type), so adding a model or a type does not change the others' splits. The first round((1 - holdout) * n)
/// rows (at least one) are fitted, the rest held out.

#include <sia/sim/profiles.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace sia::sim {

/// @brief The hash of "<model>/<gpu_type>" that seeds a split: the same on every platform (std::hash is not).
///
/// It is FNV-1a's loop and prime with the offset basis 1469598103934665603, one digit short of FNV-1a's standard
/// 14695981039346656037: a slip in the first sia_fit_profiles, kept on purpose because another basis would change
/// every split, hence every fit and error printed so far (the generator is seeded equally well by either).
[[nodiscard]] constexpr std::uint64_t profile_split_hash(std::string_view text) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;  // FNV's 64-bit prime
  }
  return h;
}

/// @brief Rows of one (model, GPU type) in their shuffled order: the first `fitted` are fitted, the rest held out.
struct ProfileSplit {
  std::vector<ProfileRow> rows;  ///< every row, shuffled (fitting all of them in this order is reproducible too)
  std::size_t fitted = 0;        ///< how many of the first rows are fitted

  [[nodiscard]] std::span<const ProfileRow> seen() const noexcept { return std::span(rows).first(fitted); }
  [[nodiscard]] std::span<const ProfileRow> held_out() const noexcept { return std::span(rows).subspan(fitted); }
};

/// @brief Shuffles `rows` in place as described above (seeded by `seed ^ profile_split_hash(model + "/" + gpu_type)`).
void shuffle_profile_rows(std::vector<ProfileRow>& rows, std::uint64_t seed, std::string_view model,
                          std::string_view gpu_type);

/// @brief Shuffles `rows` and splits them: round((1 - holdout) * n) fitted, at least one unless there are no rows.
/// Throws InvalidArgument when `holdout` is not in [0, 1).
[[nodiscard]] ProfileSplit split_profile_rows(std::vector<ProfileRow> rows, std::uint64_t seed, std::string_view model,
                                              std::string_view gpu_type, double holdout = 0.2);

}  // namespace sia::sim
