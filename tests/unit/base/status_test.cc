#include "base/status.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace fabricwatch {
namespace {

TEST(StatusTest, default_is_ok) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_FALSE(status.no_data());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.message(), "");
  EXPECT_EQ(status.sys_errno(), 0);
  EXPECT_EQ(status, Status::Ok());
}

TEST(StatusTest, carries_code_message_and_errno) {
  Status status(StatusCode::kNotFound, "open /sys/class/net/eth0/mtu", ENOENT);
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(status.no_data());
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "open /sys/class/net/eth0/mtu");
  EXPECT_EQ(status.sys_errno(), ENOENT);
}

TEST(StatusTest, no_data_is_neither_ok_nor_an_error_code) {
  Status status(StatusCode::kNoData, "no RDMA devices");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(status.no_data());
}

TEST(StatusTest, equality_compares_code_message_and_errno) {
  const Status base(StatusCode::kInternal, "x", 5);
  EXPECT_EQ(base, Status(StatusCode::kInternal, "x", 5));
  EXPECT_NE(base, Status(StatusCode::kUnavailable, "x", 5));
  EXPECT_NE(base, Status(StatusCode::kInternal, "y", 5));
  EXPECT_NE(base, Status(StatusCode::kInternal, "x", 6));
}

TEST(StatusTest, status_code_names) {
  struct Case {
    StatusCode code;
    std::string_view name;
  };
  const Case cases[] = {
      {StatusCode::kOk, "ok"},
      {StatusCode::kNoData, "no_data"},
      {StatusCode::kNotFound, "not_found"},
      {StatusCode::kPermissionDenied, "permission_denied"},
      {StatusCode::kUnavailable, "unavailable"},
      {StatusCode::kInvalidArgument, "invalid_argument"},
      {StatusCode::kDeadlineExceeded, "deadline_exceeded"},
      {StatusCode::kUnimplemented, "unimplemented"},
      {StatusCode::kAlreadyExists, "already_exists"},
      {StatusCode::kInternal, "internal"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(StatusCodeName(c.code), c.name);
  }
}

TEST(StatusTest, to_string) {
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  EXPECT_EQ(Status(StatusCode::kNotFound, "open /x: No such file or directory").ToString(),
            "not_found: open /x: No such file or directory");
  EXPECT_EQ(Status(StatusCode::kInvalidArgument, "bad").ToString(), "invalid_argument: bad");
  EXPECT_EQ(Status(StatusCode::kNoData, "absent").ToString(), "no_data: absent");
}

TEST(StatusTest, with_context_prefixes_message_and_keeps_code_and_errno) {
  const Status inner(StatusCode::kPermissionDenied, "open /sys/x: Permission denied", EACCES);
  const Status outer = inner.WithContext("netdev eth0");
  EXPECT_EQ(outer.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(outer.sys_errno(), EACCES);
  EXPECT_EQ(outer.message(), "netdev eth0: open /sys/x: Permission denied");
  // The original is unchanged.
  EXPECT_EQ(inner.message(), "open /sys/x: Permission denied");
  // Context nests outermost-first.
  EXPECT_EQ(outer.WithContext("collector netdev").message(),
            "collector netdev: netdev eth0: open /sys/x: Permission denied");
}

TEST(StatusTest, with_context_on_ok_stays_ok) {
  const Status ok = Status::Ok().WithContext("anything");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(FromErrnoTest, maps_errno_to_code) {
  struct Case {
    int err;
    StatusCode code;
  };
  const Case cases[] = {
      {ENOENT, StatusCode::kNotFound},
      {ENODEV, StatusCode::kNotFound},
      {ENXIO, StatusCode::kNotFound},
      {EACCES, StatusCode::kPermissionDenied},
      {EPERM, StatusCode::kPermissionDenied},
      {EAGAIN, StatusCode::kUnavailable},
      {EBUSY, StatusCode::kUnavailable},
      {EINTR, StatusCode::kUnavailable},
      {ETIMEDOUT, StatusCode::kUnavailable},
      {EINVAL, StatusCode::kInvalidArgument},
      {ERANGE, StatusCode::kInvalidArgument},
      {EOPNOTSUPP, StatusCode::kUnimplemented},
      {ENOSYS, StatusCode::kUnimplemented},
      {ENOTTY, StatusCode::kUnimplemented},
      {EADDRINUSE, StatusCode::kAlreadyExists},
      {EEXIST, StatusCode::kAlreadyExists},
      {EIO, StatusCode::kInternal},
      {ENOMEM, StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string("errno ") + std::to_string(c.err) + " (" + std::strerror(c.err) +
                 ")");
    const Status status = FromErrno(c.err, "open /sys/class/net/eth0/mtu");
    EXPECT_EQ(status.code(), c.code);
    EXPECT_EQ(status.sys_errno(), c.err);
    EXPECT_FALSE(status.ok());
  }
}

TEST(FromErrnoTest, message_is_context_then_strerror) {
  const int errs[] = {ENOENT, ENODEV, EACCES, EAGAIN, EINVAL, EOPNOTSUPP, EADDRINUSE};
  for (int err : errs) {
    SCOPED_TRACE(err);
    const Status status = FromErrno(err, "read /sys/class/net/eth0/carrier");
    EXPECT_EQ(status.message(),
              std::string("read /sys/class/net/eth0/carrier: ") + std::strerror(err));
  }
}

TEST(FromErrnoTest, to_string_names_code_context_and_errno_text) {
  EXPECT_EQ(FromErrno(ENOENT, "open /sys/class/net/eth0/mtu").ToString(),
            "not_found: open /sys/class/net/eth0/mtu: No such file or directory");
  EXPECT_EQ(FromErrno(EACCES, "open /x").ToString(), "permission_denied: open /x: Permission denied");
}

TEST(ResultTest, error_helpers_build_unexpected_status) {
  Result<int> r = Error(StatusCode::kUnavailable, "later");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.error().message(), "later");

  Result<int> r2 = Error(FromErrno(EACCES, "open /y"));
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r2.error().sys_errno(), EACCES);

  Result<int> ok = 7;
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, 7);
}

}  // namespace
}  // namespace fabricwatch
