// Diagnostic and Result: how every plansight library reports bad input.
// A diagnostic names the input field (a JSON-path-like "layout.tp"), and its message says the bad
// value and what would be valid. Libraries return these; only main() turns them into exit codes.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace plansight {

enum class Severity { error, warning };

struct Diagnostic {
  Severity severity = Severity::error;
  std::string field;    // e.g. "layout.tp" or "model.heads"
  std::string message;  // names the value and what would be valid

  std::string to_string() const;  // "error: layout.tp: ..."
};

inline Diagnostic make_error(std::string field, std::string message) {
  return {Severity::error, std::move(field), std::move(message)};
}
inline Diagnostic make_warning(std::string field, std::string message) {
  return {Severity::warning, std::move(field), std::move(message)};
}

bool has_errors(const std::vector<Diagnostic>& diagnostics);
std::string join_messages(const std::vector<Diagnostic>& diagnostics);

// A value or the list of errors that prevented it.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Diagnostic error) : state_(std::vector<Diagnostic>{std::move(error)}) {}  // NOLINT
  Result(std::vector<Diagnostic> errors) : state_(std::move(errors)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &std::get<T>(state_); }
  const T* operator->() const { return &std::get<T>(state_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const std::vector<Diagnostic>& errors() const {
    static const std::vector<Diagnostic> none;
    return ok() ? none : std::get<std::vector<Diagnostic>>(state_);
  }
  std::string error_text() const { return join_messages(errors()); }

 private:
  std::variant<T, std::vector<Diagnostic>> state_;
};

}  // namespace plansight
