#include <sia/error.hpp>
#include <sia/sim/plot.hpp>
#include <sia/sim/report.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

namespace sia::sim {

namespace {

nlohmann::json metrics_json(const RunMetrics& m, bool aggregate) {
  nlohmann::json j;
  for_each_metric(m, aggregate ? MetricsRow::pooled : MetricsRow::run,
                  [&](const char* name, const auto& value) { j[name] = value; });
  return j;
}

std::string safe(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return o;
}

}  // namespace

std::string report_json(const std::vector<PolicyRuns>& all) {
  nlohmann::json doc;
  doc["runs"] = nlohmann::json::array();
  doc["aggregate"] = nlohmann::json::array();
  for (const auto& p : all) {
    for (const auto& m : p.metrics) doc["runs"].push_back(metrics_json(m, false));
    auto agg = metrics_json(p.aggregate, true);
    std::size_t nt = 0;
    for (const auto& r : p.runs)
      for (const auto& j : r.jobs) nt = std::max(nt, j.gpu_hours_by_type.size());
    for (const auto& [model, v] : gpu_hours_by_model(p, nt))  // per type (cluster order), then the total
      agg["gpu_hours_per_job_by_model_type"][model] = v;
    doc["aggregate"].push_back(std::move(agg));
  }
  return doc.dump(1);
}

void print_table(std::ostream& out, const std::vector<PolicyRuns>& all, bool per_workload) {
  auto fixed = [](double v, int prec) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(prec) << v;
    return s.str();
  };
  const std::vector<std::pair<std::string, int>> cols = {
      {"policy", 9},      {"workload", 18},   {"jobs", 6},      {"avg JCT h", 14},
      {"p99 h", 7},       {"makespan h", 14}, {"GPU-h/job", 9}, {"restarts", 8},
      {"contention", 11}, {"worst FTF", 9},   {"unfair", 7},    {"policy ms p50/p95", 18}};
  auto row = [&](const std::vector<std::string>& v) {
    for (std::size_t i = 0; i < v.size(); ++i)
      out << (i ? "  " : "") << (i < 2 ? std::left : std::right) << std::setw(cols[i].second) << v[i];
    out << std::right << "\n";
  };
  std::vector<std::string> head;
  for (const auto& c : cols) head.push_back(c.first);
  row(head);
  std::size_t width = 0;
  for (const auto& c : cols) width += static_cast<std::size_t>(c.second) + 2;
  out << std::string(width - 2, '-') << "\n";
  auto line = [&](const RunMetrics& m, bool agg) {
    std::ostringstream done;
    done << m.completed;
    if (m.completed < m.jobs) done << '/' << m.jobs;  // unfinished jobs (horizon reached)
    row({m.policy, m.workload, done.str(),
         fixed(m.avg_jct_h, 3) + (agg && m.avg_jct_std_h > 0 ? " ± " + fixed(m.avg_jct_std_h, 2) : ""),
         fixed(m.p99_jct_h, 1),
         fixed(m.makespan_h, 1) + (agg && m.makespan_std_h > 0 ? " ± " + fixed(m.makespan_std_h, 1) : ""),
         fixed(m.gpu_hours_per_job, 2), fixed(m.restarts_per_job, 2),
         fixed(m.contention_mean, 1) + " (" + std::to_string(m.contention_max) + ")", fixed(m.ftf_worst, 2),
         fixed(100.0 * m.unfair_fraction, 1) + "%", fixed(m.policy_ms_median, 2) + " / " + fixed(m.policy_ms_p95, 2)});
  };
  for (const auto& p : all) {
    if (per_workload && p.metrics.size() > 1)
      for (const auto& m : p.metrics) line(m, false);
    line(p.aggregate, true);
  }
}

