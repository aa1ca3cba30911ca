#include "collectors/sys/rdma_netlink_parse.h"

#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace fabricwatch::sys {
namespace {

// The attribute walk is done by hand (no libnl) so that the parser allocates nothing and the fuzz
// target links without libnl; the layout is the kernel's (K include/uapi/linux/netlink.h: nlattr,
// NLA_ALIGN, NLA_TYPE_MASK).
struct Attr {
  uint16_t type;  // NLA_F_NESTED and NLA_F_NET_BYTEORDER masked off
  std::span<const std::byte> payload;
};

Status Malformed(std::string_view what, std::string_view detail) {
  return Status(StatusCode::kInvalidArgument,
                "malformed RDMA netlink " + std::string(what) + ": " + std::string(detail));
}

// Calls visit(Attr) for each attribute of `stream` until one fails. A header or payload reaching
// past the stream is malformed; so are trailing bytes shorter than an attribute header.
template <typename Visit>
Status ForEach(std::span<const std::byte> stream, std::string_view what, Visit&& visit) {
  size_t offset = 0;
  while (offset < stream.size()) {
    if (stream.size() - offset < NLA_HDRLEN) {
      return Malformed(what,
                       std::to_string(stream.size() - offset) + " bytes after the last attribute");
    }
    nlattr header;
    std::memcpy(&header, stream.data() + offset, sizeof(header));
    if (header.nla_len < NLA_HDRLEN || header.nla_len > stream.size() - offset) {
      return Malformed(what, "attribute of length " + std::to_string(header.nla_len) + " at byte " +
                                 std::to_string(offset) + " of " + std::to_string(stream.size()));
    }
    const Attr attr{static_cast<uint16_t>(header.nla_type & NLA_TYPE_MASK),
                    stream.subspan(offset + NLA_HDRLEN, header.nla_len - NLA_HDRLEN)};
    if (Status s = visit(attr); !s.ok()) return s;
    // The last attribute's padding may be missing from the stream (the kernel pads, but be
    // lenient).
    offset = std::min(stream.size(), offset + NLA_ALIGN(header.nla_len));
  }
  return Status::Ok();
}

std::span<const std::byte> Payload(const nlmsghdr* msg, size_t family_header) {
  const size_t offset = NLMSG_HDRLEN + NLMSG_ALIGN(family_header);
  if (msg->nlmsg_len < offset) return {};
  return {reinterpret_cast<const std::byte*>(msg) + offset, msg->nlmsg_len - offset};
}

std::optional<uint32_t> U32(const Attr& attr) {
  if (attr.payload.size() < sizeof(uint32_t)) return std::nullopt;
  uint32_t v;
  std::memcpy(&v, attr.payload.data(), sizeof(v));
  return v;
}

// A NUL-terminated, non-empty string attribute (nla_put_string puts the NUL).
std::optional<std::string_view> String(const Attr& attr) {
  const auto* data = reinterpret_cast<const char*>(attr.payload.data());
  const size_t n = strnlen(data, attr.payload.size());
  if (n == 0 || n == attr.payload.size()) return std::nullopt;
  return std::string_view(data, n);
}

// NLMSG_ERROR → the errno's status, with NLMSGERR_ATTR_MSG when the kernel sent it (K
// net/netlink/af_netlink.c netlink_ack: TLVs after the echoed request, or after its header alone
// with NLM_F_CAPPED).
Status ErrorStatus(const nlmsghdr* msg, std::string_view what) {
  if (msg->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) return Malformed(what, "short NLMSG_ERROR");
  nlmsgerr err;
  std::memcpy(&err, NLMSG_DATA(msg), sizeof(err));
  if (err.error == 0) return Malformed(what, "an ACK instead of the reply");
  std::string text;
  if ((msg->nlmsg_flags & NLM_F_ACK_TLVS) != 0) {
    size_t payload = sizeof(nlmsgerr);
    if ((msg->nlmsg_flags & NLM_F_CAPPED) == 0 && err.msg.nlmsg_len >= NLMSG_HDRLEN) {
      payload += err.msg.nlmsg_len - NLMSG_HDRLEN;
    }
    (void)ForEach(Payload(msg, payload), what, [&](const Attr& attr) {
      if (attr.type == NLMSGERR_ATTR_MSG) {
        if (auto s = String(attr)) text = std::string(*s);
      }
      return Status::Ok();
    });
  }
  // The kernel sends -errno (1..4095, MAX_ERRNO); anything else would not negate to one.
  if (err.error >= 0 || err.error < -4095) {
    return Malformed(what, "NLMSG_ERROR with error " + std::to_string(err.error));
  }
  const int e = -err.error;
  Status status = FromErrno(e, what);
  if (text.empty()) return status;
  return Status(status.code(), status.message() + " (" + text + ")", e);
}

void PutAttrU32(std::byte* at, uint16_t type, uint32_t value) {
  const nlattr header{static_cast<uint16_t>(NLA_HDRLEN + sizeof(value)), type};
  std::memcpy(at, &header, sizeof(header));
  std::memcpy(at + NLA_HDRLEN, &value, sizeof(value));
}

size_t PutHeader(std::span<std::byte> out, size_t length, uint16_t type, uint16_t flags,
                 uint32_t seq) {
  if (out.size() < length) return 0;
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(length), std::byte{0});
  nlmsghdr header{};
  header.nlmsg_len = static_cast<uint32_t>(length);
  header.nlmsg_type = type;
  header.nlmsg_flags = flags;
  header.nlmsg_seq = seq;
  std::memcpy(out.data(), &header, sizeof(header));
  return length;
}

