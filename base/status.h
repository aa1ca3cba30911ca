#pragma once
// Status and Result<T>: the one error type of fabricwatch.
//
// A Status is a code (abseil-style), a message that carries the context (device, port, path,
// netlink command) and, when the failure came from a system call, the errno. Result<T> is
// tl::expected<T, Status> (Debian's libexpected-dev) until g++ ships std::expected.
// No exception crosses a collector, detector or HTTP boundary; errors travel as values.

#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace fabricwatch {

enum class StatusCode {
  kOk = 0,
  kNoData,            // the source is absent here (no device, EOPNOTSUPP): quiet, not an error
  kNotFound,          // ENOENT, ENODEV, ENXIO: a file or device that should be there is not
  kPermissionDenied,  // EACCES, EPERM
  kUnavailable,       // EAGAIN, EBUSY, EINTR, ETIMEDOUT: try again next tick
  kInvalidArgument,   // malformed input: a sysfs value, a flag, a config file
  kDeadlineExceeded,
  kUnimplemented,       // EOPNOTSUPP and friends when the caller wants to see them
  kAlreadyExists,       // EADDRINUSE
  kFailedPrecondition,  // refused by a rule of state: a reload that would weaken security
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, int sys_errno = 0)
      : code_(code), message_(std::move(message)), errno_(sys_errno) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  bool no_data() const { return code_ == StatusCode::kNoData; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  int sys_errno() const { return errno_; }

  // "not_found: open /sys/class/net/eth0/mtu: No such file or directory"
  std::string ToString() const;

  // Prefixes more context: WithContext("netdev eth0") -> "netdev eth0: <message>".
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_ && a.errno_ == b.errno_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int errno_ = 0;
};

template <typename T>
using Result = tl::expected<T, Status>;

// The single place where errno becomes a Status code. `context` names what was attempted
// ("open /sys/class/net/eth0/mtu"); strerror text is appended.
Status FromErrno(int sys_errno, std::string_view context);

inline tl::unexpected<Status> Error(StatusCode code, std::string message) {
  return tl::unexpected<Status>(Status(code, std::move(message)));
}
inline tl::unexpected<Status> Error(Status status) {
  return tl::unexpected<Status>(std::move(status));
}

}  // namespace fabricwatch
