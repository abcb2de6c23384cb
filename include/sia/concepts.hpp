#pragma once
/// @file concepts.hpp
/// @brief All concepts of sia: GpuType, Configuration, GoodputModel(For), Job, HasBatchSize, the optional job members
/// (HasPreemptible, ..., describe_job_type, JobMembers).

#include <sia/concepts/configuration.hpp>
#include <sia/concepts/goodput_model.hpp>
#include <sia/concepts/gpu_type.hpp>
#include <sia/concepts/job.hpp>
#include <sia/concepts/tenancy.hpp>
#include <sia/job_members.hpp>
