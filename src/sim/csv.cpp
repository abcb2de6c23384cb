// The one CSV reader of the simulator's inputs (see csv.hpp).
#include <sia/error.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/csv.hpp"

namespace sia::sim::detail {
namespace {

std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return s.substr(b, e - b);
}

// A field or column name quoted for a message: a pathological one (a megabyte-long field) is
// shortened, with its length, so the message stays readable.
std::string shown(std::string_view s) {
  constexpr std::size_t max_shown = 64;
  if (s.size() <= max_shown) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, max_shown / 2)) + "...' (" + std::to_string(s.size()) + " bytes)";
}

CsvRow split(const std::string& line, std::size_t lineno) {
  CsvRow row;
  row.line = lineno;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string::npos ? line.size() : comma;
    row.fields.push_back({std::string(trim(std::string_view(line).substr(start, end - start))), row.fields.size() + 1});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return row;
}

}  // namespace

Csv Csv::parse(std::istream& in, std::string source) {
  Csv csv;
  csv.source_ = std::move(source);
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    // A UTF-8 byte-order mark (spreadsheet exports) would otherwise glue itself to the first column name.
    if (lineno == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    if (trim(line).empty()) continue;  // blank lines (e.g. a trailing newline) carry no data
    CsvRow row = split(line, lineno);
    if (csv.header_.empty()) {
      csv.header_line_ = lineno;
      for (auto& f : row.fields) csv.header_.push_back(std::move(f.text));
      continue;
    }
    if (row.fields.size() != csv.header_.size())
      csv.fail(row, std::string::npos,
               "expected " + std::to_string(csv.header_.size()) + " columns, got " + std::to_string(row.fields.size()));
    csv.rows_.push_back(std::move(row));
  }
  if (csv.header_.empty()) throw InvalidArgument(csv.source_ + ": empty file (no header)");
  return csv;
}

Csv Csv::read(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InvalidArgument(file.string() + ": cannot open file");
  return parse(in, file.string());
}

std::optional<std::size_t> Csv::find_column(std::string_view name) const {
  const auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - header_.begin());
}

std::size_t Csv::column(std::string_view name) const {
  if (const auto c = find_column(name)) return *c;
  throw InvalidArgument(source_ + ":" + std::to_string(header_line_) + ": missing column " + shown(name));
}

void Csv::require_rows() const {
  if (rows_.empty()) throw InvalidArgument(source_ + ":" + std::to_string(header_line_) + ": no data rows");
}

void Csv::fail(const CsvRow& row, std::size_t col, const std::string& message) const {
  std::ostringstream os;
  os << source_ << ":" << row.line;
  if (col < row.fields.size()) os << ":" << row.fields[col].column;
  os << ": " << message;
  throw InvalidArgument(os.str());
}

double Csv::number(const CsvRow& row, std::size_t col) const {
  const CsvField& f = row.fields[col];
  // strtod, not std::from_chars: libc++ (up to 19) has no floating-point from_chars. Decimal
  // notation only: strtod's hexadecimal floats, "inf" and "nan" are refused. The programs never
  // change the C locale, so the decimal point is '.'.
  const bool decimal = !f.text.empty() && f.text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const double v = decimal ? std::strtod(f.text.c_str(), &end) : 0.0;
  if (!decimal || end != f.text.c_str() + f.text.size() || errno == ERANGE)
    fail(row, col, "column " + shown(header_[col]) + ": not a number: " + shown(f.text));
  if (!std::isfinite(v)) fail(row, col, "column " + shown(header_[col]) + ": not a finite number: " + shown(f.text));
  return v;
}

long long Csv::integer(const CsvRow& row, std::size_t col, long long lo, long long hi) const {
  const double v = number(row, col);
  if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
    fail(row, col,
         "column " + shown(header_[col]) + ": expected an integer in [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "], got " + shown(row.fields[col].text));
  return static_cast<long long>(v);
}

}  // namespace sia::sim::detail
