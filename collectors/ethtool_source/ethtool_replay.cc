#include "collectors/ethtool_source/ethtool_replay.h"

#include <algorithm>
#include <cerrno>

#include "collectors/ethtool_source/ethtool_replay_parse.h"
#include "collectors/ethtool_source/pause_text_parse.h"
#include "collectors/ethtool_source/qos_parse.h"

namespace fabricwatch::sys {
namespace {

// Room for kMaxStatisticsPerNetdev lines of `ethtool -S` (about 35 bytes each for mlx5; a
// 64-queue NIC prints a few hundred KB at most). A larger file is an error naming it.
constexpr size_t kMaxStatisticsBytes = 2 << 20;
// What the read buffer starts at and comes back to: a 1000-stat mlx5 dump is about 40 KB.
constexpr size_t kStatisticsBuffer = 64 * 1024;

Status Unsupported(std::string_view what, const std::string& netdev) {
  return Status(StatusCode::kUnimplemented,
                std::string(what) + " of " + netdev + ": not available from a replay directory");
}

}  // namespace

ReplayEthtool::ReplayEthtool(std::string dir, const FileSystem& fs)
    : dir_(std::move(dir)), fs_(fs) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

Result<std::vector<std::string>> ReplayEthtool::Netdevs() const {
  auto entries = fs_.ListDir(dir_);
  if (!entries) return Error(entries.error());
  std::vector<std::string> netdevs;
  for (const std::string& entry : *entries) {
    // A statistics file that is there but unusable (a FIFO: InvalidArgument) still names a
    // netdev, so that ReadStatistics() reports it rather than the netdev vanishing quietly.
    auto file = fs_.Open(dir_ + "/" + entry + "/statistics");
    if (file || file.error().code() == StatusCode::kInvalidArgument) netdevs.push_back(entry);
  }
  std::sort(netdevs.begin(), netdevs.end());
  return netdevs;
}

Status ReplayEthtool::ListNetdevEntries(std::vector<std::string>& names) const {
  if (Status status = fs_.ListDirInto(dir_, names); !status.ok()) return status;
  std::sort(names.begin(), names.end());
  return Status::Ok();
}

Status ReplayEthtool::ReadStatistics(const std::string& netdev, std::vector<EthtoolStat>& stats) {
  // Built in a kept string: this runs for every netdev every sample.
  std::string& path = path_.assign(dir_).append("/").append(netdev).append("/statistics");
  auto fd = fs_.Open(path);
  if (!fd) return fd.error();
  if (buffer_.size() < kStatisticsBuffer) buffer_.resize(kStatisticsBuffer);
  for (;;) {
    auto n = fs_.ReadAt0(*fd, std::span<char>(buffer_.data(), buffer_.size()), path);
    if (!n) return n.error();
    if (*n > kMaxStatisticsBytes) {
      ReleaseBuffer();
      return Status(StatusCode::kInvalidArgument,
                    path + ": larger than " + std::to_string(kMaxStatisticsBytes) +
                        " bytes, more than fabricwatch reads per netdev; its driver statistics "
                        "are not exported");
    }
    if (*n < buffer_.size()) {
      Status status = Parse(std::string_view(buffer_.data(), *n), path, stats);
      // Memory that a huge file took comes back once the file is small again.
      if (buffer_.size() > kStatisticsBuffer && *n < buffer_.size() / 4) ReleaseBuffer();
      return status;
    }
    // pread at 0 again with room for the whole file, or one byte past the bound to see it.
    buffer_.resize(std::min(buffer_.size() * 4, kMaxStatisticsBytes + 1));
  }
}

Status ReplayEthtool::Parse(std::string_view text, const std::string& path,
                            std::vector<EthtoolStat>& stats) {
  // Parsed into the caller's vector, whose names' storage is reused.
  ParsedEthtoolStats parsed;
  parsed.stats.swap(stats);
  Status status = ParseEthtoolStatsTextInto(text, path, parsed);
  stats.swap(parsed.stats);
  if (!status.ok()) return status;
  AddWarnings(parsed.problems, parsed.malformed_lines, path);
  return Status::Ok();
}

void ReplayEthtool::AddWarnings(std::vector<Status>& problems, size_t malformed_lines,
                                const std::string& path) {
  for (Status& problem : problems) warnings_.push_back(std::move(problem));
  if (malformed_lines > problems.size()) {
    // The parser keeps the first problems only; one summary stands for the rest, so a
    // hostile file cannot flood the error log.
    warnings_.push_back(Status(StatusCode::kInvalidArgument,
                               path + ": " + std::to_string(malformed_lines - problems.size()) +
                                   " more malformed lines (" + std::to_string(malformed_lines) +
                                   " in all)"));
  }
}

bool ReplayEthtool::ListedWithout(const std::string& netdev, std::string_view file) {
  netdev_path_.assign(dir_).append("/").append(netdev);
  return fs_.ListDirInto(netdev_path_, netdev_dir_entries_).ok() &&
         std::find(netdev_dir_entries_.begin(), netdev_dir_entries_.end(), file) ==
             netdev_dir_entries_.end();
}

void ReplayEthtool::ReleaseBuffer() {
  buffer_.resize(kStatisticsBuffer);
  buffer_.shrink_to_fit();
}

Result<PauseInfo> ReplayEthtool::Pause(const std::string& netdev) {
  auto read = ReadTextFile(netdev, "pause", pause_path_);
  if (!read) return Error(read.error());
  const std::string_view text = *read;
  auto cached = pause_reads_.find(netdev);
  // Unchanged text: the settings parsed then (its warnings were reported then).
  if (cached != pause_reads_.end() && cached->second.text == text) return cached->second.info;
  auto parsed = ParseEthtoolPauseText(text, pause_path_);
  if (!parsed) {
    if (cached != pause_reads_.end()) pause_reads_.erase(cached);
    return Error(parsed.error());
  }
  if (cached == pause_reads_.end()) cached = pause_reads_.emplace(netdev, PauseRead{}).first;
  cached->second.text.assign(text);
  cached->second.info = parsed->info;
  for (Status& problem : parsed->problems) warnings_.push_back(std::move(problem));
  if (parsed->unknown_lines > 0) {
    warnings_.push_back(Status(StatusCode::kInvalidArgument,
                               pause_path_ + ": " + std::to_string(parsed->unknown_lines) +
                                   " lines that are not ethtool -a output, ignored"));
  }
  return parsed->info;
}
Result<FecStats> ReplayEthtool::Fec(const std::string& netdev) {
  return Error(Unsupported("FEC statistics", netdev));
}
Result<LinkState> ReplayEthtool::LinkStateOf(const std::string& netdev) {
  return Error(Unsupported("link state", netdev));
}
Result<std::string_view> ReplayEthtool::ReadTextFile(const std::string& netdev,
                                                     std::string_view file, std::string& path) {
  // Most replay netdevs lack some of these files: an absent one is told from the netdev
  // directory's listing (kept: no allocation), without an error message built.
  if (ListedWithout(netdev, file)) return Error(Status(StatusCode::kNoData, "no file"));
  path.assign(netdev_path_).append("/").append(file);
  auto fd = fs_.Open(path);
  if (!fd) {
    if (fd.error().sys_errno() == ENOENT) {
      return Error(Status(StatusCode::kNoData, path + " does not exist"));
    }
    return Error(fd.error());
  }
  // Sized once; `ethtool <netdev>` and `mlnx_qos -i` print 1-2 KB, so it rarely grows past a page.
  if (text_buffer_.size() < kMaxLinkBytes + 1) text_buffer_.resize(kMaxLinkBytes + 1);
  auto n = fs_.ReadAt0(*fd, std::span<char>(text_buffer_.data(), text_buffer_.size()), path);
  if (!n) return Error(n.error());
  if (*n > kMaxLinkBytes) {
    return Error(StatusCode::kInvalidArgument,
                 path + ": longer than " + std::to_string(kMaxLinkBytes) + " bytes");
  }
  return std::string_view(text_buffer_.data(), *n);
}

Result<PfcConfig> ReplayEthtool::Pfc(const std::string& netdev) {
  auto read = ReadTextFile(netdev, "qos", qos_path_);
  if (!read) return Error(read.error());
  const std::string_view text = *read;
  auto cached = qos_reads_.find(netdev);
  // Unchanged text: the settings parsed then (no allocation; its warnings were reported then).
  if (cached != qos_reads_.end() && cached->second.text == text) return cached->second.config;
  auto parsed = ParseMlnxQosText(text, qos_path_);
  if (!parsed) {
    if (cached != qos_reads_.end()) qos_reads_.erase(cached);
    return Error(parsed.error());
  }
  for (Status& problem : parsed->problems) warnings_.push_back(std::move(problem));
  if (parsed->unknown_lines > 0) {
    warnings_.push_back(Status(StatusCode::kInvalidArgument,
                               qos_path_ + ": " + std::to_string(parsed->unknown_lines) +
                                   " lines that are not mlnx_qos -i output, ignored"));
  }
  const QosSettings& q = parsed->settings;
  PfcConfig config;
  config.enabled_mask = q.pfc_enabled;
  // mlnx_qos prints the trust state it derived (or read from the OFED qos/trust file); "none"
  // means the tool could not tell.
  if (q.trust == "pcp" || q.trust == "dscp") config.trust = q.trust;
  config.dscp_priority = q.dscp_priority;
  config.default_priority = q.default_priority;
  if (cached == qos_reads_.end()) cached = qos_reads_.emplace(netdev, QosRead{}).first;
  cached->second.text.assign(text);
  cached->second.config = config;
  return config;
}
Result<uint32_t> ReplayEthtool::PfcStormTimeoutMs(const std::string& netdev) {
  auto read = ReadTextFile(netdev, "tunables", tunables_path_);
  if (!read) return Error(read.error());
  return ParseEthtoolTunableText(*read, "pfc-prevention-tout", tunables_path_);
}

Status ReplayEthtool::ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) {
  // The largest layout is CMIS: lower page + 5 upper pages = 768 bytes; anything longer is not
  // a module image.
  constexpr size_t kMaxImage = 1024;
  constexpr std::string_view kImageFile = "module-eeprom";
  image.clear();
  // An empty cage is the steady state of many ports, probed again every module interval: it is
  // told from the netdev directory's listing (kept: no allocation) rather than from a failed
  // open, whose error message would be built on every probe. The short message fits a string
  // without allocating; the collector names the netdev.
  if (ListedWithout(netdev, kImageFile)) return Status(StatusCode::kNoData, "no image file");
  const std::string& path = netdev_path_.append("/").append(kImageFile);
  auto fd = fs_.Open(path);
  if (!fd) {
    if (fd.error().sys_errno() == ENOENT) {
      return Status(StatusCode::kNoData,
                    "module EEPROM of " + netdev + ": no module (" + path + " does not exist)");
    }
    return fd.error();
  }
  image.resize(kMaxImage + 1);
  auto n =
      fs_.ReadAt0(*fd, std::span<char>(reinterpret_cast<char*>(image.data()), image.size()), path);
  if (!n) {
    image.clear();
    return n.error();
  }
  if (*n > kMaxImage) {
    image.clear();
    return Status(StatusCode::kInvalidArgument,
                  path + ": longer than " + std::to_string(kMaxImage) + " bytes");
  }
  image.resize(*n);
  return Status::Ok();
}

