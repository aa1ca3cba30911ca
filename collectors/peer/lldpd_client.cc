#include "collectors/peer/lldpd_client.h"

#include <lldpctl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "collectors/sys/shared_library.h"
#include "collectors/sys/unique_fd.h"

namespace fabricwatch::peer {
namespace {

using Clock = std::chrono::steady_clock;

// The liblldpctl functions a query calls, typed by <lldpctl.h>.
struct LldpctlApi {
  decltype(&lldpctl_new_name) new_name = nullptr;
  decltype(&lldpctl_release) release = nullptr;
  decltype(&lldpctl_last_error) last_error = nullptr;
  decltype(&lldpctl_strerror) str_error = nullptr;
  decltype(&lldpctl_get_interfaces) get_interfaces = nullptr;
  decltype(&lldpctl_get_port) get_port = nullptr;
  decltype(&lldpctl_atom_get) atom_get = nullptr;
  decltype(&lldpctl_atom_get_str) atom_get_str = nullptr;
  decltype(&lldpctl_atom_get_int) atom_get_int = nullptr;
  decltype(&lldpctl_atom_iter) atom_iter = nullptr;
  decltype(&lldpctl_atom_iter_next) atom_iter_next = nullptr;
  decltype(&lldpctl_atom_iter_value) atom_iter_value = nullptr;
  decltype(&lldpctl_atom_dec_ref) atom_dec_ref = nullptr;
};

void BindLldpctl(sys::SymbolBinder& b, LldpctlApi& api) {
  b.Bind(api.new_name, "lldpctl_new_name");
  b.Bind(api.release, "lldpctl_release");
  b.Bind(api.last_error, "lldpctl_last_error");
  b.Bind(api.str_error, "lldpctl_strerror");
  b.Bind(api.get_interfaces, "lldpctl_get_interfaces");
  b.Bind(api.get_port, "lldpctl_get_port");
  b.Bind(api.atom_get, "lldpctl_atom_get");
  b.Bind(api.atom_get_str, "lldpctl_atom_get_str");
  b.Bind(api.atom_get_int, "lldpctl_atom_get_int");
  b.Bind(api.atom_iter, "lldpctl_atom_iter");
  b.Bind(api.atom_iter_next, "lldpctl_atom_iter_next");
  b.Bind(api.atom_iter_value, "lldpctl_atom_iter_value");
  b.Bind(api.atom_dec_ref, "lldpctl_atom_dec_ref");
}

// liblldpctl.so.4 is loaded on the first query (shared_library.h, docs/libraries.md): only the
// peer collector's lldpd source asks. Debian ships it in the lldpd package itself, so a node
// that runs lldpd has it.
Result<const LldpctlApi*> Lldpctl() {
  static auto* library =
      new sys::OnDemandLibrary<LldpctlApi>({.soname = "liblldpctl.so.4",
                                            .package = "lldpd",
                                            .feature = "the peer collector's lldpd source"},
                                           BindLldpctl);
  return library->Get();
}

struct ConnRelease {
  const LldpctlApi* api;
  void operator()(lldpctl_conn_t* conn) const { api->release(conn); }
};
struct AtomRelease {
  const LldpctlApi* api;
  void operator()(lldpctl_atom_t* atom) const { api->atom_dec_ref(atom); }
};
using Conn = std::unique_ptr<lldpctl_conn_t, ConnRelease>;
using Atom = std::unique_ptr<lldpctl_atom_t, AtomRelease>;

Atom Own(const LldpctlApi& api, lldpctl_atom_t* atom) { return Atom(atom, AtomRelease{&api}); }

// The socket liblldpctl talks through: its send/recv callbacks poll with the query's deadline.
struct Transport {
  sys::UniqueFd fd;
  Clock::time_point deadline;
  bool timed_out = false;

  // Waits for `events` until the deadline; false on timeout or error.
  bool Wait(short events) {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        return false;
      }
      pollfd pfd{fd.get(), events, 0};
      const int ready = poll(&pfd, 1, static_cast<int>(left.count()));
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return false;
    }
  }

  static ssize_t Send(lldpctl_conn_t*, const uint8_t* data, size_t length, void* user) {
    auto* self = static_cast<Transport*>(user);
    size_t sent = 0;
    while (sent < length) {
      if (!self->Wait(POLLOUT)) return LLDPCTL_ERR_CALLBACK_FAILURE;
      const ssize_t n = ::send(self->fd.get(), data + sent, length - sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) return LLDPCTL_ERR_CALLBACK_FAILURE;
      sent += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(sent);
  }

  // liblldpctl asks for the bytes it still needs and calls again while a message is incomplete
  // (src/lib/atom.c _lldpctl_do_something), so a partial read is fine.
  static ssize_t Recv(lldpctl_conn_t*, const uint8_t* data, size_t length, void* user) {
    auto* self = static_cast<Transport*>(user);
    for (;;) {
      if (!self->Wait(POLLIN)) return LLDPCTL_ERR_CALLBACK_FAILURE;
      const ssize_t n = ::read(self->fd.get(), const_cast<uint8_t*>(data), length);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) return LLDPCTL_ERR_CALLBACK_FAILURE;
      if (n == 0) return LLDPCTL_ERR_EOF;
      return n;
    }
  }
};

Result<sys::UniqueFd> Connect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Error(StatusCode::kInvalidArgument, "lldpd socket path '" + path + "' is too long");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  sys::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Error(FromErrno(errno, "socket(AF_UNIX)"));
  // A Unix stream connect completes or fails at once (EAGAIN only when the backlog is full).
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    if (err == EACCES || err == EPERM) {
      return Error(FromErrno(err, "lldpd socket " + path));
    }
    return Error(StatusCode::kUnavailable, "no lldpd at " + path + ": " + std::strerror(err));
  }
  return fd;
}

