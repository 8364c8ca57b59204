// kernel_display_name(): see kernel_names.h.
#include "plansight/runtime/cuda/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace plansight::runtime::cuda {

std::string kernel_display_name(const char* name) {
  if (name == nullptr) return "kernel";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  if (status != 0 || demangled == nullptr) return name;
  std::string text(demangled.get());
  // Drop the parameter list, the parenthesis that closes the name and the one it matches:
  // "void f<float>(float*, unsigned long)" -> "void f<float>". Not the first "(": an unnamed
  // namespace demangles as "(anonymous namespace)" inside the qualified name.
  if (!text.empty() && text.back() == ')') {
    int depth = 0;
    for (std::size_t i = text.size(); i-- > 0;) {
      if (text[i] == ')') ++depth;
      if (text[i] == '(' && --depth == 0) {
        text.resize(i);
        break;
      }
    }
  }
  // Every kernel of a .cu file's unnamed namespace would otherwise carry it.
  static const std::string kUnnamed = "(anonymous namespace)::";
  for (std::size_t at = text.find(kUnnamed); at != std::string::npos; at = text.find(kUnnamed, at)) text.erase(at, kUnnamed.size());
  return text;
}

}  // namespace plansight::runtime::cuda
