#include "zsim/status.h"

#include <cerrno>
#include <cstring>

namespace zsim {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kIoError:
      return "io_error";
    case StatusCode::kCorruption:
      return "corruption";
    case StatusCode::kChanged:
      return "changed_while_read";
    case StatusCode::kLoop:
      return "symlink_loop";
    case StatusCode::kOutOfMemory:
      return "out_of_memory";
    case StatusCode::kCancelled:
      return "cancelled";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message)
    : rep_(code == StatusCode::kOk ? nullptr
                                   : std::make_unique<Rep>(Rep{code, std::move(message)})) {}

Status Status::FromErrno(std::string_view what, int err) {
  StatusCode code = StatusCode::kIoError;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      code = StatusCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
      code = StatusCode::kPermissionDenied;
      break;
    case ENOMEM:
      code = StatusCode::kOutOfMemory;
      break;
    default:
      break;
  }
  std::string message(what);
  message += ": ";
  message += std::strerror(err);
  return Status(code, std::move(message));
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(StatusCodeName(rep_->code));
  s += ": ";
  s += rep_->message;
  return s;
}

}  // namespace zsim
