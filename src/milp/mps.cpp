// MPS reader and writer for MilpModel (see include/sia/milp/mps.hpp for the supported dialect).
#include <sia/error.hpp>
#include <sia/milp/mps.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "milp/compressed_matrix.hpp"

namespace sia {
namespace {

constexpr double kMpsInfinity = 1e30;  // CoinMpsIO's convention: |value| >= 1e30 is infinite

struct Token {
  std::string text;
  std::size_t column = 1;  // 1-based column of the first character
};

std::vector<Token> split_free(const std::string& line) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    out.push_back({line.substr(start, i - start), start + 1});
  }
  return out;
}

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

/// Fixed MPS: fields at columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61 (1-based); empty fields dropped.
std::vector<Token> split_fixed(const std::string& line) {
  static constexpr std::size_t begin[] = {1, 4, 14, 24, 39, 49};  // 0-based
  static constexpr std::size_t end[] = {3, 12, 22, 36, 47, 61};   // exclusive
  std::vector<Token> out;
  for (std::size_t f = 0; f < 6; ++f) {
    if (line.size() <= begin[f]) break;
    // The last field of a line may run past its nominal end (long numbers): take the rest.
    const std::size_t stop = f == 5 ? line.size() : std::min(end[f], line.size());
    std::string text = trim(line.substr(begin[f], stop - begin[f]));
    if (!text.empty()) out.push_back({std::move(text), begin[f] + 1});
  }
  return out;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class MpsParser {
 public:
  MpsParser(std::istream& in, std::string_view source, MpsFormat format)
      : in_(in), source_(source), format_(format) {}

  MilpModel parse() {
    model_.sense = MilpSense::minimize;
    std::string line;
    bool ended = false;
    while (std::getline(in_, line)) {
      ++line_no_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      if (line[0] == '*') continue;  // comment
      if (!std::isspace(static_cast<unsigned char>(line[0]))) {
        section_line(line);
        if (section_ == Section::endata) {
          ended = true;
          break;
        }
        continue;
      }
      data_line(line);
    }
    if (in_.bad()) fail(1, "read error");
    if (!ended) fail(1, "missing ENDATA");
    for (std::size_t j = 0; j < model_.col_lower.size(); ++j) {
      if (model_.col_lower[j] > model_.col_upper[j])
        fail_at(bound_line_[j], 1, "column '" + model_.col_names[j] + "' has lower bound " +
                                       num(model_.col_lower[j]) + " > upper bound " + num(model_.col_upper[j]));
    }
    return std::move(model_);
  }

 private:
  enum class Section { none, name, objsense, rows, columns, rhs, ranges, bounds, endata };

  std::istream& in_;
  std::string source_;
  MpsFormat format_;
  std::size_t line_no_ = 0;
  Section section_ = Section::none;
  MilpModel model_;
  // rows: index >= 0 constraint, -1 objective, -2 dropped free row
  std::unordered_map<std::string, int> rows_;
  std::vector<char> row_type_;  // 'L', 'G', 'E' per constraint
  std::vector<double> rhs_;     // per constraint; applied at the end of RHS/RANGES via finish_rows
  std::vector<double> range_;   // NaN = none
  std::unordered_map<std::string, int> cols_;
  std::vector<char> lower_given_;
  std::vector<std::size_t> bound_line_;
  std::string objective_name_;
  bool have_objective_ = false;
  bool in_integer_block_ = false;
  bool rows_finished_ = false;

  [[noreturn]] void fail_at(std::size_t line, std::size_t column, const std::string& what) const {
    std::ostringstream msg;
    msg << source_ << ':' << line << ':' << column << ": " << what;
    throw InvalidArgument(msg.str());
  }
  [[noreturn]] void fail(std::size_t column, const std::string& what) const { fail_at(line_no_, column, what); }

  static std::string num(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  }

  double number(const Token& t) const {
    const char* begin = t.text.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0') fail(t.column, "'" + t.text + "' is not a number");
    if (std::isnan(v)) fail(t.column, "NaN is not allowed ('" + t.text + "')");
    if (v >= kMpsInfinity) return MilpModel::inf;
    if (v <= -kMpsInfinity) return -MilpModel::inf;
    return v;
  }

  void section_line(const std::string& line) {
    const auto tokens = split_free(line);
    const std::string key = upper(tokens.front().text);
    if (key == "NAME") {
      section_ = Section::name;
    } else if (key == "OBJSENSE" || key == "OBJSENS") {
      section_ = Section::objsense;
      if (tokens.size() >= 2) set_sense(tokens[1]);
    } else if (key == "OBJNAME") {
      if (tokens.size() < 2) fail(1, "OBJNAME without a row name");
      objective_name_ = tokens[1].text;
      section_ = Section::none;
    } else if (key == "ROWS") {
      section_ = Section::rows;
    } else if (key == "COLUMNS") {
      section_ = Section::columns;
    } else if (key == "RHS") {
      section_ = Section::rhs;
    } else if (key == "RANGES") {
      section_ = Section::ranges;
    } else if (key == "BOUNDS") {
      finish_rows();
      section_ = Section::bounds;
    } else if (key == "ENDATA") {
      finish_rows();
      section_ = Section::endata;
    } else if (key == "SOS" || key == "QUADOBJ" || key == "QSECTION" || key == "QMATRIX" || key == "QCMATRIX" ||
               key == "INDICATORS" || key == "GENERAL" || key == "CSECTION") {
      fail(1, "section " + key + " is not supported");
    } else {
      fail(1, "unknown section '" + tokens.front().text + "'");
    }
  }

  void set_sense(const Token& t) {
    const std::string s = upper(t.text);
    if (s == "MAX" || s == "MAXIMIZE" || s == "MAXIMISE")
      model_.sense = MilpSense::maximize;
    else if (s == "MIN" || s == "MINIMIZE" || s == "MINIMISE")
      model_.sense = MilpSense::minimize;
    else
      fail(t.column, "unknown objective sense '" + t.text + "' (expected MIN or MAX)");
  }

  void data_line(const std::string& line) {
    const auto tokens = format_ == MpsFormat::fixed ? split_fixed(line) : split_free(line);
    if (tokens.empty()) return;
    switch (section_) {
      case Section::objsense: set_sense(tokens.front()); break;
      case Section::rows: row_line(tokens); break;
      case Section::columns: column_line(tokens); break;
      case Section::rhs: rhs_line(tokens, false); break;
      case Section::ranges: rhs_line(tokens, true); break;
      case Section::bounds: bound_line(tokens); break;
      case Section::name: break;  // continuation of NAME: ignore
      case Section::none:
      case Section::endata: fail(tokens.front().column, "data outside of a section");
    }
  }

  void row_line(const std::vector<Token>& t) {
    if (t.size() != 2) fail(t.front().column, "ROWS lines need a type and a name");
    const std::string type = upper(t[0].text);
    const std::string& name = t[1].text;
    if (rows_.count(name) != 0) fail(t[1].column, "row '" + name + "' is defined twice");
    if (type == "N") {
      const bool is_objective = objective_name_.empty() ? !have_objective_ : name == objective_name_;
      if (is_objective) {
        rows_[name] = -1;
        have_objective_ = true;
      } else {
        rows_[name] = -2;  // a free row: no constraint, its coefficients are dropped
      }
      return;
    }
    if (type != "L" && type != "G" && type != "E") fail(t[0].column, "unknown row type '" + t[0].text + "'");
    rows_[name] = model_.add_row(-MilpModel::inf, MilpModel::inf, name);
    row_type_.push_back(type[0]);
    rhs_.push_back(0.0);
    range_.push_back(std::numeric_limits<double>::quiet_NaN());
  }

  int column_index(const Token& t, bool create) {
    auto it = cols_.find(t.text);
    if (it != cols_.end()) return it->second;
    if (!create) fail(t.column, "unknown column '" + t.text + "'");
    const int j = model_.add_col(0.0, 0.0, MilpModel::inf, in_integer_block_, t.text);
    cols_.emplace(t.text, j);
    lower_given_.push_back(0);
    bound_line_.push_back(line_no_);
    return j;
  }

  int row_index(const Token& t) const {
    auto it = rows_.find(t.text);
    if (it == rows_.end()) fail(t.column, "unknown row '" + t.text + "'");
    return it->second;
  }

  void column_line(const std::vector<Token>& t) {
    if (t.size() >= 3 && (t[1].text == "'MARKER'" || t[1].text == "MARKER")) {
      const std::string kind = upper(t[2].text);
      if (kind == "'INTORG'" || kind == "INTORG")
        in_integer_block_ = true;
      else if (kind == "'INTEND'" || kind == "INTEND")
        in_integer_block_ = false;
      else
        fail(t[2].column, "unknown marker '" + t[2].text + "'");
      return;
    }
    if (t.size() != 3 && t.size() != 5)
      fail(t.front().column, "COLUMNS lines need a column name and one or two (row, value) pairs");
    const int j = column_index(t[0], true);
    if (in_integer_block_ && !model_.is_integer[static_cast<std::size_t>(j)])
      model_.is_integer[static_cast<std::size_t>(j)] = 1;
    for (std::size_t k = 1; k + 1 < t.size(); k += 2) {
      const int r = row_index(t[k]);
      const double v = number(t[k + 1]);
      if (std::isinf(v)) fail(t[k + 1].column, "infinite coefficient");
      if (r == -1)
        model_.obj[static_cast<std::size_t>(j)] += v;
      else if (r >= 0)
        model_.add_entry(r, j, v);
    }
  }

  void rhs_line(const std::vector<Token>& t, bool ranges) {
    // [set name] row value [row value]: 3 or 5 fields with a set name, 2 or 4 without.
    const std::size_t first = t.size() % 2 == 1 ? 1 : 0;
    if (t.size() < 2 || t.size() > 5) fail(t.front().column, std::string(ranges ? "RANGES" : "RHS") + " lines need (row, value) pairs");
    for (std::size_t k = first; k + 1 < t.size(); k += 2) {
      const int r = row_index(t[k]);
      const double v = number(t[k + 1]);
      if (r == -2) continue;
      if (r == -1) {
        if (ranges) fail(t[k].column, "a range on the objective row");
        if (std::isinf(v)) fail(t[k + 1].column, "infinite objective constant");
        model_.obj_offset = -v;  // CPLEX/CoinMpsIO convention: RHS of the objective = -constant
        continue;
      }
      auto& slot = ranges ? range_[static_cast<std::size_t>(r)] : rhs_[static_cast<std::size_t>(r)];
      slot = v;
    }
  }

  /// Turns row types, right-hand sides and ranges into row bounds (once, after RHS and RANGES).
  void finish_rows() {
    if (rows_finished_) return;
    rows_finished_ = true;
    for (std::size_t i = 0; i < row_type_.size(); ++i) {
      const double b = rhs_[i];
      const double r = range_[i];
      double lo = -MilpModel::inf, up = MilpModel::inf;
      switch (row_type_[i]) {
        case 'L':
          up = b;
          if (!std::isnan(r)) lo = b - std::abs(r);
          break;
        case 'G':
          lo = b;
          if (!std::isnan(r)) up = b + std::abs(r);
          break;
        default:  // 'E'
          lo = up = b;
          if (!std::isnan(r)) {
            if (r > 0) up = b + r;
            else lo = b + r;
          }
          break;
      }
      if (std::isnan(lo) || std::isnan(up) || lo > up || lo == MilpModel::inf || up == -MilpModel::inf)
        fail(1, "row '" + model_.row_names[i] + "' gets invalid bounds from its RHS/RANGES");
      model_.row_lower[i] = lo;
      model_.row_upper[i] = up;
    }
  }

  void bound_line(const std::vector<Token>& t) {
    const std::string type = upper(t[0].text);
    const bool has_value = type == "UP" || type == "LO" || type == "FX" || type == "LI" || type == "UI";
    const bool no_value = type == "FR" || type == "MI" || type == "PL" || type == "BV";
    if (type == "SC") fail(t[0].column, "semi-continuous bounds (SC) are not supported");
    if (!has_value && !no_value) fail(t[0].column, "unknown bound type '" + t[0].text + "'");
    // type [set name] column [value]
    const std::size_t want = has_value ? 3 : 2;
    std::size_t col_pos;
    if (t.size() == want + 1)
      col_pos = 2;
    else if (t.size() == want)
      col_pos = 1;
    else if (no_value && t.size() == want + 2)  // some writers put a (ignored) value after BV/FR/MI/PL
      col_pos = 2;
    else
      fail(t[0].column, "malformed " + type + " bound line");
    const int j = column_index(t[col_pos], false);
    const auto js = static_cast<std::size_t>(j);
    double v = 0.0;
    if (has_value) {
      if (col_pos + 1 >= t.size()) fail(t[0].column, "bound " + type + " needs a value");
      v = number(t[col_pos + 1]);
    }
    bound_line_[js] = line_no_;
    auto& lo = model_.col_lower[js];
    auto& up = model_.col_upper[js];
    if (type == "UP" || type == "UI") {
      up = v;
      if (v < 0 && !lower_given_[js] && lo == 0.0) lo = -MilpModel::inf;
      if (type == "UI") model_.is_integer[js] = 1;
    } else if (type == "LO" || type == "LI") {
      lo = v;
      lower_given_[js] = 1;
      if (type == "LI") model_.is_integer[js] = 1;
    } else if (type == "FX") {
      if (std::isinf(v)) fail(t[col_pos + 1].column, "infinite FX bound");
      lo = up = v;
      lower_given_[js] = 1;
    } else if (type == "FR") {
      lo = -MilpModel::inf;
      up = MilpModel::inf;
      lower_given_[js] = 1;
    } else if (type == "MI") {
      lo = -MilpModel::inf;
      lower_given_[js] = 1;
    } else if (type == "PL") {
      up = MilpModel::inf;
    } else {  // BV
      lo = 0.0;
      up = 1.0;
      lower_given_[js] = 1;
      model_.is_integer[js] = 1;
    }
  }
};

bool usable_names(const std::vector<std::string>& names, std::size_t count) {
  if (names.size() != count) return false;
  std::unordered_set<std::string> seen;
  for (const auto& n : names) {
    if (n.empty() || n.size() > 255 || n[0] == '$' || n == "'MARKER'" || n == "MARKER") return false;
    if (std::any_of(n.begin(), n.end(), [](unsigned char c) { return std::isspace(c) || !std::isprint(c); }))
      return false;
    if (!seen.insert(n).second) return false;
  }
  return true;
}

std::string fmt(double v) {
  if (v == MilpModel::inf) return "1e+30";
  if (v == -MilpModel::inf) return "-1e+30";
  std::ostringstream s;
  s << std::setprecision(17) << v;
  return s.str();
}

}  // namespace

