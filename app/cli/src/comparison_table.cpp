// print_phase_table() and print_memory_table(): see comparison_table.h.
#include "comparison_table.h"

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

void print_memory_table(std::ostream& out, const std::vector<core::ComparedValue>& memory) {
  if (memory.empty()) return;
  out << "\n" << pad_right("memory", 16) << pad_left("predicted", 12) << pad_left("measured", 12) << pad_left("error", 10) << "\n";
  for (const auto& r : memory) {
    out << pad_right(r.name, 16) << pad_left(format_fixed(r.predicted / (1 << 20), 2) + " MiB", 12)
        << pad_left(format_fixed(r.measured / (1 << 20), 2) + " MiB", 12) << pad_left(core::percent_text(r.error()), 10) << "\n";
  }
}

}  // namespace plansight::cli
