// posix_spawn + pipes + poll(): the parent never blocks on one pipe while the child blocks on
// another (a full stderr pipe would otherwise stall a child whose stdout we are waiting for).
#include "plansight/core/child_process.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace plansight::core {
namespace {

struct Pipe {
  int read = -1, write = -1;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read = fds[0];
  p.write = fds[1];
  return true;
}

// Writes everything, retrying on EINTR; false when the child closed its stdin early.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Result<ChildExit> run_child(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                            const std::function<void(std::string_view line)>& on_line,
                            const std::atomic<bool>* interrupt, const ChildOptions& options) {
  Pipe in, out, err;
  if (!make_pipe(in) || !make_pipe(out) || !make_pipe(err)) {
    for (Pipe* p : {&in, &out, &err}) close_fd(p->read), close_fd(p->write);
    return make_error("probe", std::string("cannot create pipes: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (options.own_process_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close_fd(in.read);
  close_fd(out.write);
  close_fd(err.write);
  if (rc != 0) {
    close_fd(in.write), close_fd(out.read), close_fd(err.read);
    return make_error("probe", "cannot start " + program + ": " + std::strerror(rc));
  }

  // A child that exits before reading its stdin must not kill us with SIGPIPE.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  write_all(in.write, input);  // requests are small; the probe reads all of stdin before it writes
  close_fd(in.write);
  sigaction(SIGPIPE, &previous, nullptr);

  ChildExit exit;
  std::string pending;
  bool interrupted = false;
  while (out.read >= 0 || err.read >= 0) {
    if (interrupt && !interrupted && interrupt->load()) {
      ::kill(pid, options.interrupt_signal);
      interrupted = true;
    }
    pollfd fds[2] = {{out.read, POLLIN, 0}, {err.read, POLLIN, 0}};
    const int ready = ::poll(fds, 2, 100);  // wake up now and then to forward an interrupt
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[65536];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_fd(i == 0 ? out.read : err.read);
        continue;
      }
      if (i == 1) {
        exit.stderr_text.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      pending.append(buffer, static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        on_line(std::string_view(pending).substr(start, nl - start));
      }
      pending.erase(0, start);
    }
  }
  if (!pending.empty()) on_line(pending);  // a last line without its newline

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.term_signal = WTERMSIG(status);
  return exit;
}

Result<std::string> find_probe_executable() {
  namespace fs = std::filesystem;
  std::vector<std::string> looked;
  auto usable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); };
  if (const char* env = std::getenv("PLANSIGHT_PROBE"); env && *env) {
    if (usable(env)) return std::string(env);
    return make_error("PLANSIGHT_PROBE", std::string("\"") + env + "\" is not an executable file");
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "plansight-probe";
    if (usable(beside)) return beside.string();
    looked.push_back(beside.string());
  }
#ifdef PLANSIGHT_PROBE_BUILD_DIR
  // Running from the build tree, where each folder's targets land in their own binary folder.
  const fs::path built = fs::path(PLANSIGHT_PROBE_BUILD_DIR) / "plansight-probe";
  if (usable(built)) return built.string();
  looked.push_back(built.string());
#endif
  std::string where;
  for (const auto& l : looked) where += (where.empty() ? "" : ", ") + l;
  return make_error("probe", "plansight-probe not found (looked at " + where + "); build it or set PLANSIGHT_PROBE");
}

}  // namespace plansight::core
