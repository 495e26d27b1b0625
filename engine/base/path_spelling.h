// engine/base/path_spelling.h
//
// WithoutTrailingSlashes: a path spelled as the walk joins names to it. "tc/" and "tc" name the
// same tree, and the walk spells the files below both "tc/a"; an input path is kept in this
// spelling so that a state saved from one serves a scan of the other (--since), and the two
// merge as scans of the same paths. "/" stays "/".
//
// Thread safety: a pure function.

#ifndef ZSIM_ENGINE_BASE_PATH_SPELLING_H_
#define ZSIM_ENGINE_BASE_PATH_SPELLING_H_

#include <string>

namespace zsim {

inline std::string WithoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_PATH_SPELLING_H_
