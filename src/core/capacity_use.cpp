#include "core/capacity_use.hpp"

namespace sia::detail {

bool CapacityUse::fits(int c, int gpus) const {
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  for (std::size_t r = 0; r < set_->rows.size(); ++r) {
    const int u = set_->row_usage(set_->rows[r], cfg, gpus);
    if (u > 0 && used_[r] + u > set_->rows[r].capacity) return false;
  }
  return true;
}

void CapacityUse::change(int c, int gpus, int sign) {
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  for (std::size_t r = 0; r < set_->rows.size(); ++r) used_[r] += sign * set_->row_usage(set_->rows[r], cfg, gpus);
}

bool CapacityUse::within_capacity() const {
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (used_[r] > set_->rows[r].capacity) return false;
  return true;
}

}  // namespace sia::detail
