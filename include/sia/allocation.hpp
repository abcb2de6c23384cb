#pragma once
/// @file allocation.hpp
/// @brief Where a job runs: its configuration and its GPUs per node.

#include <sia/configuration.hpp>

#include <vector>

namespace sia {

/// @brief GPUs a job holds on one node: node index within its type, and the GPU indices there.
struct NodeShare {
  int node = 0;              ///< node index within the job's GPU type
  int gpus = 0;              ///< number of GPUs on this node
  std::vector<int> gpu_ids;  ///< which GPUs of the node (0..R-1); may be empty in requests
  friend bool operator==(const NodeShare&, const NodeShare&) = default;
};

/// @brief What a job currently holds: a configuration and, optionally, its placement.
struct CurrentAllocation {
  int type = 0;                      ///< GPU type index
  int gpus = 0;                      ///< GPUs held
  int nodes = 0;                     ///< nodes spanned (0 = unknown: derived from gpus and node size)
  std::vector<NodeShare> placement;  ///< empty = placement unknown
};

}  // namespace sia
