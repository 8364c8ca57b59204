// Launcher command lines and program lookup (see launcher.h).
#include "plansight/core/launcher.h"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace plansight::core {

Result<std::vector<std::string>> launcher_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : command) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return make_error("--launcher", "\"" + command + "\" has an unterminated " + std::string(1, quote) + " quote");
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return make_error("--launcher", "is empty; valid: a launcher command such as \"mpirun -np 4\" or \"srun -n 4\"");
  return words;
}

Result<std::string> find_program(const std::string& program) {
  namespace fs = std::filesystem;
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0) return program;
    return make_error("--launcher", "\"" + program + "\" is not an executable file");
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec)) return candidate.string();
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return make_error("--launcher", "\"" + program + "\" was not found on PATH (" + dirs +
                                      "); install it (Open MPI: scripts/install-deps installs openmpi-bin) or give its full path");
}

}  // namespace plansight::core
