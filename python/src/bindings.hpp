#pragma once
// One function per part of the Python extension `sia._sia`; each lives in its own .cpp (module.cpp calls them in
// order, so a part may use the classes an earlier part registered).
#include <pybind11/pybind11.h>

namespace sia::python {

// sia::InvalidArgument -> ValueError, other sia::Error -> RuntimeError, with the C++ message unchanged.
void bind_errors(pybind11::module_& m);
// sia.allocate(request): the sia_allocate request (dict or JSON text) in, the decision as a dict out;
// sia.JsonSession: the same, rounds one after another.
void bind_allocate(pybind11::module_& m);
// The round: cluster, jobs, options, tenants, the decision with reasons and prices, the round-state helper.
void bind_round(pybind11::module_& m);
// The goodput model (AdaptDL-compatible, in submodule _sia._goodput) and model fitting from profiles.
void bind_goodput(pybind11::module_& m);
// The simulator: workloads, policies, metrics and per-job records.
void bind_sim(pybind11::module_& m);

}  // namespace sia::python
