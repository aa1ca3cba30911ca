#pragma once
// The LLDP neighbours of the peer collector's Ethernet (RoCE) ports (docs/design.md §5.10), from
// the first source that answers:
//   replay   --path.lldp=DIR: DIR/<netdev> holds `lldpctl -f keyvalue <netdev>` text;
//   lldpd    a running lldpd, asked through liblldpctl on its socket (collectors/sys/
//            lldpd_client.h) every collection;
//   lldp     the agent's own passive listener (AF_PACKET, EtherType 0x88cc; CAP_NET_RAW;
//            collectors/peer/lldp_listener.h), restarted when the set of netdevs changes.
// `mode` picks: auto (lldpd when it answers, else the listener; on the host's own /sys only),
// lldpd, listen (also on a replay root: the operator named them), off. A source that
// cannot run (no lldpd, no CAP_NET_RAW) is said once and the neighbours are absent.

#include <spdlog/logger.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/peer/lldp_frame.h"
#include "collectors/peer/lldp_listener.h"
#include "collectors/sys/filesystem.h"

namespace fabricwatch::peer {

struct LldpPeer {
  peer::LldpNeighbor neighbor;
  std::string source;  // "lldpd" or "lldp"
};

// What the replay could not use: a neighbour block skipped by the keyvalue parser (its reason is
// peer::LldpKeyValueSkipName) or a file that could not be read (kLldpUnreadable).
inline constexpr std::string_view kLldpUnreadable = "unreadable";
struct LldpProblem {
  std::string netdev;  // the port the bad block names, else the replay file's netdev
  std::string reason;
  Status status;  // names the file and the line
};

class LldpSources {
 public:
  enum class Mode { kAuto, kLldpd, kListen, kOff };
  static std::optional<Mode> ParseMode(std::string_view text);

  // `replay_dir` non-empty: replay only. `host`: the kernel and lldpd describe this node.
  LldpSources(Mode mode, std::string replay_dir, bool host, std::string lldpd_socket,
              const sys::FileSystem& fs, std::shared_ptr<spdlog::logger> logger);
  ~LldpSources();

  // The neighbours of `netdevs` now; what a replay file could not give goes to `problems` (the
  // good neighbours of a file are kept whatever else it holds).
  std::map<std::string, LldpPeer> Neighbors(const std::vector<std::string>& netdevs,
                                            std::vector<LldpProblem>& problems);
  bool replaying() const { return !replay_dir_.empty() && mode_ != Mode::kOff; }

 private:
  std::map<std::string, LldpPeer> FromReplay(const std::vector<std::string>& netdevs,
                                             std::vector<LldpProblem>& problems);
  std::map<std::string, LldpPeer> FromListener(const std::vector<std::string>& netdevs);
  void SayOnce(bool& said, std::string_view what, const Status& status);

  Mode mode_;
  std::string replay_dir_;
  bool host_;
  std::string lldpd_socket_;
  const sys::FileSystem& fs_;
  std::shared_ptr<spdlog::logger> logger_;
  peer::LldpNeighborTable table_;
  std::unique_ptr<peer::LldpListener> listener_;
  std::vector<std::string> listening_on_;
  bool listener_failed_ = false;
  bool said_lldpd_ = false;
  bool said_listener_ = false;
};

}  // namespace fabricwatch::peer
