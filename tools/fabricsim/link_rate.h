#pragma once
// How a port trained: its active width (lanes) and per-lane speed, and the texts the kernel
// prints for them. Pure functions, no I/O.
//
// The lane speeds are the IBTA generations of ib_query_port's active_speed, with the two numbers
// the kernel derives from them: rate_show in drivers/infiniband/core/sysfs.c prints
// "%d%s Gb/sec (%dX%s)" from deci-Gb/s per lane times the width ("400 Gb/sec (4X NDR)",
// "2.5 Gb/sec (1X SDR)"), and mlx5 IPoIB reports width x the lane's ethtool speed
// (mlx5i_get_speed_settings, drivers/net/ethernet/mellanox/mlx5/core/ipoib/ethtool.c). A RoCE
// port prints the generation its Ethernet lanes match (translate_eth_ext_proto_oper in
// drivers/infiniband/hw/mlx5/main.c): 10G lanes QDR, 25G EDR, 50G HDR, 100G NDR.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fabricwatch::sim {

struct LaneSpeed {
  std::string_view name;  // "NDR"
  int deci_gbps;          // per lane, as rate_show counts: NDR 1000 = 100 Gb/s
  int mbps;               // per lane, as ethtool reports it (mlx5 IPoIB): NDR 100000
};

// SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR, slowest first.
std::span<const LaneSpeed> LaneSpeeds();
// The index of `name` in LaneSpeeds(), or -1.
int FindLaneSpeed(std::string_view name);
// The generation one step below `speed` (FDR10 skipped: it is FDR signalling at QDR data rate);
// `speed` itself for SDR.
int SlowerLaneSpeed(int speed);
// The generation whose lanes carry `lane_gbps` of Ethernet (10 QDR, 25 EDR, 50 HDR, 100 NDR).
std::optional<int> EthernetLaneSpeed(int lane_gbps);

struct Trained {
  int width = 4;  // active lanes: 1, 2, 4, 8 or 12
  int speed = 0;  // index into LaneSpeeds()
};

// The healthy training of a port of `gbps`: 800 8X NDR, 400 4X NDR, 200 4X HDR, 100 4X EDR,
// 50 2X EDR, 40 4X QDR, 25 1X EDR, 10 1X QDR; nullopt for another rate.
std::optional<Trained> TrainedFor(int gbps);

// ports/<n>/rate without the newline: "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)".
std::string RateText(const Trained& t);
// Data rate across the lanes, Gb/s.
double RateGbps(const Trained& t);
// What ethtool reports as Speed (Mb/s): width x the lane's ethtool speed.
int RateMbps(const Trained& t);

}  // namespace fabricwatch::sim
