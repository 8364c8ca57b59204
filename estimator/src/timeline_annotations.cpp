// Annotation-name parsing and enclosing-annotation propagation.
#include "plansight/estimator/timeline_annotations.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace plansight::estimator {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Position of `word` in `s` standing alone on its left (start or a non-alphanumeric before it)
// and on its right unless `digits_may_follow` lets a number follow directly ("mb3", "stage2").
std::size_t find_word(const std::string& s, std::string_view word, bool digits_may_follow) {
  for (std::size_t pos = s.find(word); pos != std::string::npos; pos = s.find(word, pos + 1)) {
    const bool left_ok = pos == 0 || !std::isalpha(static_cast<unsigned char>(s[pos - 1]));
    const std::size_t after = pos + word.size();
    const bool right_ok = after >= s.size() || !is_word_char(s[after]) ||
                          (digits_may_follow && std::isdigit(static_cast<unsigned char>(s[after])));
    if (left_ok && right_ok) return pos;
  }
  return std::string::npos;
}

// A number after a standalone `word` and optional separators (space _ = : # -), or -1.
std::int32_t number_after(const std::string& s, std::string_view word) {
  for (std::size_t pos = s.find(word); pos != std::string::npos; pos = s.find(word, pos + 1)) {
    if (pos > 0 && std::isalpha(static_cast<unsigned char>(s[pos - 1]))) continue;
    std::size_t i = pos + word.size();
    while (i < s.size() && (s[i] == ' ' || s[i] == '_' || s[i] == '=' || s[i] == ':' || s[i] == '#' || s[i] == '-')) ++i;
    std::int64_t value = -1;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && value < 100'000'000) {
      value = (value < 0 ? 0 : value * 10) + (s[i] - '0');
      ++i;
    }
    if (value >= 0) return static_cast<std::int32_t>(value);
  }
  return -1;
}

}  // namespace

AnnotationTags parse_annotation_tags(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  AnnotationTags tags;
  auto has_word = [&](std::string_view w) { return find_word(s, w, true) != std::string::npos; };
  if (has_word("weight_grad") || has_word("wgrad") || has_word("backward_w") || has_word("weight grad")) {
    tags.phase = Phase::weight_grad;
  } else if (has_word("recompute") || has_word("recomputation")) {
    tags.phase = Phase::recompute;
  } else if (has_word("backward") || has_word("bwd")) {
    tags.phase = Phase::backward;
  } else if (has_word("forward") || has_word("fwd")) {
    tags.phase = Phase::forward;
  } else if (has_word("optimizer") || has_word("optim")) {
    tags.phase = Phase::optimizer;
  }
  for (std::string_view w : {"pp_stage", "stage", "pp"}) {
    if ((tags.stage = number_after(s, w)) >= 0) break;
  }
  for (std::string_view w : {"microbatch", "micro_batch", "micro-batch", "micro batch", "mb"}) {
    if ((tags.micro_batch = number_after(s, w)) >= 0) break;
  }
  return tags;
}

std::int64_t propagate_annotation_tags(Timeline& timeline) {
  // Tags per name, parsed once.
  std::vector<AnnotationTags> tags_of_name;
  tags_of_name.reserve(timeline.names.size());
  for (const auto& n : timeline.names) tags_of_name.push_back(parse_annotation_tags(n));

  struct Annotation {
    std::int64_t begin, end;
    AnnotationTags tags;
  };
  std::map<std::int32_t, std::vector<Annotation>> by_rank;
  for (const auto& track : timeline.tracks) {
    if (track.lane == Lane::host) continue;
    for (const auto& span : track.spans) {
      if (span.kind != SpanKind::annotation || span.name_id < 0) continue;
      const auto& t = tags_of_name[static_cast<std::size_t>(span.name_id)];
      AnnotationTags merged = t;
      if (span.phase != Phase::none) merged.phase = span.phase;
      if (span.stage >= 0) merged.stage = span.stage;
      if (span.micro_batch >= 0) merged.micro_batch = span.micro_batch;
      if (merged.any()) by_rank[track.rank].push_back({span.start_ns, span.end_ns(), merged});
    }
  }
  std::int64_t tagged = 0;
  for (auto& [rank, annotations] : by_rank) {
    std::sort(annotations.begin(), annotations.end(), [](const Annotation& a, const Annotation& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    for (auto& track : timeline.tracks) {
      if (track.rank != rank || track.lane == Lane::host) continue;
      // Sweep in start order with the annotations open at the current time; the set stays as small
      // as the nesting depth, so a track costs O(spans + annotations).
      std::vector<const Annotation*> open;
      std::size_t next = 0;
      for (auto& span : track.spans) {
        while (next < annotations.size() && annotations[next].begin <= span.start_ns) open.push_back(&annotations[next++]);
        std::erase_if(open, [&](const Annotation* a) { return a->end < span.start_ns; });
        if (span.kind == SpanKind::annotation || span.kind == SpanKind::idle) continue;
        bool changed = false;
        // Later-opened annotations are the inner ones: look at them first.
        for (auto it = open.rbegin(); it != open.rend(); ++it) {
          const Annotation& a = **it;
          if (a.end < span.end_ns()) continue;
          if (span.phase == Phase::none && a.tags.phase != Phase::none) { span.phase = a.tags.phase; changed = true; }
          if (span.stage < 0 && a.tags.stage >= 0) { span.stage = a.tags.stage; changed = true; }
          if (span.micro_batch < 0 && a.tags.micro_batch >= 0) { span.micro_batch = a.tags.micro_batch; changed = true; }
        }
        if (changed) ++tagged;
      }
    }
  }
  return tagged;
}

}  // namespace plansight::estimator
