#include <sia/error.hpp>
#include <sia/sim/random.hpp>
#include <sia/sim/workload.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "sim/csv.hpp"

namespace sia::sim {

Workload parse_workload_csv(std::istream& in, std::string_view source) {
  Workload w;
  w.source = std::string(source);
  w.name = std::filesystem::path(w.source).stem().string();
  const detail::Csv csv = detail::Csv::parse(in, w.source);
  const std::size_t c_name = csv.column("name"), c_time = csv.column("time"), c_app = csv.column("application");
  const std::size_t c_rep = csv.column("num_replicas"), c_bsz = csv.column("batch_size");
  const auto c_cat = csv.find_column("category");
  const auto c_pipe = csv.find_column("pipeline_size");
  std::unordered_set<std::string> names;
  for (const detail::CsvRow& row : csv.rows()) {
    const auto& f = row.fields;
    WorkloadJob j;
    j.line = static_cast<int>(row.line);
    j.name = f[c_name].text;
    if (j.name.empty()) csv.fail(row, c_name, "empty job name");
    if (!names.insert(j.name).second) csv.fail(row, c_name, "duplicate job name '" + j.name + "'");
    j.time = csv.number(row, c_time);
    if (j.time < 0) csv.fail(row, c_time, "negative submission time " + f[c_time].text);
    if (!w.jobs.empty() && j.time < w.jobs.back().time)
      csv.fail(
          row, c_time,
          "submission times are not sorted (" + f[c_time].text + " after " + std::to_string(w.jobs.back().time) + ")");
    j.application = f[c_app].text;
    if (j.application.empty()) csv.fail(row, c_app, "empty application");
    j.num_replicas = static_cast<int>(std::min<long long>(csv.integer(row, c_rep, 1, 1'000'000'000'000LL), 1 << 20));
    j.batch_size = csv.integer(row, c_bsz, 1, 1'000'000'000'000LL);
    if (c_cat) {
      const std::string& c = f[*c_cat].text;
      // The reference writes "None" for adaptive jobs.
      const auto kind = c.empty() || c == "None" ? std::optional<JobKind>(JobKind::adaptive) : parse_job_kind(c);
      if (!kind)
        csv.fail(row, *c_cat,
                 "unknown category '" + c + "' (expected adaptive, strong-scaling, scale-gpus, rigid or hybrid)");
      j.category = *kind;
    }
    if (c_pipe && !f[*c_pipe].text.empty()) {
      const std::string& text = f[*c_pipe].text;
      if (j.category != JobKind::hybrid)
        csv.fail(row, *c_pipe, "pipeline_size '" + text + "' given for a job whose category is not hybrid");
      std::stringstream ss(text);
      std::string item;
      while (std::getline(ss, item, ';')) {
        const auto colon = item.rfind(':');
        std::string type = colon == std::string::npos ? "" : item.substr(0, colon);
        const std::string num = colon == std::string::npos ? item : item.substr(colon + 1);
        char* end = nullptr;
        const long v = std::strtol(num.c_str(), &end, 10);
        if (num.empty() || end != num.c_str() + num.size() || v < 1 || v > 4096 ||
            (colon != std::string::npos && type.empty()))
          csv.fail(row, *c_pipe,
                   "pipeline_size '" + text + "': expected a GPU count in [1, 4096] or type:count;type:count");
        for (const auto& [t, p] : j.pipeline_sizes)
          if (t == type) csv.fail(row, *c_pipe, "pipeline_size '" + text + "': type '" + type + "' given twice");
        j.pipeline_sizes.emplace_back(std::move(type), static_cast<int>(v));
      }
      if (j.pipeline_sizes.size() > 1)
        for (const auto& [t, p] : j.pipeline_sizes)
          if (t.empty())
            csv.fail(row, *c_pipe, "pipeline_size '" + text + "': a bare count cannot be combined with type:count");
    }
    w.jobs.push_back(std::move(j));
  }
  return w;
}

std::vector<Workload> load_workloads(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path());
    // Natural order so that workload-10 follows workload-9.
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
      const auto sa = a.filename().string(), sb = b.filename().string();
      return sa.size() != sb.size() ? sa.size() < sb.size() : sa < sb;
    });
    if (files.empty()) throw InvalidArgument(path.string() + ": directory holds no *.csv workload");
  } else if (std::filesystem::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    throw InvalidArgument(path.string() + ": no such workload file or directory");
  }
  std::vector<Workload> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw InvalidArgument(f.string() + ": cannot open");
    out.push_back(parse_workload_csv(in, f.string()));
  }
  return out;
}

