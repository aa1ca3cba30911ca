#pragma once
// Logging: one named spdlog logger per component ("netdev", "http", "scheduler"), all writing
// to stderr through one sink in logfmt or JSON:
//   ts=2026-11-22T02:32:42.123Z level=warn logger=netdev msg="class/net/eth0/mtu: ..."
//   {"ts":"2026-11-22T02:32:42.123Z","level":"warn","logger":"netdev","msg":"..."}

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>
#include <spdlog/logger.h>

namespace fabricwatch::exporter {

enum class LogFormat { kLogfmt, kJson };

// Call once before creating loggers. `level`: debug, info, warn, error.
void SetupLogging(std::string_view level, LogFormat format);
// The named logger, created on first use with the shared sink and level.
std::shared_ptr<spdlog::logger> GetLogger(const std::string& name);

// Exposed for tests.
std::unique_ptr<spdlog::formatter> MakeFormatter(LogFormat format);

}  // namespace fabricwatch::exporter
