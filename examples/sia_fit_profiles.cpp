// sia_fit_profiles <profiles-dir> [--json] [--seed N] [--raw-space] [--single-start] [--version]
//
// For every model and GPU type of an artifact profile directory: fits the throughput model on a
// seeded random 80 % of that type's rows (placements + scalability, single- and multi-node) and
// reports the RMSLE of the predicted step time on those rows (rmsle_seen) and on the other 20 %
// (rmsle_unseen). Then, for every ordered pair of types (from, to), the error of the paper's Eq. 1
// bootstrap: the model fitted on all rows of `from`, scaled by the ratio of 1-GPU step times of
// `to` (from `to`'s 1-GPU rows only), predicting `to`'s multi-GPU rows.
// Pipeline-parallel models (gpt_pmp: rows hold per-micro-batch compute and all-reduce times) are
// fitted with the GPipe model of <sia/goodput/pipeline.hpp>.

#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/goodput/fit.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/goodput/projection.hpp>
#include <sia/goodput/throughput_model.hpp>
#include <sia/sim/profile_split.hpp>
#include <sia/sim/profiles.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "program_cli.hpp"

namespace {

struct Args {
  std::string dir;
  bool json = false;
  std::uint64_t seed = 1;
  sia::FitOptions fit;  // --raw-space / --single-start: compare with the reference's plain L-BFGS-B setup
};

double rmsle(const std::vector<double>& pred, const std::vector<double>& obs) {
  if (pred.empty()) return std::nan("");
  double s = 0.0;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    const double e = std::log(pred[i]) - std::log(obs[i]);
    s += e * e;
  }
  return std::sqrt(s / static_cast<double>(pred.size()));
}

nlohmann::json params_json(const sia::PerfParams& p) {
  return {{"alpha_c", p.alpha_c}, {"beta_c", p.beta_c}, {"alpha_n", p.alpha_n}, {"beta_n", p.beta_n},
          {"alpha_r", p.alpha_r}, {"beta_r", p.beta_r}, {"gamma", p.gamma}};
}

