// Rendering of round events (round_log.hpp). Kept out of round.cpp: the round only fills events.
#include <sia/round_log.hpp>

#include <cmath>
#include <cstdio>

namespace sia {

std::string_view to_string(RoundPhase p) noexcept {
  switch (p) {
    case RoundPhase::problem:
      return "problem";
    case RoundPhase::solve:
      return "solve";
    case RoundPhase::fallback:
      return "fallback";
    case RoundPhase::prices:
      return "prices";
    case RoundPhase::placement:
      return "placement";
    case RoundPhase::done:
      return "done";
  }
  return "unknown";
}

namespace {

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

void field(std::string& out, std::string_view text) {
  out += out.back() == ':' ? " " : ", ";
  out += text;
}

}  // namespace

std::string format(const RoundEvent& e) {
  char head[96];
  std::snprintf(head, sizeof head, " %.1f ms (+%.1f):", e.elapsed_ms, e.phase_ms);
  std::string out = std::string(to_string(e.phase)) + head;
  if (e.jobs >= 0) field(out, std::to_string(e.jobs) + " jobs");
  if (e.configurations >= 0) field(out, std::to_string(e.configurations) + " configurations");
  if (e.candidates >= 0) field(out, std::to_string(e.candidates) + " candidates");
  if (e.unevaluated > 0) field(out, std::to_string(e.unevaluated) + " not evaluated");
  if (!e.backend.empty()) field(out, "backend " + std::string(e.backend));
  if (!e.status.empty()) field(out, std::string(e.status));
  if (e.nodes >= 0) field(out, std::to_string(e.nodes) + " nodes");
  if (!std::isnan(e.objective)) field(out, "objective " + number(e.objective));
  if (!std::isnan(e.best_bound)) field(out, "bound " + number(e.best_bound));
  if (!std::isnan(e.gap)) field(out, "gap " + number(e.gap));
  if (e.allocated >= 0) field(out, std::to_string(e.allocated) + " allocated");
  if (e.evicted > 0) field(out, std::to_string(e.evicted) + " evicted");
  if (!e.message.empty()) field(out, std::string(e.message));
  return out;
}

}  // namespace sia
