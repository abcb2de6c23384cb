#include <sia/error.hpp>
#include <sia/sim/profile_split.hpp>
#include <sia/sim/random.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <utility>

namespace sia::sim {

void shuffle_profile_rows(std::vector<ProfileRow>& rows, std::uint64_t seed, std::string_view model,
                          std::string_view gpu_type) {
  std::string key;
  key.reserve(model.size() + 1 + gpu_type.size());
  key.append(model).append("/").append(gpu_type);
  std::mt19937_64 rng(seed ^ profile_split_hash(key));
  for (std::size_t i = rows.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(rows[i - 1], rows[j]);
  }
}

ProfileSplit split_profile_rows(std::vector<ProfileRow> rows, std::uint64_t seed, std::string_view model,
                                std::string_view gpu_type, double holdout) {
  if (!(holdout >= 0.0 && holdout < 1.0)) {
    std::ostringstream msg;
    msg.precision(17);
    msg << "split_profile_rows: " << model << "/" << gpu_type << ": holdout must be in [0, 1), got " << holdout;
    throw InvalidArgument(msg.str());
  }
  shuffle_profile_rows(rows, seed, model, gpu_type);
  ProfileSplit split;
  if (!rows.empty()) {
    // Round half up; (1 - holdout) * n is never exactly half an integer for the default 0.2, so this equals the
    // integer rounding (8 n + 5) / 10 that sia_fit_profiles used before the split moved here.
    const double kept = std::floor(static_cast<double>(rows.size()) * (1.0 - holdout) + 0.5);
    split.fitted = std::min(rows.size(), std::max<std::size_t>(1, static_cast<std::size_t>(kept)));
  }
  split.rows = std::move(rows);
  return split;
}

}  // namespace sia::sim
