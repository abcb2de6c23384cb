// Tests of the profile loaders (artifact CSVs and malformed input).

#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/sim/profile_split.hpp>
#include <sia/sim/profiles.hpp>
#include <sia/sim/random.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/// A scratch directory removed at scope exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / ("sia_goodput_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string& rel, const std::string& text) const {
    const fs::path p = path / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
};

const char* const kProfiles = SIA_SHARED_DIR "/data/sia-artifact/profiles";
const char* const kSeeds = SIA_SHARED_DIR "/data/sia-artifact/seed-profiles";

}  // namespace

TEST_CASE("sim.profiles.parse_placement") {
  int n = 0;
  int g = 0;
  sia::sim::parse_placement("1244", n, g);
  CHECK(n == 4);
  CHECK(g == 11);
  sia::sim::parse_placement("8", n, g);
  CHECK(n == 1);
  CHECK(g == 8);
  CHECK_THROWS_AS(sia::sim::parse_placement("", n, g), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::sim::parse_placement("1a", n, g), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::sim::parse_placement("00", n, g), sia::InvalidArgument);
}

TEST_CASE("sim.profiles.synthetic_model_dir") {
  TempDir d("model");
  d.write("m/placements-x.csv", "local_bsz,step_time,sync_time,placement\n4,0.1,0.01,1\n8,0.2,0.01,1\n4,0.3,0.1,22\n");
  d.write("m/scalability-x.csv",
          "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,4,4,0.3,0.1\n3,6,4.0,0.4,0.2\n");
  d.write("m/validation-16.csv", "progress,iteration,metric,grad_sqr,grad_var\n10,5,0.1,2.0,3.0\n");
  d.write("m/validation-8.csv", "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.1,1.0,3.0\n");
  d.write("m/placements.csv", "placement,local_bsz,step_time,sync_time\n1,4,0.1,0.01\n");  // untyped: ignored
  CHECK(sia::sim::list_models(d.path) == std::vector<std::string>{"m"});
  CHECK(sia::sim::list_gpu_types(d.path, "m") == std::vector<std::string>{"x"});
  const sia::sim::ModelProfile mp = sia::sim::load_model_profile(d.path, "m");
  REQUIRE(mp.types.size() == 1);
  const sia::sim::TypeProfile* t = mp.type("x");
  REQUIRE(t != nullptr);
  CHECK(mp.type("y") == nullptr);
  CHECK(t->placements.size() == 3);
  CHECK(t->placements[2].nodes == 2);
  CHECK(t->placements[2].gpus == 4);
  CHECK(t->scalability.size() == 2);
  CHECK(t->scalability[1].local_bsz == 4);
  CHECK(t->min_local_bsz() == 4);
  CHECK(t->max_local_bsz() == 8);
  CHECK(t->all_rows().size() == 4);  // the duplicated (2, 4, 4, 0.3, 0.1) row counts once
  CHECK(mp.init_batch_size() == 8);
  CHECK(mp.max_batch_size() == 16);
  CHECK(mp.validation[1].rows[0].grad_sqr == 2.0);
}

TEST_CASE("sim.profiles.malformed_rows_name_file_line_column") {
  TempDir d("bad");
  auto expect = [&](const std::string& name, const std::string& text, const std::string& needle) {
    const fs::path p = d.write(name, text);
    CAPTURE(text);
    CHECK_THROWS_WITH_AS((void)sia::sim::load_placements_csv(p), doctest::Contains(needle.c_str()),
                         sia::InvalidArgument);
  };
  expect("a.csv", "placement,local_bsz,step_time,sync_time\n1,4,0.1,0.01\n1,8,abc,0.01\n", "a.csv:3:3");
  expect("b.csv", "placement,local_bsz,step_time,sync_time\n1,4,-0.1,0.01\n", "b.csv:2:3: step_time must be > 0");
  expect("c.csv", "placement,local_bsz,step_time,sync_time\n1,4,0.1,nan\n", "c.csv:2:4");
  expect("d.csv", "placement,local_bsz,step_time,sync_time\n1,4.5,0.1,0.01\n", "d.csv:2:2");
  expect("e.csv", "placement,local_bsz,step_time\n1,4,0.1\n", "missing column 'sync_time'");
  expect("f.csv", "placement,local_bsz,step_time,sync_time\n", "no data rows");
  expect("g.csv", "", "empty file");
  expect("h.csv", "placement,local_bsz,step_time,sync_time\n1,4,0.1\n", "h.csv:2");
  expect("i.csv", "placement,local_bsz,step_time,sync_time\nx1,4,0.1,0.01\n", "i.csv:2:1");
  expect("j.csv", "placement,local_bsz,step_time,sync_time\n1,4,inf,0.01\n", "j.csv:2:3");
  CHECK_THROWS_AS((void)sia::sim::load_placements_csv(d.path / "missing.csv"), sia::InvalidArgument);
  const fs::path v = d.write("validation-x.csv", "progress,iteration,metric,grad_sqr,grad_var\n1,1,1,1,1\n");
  CHECK_THROWS_AS((void)sia::sim::load_validation_csv(v), sia::InvalidArgument);
  const fs::path v2 = d.write("validation-8.csv", "progress,iteration,metric,grad_sqr,grad_var\n1,1,1,-1,1\n");
  CHECK_THROWS_WITH_AS((void)sia::sim::load_validation_csv(v2), doctest::Contains("validation-8.csv:2:4"),
                       sia::InvalidArgument);
  const fs::path s =
      d.write("scalability-x.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n3,2,4,0.1,0.01\n");
  CHECK_THROWS_WITH_AS((void)sia::sim::load_scalability_csv(s), doctest::Contains("scalability-x.csv:2:1"),
                       sia::InvalidArgument);
  CHECK_THROWS_AS((void)sia::sim::load_model_profile(d.path, "nope"), sia::InvalidArgument);
}

