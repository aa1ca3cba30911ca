#pragma once
// Pure builders and parsers of the RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV) messages the
// rdma collector's hw-counter path uses (issue 34; docs/reference.md §1.6). No socket, no I/O: the
// I/O side is rdma_netlink.h. Constants come from the UAPI header <rdma/rdma_netlink.h> (K
// include/uapi/rdma/rdma_netlink.h; Debian 12's linux-libc-dev 6.1 has every one used here).
//
// RDMA_NLDEV_CMD_STAT_GET without RDMA_NLDEV_ATTR_STAT_RES is answered by the kernel's
// stat_get_doit_default_counter() (K drivers/infiniband/core/nldev.c, since v5.3, "RDMA/nldev:
// Allow get default counter statistics through RDMA netlink"): one message carrying the device
// handle (DEV_INDEX, DEV_NAME), PORT_INDEX and the STAT_HWCOUNTERS nest, one STAT_HWCOUNTER_ENTRY
// nest per driver counter of the port { ENTRY_NAME string, ENTRY_VALUE u64 }, in the driver's
// descriptor order. The value is stats->value[i] + rdma_counter_get_hwstat_value(), the same sum
// sysfs ports/<n>/hw_counters/<name> prints (K drivers/infiniband/core/sysfs.c print_hw_stat).
// From v5.16 ("RDMA/core: Add optional counter support") counters disabled with
// `rdma statistic set ... optional-counters` are left out of the nest.
// A u64 is put with nla_put_u64_64bit(), so a RDMA_NLDEV_ATTR_PAD (0) attribute may precede it.
//
// Every parser takes one complete netlink message (nlmsg_len bytes readable) and never reads
// outside it. Thread-safety: stateless functions.

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::sys {

// nlmsg_type of the RDMA netlink messages used here: RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd).
uint16_t RdmaNldevStatGetType();
uint16_t RdmaNldevGetType();

// Bytes of the STAT_GET request (header + two u32 attributes).
inline constexpr size_t kRdmaStatGetRequestBytes = NLMSG_HDRLEN + 2 * 8;

// Writes the RDMA_NLDEV_CMD_STAT_GET request for port `port` of the device with ibdev index
// `dev_index` into `out` (NLM_F_REQUEST, sequence `seq`, port id 0): DEV_INDEX and PORT_INDEX as
// u32. Returns the bytes written, 0 when `out` is shorter than kRdmaStatGetRequestBytes.
size_t BuildRdmaStatGetRequest(std::span<std::byte> out, uint32_t seq, uint32_t dev_index,
                               uint32_t port);
// Writes the RDMA_NLDEV_CMD_GET dump request (NLM_F_REQUEST | NLM_F_DUMP, no attribute): the
// kernel answers one message per device (nldev_get_dumpit) and NLMSG_DONE. Returns the bytes
// written (NLMSG_HDRLEN), 0 when `out` is too short.
size_t BuildRdmaDeviceDumpRequest(std::span<std::byte> out, uint32_t seq);

// One counter of a STAT_GET reply. `name` points into the reply message.
struct RdmaHwCounter {
  std::string_view name;
  uint64_t value = 0;
};

// A STAT_GET reply → its counters, in reply order, into `out` (cleared first; its capacity is
// reused, so a steady-state caller does not allocate). `dev_index`/`port`: when the reply carries
// DEV_INDEX or PORT_INDEX they must match. `dev_name` (when not empty): when the reply carries
// DEV_NAME it must be that name, else kFailedPrecondition (IsRdmaDeviceMismatch): the ibdev index
// was reused by another device after a delete and re-add, whose counters must not be taken for the
// asked one's. An NLMSG_ERROR message is its errno's status (with the
// kernel's extended-ACK text); kInvalidArgument when malformed: another message type, a truncated
// attribute, no STAT_HWCOUNTERS nest, an entry without a NUL-terminated non-empty name or with a
// value that is not 8 bytes, a name listed twice. Attributes this build does not know (the entry's
// HWCOUNTER_INDEX and _DYNAMIC of newer kernels, pads) are skipped.
Status ParseRdmaStatReply(const nlmsghdr* msg, uint32_t dev_index, uint32_t port,
                          std::vector<RdmaHwCounter>& out, std::string_view dev_name = {});
// Whether `status` is ParseRdmaStatReply's answer for another device than the one named.
bool IsRdmaDeviceMismatch(const Status& status);

// The NLMSG_DONE that ends a dump: OK, or the error the dump failed with. The kernel puts an int
// after the header (K net/netlink/af_netlink.c netlink_dump_done: nlk->dump_done_errno, negative
// when the dump callback failed), so a failed dump is not mistaken for a short list. A DONE
// without the int (not sent by Linux) is OK.
Status ParseRdmaDumpDone(const nlmsghdr* msg, std::string_view what);

// One device of a RDMA_NLDEV_CMD_GET reply (doit or one message of a dump).
struct RdmaDeviceIndex {
  uint32_t index = 0;
  std::string name;
};
// kInvalidArgument when malformed: another type, a truncated attribute, no DEV_INDEX (u32) or no
// NUL-terminated DEV_NAME.
Result<RdmaDeviceIndex> ParseRdmaDeviceMessage(const nlmsghdr* msg);

}  // namespace fabricwatch::sys
