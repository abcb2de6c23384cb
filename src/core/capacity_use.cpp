#include "core/capacity_use.hpp"

namespace sia::detail {

bool CapacityUse::fits(int c) const {
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  for (std::size_t r = 0; r < set_->rows.size(); ++r) {
    const int u = set_->row_usage(set_->rows[r], cfg);
    if (u > 0 && used_[r] + u > set_->rows[r].capacity) return false;
  }
  return true;
}

void CapacityUse::add(int c) {
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  for (std::size_t r = 0; r < set_->rows.size(); ++r) used_[r] += set_->row_usage(set_->rows[r], cfg);
}

void CapacityUse::remove(int c) {
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  for (std::size_t r = 0; r < set_->rows.size(); ++r) used_[r] -= set_->row_usage(set_->rows[r], cfg);
}

bool CapacityUse::within_capacity() const {
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (used_[r] > set_->rows[r].capacity) return false;
  return true;
}

}  // namespace sia::detail
