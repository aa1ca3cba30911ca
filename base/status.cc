#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace fabricwatch {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kNoData:
      return "no_data";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kAlreadyExists:
      return "already_exists";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return Status(code_, std::move(message), errno_);
}

Status FromErrno(int sys_errno, std::string_view context) {
  StatusCode code;
  switch (sys_errno) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
      code = StatusCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
      code = StatusCode::kPermissionDenied;
      break;
    case EAGAIN:
    case EBUSY:
    case EINTR:
    case ETIMEDOUT:
      code = StatusCode::kUnavailable;
      break;
    case EINVAL:
    case ERANGE:
      code = StatusCode::kInvalidArgument;
      break;
    case EOPNOTSUPP:
    case ENOSYS:
    case ENOTTY:
      code = StatusCode::kUnimplemented;
      break;
    case EADDRINUSE:
    case EEXIST:
      code = StatusCode::kAlreadyExists;
      break;
    default:
      code = StatusCode::kInternal;
      break;
  }
  std::string message(context);
  message += ": ";
  message += std::strerror(sys_errno);
  return Status(code, std::move(message), sys_errno);
}

}  // namespace fabricwatch
