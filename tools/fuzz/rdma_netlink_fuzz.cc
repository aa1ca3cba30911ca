// libFuzzer target for the RDMA netlink reply parsers (collectors/sys/rdma_netlink_parse.h, issue
// 34): byte 0 picks the parser (bit 0: STAT_GET reply or GET device message) and whether the
// message type is forced to the expected one (bit 1, so that the attribute walk is reached); the
// rest is one netlink message, its nlmsg_len set to the bytes given. Besides the sanitizers'
// checks: a parsed counter's name is non-empty, has no NUL and lies inside the message; names are
// unique; an error leaves no counter behind and has a message.

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "collectors/sys/rdma_netlink_parse.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricwatch::sys;
  if (size < 1 + NLMSG_HDRLEN) return 0;
  const uint8_t selector = data[0];
  const size_t len = size - 1;
  // 8-byte aligned storage of exactly the message (ASan sees any read past it).
  std::vector<uint64_t> storage((len + 7) / 8);
  std::memcpy(storage.data(), data + 1, len);
  auto* msg = reinterpret_cast<nlmsghdr*>(storage.data());
  msg->nlmsg_len = static_cast<uint32_t>(len);
  const bool stat = (selector & 1) == 0;
  if ((selector & 2) != 0) msg->nlmsg_type = stat ? RdmaNldevStatGetType() : RdmaNldevGetType();
  const char* begin = reinterpret_cast<const char*>(storage.data());
  const char* end = begin + len;
  if (stat) {
    std::vector<RdmaHwCounter> out = {{"stale", 1}};
    uint32_t dev = 0, port = 0;
    if (len >= NLMSG_HDRLEN + 16) {  // the indexes the message would carry, often
      std::memcpy(&dev, begin + NLMSG_HDRLEN + 4, 4);
      std::memcpy(&port, begin + NLMSG_HDRLEN + 12, 4);
    }
    // Bit 2: the reply's DEV_NAME is checked against a name (the collector always asks one).
    const fabricwatch::Status s =
        ParseRdmaStatReply(msg, dev, port, out, (selector & 4) != 0 ? "mlx5_0" : "");
    if (!s.ok()) {
      Check(out.empty(), "counters left after an error");
      Check(!s.message().empty(), "an error without a message");
      return 0;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      const RdmaHwCounter& c = out[i];
      Check(!c.name.empty(), "an empty counter name");
      Check(c.name.find('\0') == std::string_view::npos, "a NUL in a counter name");
      Check(c.name.data() >= begin && c.name.data() + c.name.size() <= end,
            "a counter name outside the message");
      for (size_t j = i + 1; j < out.size(); ++j) Check(out[j].name != c.name, "a repeated name");
    }
  } else {
    const fabricwatch::Status done = ParseRdmaDumpDone(msg, "RDMA netlink GET dump");
    Check(done.ok() || !done.message().empty(), "a dump error without a message");
    auto device = ParseRdmaDeviceMessage(msg);
    if (device) {
      Check(!device->name.empty() && device->name.size() < len, "a device name of a wrong size");
    } else {
      Check(!device.error().message().empty(), "an error without a message");
    }
  }
  return 0;
}
