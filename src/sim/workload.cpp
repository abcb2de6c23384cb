#include <sia/error.hpp>
#include <sia/sim/workload.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

namespace sia::sim {

namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = line.find(',', start);
    out.push_back(trim(std::string_view(line).substr(start, pos == std::string::npos ? std::string::npos : pos - start)));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

}  // namespace

Workload parse_workload_csv(std::istream& in, std::string_view source) {
  Workload w;
  w.source = std::string(source);
  w.name = std::filesystem::path(w.source).stem().string();
  std::string line;
  int lineno = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++lineno;
    if (!trim(line).empty()) header = split(line);
  }
  const std::string src(source);
  if (header.empty()) throw InvalidArgument(src + ": empty workload file (no header)");
  auto col = [&](const char* n, bool required) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == n) return static_cast<int>(i);
    if (required) throw InvalidArgument(src + ":" + std::to_string(lineno) + ": missing column '" + n + "'");
    return -1;
  };
  const int c_name = col("name", true), c_time = col("time", true), c_app = col("application", true);
  const int c_rep = col("num_replicas", true), c_bsz = col("batch_size", true), c_cat = col("category", false);
  std::unordered_set<std::string> names;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    const auto f = split(line);
    auto where = [&](int c) {
      return src + ":" + std::to_string(lineno) + ":" + std::to_string(c + 1) + " (" +
             header[static_cast<std::size_t>(c)] + ")";
    };
    if (f.size() != header.size())
      throw InvalidArgument(src + ":" + std::to_string(lineno) + ": expected " + std::to_string(header.size()) +
                            " columns, got " + std::to_string(f.size()));
    auto num = [&](int c) {
      const std::string& s = f[static_cast<std::size_t>(c)];
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
        throw InvalidArgument(where(c) + ": not a number: '" + s + "'");
      return v;
    };
    auto integer = [&](int c, double lo) {
      const double v = num(c);
      if (v != std::floor(v) || v < lo || v > 1e12)
        throw InvalidArgument(where(c) + ": expected an integer >= " + std::to_string(static_cast<long long>(lo)) +
                              ", got '" + f[static_cast<std::size_t>(c)] + "'");
      return static_cast<long long>(v);
    };
    WorkloadJob j;
    j.line = lineno;
    j.name = f[static_cast<std::size_t>(c_name)];
    if (j.name.empty()) throw InvalidArgument(where(c_name) + ": empty job name");
    if (!names.insert(j.name).second) throw InvalidArgument(where(c_name) + ": duplicate job name '" + j.name + "'");
    j.time = num(c_time);
    if (j.time < 0) throw InvalidArgument(where(c_time) + ": negative submission time " + f[static_cast<std::size_t>(c_time)]);
    if (!w.jobs.empty() && j.time < w.jobs.back().time)
      throw InvalidArgument(where(c_time) + ": submission times are not sorted (" + f[static_cast<std::size_t>(c_time)] +
                            " after " + std::to_string(w.jobs.back().time) + ")");
    j.application = f[static_cast<std::size_t>(c_app)];
    if (j.application.empty()) throw InvalidArgument(where(c_app) + ": empty application");
    j.num_replicas = static_cast<int>(std::min<long long>(integer(c_rep, 1), 1 << 20));
    j.batch_size = integer(c_bsz, 1);
    if (c_cat >= 0) {
      const std::string& c = f[static_cast<std::size_t>(c_cat)];
      if (c.empty() || c == "adaptive" || c == "None") j.category = JobKind::adaptive;
      else if (c == "strong-scaling" || c == "scale-gpus") j.category = JobKind::strong_scaling;
      else if (c == "rigid") j.category = JobKind::rigid;
      else
        throw InvalidArgument(where(c_cat) + ": unknown category '" + c +
                              "' (expected adaptive, strong-scaling, scale-gpus or rigid)");
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

Workload synthetic_philly_workload(std::uint64_t seed, double jobs_per_hour, double hours) {
  if (!(jobs_per_hour > 0) || !(hours > 0) || !std::isfinite(jobs_per_hour * hours))
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
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (const auto& m : mix) weights.push_back(m.jobs);
  std::discrete_distribution<std::size_t> pick_model(weights.begin(), weights.end());
  std::exponential_distribution<double> gap(jobs_per_hour / 3600.0);
  Workload w;
  w.name = "synthetic-philly";
  w.source = "built-in (seed " + std::to_string(seed) + ")";
  double t = 0.0;
  for (int i = 0;; ++i) {
    t += gap(rng);
    if (t >= hours * 3600.0) break;
    const auto& m = mix[pick_model(rng)];
    std::uniform_int_distribution<std::size_t> pick_cfg(0, m.configs.size() - 1);
    const auto& c = m.configs[pick_cfg(rng)];
    WorkloadJob j;
    j.name = std::string(m.app) + "-" + std::to_string(i);
    j.time = std::round(t);
    j.application = m.app;
    j.num_replicas = c.replicas;
    j.batch_size = c.bsz;
    j.line = i + 2;
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace sia::sim
