#include "core/capacity_use.hpp"

#include <algorithm>

namespace sia::detail {

int CapacityUse::handle(int c, int gpus) const {
  if (handles_.empty()) handles_.resize(set_->configs.size());
  auto& variants = handles_[static_cast<std::size_t>(c)];
  for (const auto& [g, h] : variants)
    if (g == gpus) return h;
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  Charges rows;
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (const int u = set_->row_usage(set_->rows[r], cfg, gpus); u != 0) rows.emplace_back(static_cast<int>(r), u);
  charges_.push_back(std::move(rows));
  const int h = static_cast<int>(charges_.size()) - 1;
  variants.emplace_back(gpus, h);
  return h;
}

bool CapacityUse::fits(int handle) const {
  for (const auto& [r, u] : charges_[static_cast<std::size_t>(handle)])
    if (u > 0 && used_[static_cast<std::size_t>(r)] + u > set_->rows[static_cast<std::size_t>(r)].capacity) return false;
  return true;
}

void CapacityUse::change(int handle, int sign) {
  for (const auto& [r, u] : charges_[static_cast<std::size_t>(handle)]) used_[static_cast<std::size_t>(r)] += sign * u;
}

bool CapacityUse::within_capacity() const {
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (used_[r] > set_->rows[r].capacity) return false;
  return true;
}

void CapacityUse::clear() { std::fill(used_.begin(), used_.end(), 0LL); }

}  // namespace sia::detail
