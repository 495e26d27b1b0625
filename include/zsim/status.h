// include/zsim/status.h
//
// Status: the outcome of an operation that may legitimately fail (a file that cannot be read, an
// argument that is out of range). Small and free when OK: an OK Status holds no allocation.
// Result<T>: a T or a non-OK Status (C++20 has no std::expected).
//
// Thread safety: values; a const Status may be read from any thread.

#ifndef ZSIM_INCLUDE_ZSIM_STATUS_H_
#define ZSIM_INCLUDE_ZSIM_STATUS_H_

#include <cassert>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace zsim {

// Values appear in --json output (as Name()): append only, never rename.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kPermissionDenied,
  kIoError,
  kCorruption,
  kChanged,  // the file changed while it was read (shrank, vanished, grew)
  kOutOfMemory,
  kCancelled,
  kInternal,
  kLoop,  // a path that leads back to itself (symbolic links; ELOOP), not a failed read
};

// Stable snake_case name of a code, e.g. "permission_denied".
std::string_view StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status Corruption(std::string message) {
    return Status(StatusCode::kCorruption, std::move(message));
  }
  static Status Internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
  }
  static Status Cancelled(std::string message) {
    return Status(StatusCode::kCancelled, std::move(message));
  }
  static Status OutOfMemory(std::string message) {
    return Status(StatusCode::kOutOfMemory, std::move(message));
  }
  static Status Changed(std::string message) {
    return Status(StatusCode::kChanged, std::move(message));
  }
  // Maps errno in one place: ENOENT/ENOTDIR -> kNotFound, EACCES/EPERM -> kPermissionDenied,
  // ENOMEM -> kOutOfMemory, anything else -> kIoError. The message is "<what>: <strerror>".
  static Status FromErrno(std::string_view what, int err);

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // The message without the code; empty when OK.
  const std::string& message() const;
  // "permission_denied: open: Permission denied", or "ok".
  std::string ToString() const;

  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result from an OK Status has no value");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

#define ZSIM_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::zsim::Status zsim_status_ = (expr);        \
    if (!zsim_status_.ok()) return zsim_status_; \
  } while (0)

}  // namespace zsim

#endif  // ZSIM_INCLUDE_ZSIM_STATUS_H_
