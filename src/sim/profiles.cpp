/// @file sim/profiles.cpp
/// @brief Loaders of the artifact's throughput profiles (see include/sia/sim/profiles.hpp).

#include <sia/error.hpp>
#include <sia/sim/profiles.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "sim/csv.hpp"

namespace sia::sim {
namespace {

namespace fs = std::filesystem;

using detail::Csv;
using detail::CsvRow;

int positive_int(const Csv& csv, const CsvRow& row, std::size_t col) {
  return static_cast<int>(csv.integer(row, col, 1, 1'000'000'000));
}

/// Reads step_time (> 0) and sync_time (>= 0) of a row.
void parse_times(const Csv& csv, const CsvRow& row, std::size_t c_step, std::size_t c_sync, double& step,
                 double& sync) {
  step = csv.number(row, c_step);
  if (!(step > 0.0)) csv.fail(row, c_step, "step_time must be > 0, got " + row.fields[c_step].text);
  sync = csv.number(row, c_sync);
  if (sync < 0.0) csv.fail(row, c_sync, "sync_time must be >= 0, got " + row.fields[c_sync].text);
}

std::string position(const Csv& csv, const CsvRow& row, std::size_t col) {
  return csv.source() + ":" + std::to_string(row.line) + ":" + std::to_string(row.fields[col].column);
}

}  // namespace

void parse_placement(std::string_view placement, int& nodes, int& gpus, const std::string& where) {
  if (placement.empty()) throw InvalidArgument(where + ": empty placement");
  if (placement.size() > 1000) throw InvalidArgument(where + ": placement string too long");
  nodes = 0;
  gpus = 0;
  for (char ch : placement) {
    if (ch < '0' || ch > '9')
      throw InvalidArgument(where + ": placement must be digits (GPUs per node), got '" + std::string(placement) + "'");
    if (ch != '0') {
      ++nodes;
      gpus += ch - '0';
    }
  }
  if (gpus == 0) throw InvalidArgument(where + ": placement has no GPUs: '" + std::string(placement) + "'");
}

namespace {
/// Rows of a profile CSV: the shape columns are read by `shape(csv, row, r)` (they differ between
/// placements and scalability files), the local batch and the times the same way for both.
template <class ShapeReader>
std::vector<ProfileRow> load_profile_rows(const fs::path& file, ShapeReader&& shape) {
  const Csv csv = Csv::read(file);
  csv.require_rows();
  const std::size_t c_b = csv.column("local_bsz");
  const std::size_t c_st = csv.column("step_time");
  const std::size_t c_sy = csv.column("sync_time");
  auto read_shape = shape(csv);  // resolves the shape columns once (errors name the file)
  std::vector<ProfileRow> out;
  out.reserve(csv.rows().size());
  for (const CsvRow& row : csv.rows()) {
    ProfileRow r;
    r.line = row.line;
    read_shape(row, r);
    r.local_bsz = positive_int(csv, row, c_b);
    parse_times(csv, row, c_st, c_sy, r.step_time, r.sync_time);
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

std::vector<ProfileRow> load_placements_csv(const fs::path& file) {
  return load_profile_rows(file, [](const Csv& csv) {
    const std::size_t c_pl = csv.column("placement");
    return [&csv, c_pl](const CsvRow& row, ProfileRow& r) {
      r.placement = row.fields[c_pl].text;
      parse_placement(r.placement, r.nodes, r.gpus, position(csv, row, c_pl));
    };
  });
}

std::vector<ProfileRow> load_scalability_csv(const fs::path& file) {
  return load_profile_rows(file, [](const Csv& csv) {
    const std::size_t c_n = csv.column("num_nodes");
    const std::size_t c_r = csv.column("num_replicas");
    return [&csv, c_n, c_r](const CsvRow& row, ProfileRow& r) {
      r.nodes = positive_int(csv, row, c_n);
      r.gpus = positive_int(csv, row, c_r);
      if (r.nodes > r.gpus)
        csv.fail(row, c_n, "num_nodes " + std::to_string(r.nodes) + " > num_replicas " + std::to_string(r.gpus));
    };
  });
}

ValidationTable load_validation_csv(const fs::path& file) {
  ValidationTable t;
  const std::string stem = file.stem().string();  // validation-<bsz>
  const std::string prefix = "validation-";
  long long bsz = 0;
  if (stem.rfind(prefix, 0) == 0) {
    const std::string num = stem.substr(prefix.size());
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), bsz);
    if (ec != std::errc() || p != num.data() + num.size()) bsz = 0;
  }
  if (bsz <= 0) throw InvalidArgument(file.string() + ": file name must be validation-<positive batch size>.csv");
  t.batch_size = bsz;
  const Csv csv = Csv::read(file);
  csv.require_rows();
  const std::size_t c_p = csv.column("progress");
  const std::size_t c_sq = csv.column("grad_sqr");
  const std::size_t c_v = csv.column("grad_var");
  const auto c_it = csv.find_column("iteration");
  const auto c_m = csv.find_column("metric");
  for (const CsvRow& row : csv.rows()) {
    ValidationRow v;
    v.progress = csv.number(row, c_p);
    v.grad_sqr = csv.number(row, c_sq);
    v.grad_var = csv.number(row, c_v);
    if (v.progress < 0.0) csv.fail(row, c_p, "progress must be >= 0");
    if (v.grad_sqr < 0.0) csv.fail(row, c_sq, "grad_sqr must be >= 0");
    if (v.grad_var < 0.0) csv.fail(row, c_v, "grad_var must be >= 0");
    if (c_it) v.iteration = csv.number(row, *c_it);
    if (c_m) v.metric = csv.number(row, *c_m);
    t.rows.push_back(v);
  }
  return t;
}

SeedProfile load_seed_profile(const fs::path& file) {
  SeedProfile s;
  s.model = file.stem().string();
  const Csv csv = Csv::read(file);
  csv.require_rows();
  const std::size_t c_t = csv.column("gpu_type");
  const std::size_t c_pl = csv.column("placement");
  const std::size_t c_b = csv.column("local_bsz");
  const std::size_t c_st = csv.column("step_time");
  const std::size_t c_sy = csv.column("sync_time");
  for (const CsvRow& row : csv.rows()) {
    SeedRow r;
    r.line = row.line;
    r.gpu_type = row.fields[c_t].text;
    if (r.gpu_type.empty()) csv.fail(row, c_t, "empty gpu_type");
    r.placement = row.fields[c_pl].text;
    parse_placement(r.placement, r.nodes, r.gpus, position(csv, row, c_pl));
    r.local_bsz = positive_int(csv, row, c_b);
    parse_times(csv, row, c_st, c_sy, r.step_time, r.sync_time);
    s.rows.push_back(std::move(r));
  }
  return s;
}

std::string seed_type_to_profile_type(std::string_view seed_type) {
  if (seed_type == "t4") return "aws";
  if (seed_type == "v100") return "azure";
  if (seed_type == "dgx") return "dgx-ext";
  return std::string(seed_type);
}

std::vector<SeedRow> SeedProfile::rows_for(std::string_view gpu_type) const {
  std::vector<SeedRow> out;
  for (const SeedRow& r : rows)
    if (r.gpu_type == gpu_type || seed_type_to_profile_type(r.gpu_type) == gpu_type) out.push_back(r);
  return out;
}

std::vector<std::string> SeedProfile::gpu_types() const {
  std::vector<std::string> out;
  for (const SeedRow& r : rows)
    if (std::find(out.begin(), out.end(), r.gpu_type) == out.end()) out.push_back(r.gpu_type);
  return out;
}

int TypeProfile::min_local_bsz() const noexcept {
  int m = 0;
  for (const ProfileRow& r : placements)
    if (m == 0 || r.local_bsz < m) m = r.local_bsz;
  return m;
}

int TypeProfile::max_local_bsz() const noexcept {
  int m = 0;
  for (const ProfileRow& r : placements) m = std::max(m, r.local_bsz);
  return m;
}

int TypeProfile::smallest_gpus() const noexcept {
  int s = 0;
  for (const auto& r : placements) s = s == 0 ? r.gpus : std::min(s, r.gpus);
  return s;
}

bool ModelProfile::is_pipeline() const noexcept {
  if (types.empty()) return false;
  for (const auto& t : types)
    if (t.smallest_gpus() <= 1) return false;
  return true;
}

std::vector<ProfileRow> TypeProfile::all_rows() const {
  std::vector<ProfileRow> out;
  out.reserve(placements.size() + scalability.size());
  using Key = std::tuple<int, int, int, double, double>;
  std::map<Key, bool> seen;
  auto add = [&](const ProfileRow& r) {
    if (seen.emplace(Key{r.nodes, r.gpus, r.local_bsz, r.step_time, r.sync_time}, true).second) out.push_back(r);
  };
  for (const ProfileRow& r : placements) add(r);
  for (const ProfileRow& r : scalability) add(r);
  return out;
}

const TypeProfile* ModelProfile::type(std::string_view gpu_type) const noexcept {
  for (const TypeProfile& t : types)
    if (t.gpu_type == gpu_type) return &t;
  return nullptr;
}

long long ModelProfile::init_batch_size() const noexcept {
  return validation.empty() ? 0 : validation.front().batch_size;
}

long long ModelProfile::max_batch_size() const noexcept {
  return validation.empty() ? 0 : validation.back().batch_size;
}

std::vector<std::string> list_gpu_types(const fs::path& profiles_dir, const std::string& model) {
  std::vector<std::string> out;
  const fs::path dir = profiles_dir / model;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string prefix = "placements-";
    if (e.is_regular_file() && name.rfind(prefix, 0) == 0 && e.path().extension() == ".csv") {
      const std::string t = e.path().stem().string().substr(prefix.size());
      if (!t.empty()) out.push_back(t);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> list_models(const fs::path& profiles_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(profiles_dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(profiles_dir, ec)) {
    if (!e.is_directory()) continue;
    const std::string m = e.path().filename().string();
    if (!list_gpu_types(profiles_dir, m).empty()) out.push_back(m);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ModelProfile load_model_profile(const fs::path& profiles_dir, const std::string& model) {
  const fs::path dir = profiles_dir / model;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InvalidArgument(dir.string() + ": not a directory (model '" + model + "')");
  ModelProfile mp;
  mp.model = model;
  for (const std::string& t : list_gpu_types(profiles_dir, model)) {
    TypeProfile tp;
    tp.gpu_type = t;
    tp.placements = load_placements_csv(dir / ("placements-" + t + ".csv"));
    const fs::path scal = dir / ("scalability-" + t + ".csv");
    if (fs::exists(scal, ec)) tp.scalability = load_scalability_csv(scal);
    mp.types.push_back(std::move(tp));
  }
  if (mp.types.empty())
    throw InvalidArgument(dir.string() + ": no placements-<type>.csv files (model '" + model + "')");
  // A data-parallel step includes its synchronisation: sync_time >= step_time is a broken measurement. The
  // fit (sia_fit_profiles, goodput/fit.hpp) refuses it, so the simulator, which loads profiles here too, refuses
  // it as well: both accept the same profiles. Pipeline rows hold per-micro-batch compute and all-reduce times
  // instead (gpt_pmp: sync above step is normal there).
  if (!mp.is_pipeline())
    for (const TypeProfile& tp : mp.types)
      for (const auto* rows : {&tp.placements, &tp.scalability})
        for (const ProfileRow& r : *rows)
          if (!(r.sync_time < r.step_time))
            throw InvalidArgument(
                (dir / ((rows == &tp.placements ? "placements-" : "scalability-") + tp.gpu_type + ".csv")).string() +
                ":" + std::to_string(r.line) + ": sync_time: " + std::to_string(r.sync_time) +
                " is not below step_time " + std::to_string(r.step_time) +
                " (a data-parallel step includes its synchronisation)");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("validation-", 0) == 0 && e.path().extension() == ".csv")
      mp.validation.push_back(load_validation_csv(e.path()));
  }
  std::sort(mp.validation.begin(), mp.validation.end(),
            [](const ValidationTable& a, const ValidationTable& b) { return a.batch_size < b.batch_size; });
  return mp;
}

PipelineObservation pipeline_observation(const ProfileRow& row, int stages) {
  if (stages < 1) throw InvalidArgument("pipeline: stages must be >= 1");
  if (row.gpus % stages != 0)
    throw InvalidArgument("pipeline: row at line " + std::to_string(row.line) + " has " + std::to_string(row.gpus) +
                          " GPUs, not a multiple of " + std::to_string(stages) + " stages");
  PipelineObservation o;
  o.nodes = row.nodes;
  o.gpus = row.gpus;
  o.pipelines = row.gpus / stages;
  o.micro_bsz = row.local_bsz;
  o.fwd_time = row.step_time;
  o.sync_time = row.sync_time;
  return o;
}

}  // namespace sia::sim