TEST_CASE("sim.profiles.artifact") {
  if (!fs::exists(kProfiles)) {
    MESSAGE("skipped: " << std::string(kProfiles) << " is missing");
    return;
  }
  const auto models = sia::sim::list_models(kProfiles);
  CHECK(models == std::vector<std::string>{"bert", "cifar10", "deepspeech2", "gpt_pmp", "imagenet", "ncf", "yolov3"});
  CHECK(sia::sim::list_gpu_types(kProfiles, "cifar10") ==
        std::vector<std::string>{"aws", "azure", "dgx", "dgx-ext", "quad", "rtx"});
  const sia::sim::ModelProfile c = sia::sim::load_model_profile(kProfiles, "cifar10");
  CHECK(c.init_batch_size() == 128);
  CHECK(c.max_batch_size() == 4096);
  REQUIRE(c.type("dgx-ext") != nullptr);
  CHECK(c.type("dgx-ext")->min_local_bsz() == 32);
  CHECK(c.type("dgx-ext")->max_local_bsz() == 4096);
  CHECK(c.type("aws")->max_local_bsz() == 1024);
  const sia::sim::ModelProfile b = sia::sim::load_model_profile(kProfiles, "bert");
  CHECK(b.init_batch_size() == 12);
  CHECK(b.max_batch_size() == 384);
  CHECK(b.type("aws")->max_local_bsz() == 12);
  const sia::sim::SeedProfile seed = sia::sim::load_seed_profile(fs::path(kSeeds) / "bert.csv");
  CHECK(seed.model == "bert");
  CHECK(seed.gpu_types().size() == 5);
  const auto a100 = seed.rows_for("dgx-ext");
  REQUIRE(!a100.empty());
  CHECK(a100.front().gpu_type == "dgx");
  CHECK(a100.front().step_time == doctest::Approx(0.14855386316776276));  // same as placements-dgx-ext.csv
  CHECK(sia::sim::seed_type_to_profile_type("t4") == "aws");
  CHECK(sia::sim::seed_type_to_profile_type("v100") == "azure");
}

// The split shared by sia_fit_profiles and sia.fit_profiles: the hash's values (computed apart, with Python's
// integers), and the shuffle and the 80/20 rounding against a plain restatement of their definition.
TEST_CASE("sim.profile_split.hash_and_split") {
  static_assert(sia::sim::profile_split_hash("") == 1469598103934665603ULL);  // the offset basis
  CHECK(sia::sim::profile_split_hash("a") == 0x44bd8ad473cd9906ULL);
  CHECK(sia::sim::profile_split_hash("cifar10/dgx-ext") == 0xc634aae662ae91cbULL);
  for (std::size_t n = 0; n <= 23; ++n) {
    std::vector<sia::sim::ProfileRow> rows(n);
    for (std::size_t i = 0; i < n; ++i) rows[i].line = i;
    const sia::sim::ProfileSplit s = sia::sim::split_profile_rows(rows, 42, "cifar10", "dgx-ext");
    // Fisher-Yates from the top, j uniform in [0, i), generator seeded by seed ^ hash("model/type").
    std::vector<sia::sim::ProfileRow> want = rows;
    std::mt19937_64 rng(42 ^ sia::sim::profile_split_hash("cifar10/dgx-ext"));
    for (std::size_t i = n; i > 1; --i) std::swap(want[i - 1], want[sia::sim::uniform_below(rng, i)]);
    REQUIRE(s.rows.size() == n);
    for (std::size_t i = 0; i < n; ++i) CHECK(s.rows[i].line == want[i].line);
    CHECK(s.fitted == (n == 0 ? 0 : std::max<std::size_t>(1, (8 * n + 5) / 10)));  // round(0.8 n), at least one
    CHECK(s.seen().size() + s.held_out().size() == n);
    if (n > 0) CHECK(s.held_out().data() == s.rows.data() + s.fitted);
  }
  std::vector<sia::sim::ProfileRow> rows(20);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].line = i;
  auto order = [&](std::uint64_t seed, const char* model) {
    std::vector<std::size_t> lines;
    for (const auto& r : sia::sim::split_profile_rows(rows, seed, model, "aws").rows) lines.push_back(r.line);
    return lines;
  };
  CHECK(order(1, "bert") == order(1, "bert"));
  CHECK(order(1, "bert") != order(2, "bert"));
  CHECK(order(1, "bert") != order(1, "ncf"));  // one seed per (model, type)
  CHECK(sia::sim::split_profile_rows(rows, 1, "m", "t", 0.0).fitted == 20);
  CHECK(sia::sim::split_profile_rows(rows, 1, "m", "t", 0.5).fitted == 10);
  CHECK(sia::sim::split_profile_rows({rows[0], rows[1], rows[2]}, 1, "m", "t", 0.99).fitted == 1);
  for (const double bad : {-0.1, 1.0, std::numeric_limits<double>::quiet_NaN()})
    CHECK_THROWS_WITH_AS((void)sia::sim::split_profile_rows(rows, 1, "m", "t", bad),
                         doctest::Contains("m/t: holdout must be in [0, 1)"), sia::InvalidArgument);
}
