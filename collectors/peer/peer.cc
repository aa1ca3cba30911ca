#include "collectors/peer/peer.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "collectors/core/collector_options.h"
#include "collectors/core/transition_log.h"
#include "collectors/peer/lldp_keyvalue.h"
#include "collectors/peer/peer_lldp.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/peer/peer_ports.h"
#include "collectors/peer/smp_query.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::peer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr CollectorOptionSpec kOptions[] = {
    {"smp",
     "Ask each InfiniBand port's neighbour (NodeInfo, NodeDescription) through umad: needs "
     "access to /dev/infiniband/umad* (root or a udev rule)",
     "true"},
    {"smp-refresh",
     "Ask an ACTIVE port's neighbour again after this long (and whenever the port "
     "comes back ACTIVE)",
     "10m"},
    {"smp-timeout", "Timeout of one SMP query", "200ms"},
    {"lldp",
     "Where Ethernet (RoCE) neighbours come from: auto (a running lldpd, else the agent's own "
     "passive listener, which needs CAP_NET_RAW), lldpd, listen, off",
     "auto"},
    {"lldpd-socket", "lldpd's control socket (liblldpctl)", "/run/lldpd.socket"},
};

constexpr MetricDesc kMetrics[] = {kPeerInfo, kPeerBadRecords};

// The reasons of fabric_port_peer_bad_records{source="smp"}.
constexpr std::string_view kSmpMalformed = "malformed";
constexpr std::string_view kSmpNoDescription = "no_description";

// Where IB neighbours come from: umad, or the --path.smp replay text.
class SmpSource {
 public:
  virtual ~SmpSource() = default;
  virtual Result<peer::SmpNeighbor> Neighbor(const std::string& device,
                                             const std::string& port) = 0;
};

class LiveSmp final : public SmpSource {
 public:
  explicit LiveSmp(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  Result<peer::SmpNeighbor> Neighbor(const std::string& device, const std::string& port) override {
    return peer::QuerySmpNeighbor(device, std::stoi(port), timeout_);
  }

 private:
  std::chrono::milliseconds timeout_;
};

// DIR/<device>/<port>/nodeinfo and nodedesc: the text of smpquery -D nodeinfo|nodedesc 0,<port>.
class ReplaySmp final : public SmpSource {
 public:
  ReplaySmp(std::string dir, const sys::FileSystem& fs) : files_(std::move(dir), fs) {}
  Result<peer::SmpNeighbor> Neighbor(const std::string& device, const std::string& port) override {
    const std::string base = device + "/" + port + "/";
    auto info_text = files_.ReadString(base + "nodeinfo");
    if (!info_text) return Error(info_text.error());
    auto info = peer::ParseSmpNodeInfo(*info_text);
    if (!info) return Error(info.error().WithContext(files_.Path(base + "nodeinfo")));
    peer::SmpNeighbor neighbor;
    neighbor.info = *info;
    // A NodeInfo without its NodeDescription still names the neighbour by its GUID.
    auto desc_text = files_.ReadString(base + "nodedesc");
    if (!desc_text) {
      neighbor.description_error = desc_text.error();
    } else if (auto desc = peer::ParseSmpNodeDesc(*desc_text); !desc) {
      neighbor.description_error = desc.error().WithContext(files_.Path(base + "nodedesc"));
    } else {
      neighbor.description = std::move(*desc);
    }
    return neighbor;
  }

 private:
  sys::SysFs files_;
};

struct IbPortState {
  bool was_active = false;
  std::optional<Clock::time_point> asked;
  std::optional<peer::SmpNeighbor> neighbor;
  std::string_view problem;  // kSmpMalformed, kSmpNoDescription or "" until asked again
};

// The TransitionLog key of a port's SMP answer ("smp/mlx5_0/1"; a reason below it).
std::string SmpKey(const FabricPort& port) { return "smp/" + port.device + "/" + port.port; }

class PeerCollector final : public Collector {
 public:
  PeerCollector(const CollectorContext& context, std::unique_ptr<SmpSource> smp,
                std::chrono::milliseconds refresh, std::unique_ptr<LldpSources> lldp)
      : sysfs_(context.sysfs),
        logger_(context.logger),
        transitions_(context.logger),
        smp_(std::move(smp)),
        refresh_(refresh),
        lldp_(std::move(lldp)) {}

