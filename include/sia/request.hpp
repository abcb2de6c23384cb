#pragma once
/// @file request.hpp
/// @brief One round as JSON (examples/requests/README.md): parse a request, print a decision.
///
/// This is the layer behind `sia_allocate`, usable directly by C++ programs that receive
/// requests from elsewhere. The JSON library stays private to libsia.

#include <sia/cluster.hpp>
#include <sia/job_spec.hpp>
#include <sia/round.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sia {

/// @brief A parsed `sia_allocate` request: everything run_round() needs.
struct Request {
  ClusterSpec cluster;        ///< GPU types, reservations, node names, failed nodes
  std::vector<JobSpec> jobs;  ///< the accepted jobs, in request order; goodput tables are attached as goodput functions
  RoundOptions options;       ///< the request's `policy` (and `options.strict`) over RoundOptions' defaults
  /// Jobs of the request rejected by the parser (job-level errors, `options.strict` false), in
  /// request order: `index` is the position in the request's `jobs` array, `field` the JSON path.
  /// They are not in `jobs`; decision_to_json() puts them back in request order.
  std::vector<RejectedJob> rejected;
};

/// @brief Sizes beyond which a request is rejected as absurd rather than attempted.
struct RequestLimits {
  static constexpr long long max_jobs = 1'000'000;         ///< entries of `jobs`
  static constexpr long long max_gpu_types = 1'000;        ///< entries of `cluster.gpu_types`
  static constexpr long long max_gpus_per_type = 100'000;  ///< nodes × gpus_per_node of one type
  static constexpr int max_depth = 64;                     ///< nesting of arrays and objects
  /// Elements of any one array and JSON values in the whole request (scalars, arrays and objects),
  /// checked while parsing: the parse tree of a request within max_bytes stays bounded (a 128 MiB
  /// `[[],[],...]` would otherwise take several GB).
  static constexpr std::size_t max_array_elements = 1'000'000;
  static constexpr std::size_t max_json_values = 16'000'000;
  /// Bytes of a job id, GPU type name or node name (UTF-8): names are echoed in decisions, logs
  /// and messages, and a name this long is a mistake, not a name.
  static constexpr std::size_t max_name_bytes = 256;
  /// Default size limit of load_request(), checked while reading (so an endless or huge input stops
  /// there, before any memory goes to it); `sia_allocate --max-request-bytes` changes it.
  static constexpr std::size_t max_bytes = std::size_t{128} << 20;
};

/**
 * @brief Parses and validates a request (every field: examples/requests/README.md).
 *
 * Checks everything that can be checked without solving: JSON syntax, unknown fields, types
 * (strings, integers, finite numbers, booleans), ranges, duplicate job ids and type names, unknown
 * GPU types and nodes, goodput entries for configurations the cluster does not have, and current
 * placements (unknown node, more GPUs than the node has, a GPU held twice, a size that disagrees
 * with the configuration).
 *
 * Job-level errors (anything wrong inside one entry of `jobs`, except its id duplicating another)
 * reject that job alone (Request::rejected) unless the request says `"options": {"strict": true}`;
 * request-level errors (JSON syntax, cluster, policy, warm start, options, duplicate job ids,
 * sizes) always throw.
 *
 * @param json_text    the request
 * @param source_name  prefix of error messages (a file name, "<stdin>"); may be empty
 * @throws InvalidArgument naming the source and the field, e.g.
 *         `req.json: jobs[1].goodput[3].value: must be finite and >= 0, got -1`, or the line and
 *         column of malformed JSON.
 */
[[nodiscard]] Request parse_request(std::string_view json_text, std::string_view source_name = "request");

/// @brief Reads a request from a file ("-" reads standard input) and parses it.
/// @param max_bytes  size limit, checked while reading: a longer input is rejected once that many
///                   bytes were read (default 128 MiB)
/// @throws InvalidArgument when the file cannot be read, is larger than `max_bytes`, or the request
///         is rejected.
[[nodiscard]] Request load_request(const std::filesystem::path& file, std::size_t max_bytes = RequestLimits::max_bytes);

/**
 * @brief Prints the decision of a round for a request (examples/requests/README.md), in the request's job order.
 * Every field's meaning: docs/decision.md.
 *
 * Fields: `status`, `objective`, `best_bound`, `backend`, `solve_ms`, `allocations` (job,
 * gpu_type, nodes, gpus; `batch_size`/`local_batch`/`accumulation_steps` when the round chose a
 * batch size; `placement` [{node, gpus, gpu_ids}] and `placement_status` when it computed one),
 * `unallocated` ([{job, reason, detail}]), and, when non-empty, `rejected` ([{job, field, reason}]),
 * `prices`, `unmet`, `preempted`, `evicted`, `fallback` (true when the allocation is the greedy
 * fallback because the backend produced none) and `message`. Numbers are printed so that they read
 * back as the same double; NaN or infinite values (an unknown bound) print as null.
 *
 * @param pretty  indent with two spaces instead of printing one line
 */
[[nodiscard]] std::string decision_to_json(const Request& request, const RoundResult& result, bool pretty = false);

/**
 * @brief Rounds one after another from JSON requests in one process (`sia_allocate --serve`).
 *
 * parse() reads a request as parse_request() does and run() runs it as run_round() does, with the
 * same results bit for bit; what differs is what they keep from one request to the next:
 * - a job whose id and goodput table are those of the previous request parse() read keeps that
 *   request's goodput model object (JobSpec::goodput_model_identity()); so does a job given as a
 *   `model` (Pollux's) whose `model` value is bitwise the same (the same fields in the same order,
 *   numbers written the same way: 1 and 1.0 differ) with the same kind, pipeline size and node
 *   sizes of its GPU types;
 * - a request whose `warm_start` was read from JSON (no WarmStart::cache) gets what the previous
 *   round run() ran built for each job (its usable configurations and utilities).
 * A round started from the previous decision's `warm_start` then rebuilds only the jobs that
 * changed, as a C++ caller passing RoundResult::warm_start on does. Not thread-safe: one session
 * per thread of rounds.
 */
class JsonSession {
 public:
  JsonSession();
  ~JsonSession();
  JsonSession(JsonSession&&) noexcept;
  JsonSession& operator=(JsonSession&&) noexcept;
  JsonSession(const JsonSession&) = delete;
  JsonSession& operator=(const JsonSession&) = delete;
  /// parse_request(), reusing the previous request's goodput model objects where the tables (or
  /// `model`s) are the same. A request that throws leaves the session as it was.
  [[nodiscard]] Request parse(std::string_view json_text, std::string_view source_name = "request");
  /// run_round() on `request`, its JSON warm start completed with the previous round's cache.
  [[nodiscard]] RoundResult run(const Request& request);
  /// Forgets the previous request and round.
  void clear() noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// @brief Exit status of `sia_allocate` for a round status (<sia/exit_code.hpp>): 0 (done) optimal or
/// feasible, 3 (not solved) otherwise (`error`: the backend failed; `infeasible`: non-preemptible
/// jobs' demand cannot be met).
[[nodiscard]] int exit_code(RoundStatus status) noexcept;

}  // namespace sia
