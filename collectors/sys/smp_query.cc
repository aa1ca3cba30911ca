#include "collectors/sys/smp_query.h"

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace fabricwatch::sys {
namespace {

struct PortCloser {
  void operator()(ibmad_port* port) const { mad_rpc_close_port(port); }
};
using MadPort = std::unique_ptr<ibmad_port, PortCloser>;

std::string NodeTypeName(int type) {
  // IBA 1.3 §14.2.5.3 NodeType.
  switch (type) {
    case 1:
      return "Channel Adapter";
    case 2:
      return "Switch";
    case 3:
      return "Router";
    default:
      return "Unknown";
  }
}

}  // namespace

Result<SmpNeighbor> QuerySmpNeighbor(const std::string& device, int port,
                                     std::chrono::milliseconds timeout) {
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  errno = 0;
  MadPort mad(mad_rpc_open_port(const_cast<char*>(device.c_str()), port, classes, 2));
  if (!mad) {
    const int error = errno;
    const StatusCode code = error == EACCES || error == EPERM ? StatusCode::kPermissionDenied
                                                              : StatusCode::kUnavailable;
    return Error(code, "cannot open umad for " + device + " port " + std::to_string(port) + ": " +
                           (error != 0 ? std::strerror(error) : "no umad device"));
  }
  ib_portid_t portid{};
  const std::string path = "0," + std::to_string(port);
  if (str2drpath(&portid.drpath, const_cast<char*>(path.c_str()), 0, 0) < 0) {
    return Error(StatusCode::kInvalidArgument, "bad directed route " + path);
  }
  uint8_t data[IB_SMP_DATA_SIZE] = {};
  const auto ms = static_cast<unsigned>(timeout.count());
  if (smp_query_via(data, &portid, IB_ATTR_NODE_INFO, 0, ms, mad.get()) == nullptr) {
    return Error(StatusCode::kUnavailable,
                 "NodeInfo query via " + device + " port " + std::to_string(port) + " failed");
  }
  SmpNeighbor neighbor;
  uint64_t guid = 0, system_guid = 0;
  int type = 0, ports = 0, local = 0, vendor = 0, devid = 0;
  mad_decode_field(data, IB_NODE_GUID_F, &guid);
  mad_decode_field(data, IB_NODE_SYSTEM_GUID_F, &system_guid);
  mad_decode_field(data, IB_NODE_TYPE_F, &type);
  mad_decode_field(data, IB_NODE_NPORTS_F, &ports);
  mad_decode_field(data, IB_NODE_LOCAL_PORT_F, &local);
  mad_decode_field(data, IB_NODE_VENDORID_F, &vendor);
  mad_decode_field(data, IB_NODE_DEVID_F, &devid);
  neighbor.info = {NodeTypeName(type),
                   guid,
                   system_guid,
                   static_cast<unsigned>(ports),
                   static_cast<unsigned>(local),
                   static_cast<uint32_t>(vendor),
                   static_cast<uint32_t>(devid)};
  // Without its NodeDescription the neighbour is still known by its GUID: kept, with the reason.
  uint8_t desc[IB_SMP_DATA_SIZE] = {};
  if (smp_query_via(desc, &portid, IB_ATTR_NODE_DESC, 0, ms, mad.get()) == nullptr) {
    neighbor.description_error =
        Status(StatusCode::kUnavailable,
               "NodeDescription query via " + device + " port " + std::to_string(port) + " failed");
    return neighbor;
  }
  // 64 bytes, NUL-padded (IBA §14.2.5.2); through the text parser, which rejects control bytes.
  std::string text(reinterpret_cast<const char*>(desc), kMaxNodeDescriptionBytes);
  text.resize(std::strlen(text.c_str()));
  auto parsed = ParseSmpNodeDesc("Node Description:" + text);
  if (parsed) {
    neighbor.description = std::move(*parsed);
  } else {
    neighbor.description_error =
        parsed.error().WithContext(device + " port " + std::to_string(port));
  }
  return neighbor;
}

}  // namespace fabricwatch::sys
