#include "tests/testing/collector_context.h"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace fabricwatch::testing {

std::shared_ptr<spdlog::logger> NullSinkLogger(const std::string& name) {
  return std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::null_sink_mt>());
}

CollectorContext MakeCollectorContext(const sys::SysFs& sysfs, const Clock& clock,
                                      const CollectorOptions& options,
                                      std::shared_ptr<spdlog::logger> logger) {
  return CollectorContext{.sysfs = sysfs,
                          .clock = clock,
                          .logger = logger ? std::move(logger) : NullSinkLogger(),
                          .options = options,
                          .roots = Roots{.sysfs = sysfs.root()}};
}

CollectorTestContext::CollectorTestContext(std::string root, CollectorOptions options)
    : sysfs_(std::move(root), real_), options_(std::move(options)) {}

CollectorTestContext::CollectorTestContext(std::string root, const sys::FileSystem& fs,
                                           CollectorOptions options)
    : sysfs_(std::move(root), fs), options_(std::move(options)) {}

CollectorContext CollectorTestContext::Context() const {
  return MakeCollectorContext(sysfs_, *clock_, options_, logger_);
}

}  // namespace fabricwatch::testing
