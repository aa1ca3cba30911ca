#include "collectors/kmsg/kmsg_subject.h"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace fabricwatch::kmsg {
namespace {

// A netdev or RDMA device name as the kernel allows it (dev_valid_name: at most IFNAMSIZ − 1
// bytes, no '/', no whitespace, not "." or ".."); RDMA names are at most IB_DEVICE_NAME_MAX − 1.
bool IsDeviceName(std::string_view name, size_t max) {
  if (name.empty() || name.size() > max || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)) != 0 ||
        static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) {
      return false;
    }
  }
  return true;
}
constexpr size_t kMaxNetdevName = 15;  // IFNAMSIZ − 1
constexpr size_t kMaxIbdevName = 63;   // IB_DEVICE_NAME_MAX − 1

// The words of the prefix before the first ": " (dev_printk and netdev_printk put one there).
std::string_view PrefixOf(std::string_view message) {
  const size_t colon = message.find(": ");
  return colon == std::string_view::npos ? std::string_view() : message.substr(0, colon);
}

// The subject named by the `<driver> <device>[ <netdev>]: ` prefix, over what DEVICE= gave.
RecordSubject SubjectOfPrefix(std::string_view message, RecordSubject subject);

// Kernels before 4.15 print the source of an AER as its requester ID ("Corrected error received:
// id=00e5", aer_print_port_info: bus << 8 | devfn); the domain is the printing port's. Returns
// the function's address, or "" when `word` is no ID or the prefix names no PCI function.
std::string FromRequesterId(std::string_view word, std::string_view prefix) {
  if (!word.starts_with("id=") || word.size() != 7) return {};
  unsigned id = 0;
  auto [end, ec] = std::from_chars(word.data() + 3, word.data() + word.size(), id, 16);
  if (ec != std::errc() || end != word.data() + word.size()) return {};
  const size_t space = prefix.find(' ');
  const std::string_view port = space == std::string_view::npos ? "" : prefix.substr(space + 1, 12);
  if (!IsPciAddress(port)) return {};
  char text[16];
  std::snprintf(text, sizeof(text), "%.4s:%02x:%02x.%u", port.data(), id >> 8, (id >> 3) & 0x1f,
                id & 7);
  return text;
}

// The word after `marker` in `text` ("received from 0000:3b:00.0", "NETDEV WATCHDOG: eth0 (…").
std::string_view WordAfter(std::string_view text, std::string_view marker) {
  const size_t at = text.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + marker.size());
  return rest.substr(0, rest.find_first_of(" ,;\n"));
}

}  // namespace

RecordSubject SubjectOf(const kmsg::KmsgRecord& record, std::string_view message,
                        const kmsg::KernelEventPattern& pattern) {
  RecordSubject subject;
  // DEVICE= first: it is the kernel's, the text is only what was printed.
  std::string_view device = record.device;
  if (device.starts_with("+pci:") && IsPciAddress(device.substr(5))) {
    subject.pci.assign(device.substr(5));
  } else if (device.starts_with("n")) {
    int ifindex = 0;
    auto [end, ec] = std::from_chars(device.data() + 1, device.data() + device.size(), ifindex);
    if (ec == std::errc() && end == device.data() + device.size() && ifindex > 0) {
      subject.ifindex = ifindex;
    }
  }
  // A row that names its function in the text (an AER source line, printed by the Root Port;
  // the pre-6.9 watchdog line; the driver core's probe failure): that name is the subject, not
  // the printer's prefix or DEVICE=.
  // Where the text names nothing there, the record's DEVICE= and prefix are its subject.
  if (!pattern.subject_after.empty()) {
    std::string_view named = WordAfter(message, pattern.subject_after);
    RecordSubject in_text;
    if (IsPciAddress(named)) {
      in_text.pci.assign(named);
      return in_text;
    }
    if (in_text.pci = FromRequesterId(named, PrefixOf(message)); !in_text.pci.empty()) {
      return in_text;
    }
    if (named.ends_with(':')) named.remove_suffix(1);  // "NETDEV WATCHDOG: CPU: 3: ..."
    if (IsDeviceName(named, kMaxNetdevName) && !kmsg::FabricDriverOf(named)) {
      in_text.netdev.assign(named);
      return in_text;
    }
  }
  return SubjectOfPrefix(message, std::move(subject));
}

namespace {

RecordSubject SubjectOfPrefix(std::string_view message, RecordSubject subject) {
  const std::string_view prefix = PrefixOf(message);
  // "(null): " (ibdev_err before the device has a name, efa at probe), "(NULL ib_device): ",
  // "(NULL net_device): " (drivers/infiniband/core/device.c, net/core/dev.c): no name at all.
  if (prefix.starts_with('(')) return subject;
  const size_t first_space = prefix.find(' ');
  if (first_space == std::string_view::npos) {
    // "mlx5_0/1: QP 137 error: ..." (mlx5_ib pr_err) or "<netdev>: ..." (pr_info with a name).
    // "mlx5_core: INFO: synd 0x8: ..." names the driver, not a device: no subject (the line
    // is attributed by its driver, kmsg_entity.h).
    const std::string_view name = prefix.substr(0, prefix.find('/'));
    if (prefix.find('/') != std::string_view::npos && IsDeviceName(name, kMaxIbdevName)) {
      subject.ibdev.assign(name);
    } else if (kmsg::FabricDriverOf(message) == prefix) {
      return subject;
    } else if (IsDeviceName(prefix, kMaxNetdevName)) {
      subject.netdev.assign(prefix);
    } else if (!prefix.empty() && subject.pci.empty() && subject.ifindex == 0) {
      // A name no netdev can have ("nvidia-nvswitch0", 16 bytes): something else's line, not
      // one that names nothing.
      subject.bad_name = true;
    }
    return subject;
  }
  // "<driver> <device>[ <netdev>[ (state)]]". A first word with ':' or '(' is no driver but the
  // mlx5 `func:line:(pid N)` tag of a line printed without its device ("mlx5_port_module_event:
  // 1182:(pid 0): Port module event ..."): the line names nothing.
  if (prefix.substr(0, first_space).find_first_of(":(") != std::string_view::npos) return subject;
  std::string_view rest = prefix.substr(first_space + 1);
  const size_t second_space = rest.find(' ');
  const std::string_view device_name = rest.substr(0, second_space);
  if (IsPciAddress(device_name)) {
    if (subject.pci.empty()) subject.pci.assign(device_name);
  } else if (prefix.substr(0, first_space) == "infiniband" &&
             IsDeviceName(device_name, kMaxIbdevName)) {
    // ibdev_printk of a device without a parent names the class and the RDMA device
    // (drivers/infiniband/core/device.c __ibdev_printk): "infiniband rocep33s0f0: ...".
    subject.ibdev.assign(device_name);
    return subject;
  } else if (subject.pci.empty() && IsDeviceName(device_name, kMaxNetdevName)) {
    subject.netdev.assign(device_name);  // "<driver> <netdev>: " (a virtual device's netdev)
  } else if (subject.pci.empty()) {
    subject.bad_name = true;
  }
  if (second_space != std::string_view::npos) {
    std::string_view netdev = rest.substr(second_space + 1);
    netdev = netdev.substr(0, netdev.find(' '));
    // netdev_name() of a netdev not yet registered is "(unnamed net_device)" (netdevice.h): the
    // line is about the function alone.
    if (!netdev.starts_with('(') && IsDeviceName(netdev, kMaxNetdevName)) {
      subject.netdev.assign(netdev);
    }
  }
  return subject;
}

}  // namespace
}  // namespace fabricwatch::kmsg
