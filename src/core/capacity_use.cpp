#include "core/capacity_use.hpp"

#include <algorithm>

namespace sia::detail {

CapacityUse::CapacityUse(const ConfigurationSet& s) : set_(&s), rows_(s.rows.size()), used_(2 * s.rows.size(), 0) {
  for (std::size_t r = 0; r < rows_; ++r) used_[rows_ + r] = s.rows[r].capacity;
}

int CapacityUse::handle(int c, int gpus) const {
  if (handles_.empty()) {
    // Room for the handles a round's searches usually ask for (grown one at a time, these were
    // reallocated again and again): a handle per configuration, up to 256.
    handles_.assign(set_->configs.size(), {0, -1});
    const std::size_t room = std::min<std::size_t>(set_->configs.size(), 256);
    first_.reserve(room + 1);
    first_.push_back(0);  // (the first handle's charges start at 0)
    charges_.reserve(room);
  }
  auto& first = handles_[static_cast<std::size_t>(c)];
  if (first.second >= 0) {
    if (first.first == gpus) return first.second;
    for (const auto& [config, g, h] : more_handles_)
      if (config == c && g == gpus) return h;
  }
  const ConfigurationSpec& cfg = set_->configs[static_cast<std::size_t>(c)];
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (const int u = set_->row_usage(set_->rows[r], cfg, gpus); u != 0) charges_.emplace_back(static_cast<int>(r), u);
  first_.push_back(static_cast<int>(charges_.size()));
  const int h = static_cast<int>(first_.size()) - 2;
  if (first.second < 0)
    first = {gpus, h};
  else
    more_handles_.push_back({c, gpus, h});
  return h;
}

bool CapacityUse::within_capacity() const {
  for (std::size_t r = 0; r < set_->rows.size(); ++r)
    if (used_[r] > used_[rows_ + r]) return false;
  return true;
}

void CapacityUse::clear() { std::fill(used_.begin(), used_.begin() + static_cast<std::ptrdiff_t>(rows_), 0LL); }

}  // namespace sia::detail
