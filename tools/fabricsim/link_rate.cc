#include "tools/fabricsim/link_rate.h"

#include <array>

namespace fabricwatch::sim {
namespace {

// include/rdma/ib_verbs.h enum ib_port_speed, in rate order; rate_show's deci-Gb/s per lane;
// mlx5_ptys_rate_enum_to_int's Mb/s per lane.
constexpr std::array<LaneSpeed, 9> kLaneSpeeds = {{
    {"SDR", 25, 2500},
    {"DDR", 50, 5000},
    {"QDR", 100, 10000},
    {"FDR10", 100, 10000},
    {"FDR", 140, 14000},
    {"EDR", 250, 25000},
    {"HDR", 500, 50000},
    {"NDR", 1000, 100000},
    {"XDR", 2000, 200000},
}};

}  // namespace

std::span<const LaneSpeed> LaneSpeeds() { return kLaneSpeeds; }

int FindLaneSpeed(std::string_view name) {
  for (size_t i = 0; i < kLaneSpeeds.size(); ++i) {
    if (kLaneSpeeds[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int SlowerLaneSpeed(int speed) {
  if (speed <= 0) return 0;
  const int slower = speed - 1;
  return kLaneSpeeds[slower].name == "FDR10" ? slower - 1 : slower;
}

std::optional<int> EthernetLaneSpeed(int lane_gbps) {
  switch (lane_gbps) {
    case 10:
      return FindLaneSpeed("QDR");
    case 25:
      return FindLaneSpeed("EDR");
    case 50:
      return FindLaneSpeed("HDR");
    case 100:
      return FindLaneSpeed("NDR");
    default:
      return std::nullopt;
  }
}

std::optional<Trained> TrainedFor(int gbps) {
  switch (gbps) {
    case 800:
      return Trained{8, FindLaneSpeed("NDR")};
    case 400:
      return Trained{4, FindLaneSpeed("NDR")};
    case 200:
      return Trained{4, FindLaneSpeed("HDR")};
    case 100:
      return Trained{4, FindLaneSpeed("EDR")};
    case 50:
      return Trained{2, FindLaneSpeed("EDR")};
    case 40:
      return Trained{4, FindLaneSpeed("QDR")};
    case 25:
      return Trained{1, FindLaneSpeed("EDR")};
    case 10:
      return Trained{1, FindLaneSpeed("QDR")};
    default:
      return std::nullopt;
  }
}

std::string RateText(const Trained& t) {
  const LaneSpeed& s = kLaneSpeeds[t.speed];
  const int deci = s.deci_gbps * t.width;
  return std::to_string(deci / 10) + (deci % 10 != 0 ? ".5" : "") + " Gb/sec (" +
         std::to_string(t.width) + "X " + std::string(s.name) + ")";
}

double RateGbps(const Trained& t) { return kLaneSpeeds[t.speed].deci_gbps * t.width / 10.0; }

int RateMbps(const Trained& t) { return kLaneSpeeds[t.speed].mbps * t.width; }

}  // namespace fabricwatch::sim