sia::PerfObservation to_obs(const sia::sim::ProfileRow& r) {
  return sia::PerfObservation{r.nodes, r.gpus, static_cast<double>(r.local_bsz), r.step_time, r.sync_time};
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Fits the Pollux throughput model per model and GPU type on a seeded random 80 % of the profile rows and "
      "reports the RMSLE of predicted step times on seen and unseen rows, plus the error of the Eq. 1 bootstrap "
      "across GPU types.",
      "sia_fit_profiles"};
  app.add_option("profiles-dir", a.dir, "artifact profiles directory (one sub-directory per model)")->required();
  app.add_flag("--json", a.json, "print the results as JSON instead of tables");
  app.add_option("--seed", a.seed, "seed of the 80/20 split of each (model, GPU type)")->capture_default_str();
  bool raw_space = false;
  bool single_start = false;
  app.add_flag("--raw-space", raw_space, "optimise the raw parameters (default: log of the time parameters)");
  app.add_flag("--single-start", single_start,
               "only the reference's initial point (default: also a least-squares start)");
  sia::programs::add_common_options(app, "sia_fit_profiles");
  if (const auto code = sia::programs::parse(app, "sia_fit_profiles", argc, argv)) return *code;
  if (raw_space) a.fit.log_space = false;
  if (single_start) a.fit.multi_start = false;
  try {
    const auto models = sia::sim::list_models(a.dir);
    if (models.empty()) throw sia::InvalidArgument(a.dir + ": no model directories with placements-<type>.csv files");
    nlohmann::json fits = nlohmann::json::array();
    nlohmann::json boots = nlohmann::json::array();
    std::vector<double> unseen_all;
    for (const std::string& model : models) {
      const sia::sim::ModelProfile mp = sia::sim::load_model_profile(a.dir, model);
      const bool pipe = mp.is_pipeline();
      std::vector<sia::PerfParams> full_fit(mp.types.size());
      for (std::size_t ti = 0; ti < mp.types.size(); ++ti) {
        const sia::sim::TypeProfile& tp = mp.types[ti];
        // The 80/20 split shared with the Python package (sim/profile_split.hpp): one seed per (model, type).
        const sia::sim::ProfileSplit split = sia::sim::split_profile_rows(tp.all_rows(), a.seed, model, tp.gpu_type);
        const std::vector<sia::sim::ProfileRow>& rows = split.rows;
        const auto seen = split.seen();
        const auto unseen = split.held_out();
        nlohmann::json entry = {
            {"model", model}, {"gpu_type", tp.gpu_type}, {"rows_seen", seen.size()}, {"rows_unseen", unseen.size()}};
        std::vector<double> ps, os, pu, ou;
        if (pipe) {
          const int stages = std::max(1, tp.smallest_gpus());
          std::vector<sia::PipelineObservation> obs;
          for (const auto& r : seen) obs.push_back(sia::sim::pipeline_observation(r, stages));
          const sia::PipelineParams pp = sia::fit_pipeline_params(obs, stages);
          auto pred = [&](const sia::sim::ProfileRow& r) {
            const auto o = sia::sim::pipeline_observation(r, stages);
            return sia::pipeline_step_time(pp, o.nodes, o.pipelines, o.micro_bsz);
          };
          auto truth = [&](const sia::sim::ProfileRow& r) {
            const auto o = sia::sim::pipeline_observation(r, stages);
            return sia::pipeline_observed_step_time(pp, o);
          };
          for (const auto& r : seen) {
            ps.push_back(pred(r));
            os.push_back(truth(r));
          }
          for (const auto& r : unseen) {
            pu.push_back(pred(r));
            ou.push_back(truth(r));
          }
          entry["params"] = params_json(pp.perf);
          entry["params"]["stages"] = pp.stages;
          entry["params"]["microbatches"] = pp.microbatches;
        } else {
          std::vector<sia::PerfObservation> obs;
          for (const auto& r : seen) obs.push_back(to_obs(r));
          const sia::PerfParams p = sia::fit_perf_params(obs, a.fit);
          for (const auto& r : seen) {
            ps.push_back(sia::optim_time(p, r.nodes, r.gpus, r.local_bsz));
            os.push_back(r.step_time);
          }
          for (const auto& r : unseen) {
            pu.push_back(sia::optim_time(p, r.nodes, r.gpus, r.local_bsz));
            ou.push_back(r.step_time);
          }
          entry["params"] = params_json(p);
          std::vector<sia::PerfObservation> all;
          for (const auto& r : rows) all.push_back(to_obs(r));
          full_fit[ti] = sia::fit_perf_params(all, a.fit);
        }
        entry["rmsle_seen"] = rmsle(ps, os);
        const double ru = rmsle(pu, ou);
        entry["rmsle_unseen"] = std::isfinite(ru) ? nlohmann::json(ru) : nlohmann::json(nullptr);
        if (std::isfinite(ru)) unseen_all.push_back(ru);
        fits.push_back(entry);
      }
      if (pipe) continue;  // Eq. 1 across types needs the same parallelism on both (stages differ)
      for (std::size_t from = 0; from < mp.types.size(); ++from) {
        for (std::size_t to = 0; to < mp.types.size(); ++to) {
          if (from == to) continue;
          const sia::sim::TypeProfile& dst = mp.types[to];
          std::vector<sia::PerfObservation> one_gpu;
          for (const auto& r : dst.placements)
            if (r.gpus == 1) one_gpu.push_back(to_obs(r));
          if (one_gpu.empty()) continue;
          const sia::PerfParams seed = sia::fit_perf_params(one_gpu, a.fit);
          std::vector<double> pred, obs;
          for (const auto& r : dst.all_rows()) {
            if (r.gpus == 1) continue;
            pred.push_back(sia::projected_step_time(full_fit[from], seed, r.nodes, r.gpus, r.local_bsz, 0));
            obs.push_back(r.step_time);
          }
          if (pred.empty()) continue;
          boots.push_back({{"model", model},
                           {"from", mp.types[from].gpu_type},
                           {"to", dst.gpu_type},
                           {"rmsle", rmsle(pred, obs)},
                           {"rows", pred.size()}});
        }
      }
    }
    if (a.json) {
      std::cout << nlohmann::json{{"fits", fits}, {"bootstrap", boots}}.dump(1) << "\n";
      return 0;
    }
    std::printf("%-12s %-8s %6s %6s %11s %13s  %-10s %-10s %-10s %-10s %-10s %-10s %-6s\n", "model", "type", "seen",
                "unseen", "rmsle_seen", "rmsle_unseen", "alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r",
                "gamma");
    for (const auto& f : fits) {
      const auto& p = f["params"];
      const double ru = f["rmsle_unseen"].is_null() ? std::nan("") : f["rmsle_unseen"].get<double>();
      std::printf("%-12s %-8s %6zu %6zu %11.4f %13.4f  %-10.3g %-10.3g %-10.3g %-10.3g %-10.3g %-10.3g %-6.3g\n",
                  f["model"].get<std::string>().c_str(), f["gpu_type"].get<std::string>().c_str(),
                  f["rows_seen"].get<std::size_t>(), f["rows_unseen"].get<std::size_t>(), f["rmsle_seen"].get<double>(),
                  ru, p["alpha_c"].get<double>(), p["beta_c"].get<double>(), p["alpha_n"].get<double>(),
                  p["beta_n"].get<double>(), p["alpha_r"].get<double>(), p["beta_r"].get<double>(),
                  p["gamma"].get<double>());
    }
    std::sort(unseen_all.begin(), unseen_all.end());
    if (!unseen_all.empty())
      std::printf("\nmedian rmsle_unseen over %zu fits: %.4f\n", unseen_all.size(), unseen_all[unseen_all.size() / 2]);
    std::printf("\nEq. 1 bootstrap (fit on 'from', 1-GPU rows of 'to', predict multi-GPU rows of 'to'):\n");
    std::printf("%-12s %-8s %-8s %6s %8s\n", "model", "from", "to", "rows", "rmsle");
    std::vector<double> b_all;
    for (const auto& b : boots) {
      std::printf("%-12s %-8s %-8s %6zu %8.4f\n", b["model"].get<std::string>().c_str(),
                  b["from"].get<std::string>().c_str(), b["to"].get<std::string>().c_str(),
                  b["rows"].get<std::size_t>(), b["rmsle"].get<double>());
      b_all.push_back(b["rmsle"].get<double>());
    }
    std::sort(b_all.begin(), b_all.end());
    if (!b_all.empty())
      std::printf("\nmedian bootstrap rmsle over %zu pairs: %.4f\n", b_all.size(), b_all[b_all.size() / 2]);
  } catch (const std::exception& e) {  // a rejected profile file names source:line:column: 2; else 1
    return sia::programs::report("sia_fit_profiles", e);
  }
  return sia::to_int(sia::ExitCode::done);
}
