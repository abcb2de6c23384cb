#include "core/capacity_use.hpp"

namespace sia::detail {

const std::vector<std::pair<int, int>>& CapacityUse::charges(int c, int gpus) const {
  if (charges_.empty()) charges_.resize(set_->configs.size());
  auto& variants = charges_[static_cast<std::size_t>(c)];
  for (const Charges& v : variants)
    if (v.gpus == gpus) return v.rows;
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  Charges v{gpus, {}};
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (const int u = set_->row_usage(set_->rows[r], cfg, gpus); u != 0) v.rows.emplace_back(static_cast<int>(r), u);
  variants.push_back(std::move(v));
  return variants.back().rows;
}

bool CapacityUse::fits(int c, int gpus) const {
  for (const auto& [r, u] : charges(c, gpus))
    if (u > 0 && used_[static_cast<std::size_t>(r)] + u > set_->rows[static_cast<std::size_t>(r)].capacity)
      return false;
  return true;
}

void CapacityUse::change(int c, int gpus, int sign) {
  for (const auto& [r, u] : charges(c, gpus)) used_[static_cast<std::size_t>(r)] += sign * u;
}

bool CapacityUse::within_capacity() const {
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (used_[r] > set_->rows[r].capacity) return false;
  return true;
}

}  // namespace sia::detail
