// libFuzzer target: the sia_allocate request parser, the round it drives and the decision printer.
// Any input must either be rejected with sia::InvalidArgument or produce a valid decision.
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sia::Request request;
  try {
    request = sia::parse_request(text, "fuzz");
  } catch (const sia::InvalidArgument&) {
    return 0;  // rejected with a message: the expected outcome for most inputs
  }
  // Keep each execution short: fuzzing explores the parser, not solver run time.
  request.options.time_limit = std::chrono::milliseconds(200);
  if (request.jobs.size() > 64) return 0;
  try {
    const sia::RoundResult result = sia::run_round(request.cluster, request.jobs, request.options);
    // Invariant: never more GPUs than a type has.
    const auto set = sia::make_configuration_set(request.cluster);
    for (std::size_t t = 0; t < result.gpus_used.size(); ++t)
      if (result.gpus_used[t] > request.cluster.types[t].num_nodes() * request.cluster.types[t].gpus_per_node())
        std::abort();
    (void)sia::decision_to_json(request, result);
  } catch (const sia::InvalidArgument&) {
    // e.g. the backend named in the request is not available in this build
  } catch (const sia::BackendUnavailable&) {
  }
  return 0;
}
