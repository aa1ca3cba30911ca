#pragma once
// ReplayEthtool: ethtool data from a replay directory (--path.ethtool=DIR, docs/design.md §5):
//   DIR/<netdev>/statistics   text exactly as `ethtool -S <netdev>` prints it.
//   DIR/<netdev>/module-eeprom  the transceiver's memory as a flat image (docs/design.md §5); a
//                               netdev without the file has an empty cage (kNoData).
//   DIR/<netdev>/link         text exactly as `ethtool <netdev>` prints it (ParseEthtoolLinkText);
//                               a netdev without the file has no link settings (kNoData).
//   DIR/<netdev>/qos          text exactly as `mlnx_qos -i <netdev>` prints it (Pfc()).
//   DIR/<netdev>/pause        text exactly as `ethtool -a <netdev>` prints it (Pause(): the
//                               settings; no statistics unless the text has them).
//   DIR/<netdev>/tunables     text exactly as `ethtool --get-tunable <netdev>
//                               pfc-prevention-tout` prints it (PfcStormTimeoutMs()).
// A netdev without one of these files has no such data (kNoData). FEC, link-state, the DCB PFC
// counters and standard statistics have no replay form and answer kUnimplemented.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/filesystem.h"

namespace fabricwatch::sys {

class ReplayEthtool final : public EthtoolSource {
 public:
  // `fs` must outlive this object.
  ReplayEthtool(std::string dir, const FileSystem& fs);

  // True: the netdevs are the replay's, not those of the sysfs root.
  bool HasOwnNetdevs() const override { return true; }
  // The netdevs of the replay: subdirectories of DIR that hold a `statistics` file.
  Result<std::vector<std::string>> Netdevs() const override;
  // The entries of DIR, sorted, into `names` (reusing its strings): what the collector compares
  // sample to sample to know whether Netdevs() must be asked again.
  Status ListNetdevEntries(std::vector<std::string>& names) const override;
  // False: FEC, link-state and standard-statistics queries have no replay form (Pause() and
  // PfcStormTimeoutMs() are answered from the pause and tunables files, asked of every source).
  bool HasLinkQueries() const override { return false; }

  Status ReadStatistics(const std::string& netdev, std::vector<EthtoolStat>& stats) override;
  Result<PauseInfo> Pause(const std::string& netdev) override;
  Result<FecStats> Fec(const std::string& netdev) override;
  Result<LinkState> LinkStateOf(const std::string& netdev) override;
  // DIR/<netdev>/qos: the text `mlnx_qos -i <netdev>` prints
  // (collectors/ethtool_source/qos_parse.h): PFC enabled priorities, trust state, DSCP → priority
  // map, default priority; no PFC counters and no pfc_cap (mlnx_qos prints neither). kNoData
  // without the file; unknown and malformed lines become warnings (TakeWarnings) and the rest is
  // returned.
  Result<PfcConfig> Pfc(const std::string& netdev) override;
  Result<uint32_t> PfcStormTimeoutMs(const std::string& netdev) override;
  Status ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) override;
  // DIR/<netdev>/link, at most kMaxLinkBytes. Malformed lines become warnings (TakeWarnings) and
  // the settings of the other lines are returned; text that is not ethtool output at all, or a
  // larger file, is an error naming the file.
  Result<LinkSettings> LinkSettingsOf(const std::string& netdev) override;
  // Parses only when the file's text changed since the last read of `netdev`; otherwise assigns
  // the settings parsed then (no allocation when `settings` already holds them).
  Status ReadLinkSettings(const std::string& netdev, LinkSettings& settings) override;
  std::vector<Status> TakeWarnings() override;

  // `ethtool <netdev>` prints about 1.5 KB even for a NIC with every link mode.
  static constexpr size_t kMaxLinkBytes = 64 * 1024;

 private:
  // Parses a statistics file into `stats`, keeping its warnings.
  Status Parse(std::string_view text, const std::string& path, std::vector<EthtoolStat>& stats);
  // Adds a parser's problems to the warnings, and one summary line for those it did not keep.
  void AddWarnings(std::vector<Status>& problems, size_t malformed_lines, const std::string& path);
  // True when DIR/<netdev> lists no `file` (its path is left in netdev_path_): an absent file told
  // without building an error message.
  bool ListedWithout(const std::string& netdev, std::string_view file);
  // DIR/<netdev>/<file> (a link or qos text, at most kMaxLinkBytes) into text_buffer_; its path
  // into `path`. kNoData when the file is absent.
  Result<std::string_view> ReadTextFile(const std::string& netdev, std::string_view file,
                                        std::string& path);
  // Gives the read buffer back down to its initial size.
  void ReleaseBuffer();

  std::string dir_;
  std::string path_;                             // of the statistics file being read
  std::string netdev_path_;                      // DIR/<netdev> of the module or link read
  std::vector<std::string> netdev_dir_entries_;  // its listing
  const FileSystem& fs_;
  std::string buffer_;  // reused across reads; shrunk back after a huge file
  std::vector<Status> warnings_;
  // The last text and settings of each netdev's link file (ReadLinkSettings).
  struct LinkRead {
    std::string text;
    LinkSettings settings;
  };
  std::map<std::string, LinkRead, std::less<>> link_reads_;
  std::string link_path_;
  std::string text_buffer_;  // the link and qos files' read buffer, kMaxLinkBytes + 1
  // The last text and PFC/QoS settings of each netdev's qos file (Pfc()).
  struct QosRead {
    std::string text;
    PfcConfig config;
  };
  std::map<std::string, QosRead, std::less<>> qos_reads_;
  std::string qos_path_;
  // The last text and settings of each netdev's pause file (Pause()).
  struct PauseRead {
    std::string text;
    PauseInfo info;
  };
  std::map<std::string, PauseRead, std::less<>> pause_reads_;
  std::string pause_path_;
  std::string tunables_path_;
};

}  // namespace fabricwatch::sys
