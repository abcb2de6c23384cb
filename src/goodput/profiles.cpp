/// @file goodput/profiles.cpp
/// @brief CSV loaders of the artifact's throughput profiles (see include/sia/goodput/profiles.hpp).

#include <sia/error.hpp>
#include <sia/goodput/profiles.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace sia {
namespace {

namespace fs = std::filesystem;

/// A parsed CSV: header names and rows of fields with their 1-based line and column numbers.
struct CsvField {
  std::string text;
  std::size_t column = 0;  // 1-based character column where the field starts
};
struct CsvRow {
  std::size_t line = 0;
  std::vector<CsvField> fields;
};
struct Csv {
  std::string file;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
};

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

[[noreturn]] void fail(const std::string& file, std::size_t line, std::size_t column, const std::string& msg) {
  std::ostringstream os;
  os << file << ":" << line;
  if (column > 0) os << ":" << column;
  os << ": " << msg;
  throw InvalidArgument(os.str());
}

Csv read_csv(const fs::path& path) {
  Csv csv;
  csv.file = path.string();
  std::ifstream in(path);
  if (!in) throw InvalidArgument(csv.file + ": cannot open file");
  std::string line;
  std::size_t lineno = 0;
  bool have_header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;  // blank lines (e.g. a trailing newline) carry no data
    CsvRow row;
    row.line = lineno;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      const std::size_t end = comma == std::string::npos ? line.size() : comma;
      row.fields.push_back({trim(std::string_view(line).substr(start, end - start)), start + 1});
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!have_header) {
      for (auto& f : row.fields) csv.header.push_back(f.text);
      have_header = true;
    } else {
      if (row.fields.size() != csv.header.size())
        fail(csv.file, lineno, 0,
             "expected " + std::to_string(csv.header.size()) + " fields, found " + std::to_string(row.fields.size()));
      csv.rows.push_back(std::move(row));
    }
  }
  if (!have_header) throw InvalidArgument(csv.file + ": empty file (no header)");
  return csv;
}

std::size_t column_index(const Csv& csv, std::string_view name) {
  for (std::size_t i = 0; i < csv.header.size(); ++i)
    if (csv.header[i] == name) return i;
  fail(csv.file, 1, 0, "missing column '" + std::string(name) + "'");
}

bool has_column(const Csv& csv, std::string_view name) {
  return std::find(csv.header.begin(), csv.header.end(), name) != csv.header.end();
}

double parse_double(const Csv& csv, const CsvRow& row, std::size_t col) {
  const CsvField& f = row.fields[col];
  double v = 0.0;
  const char* b = f.text.data();
  const char* e = b + f.text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (f.text.empty() || ec != std::errc() || p != e)
    fail(csv.file, row.line, f.column, "column '" + csv.header[col] + "': not a number: '" + f.text + "'");
  if (!std::isfinite(v))
    fail(csv.file, row.line, f.column, "column '" + csv.header[col] + "': not a finite number: '" + f.text + "'");
  return v;
}

int parse_positive_int(const Csv& csv, const CsvRow& row, std::size_t col) {
  const double v = parse_double(csv, row, col);
  const CsvField& f = row.fields[col];
  if (v < 1.0 || v != std::floor(v) || v > 1e9)
    fail(csv.file, row.line, f.column, "column '" + csv.header[col] + "': expected a positive integer, got '" + f.text + "'");
  return static_cast<int>(v);
}

/// Reads step_time (> 0) and sync_time (>= 0) of a row.
void parse_times(const Csv& csv, const CsvRow& row, std::size_t c_step, std::size_t c_sync, double& step, double& sync) {
  step = parse_double(csv, row, c_step);
  if (!(step > 0.0)) fail(csv.file, row.line, row.fields[c_step].column, "step_time must be > 0, got " + row.fields[c_step].text);
  sync = parse_double(csv, row, c_sync);
  if (sync < 0.0) fail(csv.file, row.line, row.fields[c_sync].column, "sync_time must be >= 0, got " + row.fields[c_sync].text);
}

