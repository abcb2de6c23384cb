// sia's exceptions as Python's: bad input (sia::InvalidArgument) is a ValueError, everything else sia throws
// (backend unavailable, solver failure, I/O) a RuntimeError; the message is the C++ one, unchanged, so a Python
// caller sees the same "what, where, which value" text as sia_allocate prints.
#include <sia/error.hpp>

#include <string>

#include <sia/version.hpp>

#include "bindings.hpp"

namespace sia::python {

void bind_errors(pybind11::module_& m) {
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sia::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const sia::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.attr("__version__") = std::string(sia::version());
}

}  // namespace sia::python
