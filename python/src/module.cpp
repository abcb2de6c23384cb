// The extension module `sia._sia`; the package `sia` (python/sia/__init__.py) re-exports it.
#include "bindings.hpp"

PYBIND11_MODULE(_sia, m) {
  m.doc() = "sia: the allocation and placement core of the Sia GPU-cluster scheduler (SOSP 2023)";
  sia::python::bind_errors(m);
  sia::python::bind_allocate(m);
  sia::python::bind_round(m);
  sia::python::bind_goodput(m);
  sia::python::bind_sim(m);
}
