// libFuzzer target: the throughput-profile CSV loaders (placements, scalability, validation, seed).
// The loaders read files, so the input is written to a per-process file in /dev/shm (or /tmp).
// The first byte selects the loader.
#include <sia/error.hpp>
#include <sia/sim/profiles.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace {
std::filesystem::path scratch_file() {
  const std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  return dir / ("sia-fuzz-profile-" + std::to_string(::getpid()) + ".csv");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::filesystem::path file = scratch_file();
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    switch (data[0] % 4) {
      case 0:
        (void)sia::sim::load_placements_csv(file);
        break;
      case 1:
        (void)sia::sim::load_scalability_csv(file);
        break;
      case 2:
        (void)sia::sim::load_validation_csv(file);
        break;
      default:
        (void)sia::sim::load_seed_profile(file);
        break;
    }
  } catch (const sia::InvalidArgument&) {
  }
  return 0;
}
