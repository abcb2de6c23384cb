// gnuplot as a child process without a shell (see include/sia/sim/plot.hpp).
#include <sia/sim/plot.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <vector>

extern char** environ;

namespace sia::sim {

std::string gnuplot_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';  // gnuplot: '' inside single quotes is one quote
    out += c;
  }
  return out + "'";
}

PlotStatus run_gnuplot(const std::filesystem::path& script) {
  PlotStatus st;
  const std::filesystem::path dir = script.has_parent_path() ? script.parent_path() : std::filesystem::path(".");
  const std::string name = script.filename().string();
  const std::string where = dir.string();
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    st.message = "gnuplot: cannot prepare the child process";
    return st;
  }
  // The script names its files relative to its directory; output and errors are not the caller's.
  posix_spawn_file_actions_addchdir_np(&fa, where.c_str());
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char> prog{'g', 'n', 'u', 'p', 'l', 'o', 't', '\0'};
  std::vector<char> arg(name.begin(), name.end());
  arg.push_back('\0');
  char* argv[] = {prog.data(), arg.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    st.message = rc == ENOENT
                     ? "gnuplot not found: " + script.string() +
                           " and its .dat file are written; install gnuplot (Debian: gnuplot-nox) for the PNG"
                     : "gnuplot could not start (" + std::string(std::strerror(rc)) + ") for " + script.string();
    return st;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      st.message = "gnuplot: waiting for the child failed (" + std::string(std::strerror(errno)) + ")";
      return st;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    st.ok = true;
  } else if (WIFEXITED(status)) {
    // posix_spawnp reports an exec failure of a found-but-broken program as exit status 127.
    st.message = "gnuplot failed on " + script.string() + " (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    st.message = "gnuplot was stopped by a signal on " + script.string();
  }
  return st;
}

}  // namespace sia::sim
