#include "engine/walk/glob.h"

#include <string>

namespace zsim::walk {
namespace {

// "'<glob>' <what>", built by appending (GCC 12's -Wrestrict misfires on literal + string).
Status Bad(std::string_view glob, const char* what) {
  std::string msg = "'";
  msg.append(glob);
  msg.append("' ");
  msg.append(what);
  return Status::InvalidArgument(std::move(msg));
}

}  // namespace

Status CheckGlob(std::string_view glob) {
  if (glob.empty()) return Status::InvalidArgument("an empty glob matches nothing");
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] == '\\') {
      if (i + 1 == glob.size()) {
        return Bad(glob, "ends in a lone '\\'");
      }
      ++i;  // the escaped character is literal
      continue;
    }
    if (glob[i] != '[') continue;
    // A bracket expression: after '[' (and '!' or '^'), a ']' is a member, not the end.
    size_t j = i + 1;
    if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
    if (j < glob.size() && glob[j] == ']') ++j;
    while (j < glob.size() && glob[j] != ']') {
      // Character classes such as [:alpha:] hold no ']' of their own.
      if (glob[j] == '[' && j + 1 < glob.size() && glob[j + 1] == ':') {
        const size_t end = glob.find(":]", j + 2);
        if (end == std::string_view::npos) break;
        j = end + 2;
        continue;
      }
      ++j;
    }
    if (j >= glob.size()) {
      return Bad(
          glob,
          "opens a '[' it never closes (a literal [ is written [[] or with a backslash before it)");
    }
    i = j;
  }
  return Status::Ok();
}

}  // namespace zsim::walk
