#pragma once
// Private: piecewise-linear interpolation over a 3-D Delaunay triangulation (qhull), as scipy's
// LinearNDInterpolator does for the reference's ground truth (reference §6.2).
#include <array>
#include <memory>
#include <optional>
#include <vector>

namespace sia::sim::detail {

/// Barycentric weights of a query in one tetrahedron of the triangulation.
struct Barycentric {
  std::array<int, 4> vertex{-1, -1, -1, -1};
  std::array<double, 4> weight{0, 0, 0, 0};
};

class Delaunay3 {
 public:
  /// Triangulates `points` (x, y, z each) with qhull's Delaunay options of scipy.spatial.Delaunay for 3-D
  /// ("Qbb Qc Qz Q12"). Throws sia::Error when qhull fails; BackendUnavailable when sia was built without qhull.
  explicit Delaunay3(std::vector<std::array<double, 3>> points);
  /// The tetrahedron containing q (within 1e-9 in barycentric terms) and q's weights; nullopt outside the hull.
  [[nodiscard]] std::optional<Barycentric> locate(const std::array<double, 3>& q) const;
  [[nodiscard]] std::size_t simplices() const noexcept { return tets_.size(); }
  /// True when this build can triangulate (qhull was found at configure time).
  [[nodiscard]] static bool available() noexcept;

 private:
  struct Tet {
    std::array<int, 4> v;
    std::array<double, 9> inv;  // row-major inverse of the matrix with columns p1-p0, p2-p0, p3-p0
    std::array<double, 3> lo, hi;
  };
  std::vector<std::array<double, 3>> points_;
  std::vector<Tet> tets_;
};

}  // namespace sia::sim::detail
