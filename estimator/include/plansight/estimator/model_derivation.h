// A model made by overriding fields of a base model (a preset, an imported config.json, the
// model already in the plan). Some fields of a model are derived from others: the MLP width
// from the hidden size, KV heads from heads (multi-head attention), the head dimension from
// hidden / heads. When the user changes the fields they derive from and does not set them
// explicitly, they follow; and a model that no longer has its base's structure is named
// "custom (based on BASE)". Every face (plan files, CLI flags, the GUI's plan form, probe
// requests) goes through derive_model, so the rule is the same everywhere.
#pragma once

#include <string>

#include "plansight/estimator/model_spec.h"

namespace plansight::estimator {

// Which of the fields that can be derived (and the name) the user set explicitly.
struct ExplicitModelFields {
  bool name = false;
  bool source = false;
  bool kv_heads = false;
  bool head_dim = false;
  bool ffn_hidden = false;
};

// `edited` is `base` with the user's values written over it; fields the user did not set
// explicitly and that derive from a changed field are recomputed from `edited`:
//   ffn_hidden  keeps the base's ratio ffn_hidden / hidden (rounded to the nearest integer),
//   kv_heads    follows heads when the base had kv_heads == heads (multi-head attention);
//               a GQA/MQA base keeps its KV head count,
//   head_dim    follows hidden / heads when the base's head_dim was hidden / heads (or unset).
// When the result's structure differs from the base's and no name was given, the model is
// named custom_model_name(base.name).
ModelSpec derive_model(const ModelSpec& base, const ModelSpec& edited, const ExplicitModelFields& given);

// "custom (based on gpt3-175b)"; a base that is already custom keeps its name.
std::string custom_model_name(const std::string& base_name);

// Whether two models have the same structure (every field but name and source): the same
// parameters, FLOPs and activations.
bool same_structure(const ModelSpec& a, const ModelSpec& b);

}  // namespace plansight::estimator
