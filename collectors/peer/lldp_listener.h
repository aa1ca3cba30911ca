#pragma once
// Passive LLDP receiver, the `lldp` source of the `peer` collector (issue 24, docs/design.md
// §5.10): the far end of a port without lldpd.
//
// LldpListener opens one AF_PACKET SOCK_RAW socket per fabric netdev, bound to its ifindex and
// to EtherType 0x88cc (ETH_P_LLDP, IEEE 802.1AB-2016 §7.2), and joins the nearest-bridge group
// address 01:80:c2:00:00:0e on it (PACKET_ADD_MEMBERSHIP, PACKET_MR_MULTICAST; §7.1), so a NIC
// whose multicast filter would drop the frame passes it up. Frames the host itself sends (a local
// lldpd: PACKET_OUTGOING) are ignored. Each frame is parsed (lldp_frame.h) into the
// LldpNeighborTable. Opening needs CAP_NET_RAW (net/packet/af_packet.c packet_create): without it
// Start() returns kPermissionDenied and the caller turns the source off. The netdevs are fixed at
// Start(); the caller starts a new listener when its netdevs change (an ifindex is not reused
// by a renamed or re-created netdev).
//
// LldpNeighborTable keeps, per netdev, the neighbours (MSAPs: chassis id + port id, §9.2.7.7.1)
// heard, each until its TTL runs out (§9.2.7.7.4 rxInfoAge) or a shutdown LLDPDU (TTL 0,
// §9.2.7.7.3) removes it; at most kMaxLldpNeighborsPerNetdev, the least recently heard dropped
// first. The time is the caller's (steady clock), so tests drive expiry. It counts frames
// received, parsed and rejected by reason (LldpRejectName), shutdowns and expiries.
//
// Thread-safety: LldpNeighborTable is internally synchronised; the listener runs its own thread
// and stops within its poll timeout (200 ms) when destroyed.

#include <spdlog/logger.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "collectors/peer/lldp_frame.h"

namespace fabricwatch::peer {

inline constexpr size_t kMaxLldpNeighborsPerNetdev = 4;

struct LldpFrameCounts {
  uint64_t received = 0;  // frames read, parsed or not
  uint64_t parsed = 0;
  std::array<uint64_t, kLldpRejectCount> rejected{};  // indexed by LldpReject
  uint64_t shutdowns = 0;                             // TTL 0 LLDPDUs
  uint64_t expired = 0;                               // neighbours whose TTL ran out

  uint64_t rejected_total() const;
};

class LldpNeighborTable {
 public:
  using Clock = std::chrono::steady_clock;

  // One received frame (from the destination MAC) on `netdev` at `now`: counted, parsed, and
  // its neighbour added, refreshed or (TTL 0) removed. False when it was rejected.
  bool ReceiveFrame(std::string_view netdev, std::span<const uint8_t> frame, Clock::time_point now);
  // A parsed neighbour (counted as received and parsed).
  void Update(std::string_view netdev, const LldpNeighbor& neighbor, Clock::time_point now);
  void CountRejected(LldpReject reason);

  // The live neighbour heard last on each netdev at `now`; those past their TTL are dropped.
  std::map<std::string, LldpNeighbor, std::less<>> Neighbors(Clock::time_point now);
  std::optional<LldpNeighbor> NeighborOf(std::string_view netdev, Clock::time_point now);

  LldpFrameCounts counts() const;
  void SetListening(bool listening);
  bool listening() const;
  // Blocks until more than `seen` frames were received or `timeout` passes; returns the count.
  uint64_t WaitForFrames(uint64_t seen, std::chrono::milliseconds timeout) const;

 private:
  struct Entry {
    LldpNeighbor neighbor;
    Clock::time_point heard;
    Clock::time_point expires;
  };
  void ExpireLocked(Clock::time_point now);
  void UpdateLocked(std::string_view netdev, const LldpNeighbor& neighbor, Clock::time_point now);

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, std::vector<Entry>, std::less<>> by_netdev_;
  LldpFrameCounts counts_;
  bool listening_ = false;
};

class LldpListener {
 public:
  // Opens a socket on each of `netdevs` and starts the thread. A netdev that does not exist is
  // skipped with a warning; kNotFound when none exists, kPermissionDenied without CAP_NET_RAW.
  static Result<std::unique_ptr<LldpListener>> Start(LldpNeighborTable& table,
                                                     const std::vector<std::string>& netdevs,
                                                     std::shared_ptr<spdlog::logger> logger);
  ~LldpListener();
  LldpListener(const LldpListener&) = delete;
  LldpListener& operator=(const LldpListener&) = delete;

  // The netdevs a socket is open on.
  std::vector<std::string> netdevs() const;

  struct Impl;

 private:
  explicit LldpListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::jthread thread_;
};

}  // namespace fabricwatch::peer
