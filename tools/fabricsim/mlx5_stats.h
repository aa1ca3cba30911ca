#pragma once
// The names `ethtool -S` prints for an mlx5 netdev, in the driver's order
// (drivers/net/ethernet/mellanox/mlx5/core/en_stats.c: sw, q counters, vport, IEEE 802.3,
// RFC 2863, RFC 2819, PHY and PHY statistical, eth-ext, PCIe, per-priority traffic, PFC for the
// PFC-enabled priorities, pause storm, module events, per-TC congestion, then the per-channel
// ch<i>_, rx<i>_, tx<i>_ and XDP families). The shapes follow the real captures in
// ../shared/fixtures/external/ethtool-S/mlx5_* and tests/fixtures/ethtool/mlx5.
// A 400G ConnectX-7 netdev with 12 channels prints about 1,100 statistics.

#include <string>
#include <vector>

namespace fabricwatch::sim {

struct Mlx5StatsShape {
  int channels = 12;
  int lanes = 4;                     // rx_err_lane_<i>_phy
  std::vector<int> pfc_priorities;   // rx/tx_prio<N>_pause* exist only for these
  bool ipoib = false;                // mlx5 IPoIB: software and channel stats only
};

std::vector<std::string> Mlx5StatNames(const Mlx5StatsShape& shape);

}  // namespace fabricwatch::sim
