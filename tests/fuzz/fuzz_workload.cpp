// libFuzzer target: the simulator's workload CSV parser.
#include <sia/error.hpp>
#include <sia/sim/workload.hpp>

#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)sia::sim::parse_workload_csv(in, "fuzz.csv");
  } catch (const sia::InvalidArgument&) {
  }
  return 0;
}
