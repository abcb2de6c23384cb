#pragma once
/// @file sia.hpp
/// @brief Everything of sia::core and sia::sia in one include: concepts, cluster and jobs,
/// configuration sets, goodput matrix and models, the MILP layer, the round and placement.
/// The simulator (sia::sim) has its own headers under <sia/sim/>.

#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/concepts.hpp>
#include <sia/configuration.hpp>
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/generic_round.hpp>
#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/fit.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput/job_model.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/goodput/projection.hpp>
#include <sia/goodput/throughput_model.hpp>
#include <sia/goodput_matrix.hpp>
#include <sia/goodput_table.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_spec.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/memory.hpp>
#include <sia/milp/factory.hpp>
#include <sia/milp/model.hpp>
#include <sia/milp/solver.hpp>
#include <sia/placement.hpp>
#include <sia/round.hpp>
#include <sia/round_log.hpp>
#include <sia/round_state.hpp>
#include <sia/tenant_spec.hpp>
#include <sia/valid_configs.hpp>
#include <sia/version.hpp>
#include <sia/warm_start.hpp>
