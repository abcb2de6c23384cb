#pragma once
// Private: the one CSV reader of the simulator's inputs (profiles, seed profiles, workloads).
// Comma-separated fields, trimmed of blanks, no quoting (none of the artifact's files quote);
// blank lines are skipped; the first non-blank line is the header and columns are found by name.
// Every error is a sia::InvalidArgument starting with `<source>:<line>[:<column>]: `, where <column> is
// the 1-based field number (the spreadsheet's column), the same in every simulator input.
#include <cstddef>
#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sia::sim::detail {

struct CsvField {
  std::string text;
  std::size_t column = 0;  ///< 1-based field number
};

struct CsvRow {
  std::size_t line = 0;  ///< 1-based line
  std::vector<CsvField> fields;
};

class Csv {
 public:
  /// Reads `in`; `source` prefixes every error. Rejects an input without a header and rows whose
  /// field count differs from the header's.
  static Csv parse(std::istream& in, std::string source);
  /// Reads a file (an unreadable file is an error naming it).
  static Csv read(const std::filesystem::path& file);

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::vector<std::string>& header() const noexcept { return header_; }
  [[nodiscard]] const std::vector<CsvRow>& rows() const noexcept { return rows_; }

  /// Index of column `name`; a "missing column" error when absent.
  [[nodiscard]] std::size_t column(std::string_view name) const;
  [[nodiscard]] std::optional<std::size_t> find_column(std::string_view name) const;
  /// Throws "<source>:<line>: <message>" when there are no data rows.
  void require_rows() const;

  /// Throws "<source>:<line>:<col + 1>: <message>" (column omitted for col = npos).
  [[noreturn]] void fail(const CsvRow& row, std::size_t col, const std::string& message) const;
  /// Field `col` as a finite number ("column '<name>': not a number: '<text>'" otherwise; a text
  /// or name over 64 bytes is shown by its start and its length).
  [[nodiscard]] double number(const CsvRow& row, std::size_t col) const;
  /// Field `col` as an integer in [lo, hi].
  [[nodiscard]] long long integer(const CsvRow& row, std::size_t col, long long lo, long long hi) const;

 private:
  std::string source_;
  std::size_t header_line_ = 0;
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

}  // namespace sia::sim::detail
