#include "collectors/rdma/rdma_mtu.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "base/value_parse.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/rdma/rdma_parse.h"
#include "collectors/sys/verbs_ports.h"

namespace fabricwatch::rdma {
namespace {

bool Quiet(const Status& status) {
  return status.code() == StatusCode::kNoData || status.code() == StatusCode::kNotFound;
}

class VerbsMtuSource final : public PortMtuSource {
 public:
  Result<PortMtu> Read(const std::string& device, const std::string& port) override {
    auto number = ParseInt64(port, "port");
    if (!number) return Error(number.error());
    auto attr = query_.Query(device, static_cast<int>(*number));
    if (!attr) return Error(attr.error());
    return MtuFromPortAttr(attr->state, attr->active_mtu, attr->max_mtu,
                           "ibv_query_port " + device + " port " + port);
  }
  void Retain(const std::vector<std::string>& devices) override { query_.Retain(devices); }
  void Release() override { query_.Release(); }

 private:
  sys::VerbsPortQuery query_;
};

// The files stay open and are re-read with pread, as the collector's own files are (an absent
// one is remembered, not opened again); they are opened anew at each rediscovery (Retain).
class ReplayMtuSource final : public PortMtuSource {
 public:
  explicit ReplayMtuSource(const sys::SysFs& sysfs) : sysfs_(sysfs) {}
  Result<PortMtu> Read(const std::string& device, const std::string& port) override {
    auto it = files_.find({device, port});
    if (it == files_.end()) {
      const std::string dir = "class/infiniband/" + device + "/ports/" + port + "/";
      it = files_
               .emplace(std::pair{device, port},
                        Files{sys::AttributeFile(sysfs_, dir + "active_mtu"),
                              sys::AttributeFile(sysfs_, dir + "max_mtu")})
               .first;
    }
    PortMtu out;
    // Neither file replayed (most replay roots): no value, and no error built every interval, so
    // sampling such a root stays free of allocations (steady_state_allocation_test).
    if (it->second.active.known_absent() && it->second.max.known_absent()) return out;
    for (auto [file, field] : {std::pair{&it->second.active, &out.active_bytes},
                               std::pair{&it->second.max, &out.max_bytes}}) {
      auto text = file->Read();
      if (!text) {
        if (text.error().code() == StatusCode::kNotFound) continue;  // not replayed
        return Error(text.error());
      }
      auto bytes = ParseIbMtu(*text, file->path());
      if (!bytes) return Error(bytes.error());
      *field = *bytes;
    }
    if (!out.active_bytes && !out.max_bytes) {
      return Error(StatusCode::kNoData,
                   sysfs_.Path("class/infiniband/" + device + "/ports/" + port) +
                       " has no active_mtu or max_mtu");
    }
    return out;
  }
  void Retain(const std::vector<std::string>& devices) override {
    (void)devices;
    files_.clear();
  }

 private:
  struct Files {
    sys::AttributeFile active;
    sys::AttributeFile max;
  };
  const sys::SysFs& sysfs_;
  std::map<std::pair<std::string, std::string>, Files> files_;
};

}  // namespace

Result<PortMtu> MtuFromPortAttr(int state, int active_mtu, int max_mtu, std::string_view what) {
  constexpr int kActive = 4;  // IBV_PORT_ACTIVE
  PortMtu out;
  for (auto [value, field, name] : {std::tuple{active_mtu, &out.active_bytes, "active_mtu"},
                                    std::tuple{max_mtu, &out.max_bytes, "max_mtu"}}) {
    auto bytes = IbMtuBytes(value);
    if (bytes) {
      *field = *bytes;
    } else if (state == kActive) {
      return Error(bytes.error().WithContext(std::string(what) + " " + name));
    }
  }
  if (!out.active_bytes && !out.max_bytes) {
    return Error(StatusCode::kNoData, std::string(what) + ": no MTU while the port is not ACTIVE");
  }
  return out;
}

std::unique_ptr<PortMtuSource> MakeVerbsMtuSource() { return std::make_unique<VerbsMtuSource>(); }
std::unique_ptr<PortMtuSource> MakeReplayMtuSource(const sys::SysFs& sysfs) {
  return std::make_unique<ReplayMtuSource>(sysfs);
}

Status PortMtuCollector::Collect(const std::string& device, const std::string& port,
                                 std::chrono::system_clock::time_point now, MetricSink& sink) {
  auto [it, fresh] = cache_.try_emplace({device, port});
  Cached& cached = it->second;
  // A failed query is returned once, by the sample that made it: fabricwatch_collector_errors_total
  // counts one failure as one error, not once per sample until the next query (mtu-interval, 10s
  // by default: ~10 samples). Until that next query the port exports no MTU rather than the last
  // good one: after a failure the value is not known, and a stale MTU would let config_drift
  // compare a setting the port may no longer have (its ib_mtu check skips an absent port).
  Status error = Status::Ok();
  if (fresh || now - cached.read >= interval_ || now < cached.read) {
    cached.read = now;
    cached.mtu = {};
    ++queries_;
    auto read = source_->Read(device, port);
    if (read && (read->active_bytes || read->max_bytes)) {
      cached.mtu = *read;
      quiet_logged_.erase(it->first);
    } else if (read || Quiet(read.error())) {
      if (quiet_logged_.insert(it->first).second) {
        logger_->debug("no IB MTU for {} port {} (fabric_rdma_port_*_mtu_bytes absent): {}", device,
                       port, read ? "no active_mtu or max_mtu replayed" : read.error().ToString());
      }
    } else {
      error = read.error();
    }
  }
  const LabelPair d{"device", device};
  const LabelPair p{"port", port};
  if (cached.mtu.active_bytes) sink.Add(kPortActiveMtu, {d, p}, *cached.mtu.active_bytes);
  if (cached.mtu.max_bytes) sink.Add(kPortMaxMtu, {d, p}, *cached.mtu.max_bytes);
  return error;
}

void PortMtuCollector::Retain(const std::vector<std::string>& devices) {
  auto listed = [&](const std::string& name) {
    return std::find(devices.begin(), devices.end(), name) != devices.end();
  };
  std::erase_if(cache_, [&](const auto& entry) { return !listed(entry.first.first); });
  std::erase_if(quiet_logged_, [&](const auto& key) { return !listed(key.first); });
  source_->Retain(devices);
}

}  // namespace fabricwatch::rdma
