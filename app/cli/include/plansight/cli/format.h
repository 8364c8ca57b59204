// The CLI's text for numbers is the app's (plansight/core/format.h), named here for the commands.
#pragma once

#include "plansight/core/format.h"

namespace plansight::cli {

using core::format_count;
using core::format_fixed;
using core::format_flops;
using core::format_gib;
using core::format_large_count;
using core::format_seconds;
using core::json_text;
using core::pad_left;
using core::pad_right;

}  // namespace plansight::cli