std::string Str(const LldpctlApi& api, lldpctl_atom_t* atom, lldpctl_key_t key) {
  const char* s = api.atom_get_str(atom, key);
  return s != nullptr ? std::string(s) : std::string();
}

uint8_t Subtype(const LldpctlApi& api, lldpctl_atom_t* atom, lldpctl_key_t key) {
  const long v = api.atom_get_int(atom, key);
  return v >= 0 && v <= 255 ? static_cast<uint8_t>(v) : 0;
}

bool Acceptable(const LldpNeighbor& n) {
  for (const std::string* s :
       {&n.chassis_id, &n.port_id, &n.port_description, &n.system_name, &n.system_description}) {
    if (s->size() > kMaxLldpStringBytes || !IsValidLldpText(*s)) return false;
  }
  return !n.chassis_id.empty() && !n.port_id.empty();
}

// One neighbour atom (a remote port, lldpctl_k_port_neighbors) as an LldpNeighbor.
LldpNeighbor NeighborOf(const LldpctlApi& api, lldpctl_atom_t* port) {
  LldpNeighbor n;
  n.port_id_subtype = Subtype(api, port, lldpctl_k_port_id_subtype);
  n.port_id = Str(api, port, lldpctl_k_port_id);
  n.port_description = Str(api, port, lldpctl_k_port_descr);
  const long ttl = api.atom_get_int(port, lldpctl_k_port_ttl);
  n.ttl_seconds = ttl > 0 && ttl <= 65535 ? static_cast<uint32_t>(ttl) : 0;
  Atom chassis = Own(api, api.atom_get(port, lldpctl_k_port_chassis));
  if (!chassis) return n;
  n.chassis_id_subtype = Subtype(api, chassis.get(), lldpctl_k_chassis_id_subtype);
  n.chassis_id = Str(api, chassis.get(), lldpctl_k_chassis_id);
  n.system_name = Str(api, chassis.get(), lldpctl_k_chassis_name);
  n.system_description = Str(api, chassis.get(), lldpctl_k_chassis_descr);
  Atom mgmts = Own(api, api.atom_get(chassis.get(), lldpctl_k_chassis_mgmt));
  if (mgmts) {
    if (lldpctl_atom_iter_t* it = api.atom_iter(mgmts.get())) {
      Atom mgmt = Own(api, api.atom_iter_value(mgmts.get(), it));
      if (mgmt) n.management_address = Str(api, mgmt.get(), lldpctl_k_mgmt_ip);
    }
  }
  return n;
}

Status LibError(const LldpctlApi& api, lldpctl_conn_t* conn, Transport& transport,
                std::string_view what, const std::string& path) {
  if (transport.timed_out) {
    return Status(StatusCode::kDeadlineExceeded,
                  "lldpd at " + path + " did not answer " + std::string(what) + " in time");
  }
  return Status(StatusCode::kUnavailable, "lldpd at " + path + ": " + std::string(what) + ": " +
                                              api.str_error(api.last_error(conn)));
}

}  // namespace

Result<LldpdNeighbors> QueryLldpdNeighbors(const LldpdQueryOptions& options) {
  Transport transport;
  transport.deadline = Clock::now() + options.timeout;
  auto fd = Connect(options.socket_path);
  if (!fd) return Error(fd.error());
  // Loaded once an lldpd answers, not before: the peer collector's `auto` mode asks on every
  // refresh of a RoCE node, and a node without lldpd should neither load it nor warn about it.
  auto loaded = Lldpctl();
  if (!loaded) return Error(loaded.error());
  const LldpctlApi& api = **loaded;
  transport.fd = std::move(*fd);
  Conn conn(
      api.new_name(options.socket_path.c_str(), &Transport::Send, &Transport::Recv, &transport),
      ConnRelease{&api});
  if (!conn) return Error(StatusCode::kInternal, "lldpctl_new_name failed (out of memory)");
  Atom interfaces = Own(api, api.get_interfaces(conn.get()));
  if (!interfaces) {
    return Error(LibError(api, conn.get(), transport, "list interfaces", options.socket_path));
  }
  LldpdNeighbors out;
  for (lldpctl_atom_iter_t* it = api.atom_iter(interfaces.get()); it != nullptr;
       it = api.atom_iter_next(interfaces.get(), it)) {
    Atom iface = Own(api, api.atom_iter_value(interfaces.get(), it));
    if (!iface) continue;
    const std::string netdev = Str(api, iface.get(), lldpctl_k_interface_name);
    Atom port = Own(api, api.get_port(iface.get()));
    if (!port)
      return Error(LibError(api, conn.get(), transport, "get port " + netdev, options.socket_path));
    Atom neighbors = Own(api, api.atom_get(port.get(), lldpctl_k_port_neighbors));
    if (!neighbors) continue;
    for (lldpctl_atom_iter_t* nit = api.atom_iter(neighbors.get()); nit != nullptr;
         nit = api.atom_iter_next(neighbors.get(), nit)) {
      Atom neighbor = Own(api, api.atom_iter_value(neighbors.get(), nit));
      if (!neighbor) continue;
      LldpNeighbor n = NeighborOf(api, neighbor.get());
      if (!Acceptable(n)) {
        ++out.rejected;
      } else if (!netdev.empty()) {
        out.by_netdev.emplace(netdev, std::move(n));  // keeps the first
      }
    }
  }
  return out;
}

}  // namespace fabricwatch::peer