std::map<std::string, std::vector<double>> gpu_hours_by_model(const PolicyRuns& p, std::size_t nt) {
  std::map<std::string, std::vector<double>> sum;
  std::map<std::string, int> count;
  for (const auto& r : p.runs)
    for (const auto& j : r.jobs) {
      auto& v = sum[j.application];
      v.resize(nt + 1, 0.0);
      for (std::size_t t = 0; t < nt && t < j.gpu_hours_by_type.size(); ++t) v[t] += j.gpu_hours_by_type[t];
      v[nt] += j.gpu_hours;
      ++count[j.application];
    }
  for (auto& [m, v] : sum)
    for (double& x : v) x /= std::max(1, count[m]);
  return sum;
}

void print_gpu_hours_by_model(std::ostream& out, const std::vector<PolicyRuns>& all, const SimCluster& cluster) {
  const std::size_t nt = cluster.types.size();
  out << std::left << std::setw(9) << "policy"
      << "  " << std::setw(12) << "model" << std::right;
  for (const auto& t : cluster.types) out << "  " << std::setw(9) << t.name;
  out << "  " << std::setw(9) << "total"
      << "\n";
  for (const auto& p : all)
    for (const auto& [model, v] : gpu_hours_by_model(p, nt)) {
      out << std::left << std::setw(9) << p.policy << "  " << std::setw(12) << model << std::right << std::fixed
          << std::setprecision(2);
      for (double x : v) out << "  " << std::setw(9) << x;
      out << "\n";
    }
  out.unsetf(std::ios_base::floatfield);
}