KindMix parse_kind_mix(std::string_view text) {
  KindMix m{0, 0, 0};
  bool seen[3] = {false, false, false};
  std::stringstream ss{std::string(text)};
  std::string item;
  int entries = 0;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InvalidArgument("--mix: expected kind=percent, got '" + item +
                            "' (e.g. adaptive=60,strong-scaling=20,rigid=20)");
    const auto kind = parse_job_kind(item.substr(0, eq));
    if (!kind || *kind == JobKind::hybrid)
      throw InvalidArgument("--mix: unknown kind '" + item.substr(0, eq) +
                            "' (expected adaptive, strong-scaling or rigid; hybrid jobs come from their model)");
    const std::string num = item.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !(v >= 0.0) || v > 100.0)
      throw InvalidArgument("--mix: '" + item + "': the percentage must be a number in [0, 100]");
    const int k = *kind == JobKind::adaptive ? 0 : *kind == JobKind::strong_scaling ? 1 : 2;
    if (seen[k]) throw InvalidArgument("--mix: kind '" + item.substr(0, eq) + "' given twice");
    seen[k] = true;
    (k == 0 ? m.adaptive : k == 1 ? m.strong_scaling : m.rigid) = v;
    ++entries;
  }
  if (entries == 0) throw InvalidArgument("--mix: empty (e.g. adaptive=60,strong-scaling=20,rigid=20)");
  const double sum = m.adaptive + m.strong_scaling + m.rigid;
  if (std::abs(sum - 100.0) > 1e-6)
    throw InvalidArgument("--mix: the percentages sum to " + std::to_string(sum) + ", not 100");
  return m;
}

void apply_kind_mix(Workload& w, const KindMix& mix, std::uint64_t seed) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (w.jobs[i].category != JobKind::hybrid) idx.push_back(i);
  // Fisher-Yates with the portable bounded draw (sim/random.hpp): the same mix from every standard library.
  std::mt19937_64 rng(seed);
  for (std::size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[uniform_below(rng, i)]);
  const auto n = static_cast<double>(idx.size());
  const auto strong = static_cast<std::size_t>(std::llround(n * mix.strong_scaling / 100.0));
  const auto rigid = std::min(idx.size() - std::min(strong, idx.size()),
                              static_cast<std::size_t>(std::llround(n * mix.rigid / 100.0)));
  for (std::size_t k = 0; k < idx.size(); ++k)
    w.jobs[idx[k]].category = k < strong           ? JobKind::strong_scaling
                              : k < strong + rigid ? JobKind::rigid
                                                   : JobKind::adaptive;
}

Workload synthetic_philly_workload(std::uint64_t seed, double jobs_per_hour, double hours, long long max_jobs) {
  if (!(jobs_per_hour > 0) || !std::isfinite(jobs_per_hour) || !(hours > 0) ||
      (max_jobs <= 0 && !std::isfinite(jobs_per_hour * hours)))
    throw InvalidArgument("synthetic workload: rate and duration must be positive");
  struct Choice {
    const char* app;
    int replicas;
    long long bsz;
  };
  // Model mix and TunedJobs configurations of the 8 shipped Philly workloads (1280 jobs).
  struct Model {
    const char* app;
    double jobs;
    std::vector<Choice> configs;
  };
  const std::vector<Model> mix = {
      {"cifar10", 998, {{"cifar10", 6, 2048}, {"cifar10", 8, 2048}, {"cifar10", 12, 4096}, {"cifar10", 16, 4096}}},
      {"deepspeech2", 111, {{"deepspeech2", 6, 320}, {"deepspeech2", 8, 320}, {"deepspeech2", 12, 640}}},
      {"bert", 86, {{"bert", 6, 384}, {"bert", 8, 384}, {"bert", 12, 384}, {"bert", 16, 384}}},
      {"yolov3", 59, {{"yolov3", 4, 64}}},
      {"imagenet", 26, {{"imagenet", 10, 1600}, {"imagenet", 12, 3200}, {"imagenet", 14, 3200}}},
  };
  // Portable draws (sim/random.hpp): the same workload from every standard library.
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (const auto& m : mix) weights.push_back(m.jobs);
  Workload w;
  w.name = "synthetic-philly";
  w.source = "built-in (seed " + std::to_string(seed) + ")";
  double t = 0.0;
  for (long long i = 0; max_jobs <= 0 || i < max_jobs; ++i) {
    t += exponential(rng, jobs_per_hour / 3600.0);
    if (t >= hours * 3600.0) break;
    const auto& m = mix[discrete(rng, weights)];
    const auto& c = m.configs[uniform_below(rng, m.configs.size())];
    WorkloadJob j;
    j.name = std::string(m.app) + "-" + std::to_string(i);
    j.time = std::round(t);
    j.application = m.app;
    j.num_replicas = c.replicas;
    j.batch_size = c.bsz;
    j.line = static_cast<int>(std::min<long long>(i + 2, 1LL << 30));
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace sia::sim
