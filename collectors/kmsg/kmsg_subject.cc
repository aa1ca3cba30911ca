#include "collectors/kmsg/kmsg_subject.h"

#include <cctype>
#include <charconv>

namespace fabricwatch::kmsg {
namespace {

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

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

// The PCI address after `marker` in `text` ("received from 0000:3b:00.0", "received: 0000:…").
std::string AddressAfter(std::string_view text, std::string_view marker) {
  const size_t at = text.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + marker.size());
  rest = rest.substr(0, rest.find_first_of(" ,;\n"));
  return IsPciAddress(rest) ? std::string(rest) : std::string();
}

}  // namespace

bool IsPciAddress(std::string_view text) {
  // dddd:bb:dd.f (drivers/pci/probe.c pci_setup_device: "%04x:%02x:%02x.%d").
  if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!IsHex(text[i])) return false;
  }
  return text[11] >= '0' && text[11] <= '7';
}

RecordSubject SubjectOf(const sys::KmsgRecord& record, std::string_view message,
                        const sys::KernelEventPattern& pattern) {
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
  // An AER source line is printed by the Root Port; the function it is about is in the text.
  if (pattern.event == "pcie_aer_received") {
    std::string source = AddressAfter(message, " from ");
    if (source.empty()) source = AddressAfter(message, "received: ");
    subject.pci = std::move(source);
    subject.ifindex = 0;
    return subject;
  }
  const std::string_view prefix = PrefixOf(message);
  const size_t first_space = prefix.find(' ');
  if (first_space == std::string_view::npos) {
    // "mlx5_0/1: QP 137 error: ..." (mlx5_ib pr_err) or "<netdev>: ..." (pr_info with a name).
    const std::string_view name = prefix.substr(0, prefix.find('/'));
    if (prefix.find('/') != std::string_view::npos && IsDeviceName(name, kMaxIbdevName)) {
      subject.ibdev.assign(name);
    } else if (IsDeviceName(prefix, kMaxNetdevName)) {
      subject.netdev.assign(prefix);
    }
    return subject;
  }
  // "<driver> <device>[ <netdev>[ (state)]]"
  std::string_view rest = prefix.substr(first_space + 1);
  const size_t second_space = rest.find(' ');
  const std::string_view device_name = rest.substr(0, second_space);
  if (IsPciAddress(device_name)) {
    if (subject.pci.empty()) subject.pci.assign(device_name);
  } else if (subject.pci.empty() && IsDeviceName(device_name, kMaxNetdevName)) {
    subject.netdev.assign(device_name);  // "<driver> <netdev>: " (a virtual device's netdev)
  }
  if (second_space != std::string_view::npos) {
    std::string_view netdev = rest.substr(second_space + 1);
    netdev = netdev.substr(0, netdev.find(' '));
    if (IsDeviceName(netdev, kMaxNetdevName)) subject.netdev.assign(netdev);
  }
  return subject;
}

}  // namespace fabricwatch::kmsg
