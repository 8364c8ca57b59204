// print_phase_table() and print_memory_table(): see comparison_table.h.
#include "comparison_table.h"

#include <optional>
#include <string>

#include "plansight/cli/format.h"

namespace plansight::cli {

void print_phase_table(std::ostream& out, const std::vector<core::ComparedValue>& phases, const core::ComparedValue& step) {
  out << pad_right("time", 16) << pad_left("predicted", 12) << pad_left("measured", 12) << pad_left("error", 10)
      << pad_left("of step", 10) << "\n";
  auto row = [&](const core::ComparedValue& r) {
    out << pad_right(r.name, 16) << pad_left(format_seconds(r.predicted), 12)
        << pad_left(r.has_measured ? format_seconds(r.measured) : "-", 12) << pad_left(core::percent_text(r.error()), 10)
        << pad_left(core::percent_text(r.of_step()), 10) << "\n";
  };
  for (const auto& r : phases) row(r);
  row(step);
}

void print_operator_table(std::ostream& out, const core::OperatorComparisons& operators) {
  out << "\n" << pad_right("operator", 16) << pad_right("phase", 11) << pad_left("predicted", 12) << pad_left("measured", 12)
      << pad_left("error", 10) << pad_left("calls", 7) << "   the operator model's\n";
  double predicted = 0, measured = 0;
  for (const auto& r : operators.rows) {
    const std::optional<double> error =
        r.measured_s > 0 ? std::optional<double>(r.predicted_s / r.measured_s - 1) : std::nullopt;
    out << pad_right(r.probe_name, 16) << pad_right(std::string(estimator::to_string(r.phase)), 11)
        << pad_left(format_seconds(r.predicted_s), 12) << pad_left(r.measured_calls ? format_seconds(r.measured_s) : "-", 12)
        << pad_left(core::percent_text(error), 10) << pad_left(std::to_string(r.measured_calls), 7) << "   " << r.operators << "\n";
    predicted += r.predicted_s;
    measured += r.measured_s;
  }
  out << pad_right("operators", 27) << pad_left(format_seconds(predicted), 12) << pad_left(format_seconds(measured), 12)
      << pad_left(core::percent_text(measured > 0 ? std::optional<double>(predicted / measured - 1) : std::nullopt), 10) << "\n";
  out << "(every rank and micro-batch of the step, as " << operators.measured_basis()
      << "; not in the rows: " << format_seconds(operators.unmatched_measured_s) << " in " << operators.unmatched_spans
      << " other compute spans, e.g. the embedding and the optimizer)\n";
}

void print_memory_table(std::ostream& out, const std::vector<core::ComparedValue>& memory) {
  if (memory.empty()) return;
  out << "\n" << pad_right("memory", 16) << pad_left("predicted", 12) << pad_left("measured", 12) << pad_left("error", 10) << "\n";
  for (const auto& r : memory) {
    out << pad_right(r.name, 16) << pad_left(format_fixed(r.predicted / (1 << 20), 2) + " MiB", 12)
        << pad_left(format_fixed(r.measured / (1 << 20), 2) + " MiB", 12) << pad_left(core::percent_text(r.error()), 10) << "\n";
  }
}

}  // namespace plansight::cli