Result<LinkSettings> ReplayEthtool::LinkSettingsOf(const std::string& netdev) {
  LinkSettings settings;
  if (Status status = ReadLinkSettings(netdev, settings); !status.ok()) return Error(status);
  return settings;
}

Status ReplayEthtool::ReadLinkSettings(const std::string& netdev, LinkSettings& settings) {
  auto read = ReadTextFile(netdev, "link", link_path_);
  if (!read) return read.error();
  const std::string_view text = *read;
  auto cached = link_reads_.find(netdev);
  if (cached != link_reads_.end() && cached->second.text == text) {
    settings = cached->second.settings;  // unchanged: the warnings were reported the first time
    return Status::Ok();
  }
  auto parsed = ParseEthtoolLinkText(text, link_path_);
  if (!parsed) {
    if (cached != link_reads_.end()) link_reads_.erase(cached);
    return parsed.error();
  }
  AddWarnings(parsed->problems, parsed->malformed_lines, link_path_);
  if (cached == link_reads_.end()) cached = link_reads_.emplace(netdev, LinkRead{}).first;
  cached->second.text.assign(text);
  cached->second.settings = std::move(parsed->settings);
  settings = cached->second.settings;
  return Status::Ok();
}

std::vector<Status> ReplayEthtool::TakeWarnings() { return std::exchange(warnings_, {}); }

}  // namespace fabricwatch::sys