  Status Collect(MetricSink& sink) override {
    const auto now = Clock::now();
    const std::vector<FabricPort> ports = DiscoverPorts(sysfs_);
    if (ports.empty()) return Status(StatusCode::kNoData, "no RDMA port");
    CollectLldp(ports, sink);
    std::map<std::pair<std::string, std::string>, IbPortState> seen;
    std::map<std::string_view, uint64_t> smp_problems{{kSmpMalformed, 0}, {kSmpNoDescription, 0}};
    for (const FabricPort& port : ports) {
      if (!port.infiniband || smp_ == nullptr) continue;
      const auto key = std::make_pair(port.device, port.port);
      IbPortState state = ib_ports_.contains(key) ? ib_ports_[key] : IbPortState{};
      if (!port.active) {
        state.neighbor.reset();  // a down port has no neighbour to speak of
        state.problem = {};
      } else if (!state.was_active || !state.asked || now - *state.asked >= refresh_) {
        Ask(port, state, now, sink);
      } else {
        transitions_.Keep(SmpKey(port));  // not asked again: a failing answer stays failing
      }
      state.was_active = port.active;
      if (state.neighbor) Export(port, *state.neighbor, sink);
      if (!state.problem.empty()) ++smp_problems[state.problem];
      seen[key] = std::move(state);
    }
    ib_ports_ = std::move(seen);  // ports that vanished are forgotten
    if (smp_ != nullptr) {
      for (const auto& [reason, count] : smp_problems) {
        sink.Add(kPeerBadRecords, {{"source", "smp"}, {"reason", reason}},
                 static_cast<double>(count));
      }
    }
    transitions_.EndCollection();
    return Status::Ok();
  }

 private:
  // Ethernet ports with a netdev: their LLDP neighbour, whichever source has it.
  void CollectLldp(const std::vector<FabricPort>& ports, MetricSink& sink) {
    std::vector<std::string> netdevs;
    for (const FabricPort& port : ports) {
      if (!port.infiniband && !port.netdev.empty()) netdevs.push_back(port.netdev);
    }
    std::vector<LldpProblem> problems;
    const auto peers = lldp_->Neighbors(netdevs, problems);
    std::array<uint64_t, peer::kLldpKeyValueSkipCount> skipped{};
    uint64_t unreadable = 0;
    for (const LldpProblem& problem : problems) {
      sink.RecordError(problem.status);
      // Keyed by reason: a file that goes bad in another way is logged again.
      transitions_.Failed("lldp/" + problem.netdev + "/" + problem.reason, problem.status);
      if (problem.reason == kLldpUnreadable) ++unreadable;
      for (size_t i = 0; i < skipped.size(); ++i) {
        const auto reason = static_cast<peer::LldpKeyValueSkip>(i);
        if (problem.reason == peer::LldpKeyValueSkipName(reason)) ++skipped[i];
      }
    }
    if (lldp_->replaying()) {
      for (size_t i = 0; i < skipped.size(); ++i) {
        const auto reason = peer::LldpKeyValueSkipName(static_cast<peer::LldpKeyValueSkip>(i));
        sink.Add(kPeerBadRecords, {{"source", "lldpd"}, {"reason", reason}},
                 static_cast<double>(skipped[i]));
      }
      sink.Add(kPeerBadRecords, {{"source", "lldpd"}, {"reason", kLldpUnreadable}},
               static_cast<double>(unreadable));
    }
    for (const FabricPort& port : ports) {
      if (port.infiniband || port.netdev.empty()) continue;
      auto it = peers.find(port.netdev);
      if (it == peers.end()) continue;
      const peer::LldpNeighbor& n = it->second.neighbor;
      sink.AddInfo(kPeerInfo, {{"device", port.device},
                               {"port", port.port},
                               {"netdev", port.netdev},
                               {"peer_name", peer::LldpPeerName(n)},
                               {"peer_port", peer::LldpPeerPort(n)},
                               {"peer_id", n.chassis_id},
                               {"source", it->second.source}});
    }
  }