MilpModel parse_mps(std::istream& in, std::string_view source, MpsFormat format) {
  MpsParser parser(in, source, format);
  MilpModel m = parser.parse();
  try {
    m.validate();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(source) + ": " + e.what());
  }
  return m;
}

MilpModel read_mps(const std::filesystem::path& file, MpsFormat format) {
  std::ifstream in(file);
  if (!in) throw InvalidArgument(file.string() + ": cannot open MPS file");
  return parse_mps(in, file.string(), format);
}

void write_mps(std::ostream& out, const MilpModel& model, std::string_view name) {
  model.validate();
  const auto n = static_cast<std::size_t>(model.num_cols());
  const auto m = static_cast<std::size_t>(model.num_rows());
  const bool col_ok = usable_names(model.col_names, n);
  const bool row_ok = usable_names(model.row_names, m);
  auto col = [&](std::size_t j) { return col_ok ? model.col_names[j] : "C" + std::to_string(j); };
  auto row = [&](std::size_t i) { return row_ok ? model.row_names[i] : "R" + std::to_string(i); };
  std::string obj = "OBJ";
  if (row_ok)
    while (std::find(model.row_names.begin(), model.row_names.end(), obj) != model.row_names.end()) obj += '_';

  std::string title(name);
  if (title.empty() || std::any_of(title.begin(), title.end(), [](unsigned char c) { return std::isspace(c); }))
    title = "sia";
  out << "NAME " << title << '\n';
  if (model.sense == MilpSense::maximize) out << "OBJSENSE\n    MAX\n";
  out << "ROWS\n N " << obj << '\n';
  for (std::size_t i = 0; i < m; ++i) {
    const double lo = model.row_lower[i], up = model.row_upper[i];
    const char type = lo == up ? 'E' : std::isinf(lo) ? 'L' : 'G';  // a free row: L with rhs 1e30
    out << ' ' << type << ' ' << row(i) << '\n';
  }
  out << "COLUMNS\n";
  const auto csc = detail::compress_columns(model);
  bool in_int = false;
  int marker = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const bool integer = model.is_integer[j] != 0;
    if (integer != in_int) {
      out << "    M" << marker++ << " 'MARKER' " << (integer ? "'INTORG'" : "'INTEND'") << '\n';
      in_int = integer;
    }
    const auto begin = static_cast<std::size_t>(csc.start[j]), end = static_cast<std::size_t>(csc.start[j + 1]);
    if (model.obj[j] != 0.0 || begin == end) out << "    " << col(j) << ' ' << obj << ' ' << fmt(model.obj[j]) << '\n';
    for (std::size_t k = begin; k < end; ++k)
      out << "    " << col(j) << ' ' << row(static_cast<std::size_t>(csc.row_index[k])) << ' ' << fmt(csc.value[k]) << '\n';
  }
  if (in_int) out << "    M" << marker << " 'MARKER' 'INTEND'\n";
  out << "RHS\n";
  if (model.obj_offset != 0.0) out << "    RHS " << obj << ' ' << fmt(-model.obj_offset) << '\n';
  std::ostringstream ranges;
  for (std::size_t i = 0; i < m; ++i) {
    const double lo = model.row_lower[i], up = model.row_upper[i];
    double rhs = 0.0;
    if (lo == up) {
      rhs = lo;
    } else if (std::isinf(lo)) {
      rhs = up;
    } else {
      rhs = lo;  // G row
      if (!std::isinf(up)) ranges << "    RNG " << row(i) << ' ' << fmt(up - lo) << '\n';
    }
    if (rhs != 0.0) out << "    RHS " << row(i) << ' ' << fmt(rhs) << '\n';
  }
  if (!ranges.str().empty()) out << "RANGES\n" << ranges.str();
  std::ostringstream bounds;
  for (std::size_t j = 0; j < n; ++j) {
    const double lo = model.col_lower[j], up = model.col_upper[j];
    const std::string c = col(j);
    if (lo == up) {
      bounds << " FX BND " << c << ' ' << fmt(lo) << '\n';
      continue;
    }
    if (std::isinf(lo) && std::isinf(up)) {
      bounds << " FR BND " << c << '\n';
      continue;
    }
    if (std::isinf(lo))
      bounds << " MI BND " << c << '\n';
    else if (lo != 0.0 || up < 0.0 || model.is_integer[j])
      bounds << " LO BND " << c << ' ' << fmt(lo) << '\n';  // explicit: UP < 0 would imply lo = -inf
    if (!std::isinf(up))
      bounds << " UP BND " << c << ' ' << fmt(up) << '\n';
    else if (model.is_integer[j])
      bounds << " PL BND " << c << '\n';  // some readers make marker integers binary by default
  }
  if (!bounds.str().empty()) out << "BOUNDS\n" << bounds.str();
  out << "ENDATA\n";
}

void write_mps(const std::filesystem::path& file, const MilpModel& model) {
  std::ofstream out(file);
  if (!out) throw InvalidArgument(file.string() + ": cannot open for writing");
  write_mps(out, model, file.stem().string());
  out.flush();
  if (!out) throw InvalidArgument(file.string() + ": write error");
}

}  // namespace sia
