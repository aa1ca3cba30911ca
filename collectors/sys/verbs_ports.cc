#include "collectors/sys/verbs_ports.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fabricwatch::sys {

Result<ibv_context*> VerbsPortQuery::Context(const std::string& device) {
  if (auto it = open_.find(device); it != open_.end()) return it->second.get();
  const auto now = std::chrono::steady_clock::now();
  if (auto it = missing_.find(device);
      it != missing_.end() && now - it->second < kRelookupInterval) {
    return Error(StatusCode::kNoData, "libibverbs does not list " + device);
  }
  if (!list_) {
    list_.reset(ibv_get_device_list(&listed_count_));
    if (!list_) listed_count_ = 0;
  }
  ibv_device* found = nullptr;
  for (int i = 0; list_ && i < listed_count_; ++i) {
    if (device == ibv_get_device_name(list_.get()[i])) found = list_.get()[i];
  }
  if (found == nullptr) {
    missing_[device] = now;
    return Error(StatusCode::kNoData,
                 "libibverbs does not list " + device + " (no provider library, or gone)");
  }
  missing_.erase(device);
  VerbsContext context(ibv_open_device(found));
  if (!context) return Error(FromErrno(errno, "ibv_open_device " + device));
  ibv_context* raw = context.get();
  open_.emplace(device, std::move(context));
  return raw;
}

Result<VerbsPortAttr> VerbsPortQuery::Query(const std::string& device, int port) {
  if (port < 1 || port > 255) {
    return Error(StatusCode::kInvalidArgument,
                 "ibv_query_port " + device + " port " + std::to_string(port) + ": out of range");
  }
  auto context = Context(device);
  if (!context) return Error(context.error());
  ibv_port_attr attr{};
  // rdma-core returns the errno value (older releases: -1 with errno set).
  const int rc = ibv_query_port(*context, static_cast<uint8_t>(port), &attr);
  if (rc != 0) {
    const int e = rc > 0 ? rc : errno;
    open_.erase(device);  // closes the context
    const std::string what = "ibv_query_port " + device + " port " + std::to_string(port);
    if (e == EIO || e == ENODEV || e == ENXIO) {
      return Error(StatusCode::kNotFound, what + ": the device is gone (" + std::strerror(e) + ")");
    }
    return Error(FromErrno(e, what));
  }
  return VerbsPortAttr{.state = static_cast<int>(attr.state),
                       .max_mtu = static_cast<int>(attr.max_mtu),
                       .active_mtu = static_cast<int>(attr.active_mtu)};
}

void VerbsPortQuery::Release() {
  open_.clear();  // ibv_close_device each
  list_.reset();  // ibv_free_device_list
  listed_count_ = 0;
}

void VerbsPortQuery::Retain(const std::vector<std::string>& devices) {
  std::erase_if(missing_, [&](const auto& entry) {
    return std::find(devices.begin(), devices.end(), entry.first) == devices.end();
  });
}

}  // namespace fabricwatch::sys