std::vector<std::filesystem::path> write_outputs(const std::filesystem::path& dir, const std::vector<PolicyRuns>& all,
                                                 const SimCluster& cluster, std::vector<std::string>* warnings) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InvalidArgument(dir.string() + ": cannot create output directory: " + ec.message());
  std::vector<std::filesystem::path> written;
  auto open = [&](const std::filesystem::path& f) {
    std::ofstream o(f);
    if (!o) throw InvalidArgument(f.string() + ": cannot write");
    written.push_back(f);
    return o;
  };
  auto type_name = [&](int t) {
    return t >= 0 && t < static_cast<int>(cluster.types.size()) ? cluster.types[static_cast<std::size_t>(t)].name
                                                                : std::string();
  };
  for (const auto& p : all)
    for (const auto& r : p.runs) {
      const std::string stem = safe(p.policy) + "-" + safe(r.workload);
      {
        auto o = open(dir / ("jobs-" + stem + ".csv"));
        o << "name,application,category,submission_s,completion_s,jct_h,restarts,gpu_hours,contention_avg,ftf,epochs\n";
        o << std::setprecision(10);
        for (const auto& j : r.jobs)
          o << j.name << "," << j.application << "," << to_string(j.category) << "," << j.submission_time << ","
            << (j.completion_time ? std::to_string(*j.completion_time) : "") << "," << j.jct() / 3600.0 << ","
            << j.restarts << "," << j.gpu_hours << "," << j.contention_avg << "," << j.ftf << "," << j.epochs << "\n";
      }
      {
        auto o = open(dir / ("rounds-" + stem + ".jsonl"));
        for (const auto& l : r.rounds) {
          nlohmann::json j;
          j["timestamp"] = l.time;
          j["active"] = l.active;
          j["queued"] = l.queued;
          j["policy_ms"] = l.policy_ms;
          j["allocations"] = nlohmann::json::array();
          for (const auto& a : l.allocations) {
            nlohmann::json x;
            x["job"] = a.job;
            if (a.type >= 0) {
              x["gpu_type"] = type_name(a.type);
              x["nodes"] = a.nodes;
              x["gpus"] = a.gpus;
              x["batch_size"] = a.batch;
            } else {
              x["gpu_type"] = nullptr;
            }
            j["allocations"].push_back(std::move(x));
          }
          o << j.dump() << "\n";
        }
      }
    }
  {
    auto o = open(dir / "summary.json");
    o << report_json(all) << "\n";
  }
  // Plots: .dat and .gp always; the PNG when gnuplot runs (a missing gnuplot is reported once).
  bool gnuplot_missing = false;
  auto plot = [&](const std::filesystem::path& script, const std::filesystem::path& png) {
    written.push_back(script);
    if (gnuplot_missing) return;
    const PlotStatus st = run_gnuplot(script);
    if (st.ok) {
      written.push_back(png);
      return;
    }
    gnuplot_missing = st.message.rfind("gnuplot not found", 0) == 0;
    if (warnings != nullptr) warnings->push_back(st.message);
  };
  // JCT CDF per policy (pooled over workloads).
  {
    const auto data = dir / "jct_cdf.dat";
    {
      std::ofstream o(data);
      for (const auto& p : all) {
        std::vector<double> v;
        for (const auto& r : p.runs)
          for (const auto& j : r.jobs)
            if (j.completion_time) v.push_back(std::max(j.jct() / 3600.0, 1e-3));
        std::sort(v.begin(), v.end());
        o << "# " << p.policy << "\n";
        for (std::size_t i = 0; i < v.size(); ++i)
          o << v[i] << " " << static_cast<double>(i + 1) / static_cast<double>(v.size()) << "\n";
        o << "\n\n";
      }
    }
    const auto script = dir / "jct_cdf.gp";
    {
      std::ofstream g(script);
      g << "set terminal pngcairo size 800,500\nset output 'jct_cdf.png'\n"
        << "set logscale x\nset xlabel 'JCT (hours)'\nset ylabel 'fraction of jobs'\nset key bottom right\nset grid\n"
        << "set title 'JCT CDF'\nplot ";
      for (std::size_t i = 0; i < all.size(); ++i)
        g << (i ? ", " : "") << "'jct_cdf.dat' index " << i << " using 1:2 with lines lw 2 title "
          << gnuplot_quote(all[i].policy);
      g << "\n";
    }
    written.push_back(data);
    plot(script, dir / "jct_cdf.png");
  }
  // Allocation timeline (first workload of every policy): one row per job, colour = GPU type, size = GPUs.
  for (const auto& p : all) {
    if (p.runs.empty()) continue;
    const auto& r = p.runs.front();
    const std::string stem = safe(p.policy) + "-" + safe(r.workload);
    const auto data = dir / ("timeline-" + stem + ".dat");
    std::map<std::string, int> index;
    for (std::size_t i = 0; i < r.jobs.size(); ++i) index[r.jobs[i].name] = static_cast<int>(i);
    {
      std::ofstream o(data);
      for (int t = 0; t < static_cast<int>(cluster.types.size()); ++t) {
        o << "# " << type_name(t) << "\n";
        for (const auto& l : r.rounds)
          for (const auto& a : l.allocations)
            if (a.type == t) o << l.time / 3600.0 << " " << index[a.job] << " " << a.gpus << "\n";
        o << "\n\n";
      }
    }
    const auto script = dir / ("timeline-" + stem + ".gp");
    {
      std::ofstream g(script);
      g << "set terminal pngcairo size 1000,700\nset output " << gnuplot_quote("timeline-" + stem + ".png") << "\n"
        << "set xlabel 'time (hours)'\nset ylabel 'job (submission order)'\nset key outside right\n"
        << "set title "
        << gnuplot_quote("GPU type and count per job over time (" + p.policy + ", " + r.workload +
                         "; point size = GPUs)")
        << "\nplot ";
      for (std::size_t t = 0; t < cluster.types.size(); ++t)
        g << (t ? ", " : "") << gnuplot_quote(data.filename().string()) << " index " << t
          << " using 1:2:(0.25+0.12*sqrt($3)) with points pt 5 ps variable title "
          << gnuplot_quote(cluster.types[t].name);
      g << "\n";
    }
    written.push_back(data);
    plot(script, dir / ("timeline-" + stem + ".png"));
  }
  return written;
}

}  // namespace sia::sim