void require_rows(const Csv& csv) {
  if (csv.rows.empty()) throw InvalidArgument(csv.file + ": no data rows");
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
  const Csv csv = read_csv(file);
  require_rows(csv);
  const std::size_t c_b = column_index(csv, "local_bsz");
  const std::size_t c_st = column_index(csv, "step_time");
  const std::size_t c_sy = column_index(csv, "sync_time");
  auto read_shape = shape(csv);  // resolves the shape columns once (errors name the file)
  std::vector<ProfileRow> out;
  out.reserve(csv.rows.size());
  for (const CsvRow& row : csv.rows) {
    ProfileRow r;
    r.line = row.line;
    read_shape(row, r);
    r.local_bsz = parse_positive_int(csv, row, c_b);
    parse_times(csv, row, c_st, c_sy, r.step_time, r.sync_time);
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

std::vector<ProfileRow> load_placements_csv(const fs::path& file) {
  return load_profile_rows(file, [](const Csv& csv) {
    const std::size_t c_pl = column_index(csv, "placement");
    return [&csv, c_pl](const CsvRow& row, ProfileRow& r) {
      r.placement = row.fields[c_pl].text;
      const std::string where = csv.file + ":" + std::to_string(row.line) + ":" + std::to_string(row.fields[c_pl].column);
      parse_placement(r.placement, r.nodes, r.gpus, where);
    };
  });
}

std::vector<ProfileRow> load_scalability_csv(const fs::path& file) {
  return load_profile_rows(file, [](const Csv& csv) {
    const std::size_t c_n = column_index(csv, "num_nodes");
    const std::size_t c_r = column_index(csv, "num_replicas");
    return [&csv, c_n, c_r](const CsvRow& row, ProfileRow& r) {
      r.nodes = parse_positive_int(csv, row, c_n);
      r.gpus = parse_positive_int(csv, row, c_r);
      if (r.nodes > r.gpus)
        fail(csv.file, row.line, row.fields[c_n].column,
             "num_nodes " + std::to_string(r.nodes) + " > num_replicas " + std::to_string(r.gpus));
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
  const Csv csv = read_csv(file);
  require_rows(csv);
  const std::size_t c_p = column_index(csv, "progress");
  const std::size_t c_sq = column_index(csv, "grad_sqr");
  const std::size_t c_v = column_index(csv, "grad_var");
  const bool has_it = has_column(csv, "iteration");
  const bool has_m = has_column(csv, "metric");
  const std::size_t c_it = has_it ? column_index(csv, "iteration") : 0;
  const std::size_t c_m = has_m ? column_index(csv, "metric") : 0;
  for (const CsvRow& row : csv.rows) {
    ValidationRow v;
    v.progress = parse_double(csv, row, c_p);
    v.grad_sqr = parse_double(csv, row, c_sq);
    v.grad_var = parse_double(csv, row, c_v);
    if (v.progress < 0.0) fail(csv.file, row.line, row.fields[c_p].column, "progress must be >= 0");
    if (v.grad_sqr < 0.0) fail(csv.file, row.line, row.fields[c_sq].column, "grad_sqr must be >= 0");
    if (v.grad_var < 0.0) fail(csv.file, row.line, row.fields[c_v].column, "grad_var must be >= 0");
    if (has_it) v.iteration = parse_double(csv, row, c_it);
    if (has_m) v.metric = parse_double(csv, row, c_m);
    t.rows.push_back(v);
  }
  return t;
}

SeedProfile load_seed_profile(const fs::path& file) {
  SeedProfile s;
  s.model = file.stem().string();
  const Csv csv = read_csv(file);
  require_rows(csv);
  const std::size_t c_t = column_index(csv, "gpu_type");
  const std::size_t c_pl = column_index(csv, "placement");
  const std::size_t c_b = column_index(csv, "local_bsz");
  const std::size_t c_st = column_index(csv, "step_time");
  const std::size_t c_sy = column_index(csv, "sync_time");
  for (const CsvRow& row : csv.rows) {
    SeedRow r;
    r.line = row.line;
    r.gpu_type = row.fields[c_t].text;
    if (r.gpu_type.empty()) fail(csv.file, row.line, row.fields[c_t].column, "empty gpu_type");
    r.placement = row.fields[c_pl].text;
    const std::string where = csv.file + ":" + std::to_string(row.line) + ":" + std::to_string(row.fields[c_pl].column);
    parse_placement(r.placement, r.nodes, r.gpus, where);
    r.local_bsz = parse_positive_int(csv, row, c_b);
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
  if (mp.types.empty()) throw InvalidArgument(dir.string() + ": no placements-<type>.csv files (model '" + model + "')");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("validation-", 0) == 0 && e.path().extension() == ".csv")
      mp.validation.push_back(load_validation_csv(e.path()));
  }
  std::sort(mp.validation.begin(), mp.validation.end(),
            [](const ValidationTable& a, const ValidationTable& b) { return a.batch_size < b.batch_size; });
  return mp;
}

}  // namespace sia
