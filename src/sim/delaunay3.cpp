// 3-D Delaunay interpolation with qhull (libqhull_r, Debian libqhull-dev); see delaunay3.hpp.
#include "sim/delaunay3.hpp"

#include <sia/build_config.hpp>
#include <sia/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#if SIA_HAS_QHULL
extern "C" {
#include <libqhull_r/qhull_ra.h>
}
#endif

namespace sia::sim::detail {

bool Delaunay3::available() noexcept { return SIA_HAS_QHULL != 0; }

Delaunay3::Delaunay3(std::vector<std::array<double, 3>> points) : points_(std::move(points)) {
#if SIA_HAS_QHULL
  if (points_.size() < 4) return;  // no tetrahedron: every query falls outside
  std::vector<coordT> coords;
  coords.reserve(points_.size() * 3);
  for (const auto& p : points_) coords.insert(coords.end(), p.begin(), p.end());
  qhT qh_storage;
  qhT* qh = &qh_storage;
  FILE* err = std::fopen("/dev/null", "w");
  qh_zero(qh, err);
  char options[] = "qhull d Qbb Qc Qz Q12";
  const int rc = qh_new_qhull(qh, 3, static_cast<int>(points_.size()), coords.data(), False, options, nullptr, err);
  if (rc == 0) {
    facetT* facet;
    FORALLfacets {
      if (facet->upperdelaunay) continue;
      Tet t{};
      int k = 0;
      vertexT *vertex, **vertexp;
      FOREACHvertex_(facet->vertices) {
        if (k < 4) t.v[static_cast<std::size_t>(k)] = qh_pointid(qh, vertex->point);
        ++k;
      }
      if (k != 4) continue;
      const auto& p0 = points_[static_cast<std::size_t>(t.v[0])];
      double a[3][3];  // a[r][c] = (p_{c+1} - p0)[r]
      for (int c = 0; c < 3; ++c)
        for (int r = 0; r < 3; ++r)
          a[r][c] = points_[static_cast<std::size_t>(t.v[static_cast<std::size_t>(c + 1)])][r] - p0[r];
      const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                         a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
      if (std::abs(det) < 1e-14) continue;  // flat: never the only container of a query
      const double id = 1.0 / det;
      // Row-major inverse by the adjugate: l = inv * (q - p0).
      t.inv = {(a[1][1] * a[2][2] - a[1][2] * a[2][1]) * id, (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * id,
               (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * id, (a[1][2] * a[2][0] - a[1][0] * a[2][2]) * id,
               (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * id, (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * id,
               (a[1][0] * a[2][1] - a[1][1] * a[2][0]) * id, (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * id,
               (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * id};
      for (int r = 0; r < 3; ++r) {
        t.lo[static_cast<std::size_t>(r)] = t.hi[static_cast<std::size_t>(r)] = p0[r];
        for (int c = 1; c < 4; ++c) {
          const double x = points_[static_cast<std::size_t>(t.v[static_cast<std::size_t>(c)])][r];
          t.lo[static_cast<std::size_t>(r)] = std::min(t.lo[static_cast<std::size_t>(r)], x);
          t.hi[static_cast<std::size_t>(r)] = std::max(t.hi[static_cast<std::size_t>(r)], x);
        }
      }
      tets_.push_back(t);
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  if (err != nullptr) std::fclose(err);
  if (rc != 0)
    throw Error("qhull: Delaunay triangulation of the profile points failed (code " + std::to_string(rc) + ")");
#else
  throw BackendUnavailable("3-D ground-truth interpolation needs qhull: sia was built without it (libqhull-dev)");
#endif
}

std::optional<Barycentric> Delaunay3::locate(const std::array<double, 3>& q) const {
  constexpr double eps = 1e-9;
  for (const auto& t : tets_) {
    bool in_box = true;
    for (std::size_t r = 0; r < 3 && in_box; ++r) in_box = q[r] >= t.lo[r] - 1e-9 && q[r] <= t.hi[r] + 1e-9;
    if (!in_box) continue;
    const auto& p0 = points_[static_cast<std::size_t>(t.v[0])];
    const double d[3] = {q[0] - p0[0], q[1] - p0[1], q[2] - p0[2]};
    double l[3];
    for (int r = 0; r < 3; ++r) l[r] = t.inv[r * 3] * d[0] + t.inv[r * 3 + 1] * d[1] + t.inv[r * 3 + 2] * d[2];
    const double l0 = 1.0 - l[0] - l[1] - l[2];
    if (l0 < -eps || l[0] < -eps || l[1] < -eps || l[2] < -eps) continue;
    Barycentric b;
    b.vertex = t.v;
    b.weight = {l0, l[0], l[1], l[2]};
    return b;
  }
  return std::nullopt;
}

}  // namespace sia::sim::detail
