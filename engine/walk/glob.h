// engine/walk/glob.h
//
// Checking an --exclude glob before the walk: fnmatch(3) matches a malformed pattern (an
// unclosed '[' or a trailing '\') literally instead of failing, so `--exclude '['` would quietly
// exclude nothing. The walk matches with fnmatch (walk_common.h Excluded).
//
// Thread safety: pure function.

#ifndef ZSIM_ENGINE_WALK_GLOB_H_
#define ZSIM_ENGINE_WALK_GLOB_H_

#include <string_view>

#include "zsim/status.h"

namespace zsim::walk {

// kInvalidArgument (saying what is wrong) for an empty glob, a '[' without its ']', or a
// trailing lone '\'; Ok otherwise.
Status CheckGlob(std::string_view glob);

}  // namespace zsim::walk

#endif  // ZSIM_ENGINE_WALK_GLOB_H_
