#include "collectors/sys/shared_library.h"

#include <spdlog/spdlog.h>

namespace fabricwatch::sys {

Result<SharedLibrary> SharedLibrary::Open(const LibrarySpec& spec) {
  const std::string soname(spec.soname);
  // dlerror(3) is per thread: clear what an earlier call left, read right after the failure.
  (void)dlerror();
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error(StatusCode::kUnavailable,
                 "cannot load " + soname + " (" + (why != nullptr ? why : "dlopen failed") +
                     "; install the Debian package " + std::string(spec.package) + ")");
  }
  return SharedLibrary(spec, handle);
}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    spec_ = other.spec_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<void*> SharedLibrary::Symbol(const char* name) const {
  (void)dlerror();
  void* symbol = dlsym(handle_, name);
  // A symbol may legitimately be NULL (dlsym(3)); only dlerror() says it is missing. None of the
  // functions bound here is, so NULL is an error either way.
  const char* why = dlerror();
  if (symbol == nullptr) {
    return Error(StatusCode::kNotFound,
                 std::string(spec_.soname) + " has no symbol " + name + " (" +
                     (why != nullptr ? why : "NULL") + "; want the version of the Debian package " +
                     std::string(spec_.package) + " the agent was built against)");
  }
  return symbol;
}

void LogLoadFailure(const Status& status) {
  // The agent's "main" logger (exporter/logging.h; made when the agent starts), which writes in
  // the configured format. SetupLogging drops spdlog's default logger, so that one may be null:
  // then (fabricwatch check, tests) there is no line, and the caller's error carries the message.
  std::shared_ptr<spdlog::logger> logger = spdlog::get("main");
  if (!logger) logger = spdlog::default_logger();
  if (logger) logger->warn("{}", status.ToString());
}

}  // namespace fabricwatch::sys
