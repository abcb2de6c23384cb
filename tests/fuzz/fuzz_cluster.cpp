// libFuzzer target: the simulator's cluster JSON parser.
#include <sia/error.hpp>
#include <sia/sim/cluster.hpp>

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto cluster =
        sia::sim::parse_cluster_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    (void)cluster.spec();
  } catch (const sia::InvalidArgument&) {
  }
  return 0;
}