Status ParseEntry(const Attr& entry, std::vector<RdmaHwCounter>& out, std::string_view what) {
  std::optional<std::string_view> name;
  std::optional<uint64_t> value;
  Status s = ForEach(entry.payload, what, [&](const Attr& attr) {
    if (attr.type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME) {
      name = String(attr);
      if (!name) return Malformed(what, "a counter name that is empty or not NUL-terminated");
    } else if (attr.type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE) {
      if (attr.payload.size() != sizeof(uint64_t)) {
        return Malformed(what, "a counter value of " + std::to_string(attr.payload.size()) +
                                   " bytes, expected 8");
      }
      uint64_t v;
      std::memcpy(&v, attr.payload.data(), sizeof(v));  // only 4-byte aligned without the pad
      value = v;
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  if (!name) return Malformed(what, "a counter entry without a name");
  if (!value) return Malformed(what, "counter \"" + std::string(*name) + "\" without a value");
  out.push_back({*name, *value});
  return Status::Ok();
}

}  // namespace

uint16_t RdmaNldevStatGetType() { return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET); }
uint16_t RdmaNldevGetType() { return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET); }

size_t BuildRdmaStatGetRequest(std::span<std::byte> out, uint32_t seq, uint32_t dev_index,
                               uint32_t port) {
  static_assert(kRdmaStatGetRequestBytes == NLMSG_HDRLEN + 2 * NLA_ALIGN(NLA_HDRLEN + 4));
  const size_t n =
      PutHeader(out, kRdmaStatGetRequestBytes, RdmaNldevStatGetType(), NLM_F_REQUEST, seq);
  if (n == 0) return 0;
  PutAttrU32(out.data() + NLMSG_HDRLEN, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  PutAttrU32(out.data() + NLMSG_HDRLEN + 8, RDMA_NLDEV_ATTR_PORT_INDEX, port);
  return n;
}

size_t BuildRdmaDeviceDumpRequest(std::span<std::byte> out, uint32_t seq) {
  return PutHeader(out, NLMSG_HDRLEN, RdmaNldevGetType(), NLM_F_REQUEST | NLM_F_DUMP, seq);
}

Status ParseRdmaStatReply(const nlmsghdr* msg, uint32_t dev_index, uint32_t port,
                          std::vector<RdmaHwCounter>& out, std::string_view dev_name) {
  constexpr std::string_view what = "STAT_GET reply";
  out.clear();
  if (msg->nlmsg_type == NLMSG_ERROR) return ErrorStatus(msg, "RDMA netlink STAT_GET");
  if (msg->nlmsg_type != RdmaNldevStatGetType()) {
    return Malformed(what, "message type " + std::to_string(msg->nlmsg_type) + ", expected " +
                               std::to_string(RdmaNldevStatGetType()));
  }
  bool table = false;
  Status s = ForEach(Payload(msg, 0), what, [&](const Attr& attr) -> Status {
    switch (attr.type) {
      case RDMA_NLDEV_ATTR_DEV_INDEX:
      case RDMA_NLDEV_ATTR_PORT_INDEX: {
        const auto v = U32(attr);
        const uint32_t want = attr.type == RDMA_NLDEV_ATTR_DEV_INDEX ? dev_index : port;
        if (!v) return Malformed(what, "a short device or port index");
        if (*v != want) {
          return Malformed(
              what, "answer for index " + std::to_string(*v) + ", asked " + std::to_string(want));
        }
        return Status::Ok();
      }
      case RDMA_NLDEV_ATTR_DEV_NAME: {
        const auto name = String(attr);
        if (!name) return Malformed(what, "a device name that is empty or not NUL-terminated");
        if (!dev_name.empty() && *name != dev_name) {
          return Status(StatusCode::kFailedPrecondition,
                        "RDMA netlink STAT_GET: the answer is for device " + std::string(*name) +
                            ", asked " + std::string(dev_name) + " (ibdev index " +
                            std::to_string(dev_index) + " reused)");
        }
        return Status::Ok();
      }
      case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
        table = true;
        return ForEach(attr.payload, what, [&](const Attr& entry) {
          if (entry.type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) return Status::Ok();
          return ParseEntry(entry, out, what);
        });
      default:
        return Status::Ok();
    }
  });
  if (s.ok() && !table) s = Malformed(what, "no RDMA_NLDEV_ATTR_STAT_HWCOUNTERS");
  // Names are unique per port (they are sysfs file names): a repeat would make two series.
  for (size_t i = 0; s.ok() && i < out.size(); ++i) {
    for (size_t j = i + 1; j < out.size(); ++j) {
      if (out[i].name == out[j].name) {
        s = Malformed(what, "counter \"" + std::string(out[i].name) + "\" listed twice");
        break;
      }
    }
  }
  if (!s.ok()) out.clear();
  return s;
}

bool IsRdmaDeviceMismatch(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition;
}

Status ParseRdmaDumpDone(const nlmsghdr* msg, std::string_view what) {
  if (msg->nlmsg_len < NLMSG_LENGTH(sizeof(int))) return Status::Ok();
  int error;
  std::memcpy(&error, NLMSG_DATA(msg), sizeof(error));
  if (error >= 0) return Status::Ok();
  if (error < -4095) return Malformed(what, "NLMSG_DONE with error " + std::to_string(error));
  return FromErrno(-error, std::string(what) + " (the dump failed)");
}

Result<RdmaDeviceIndex> ParseRdmaDeviceMessage(const nlmsghdr* msg) {
  constexpr std::string_view what = "GET reply";
  if (msg->nlmsg_type == NLMSG_ERROR) return Error(ErrorStatus(msg, "RDMA netlink GET"));
  if (msg->nlmsg_type != RdmaNldevGetType()) {
    return Error(Malformed(what, "message type " + std::to_string(msg->nlmsg_type)));
  }
  std::optional<uint32_t> index;
  std::optional<std::string_view> name;
  Status s = ForEach(Payload(msg, 0), what, [&](const Attr& attr) {
    if (attr.type == RDMA_NLDEV_ATTR_DEV_INDEX) {
      index = U32(attr);
      if (!index) return Malformed(what, "a short device index");
    } else if (attr.type == RDMA_NLDEV_ATTR_DEV_NAME) {
      name = String(attr);
      if (!name) return Malformed(what, "a device name that is empty or not NUL-terminated");
    }
    return Status::Ok();
  });
  if (!s.ok()) return Error(s);
  if (!index || !name) return Error(Malformed(what, "no device index or name"));
  return RdmaDeviceIndex{*index, std::string(*name)};
}

}  // namespace fabricwatch::sys
