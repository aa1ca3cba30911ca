#include "collectors/peer/smp_query.h"

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "collectors/sys/shared_library.h"

namespace fabricwatch::peer {
namespace {

// The libibmad functions a query calls, typed by <infiniband/mad.h>.
struct MadApi {
  decltype(&mad_rpc_open_port) rpc_open_port = nullptr;
  decltype(&mad_rpc_close_port) rpc_close_port = nullptr;
  decltype(&str2drpath) to_drpath = nullptr;
  decltype(&smp_query_via) query_via = nullptr;
  decltype(&mad_decode_field) decode_field = nullptr;
};

void BindMad(sys::SymbolBinder& b, MadApi& api) {
  b.Bind(api.rpc_open_port, "mad_rpc_open_port");
  b.Bind(api.rpc_close_port, "mad_rpc_close_port");
  b.Bind(api.to_drpath, "str2drpath");
  b.Bind(api.query_via, "smp_query_via");
  b.Bind(api.decode_field, "mad_decode_field");
}

// libibmad.so.5 is loaded on the first query (shared_library.h, docs/libraries.md): only the peer
// collector's SMP source asks, on InfiniBand ports. It brings libibumad.so.3 (its DT_NEEDED).
Result<const MadApi*> Mad() {
  static auto* library =
      new sys::OnDemandLibrary<MadApi>({.soname = "libibmad.so.5",
                                        .package = "libibmad5",
                                        .feature = "the peer collector's SMP neighbour queries"},
                                       BindMad);
  return library->Get();
}

// Owns an opened umad port (mad_rpc_close_port on destruction).
class MadPort {
 public:
  MadPort(const MadApi& api, ibmad_port* port) : api_(api), port_(port) {}
  MadPort(const MadPort&) = delete;
  MadPort& operator=(const MadPort&) = delete;
  ~MadPort() {
    if (port_ != nullptr) api_.rpc_close_port(port_);
  }
  ibmad_port* get() const { return port_; }
  explicit operator bool() const { return port_ != nullptr; }

 private:
  const MadApi& api_;
  ibmad_port* port_;
};

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
  auto api = Mad();
  if (!api) return Error(api.error());
  const MadApi& m = **api;
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  errno = 0;
  MadPort mad(m, m.rpc_open_port(const_cast<char*>(device.c_str()), port, classes, 2));
  if (!mad) {
    const int error = errno;
    const StatusCode code = error == EACCES || error == EPERM ? StatusCode::kPermissionDenied
                                                              : StatusCode::kUnavailable;
    return Error(code, "cannot open umad for " + device + " port " + std::to_string(port) + ": " +
                           (error != 0 ? std::strerror(error) : "no umad device"));
  }
  ib_portid_t portid{};
  const std::string path = "0," + std::to_string(port);
  if (m.to_drpath(&portid.drpath, const_cast<char*>(path.c_str()), 0, 0) < 0) {
    return Error(StatusCode::kInvalidArgument, "bad directed route " + path);
  }
  uint8_t data[IB_SMP_DATA_SIZE] = {};
  const auto ms = static_cast<unsigned>(timeout.count());
  if (m.query_via(data, &portid, IB_ATTR_NODE_INFO, 0, ms, mad.get()) == nullptr) {
    return Error(StatusCode::kUnavailable,
                 "NodeInfo query via " + device + " port " + std::to_string(port) + " failed");
  }
  SmpNeighbor neighbor;
  uint64_t guid = 0, system_guid = 0;
  int type = 0, ports = 0, local = 0, vendor = 0, devid = 0;
  m.decode_field(data, IB_NODE_GUID_F, &guid);
  m.decode_field(data, IB_NODE_SYSTEM_GUID_F, &system_guid);
  m.decode_field(data, IB_NODE_TYPE_F, &type);
  m.decode_field(data, IB_NODE_NPORTS_F, &ports);
  m.decode_field(data, IB_NODE_LOCAL_PORT_F, &local);
  m.decode_field(data, IB_NODE_VENDORID_F, &vendor);
  m.decode_field(data, IB_NODE_DEVID_F, &devid);
  neighbor.info = {NodeTypeName(type),
                   guid,
                   system_guid,
                   static_cast<unsigned>(ports),
                   static_cast<unsigned>(local),
                   static_cast<uint32_t>(vendor),
                   static_cast<uint32_t>(devid)};
  // Without its NodeDescription the neighbour is still known by its GUID: kept, with the reason.
  uint8_t desc[IB_SMP_DATA_SIZE] = {};
  if (m.query_via(desc, &portid, IB_ATTR_NODE_DESC, 0, ms, mad.get()) == nullptr) {
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

}  // namespace fabricwatch::peer
