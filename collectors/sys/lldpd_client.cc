#include "collectors/sys/lldpd_client.h"

#include <lldpctl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "collectors/sys/unique_fd.h"

namespace fabricwatch::sys {
namespace {

using Clock = std::chrono::steady_clock;

struct ConnRelease {
  void operator()(lldpctl_conn_t* conn) const { lldpctl_release(conn); }
};
struct AtomRelease {
  void operator()(lldpctl_atom_t* atom) const { lldpctl_atom_dec_ref(atom); }
};
using Conn = std::unique_ptr<lldpctl_conn_t, ConnRelease>;
using Atom = std::unique_ptr<lldpctl_atom_t, AtomRelease>;

// The socket liblldpctl talks through: its send/recv callbacks poll with the query's deadline.
struct Transport {
  UniqueFd fd;
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

Result<UniqueFd> Connect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Error(StatusCode::kInvalidArgument, "lldpd socket path '" + path + "' is too long");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
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

std::string Str(lldpctl_atom_t* atom, lldpctl_key_t key) {
  const char* s = lldpctl_atom_get_str(atom, key);
  return s != nullptr ? std::string(s) : std::string();
}

uint8_t Subtype(lldpctl_atom_t* atom, lldpctl_key_t key) {
  const long v = lldpctl_atom_get_int(atom, key);
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
LldpNeighbor NeighborOf(lldpctl_atom_t* port) {
  LldpNeighbor n;
  n.port_id_subtype = Subtype(port, lldpctl_k_port_id_subtype);
  n.port_id = Str(port, lldpctl_k_port_id);
  n.port_description = Str(port, lldpctl_k_port_descr);
  const long ttl = lldpctl_atom_get_int(port, lldpctl_k_port_ttl);
  n.ttl_seconds = ttl > 0 && ttl <= 65535 ? static_cast<uint32_t>(ttl) : 0;
  Atom chassis(lldpctl_atom_get(port, lldpctl_k_port_chassis));
  if (!chassis) return n;
  n.chassis_id_subtype = Subtype(chassis.get(), lldpctl_k_chassis_id_subtype);
  n.chassis_id = Str(chassis.get(), lldpctl_k_chassis_id);
  n.system_name = Str(chassis.get(), lldpctl_k_chassis_name);
  n.system_description = Str(chassis.get(), lldpctl_k_chassis_descr);
  Atom mgmts(lldpctl_atom_get(chassis.get(), lldpctl_k_chassis_mgmt));
  if (mgmts) {
    if (lldpctl_atom_iter_t* it = lldpctl_atom_iter(mgmts.get())) {
      Atom mgmt(lldpctl_atom_iter_value(mgmts.get(), it));
      if (mgmt) n.management_address = Str(mgmt.get(), lldpctl_k_mgmt_ip);
    }
  }
  return n;
}

Status LibError(lldpctl_conn_t* conn, Transport& transport, std::string_view what,
                const std::string& path) {
  if (transport.timed_out) {
    return Status(StatusCode::kDeadlineExceeded,
                  "lldpd at " + path + " did not answer " + std::string(what) + " in time");
  }
  return Status(StatusCode::kUnavailable,
                "lldpd at " + path + ": " + std::string(what) + ": " + lldpctl_last_strerror(conn));
}

}  // namespace

Result<LldpdNeighbors> QueryLldpdNeighbors(const LldpdQueryOptions& options) {
  Transport transport;
  transport.deadline = Clock::now() + options.timeout;
  auto fd = Connect(options.socket_path);
  if (!fd) return Error(fd.error());
  transport.fd = std::move(*fd);
  Conn conn(lldpctl_new_name(options.socket_path.c_str(), &Transport::Send, &Transport::Recv,
                             &transport));
  if (!conn) return Error(StatusCode::kInternal, "lldpctl_new_name failed (out of memory)");
  Atom interfaces(lldpctl_get_interfaces(conn.get()));
  if (!interfaces) {
    return Error(LibError(conn.get(), transport, "list interfaces", options.socket_path));
  }
  LldpdNeighbors out;
  for (lldpctl_atom_iter_t* it = lldpctl_atom_iter(interfaces.get()); it != nullptr;
       it = lldpctl_atom_iter_next(interfaces.get(), it)) {
    Atom iface(lldpctl_atom_iter_value(interfaces.get(), it));
    if (!iface) continue;
    const std::string netdev = Str(iface.get(), lldpctl_k_interface_name);
    Atom port(lldpctl_get_port(iface.get()));
    if (!port)
      return Error(LibError(conn.get(), transport, "get port " + netdev, options.socket_path));
    Atom neighbors(lldpctl_atom_get(port.get(), lldpctl_k_port_neighbors));
    if (!neighbors) continue;
    for (lldpctl_atom_iter_t* nit = lldpctl_atom_iter(neighbors.get()); nit != nullptr;
         nit = lldpctl_atom_iter_next(neighbors.get(), nit)) {
      Atom neighbor(lldpctl_atom_iter_value(neighbors.get(), nit));
      if (!neighbor) continue;
      LldpNeighbor n = NeighborOf(neighbor.get());
      if (!Acceptable(n)) {
        ++out.rejected;
      } else if (!netdev.empty()) {
        out.by_netdev.emplace(netdev, std::move(n));  // keeps the first
      }
    }
  }
  return out;
}

}  // namespace fabricwatch::sys
