#include "collectors/peer/peer_lldp.h"

#include <algorithm>
#include <set>

#include "collectors/peer/lldp_keyvalue.h"
#include "collectors/peer/lldpd_client.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::peer {

std::optional<LldpSources::Mode> LldpSources::ParseMode(std::string_view text) {
  if (text == "auto") return Mode::kAuto;
  if (text == "lldpd") return Mode::kLldpd;
  if (text == "listen") return Mode::kListen;
  if (text == "off") return Mode::kOff;
  return std::nullopt;
}

LldpSources::LldpSources(Mode mode, std::string replay_dir, bool host, std::string lldpd_socket,
                         const sys::FileSystem& fs, std::shared_ptr<spdlog::logger> logger)
    : mode_(mode),
      replay_dir_(std::move(replay_dir)),
      host_(host),
      lldpd_socket_(std::move(lldpd_socket)),
      fs_(fs),
      logger_(std::move(logger)) {}

LldpSources::~LldpSources() = default;

void LldpSources::SayOnce(bool& said, std::string_view what, const Status& status) {
  if (std::exchange(said, true)) return;
  logger_->info("LLDP neighbours not read from {}: {}", what, status.ToString());
}

std::map<std::string, LldpPeer> LldpSources::Neighbors(const std::vector<std::string>& netdevs,
                                                       std::vector<LldpProblem>& problems) {
  if (mode_ == Mode::kOff) return {};
  if (!replay_dir_.empty()) return FromReplay(netdevs, problems);
  // A replay sysfs root describes another node: this host's lldpd and links say nothing of it,
  // unless the operator named a source (the e2e test names its veth's lldpd).
  if (!host_ && mode_ == Mode::kAuto) return {};
  // No Ethernet port (an InfiniBand node): nothing to ask lldpd about, nothing to listen on.
  if (netdevs.empty()) {
    listener_.reset();
    listening_on_.clear();
    return {};
  }
  if (mode_ == Mode::kAuto || mode_ == Mode::kLldpd) {
    auto answer = peer::QueryLldpdNeighbors({.socket_path = lldpd_socket_});
    if (answer) {
      std::map<std::string, LldpPeer> out;
      for (const std::string& netdev : netdevs) {
        if (auto it = answer->by_netdev.find(netdev); it != answer->by_netdev.end()) {
          out[netdev] = {it->second, "lldpd"};
        }
      }
      listener_.reset();  // lldpd answers: no second receiver on the same links
      listening_on_.clear();
      return out;
    }
    SayOnce(said_lldpd_, "lldpd", answer.error());
    if (mode_ == Mode::kLldpd) return {};
  }
  return FromListener(netdevs);
}

std::map<std::string, LldpPeer> LldpSources::FromReplay(const std::vector<std::string>& netdevs,
                                                        std::vector<LldpProblem>& problems) {
  const sys::SysFs files(replay_dir_, fs_);
  std::map<std::string, LldpPeer> out;
  std::set<std::string> seen;  // bad blocks already counted: port|reason|where
  for (const std::string& netdev : netdevs) {
    auto text = files.ReadString(netdev);
    if (!text) {
      // No file: no neighbour heard on that port. Anything else is an error of that port.
      if (text.error().code() != StatusCode::kNotFound) {
        problems.push_back({netdev, std::string(kLldpUnreadable), text.error()});
      }
      continue;
    }
    auto read = peer::ReadLldpKeyValue(*text);
    if (!read) {
      problems.push_back(
          {netdev, std::string(kLldpUnreadable), read.error().WithContext(files.Path(netdev))});
      continue;
    }
    // A bad block costs only itself: the file's other neighbours are still read. It is the
    // problem of the port it names (a file may hold a whole lldpctl dump, every port's blocks),
    // and the same block in several ports' copies of one dump is counted once.
    for (peer::LldpKeyValueSkipped& skipped : read->skipped) {
      const std::string& port = skipped.netdev.empty() ? netdev : skipped.netdev;
      const std::string_view reason = peer::LldpKeyValueSkipName(skipped.reason);
      if (!seen.insert(port + "|" + std::string(reason) + "|" + skipped.status.message()).second) {
        continue;
      }
      problems.push_back(
          {port, std::string(reason), skipped.status.WithContext(files.Path(netdev))});
    }
    const auto& neighbors = read->neighbors;
    auto it = neighbors.find(netdev);
    if (it == neighbors.end() && neighbors.size() == 1) it = neighbors.begin();
    if (it != neighbors.end()) out[netdev] = {it->second, "lldpd"};
  }
  return out;
}

std::map<std::string, LldpPeer> LldpSources::FromListener(const std::vector<std::string>& netdevs) {
  std::vector<std::string> wanted = netdevs;
  std::sort(wanted.begin(), wanted.end());
  if (wanted != listening_on_ && !listener_failed_) {
    listener_.reset();
    listening_on_ = wanted;
    if (!wanted.empty()) {
      auto started = peer::LldpListener::Start(table_, wanted, logger_);
      if (started) {
        listener_ = std::move(*started);
      } else {
        // Without CAP_NET_RAW this does not change by itself: said once, not retried.
        listener_failed_ = started.error().code() == StatusCode::kPermissionDenied;
        SayOnce(said_listener_, "the passive listener", started.error());
      }
    }
  }
  std::map<std::string, LldpPeer> out;
  if (listener_ == nullptr) return out;
  const auto now = peer::LldpNeighborTable::Clock::now();
  for (const std::string& netdev : netdevs) {
    if (auto n = table_.NeighborOf(netdev, now)) out[netdev] = {*n, "lldp"};
  }
  return out;
}

}  // namespace fabricwatch::peer
