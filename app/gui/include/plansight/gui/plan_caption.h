// One line that says which plan a chart shows: model, GPUs, layout, batch and precision, as the
// caption band of exported pages prints it (chart_export.h's CaptionedPage).
#pragma once

#include <QString>

#include "plansight/estimator/plan.h"

namespace plansight::gui {

// "gpt3-175b on 1024 x a100-80gb-sxm (selene) · TP 8 · PP 8 · DP 16 · ZeRO 0 · recompute full ·
// 1f1b · micro-batch 1, global batch 1536 x 2048 tokens · fp16"
QString plan_caption(const estimator::Plan& plan);

}  // namespace plansight::gui
