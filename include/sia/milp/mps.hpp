#pragma once
/// @file milp/mps.hpp
/// @brief Reading and writing MilpModel as MPS files (free or fixed format).
///
/// Supported: NAME, OBJSENSE (MIN/MAX, on the same line or the next), OBJSENSE-less files
/// (minimisation), ROWS (N/L/G/E; the first N row is the objective, further N rows are dropped
/// with their coefficients), COLUMNS with 'MARKER' 'INTORG'/'INTEND' blocks, RHS (a right-hand
/// side on the objective row sets obj_offset = -value), RANGES, BOUNDS (UP, LO, FX, FR, MI, PL,
/// BV, LI, UI; an UP bound < 0 on a column whose lower bound was not given makes the lower bound
/// -inf, as CPLEX and CoinMpsIO do), ENDATA. Set names in RHS/RANGES/BOUNDS may be omitted in free
/// format. Integer columns from marker blocks get bounds [0, +inf) unless BOUNDS say otherwise.
/// |values| >= 1e30 mean infinity. Not supported (rejected with an error): SOS, quadratic
/// sections, semi-continuous (SC) bounds.

#include <sia/milp/model.hpp>

#include <filesystem>
#include <iosfwd>
#include <string_view>

namespace sia {

/// MPS dialects: `free` splits fields at whitespace (names cannot contain spaces); `fixed` takes
/// fields from the classic columns 2-3, 5-12, 15-22, 25-36, 40-47 and 50-61 (names may contain spaces).
enum class MpsFormat { free, fixed };

/**
 * @brief Parses an MPS model from `in`.
 * @param source name used in error messages (e.g. the file name).
 * @throws InvalidArgument naming `source:line:column` and the problem.
 */
[[nodiscard]] MilpModel parse_mps(std::istream& in, std::string_view source = "<mps>",
                                  MpsFormat format = MpsFormat::free);

/// @brief Reads an MPS file. @throws InvalidArgument naming the file (and line) on any error.
[[nodiscard]] MilpModel read_mps(const std::filesystem::path& file, MpsFormat format = MpsFormat::free);

/**
 * @brief Writes `model` as free-format MPS that parse_mps() reads back to the same model
 * (up to dropped zero coefficients and summed duplicates). Names are taken from
 * col_names/row_names when they are all present, unique and free of whitespace, otherwise
 * generated (C0, C1, ... / R0, R1, ...). Numbers are written with 17 significant digits.
 * @throws InvalidArgument when the model does not validate.
 */
void write_mps(std::ostream& out, const MilpModel& model, std::string_view name = "sia");

/// @brief Writes `model` to `file` (see the stream overload). @throws InvalidArgument on I/O errors.
void write_mps(const std::filesystem::path& file, const MilpModel& model);

}  // namespace sia