  void Ask(const FabricPort& port, IbPortState& state, Clock::time_point now, MetricSink& sink) {
    state.asked = now;
    state.problem = {};
    auto neighbor = smp_->Neighbor(port.device, port.port);
    if (neighbor) {
      if (neighbor->description_error) {
        // The GUID is still worth exporting (ibnetdiscover and the SM name nodes by it); the
        // missing name is counted and said, once per state.
        state.problem = kSmpNoDescription;
        const Status note = neighbor->description_error->WithContext(
            "InfiniBand peer " + peer::FormatGuid(neighbor->info.node_guid) +
            " exported without its NodeDescription (peer_name is its GUID)");
        sink.RecordError(note);
        transitions_.Failed(SmpKey(port) + "/" + std::string(kSmpNoDescription), note);
      }
      state.neighbor = std::move(*neighbor);
      return;
    }
    state.neighbor.reset();
    // A replay without a reply for this port: no neighbour known (a port facing nothing).
    if (neighbor.error().code() == StatusCode::kNotFound) return;
    // No umad access is the node's configuration, said once; other failures (a timeout, a
    // corrupt replay file) are per port errors.
    if (neighbor.error().code() == StatusCode::kPermissionDenied ||
        neighbor.error().code() == StatusCode::kUnavailable) {
      if (!reported_unavailable_) {
        logger_->warn("InfiniBand peers not known: {} (the peer is absent; README \"Privileges\")",
                      neighbor.error().ToString());
        reported_unavailable_ = true;
      }
      return;
    }
    state.problem = kSmpMalformed;
    sink.RecordError(neighbor.error());
    transitions_.Failed(SmpKey(port) + "/" + std::string(kSmpMalformed), neighbor.error());
  }

  static void Export(const FabricPort& port, const peer::SmpNeighbor& n, MetricSink& sink) {
    const std::string guid = peer::FormatGuid(n.info.node_guid);
    sink.AddInfo(kPeerInfo, {{"device", port.device},
                             {"port", port.port},
                             {"netdev", port.netdev},
                             {"peer_name", n.description.empty() ? guid : n.description},
                             {"peer_port", std::to_string(n.info.local_port)},
                             {"peer_id", guid},
                             {"source", "smp"}});
  }

  const sys::SysFs& sysfs_;
  std::shared_ptr<spdlog::logger> logger_;
  TransitionLog transitions_;
  std::unique_ptr<SmpSource> smp_;
  std::chrono::milliseconds refresh_;
  std::unique_ptr<LldpSources> lldp_;
  std::map<std::pair<std::string, std::string>, IbPortState> ib_ports_;
  bool reported_unavailable_ = false;
};

}  // namespace

std::span<const CollectorOptionSpec> PeerOptions() { return kOptions; }

std::span<const SourceSpec> PeerSources() {
  static constexpr SourceSpec kSources[] = {kSmpReplay, kLldpReplay};
  return kSources;
}
std::span<const MetricDesc> PeerMetrics() { return kMetrics; }

Result<std::unique_ptr<Collector>> NewPeerCollector(const CollectorContext& context) {
  const CollectorOptionReader options("peer", context.options, kOptions);
  const std::string smp = options.Value("smp");
  if (smp != "true" && smp != "false") {
    return Error(StatusCode::kInvalidArgument,
                 options.Flag("smp") + ": want true or false, got '" + smp + "'");
  }
  auto refresh = options.Duration("smp-refresh");
  if (!refresh) return Error(refresh.error());
  auto timeout = options.Duration("smp-timeout");
  if (!timeout) return Error(timeout.error());
  std::unique_ptr<SmpSource> source;
  if (const std::string replay = context.roots.Replay(kSmpReplay); !replay.empty()) {
    source = std::make_unique<ReplaySmp>(replay, context.sysfs.fs());
  } else if (smp == "true" && context.roots.host) {
    source = std::make_unique<LiveSmp>(*timeout);
  }
  auto mode = LldpSources::ParseMode(options.Value("lldp"));
  if (!mode) {
    return Error(StatusCode::kInvalidArgument, options.Flag("lldp") +
                                                   ": want auto, lldpd, listen or off, got '" +
                                                   options.Value("lldp") + "'");
  }
  auto lldp = std::make_unique<LldpSources>(*mode, context.roots.Replay(kLldpReplay),
                                            context.roots.host, options.Value("lldpd-socket"),
                                            context.sysfs.fs(), context.logger);
  return std::unique_ptr<Collector>(
      new PeerCollector(context, std::move(source), *refresh, std::move(lldp)));
}

}  // namespace fabricwatch::peer
