#include "exporter/http/web_security.h"

#include <sys/stat.h>

#include <chrono>

#include "collectors/sys/thread_name.h"
#include "exporter/http/basic_auth.h"
#include "exporter/http/tls_context.h"
#include "exporter/http/web_config.h"

namespace fabricwatch::exporter {
namespace {

constexpr int64_t kReloadThrottleNs = 1'000'000'000;  // at most one check per second

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// stat(), not lstat(): a Kubernetes secret volume swaps a symlink, and what matters is the file
// it points to.
WebSecurity::FileStamp Stamp(const std::string& path) {
  WebSecurity::FileStamp stamp{.path = path};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  stamp.size = st.st_size;
  stamp.inode = st.st_ino;
  stamp.device = st.st_dev;
  return stamp;
}

std::vector<WebSecurity::FileStamp> StampAll(const std::string& config_path,
                                             const std::vector<std::string>& named) {
  std::vector<WebSecurity::FileStamp> stamps{Stamp(config_path)};
  for (const std::string& path : named) stamps.push_back(Stamp(path));
  return stamps;
}

struct Loaded {
  std::shared_ptr<const WebSecurityState> state;
  std::vector<WebSecurity::FileStamp> stamps;
  bool http2_given = false;
};

// One generation from the file. The stamps are taken before each file is read, so a change
// racing with the read is seen by the next check. With `running`, a file that would weaken it
// by a missing field is refused (kFailedPrecondition) before any certificate is read.
Result<Loaded> LoadGeneration(const std::string& path, bool healthz_exempt,
                              const WebSecurityState* running) {
  Loaded loaded;
  const WebSecurity::FileStamp config_stamp = Stamp(path);
  auto config = LoadWebConfigFile(path);
  if (!config) return Error(config.error());
  if (running != nullptr) {
    if (Status s = CheckNoSilentWeakening(running->level(), *config); !s.ok()) return Error(s);
  }
  loaded.stamps = StampAll(path, config->NamedFiles());
  loaded.stamps.front() = config_stamp;
  auto state = WebSecurityState::Build(*config, healthz_exempt);
  if (!state) return Error(state.error());
  loaded.state = std::move(*state);
  loaded.http2_given = config->http2_given;
  return loaded;
}

void LogLoaded(spdlog::logger& log, const Loaded& loaded, uint64_t generation) {
  const WebSecurityState& s = *loaded.state;
  log.info("web config {} loaded (generation {}): tls={} basic_auth={} headers={}", s.source(),
           generation, s.tls_context() != nullptr ? "on" : "off",
           s.auth_required("/metrics") ? "on" : "off", s.headers().size());
  if (loaded.http2_given) {
    log.info(
        "web config {}: http_server_config.http2 has no effect: fabricwatch serves "
        "HTTP/1.1 only (README \"Security\")",
        s.source());
  }
}

}  // namespace

Result<std::shared_ptr<const WebSecurityState>> WebSecurityState::Build(const WebConfig& config,
                                                                        bool healthz_exempt) {
  std::shared_ptr<WebSecurityState> state(new WebSecurityState());
  state->source_ = config.source;
  state->level_ = LevelOf(config);
  state->healthz_exempt_ = healthz_exempt;
  state->headers_ = config.headers;
  if (config.tls_enabled) {
    auto tls = TlsContext::Create(config.tls, config.source);
    if (!tls) return Error(tls.error().WithContext("web config " + config.source));
    state->tls_ = std::move(*tls);
  }
  if (!config.basic_auth_users.empty()) {
    state->auth_ = std::make_unique<BasicAuth>(config.basic_auth_users);
  }
  return std::shared_ptr<const WebSecurityState>(std::move(state));
}

std::shared_ptr<const WebSecurityState> WebSecurityState::Plain(bool healthz_exempt) {
  std::shared_ptr<WebSecurityState> state(new WebSecurityState());
  state->healthz_exempt_ = healthz_exempt;
  return state;
}

WebSecurityState::~WebSecurityState() = default;

SSL_CTX* WebSecurityState::tls_context() const { return tls_ ? tls_->ctx() : nullptr; }

Status WebSecurityState::CheckClientCertificate(SSL* ssl) const {
  if (!tls_ || ssl == nullptr) return Status::Ok();
  return tls_->CheckClientCertificate(ssl);
}

bool WebSecurityState::auth_required(std::string_view path) const {
  if (!auth_) return false;
  return !(healthz_exempt_ && path == "/healthz");
}

WebSecurityState::Auth WebSecurityState::CheckCached(std::string_view authorization_header) const {
  if (!auth_) return Auth::kAllowed;
  switch (auth_->CheckCached(authorization_header)) {
    case BasicAuth::Cached::kAllowed:
      return Auth::kAllowed;
    case BasicAuth::Cached::kDenied:
      return Auth::kDenied;
    case BasicAuth::Cached::kUnknown:
      break;
  }
  return Auth::kNeedsSlowCheck;
}

bool WebSecurityState::CheckSlow(std::string_view authorization_header) const {
  return !auth_ || auth_->CheckSlow(authorization_header);
}

const std::vector<std::pair<std::string, std::string>>& WebSecurityState::headers() const {
  return headers_;
}

uint64_t WebSecurityState::bcrypt_runs() const { return auth_ ? auth_->bcrypt_runs() : 0; }

std::shared_ptr<WebSecurity> WebSecurity::Plain(bool healthz_exempt) {
  std::shared_ptr<WebSecurity> web(new WebSecurity());
  web->healthz_exempt_ = healthz_exempt;
  web->current_.store(WebSecurityState::Plain(healthz_exempt));
  return web;
}

Result<std::shared_ptr<WebSecurity>> WebSecurity::Load(
    const std::string& path, bool healthz_exempt, std::shared_ptr<spdlog::logger> logger,
    std::shared_ptr<const WebSecurityState> running) {
  auto loaded = LoadGeneration(path, healthz_exempt, running.get());
  if (!loaded) return Error(loaded.error());
  std::shared_ptr<WebSecurity> web(new WebSecurity());
  web->path_ = path;
  web->healthz_exempt_ = healthz_exempt;
  web->logger_ = std::move(logger);
  web->current_.store(loaded->state);
  web->stamps_ = loaded->stamps;
  web->generation_ = 1;
  web->last_check_ns_ = SteadyNowNs();
  web->reloads_[static_cast<size_t>(Outcome::kLoaded)] = 1;
  if (web->logger_) LogLoaded(*web->logger_, *loaded, 1);
  if (running != nullptr) web->CountChanges(running->level(), loaded->state->level());
  // Only here, with a web config file: WebSecurity::Plain starts no thread.
  web->reloader_ = std::jthread([raw = web.get()](std::stop_token stop) {
    sys::SetCurrentThreadName("fw-reload");
    raw->ReloadLoop(stop);
  });
  return web;
}

WebSecurity::~WebSecurity() {
  // The thread reads members: stop and join it first (jthread's destructor would do it last).
  if (reloader_.joinable()) {
    reloader_.request_stop();
    reloader_.join();
  }
}

void WebSecurity::RequestCheck() {
  if (path_.empty() || check_requested_.exchange(true)) return;
  std::lock_guard lock(wake_mutex_);
  wake_.notify_one();
}

void WebSecurity::ReloadLoop(std::stop_token stop) {
  std::unique_lock lock(wake_mutex_);
  while (true) {
    if (!wake_.wait(lock, stop, [this] { return check_requested_.load(); })) return;
    // MaybeReload looks at most once a second. A request inside that second waits for its end
    // rather than being dropped: the change it was asked for is always looked at.
    const int64_t wait_ns = kReloadThrottleNs - (SteadyNowNs() - last_check_ns_.load());
    if (wait_ns > 0) {
      wake_.wait_for(lock, stop, std::chrono::nanoseconds(wait_ns), [] { return false; });
      if (stop.stop_requested()) return;
    }
    check_requested_ = false;
    lock.unlock();
    // Errors are logged (once each) and counted by the reload itself.
    [[maybe_unused]] const Status reloaded = MaybeReload(false);
    lock.lock();
  }
}

WebSecurity::Stats WebSecurity::stats() const {
  Stats out;
  for (size_t i = 0; i < kOutcomes; ++i) out.reloads[i] = reloads_[i].load();
  for (size_t i = 0; i < changes_.size(); ++i) out.changes[i] = changes_[i].load();
  return out;
}

void WebSecurity::CountChanges(const SecurityLevel& before, const SecurityLevel& after) {
  for (const SecurityChange& change : SecurityChanges(before, after)) {
    for (size_t i = 0; i < std::size(kSecurityChangeKinds); ++i) {
      if (kSecurityChangeKinds[i] == change.change) changes_[i].fetch_add(1);
    }
    if (!logger_) continue;
    if (change.weaker) {
      logger_->warn("web config {}: {} (generation {}): the file says so explicitly", path_,
                    change.text, generation_.load());
    } else {
      logger_->warn("web config {}: {} (generation {})", path_, change.text, generation_.load());
    }
  }
}

std::shared_ptr<const WebSecurityState> WebSecurity::Current() const { return current_.load(); }

Status WebSecurity::MaybeReload(bool force) {
  if (path_.empty()) return Status::Ok();
  const int64_t now = SteadyNowNs();
  if (!force) {
    int64_t last = last_check_ns_.load();
    // One caller per second gets to look; the others return at once.
    if (now - last < kReloadThrottleNs || !last_check_ns_.compare_exchange_strong(last, now)) {
      return Status::Ok();
    }
    std::unique_lock lock(reload_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return Status::Ok();  // a reload is under way
    return ReloadLocked(false);
  }
  std::lock_guard lock(reload_mutex_);
  last_check_ns_ = now;
  return ReloadLocked(true);
}

Status WebSecurity::ReloadLocked(bool force) {
  std::vector<std::string> named;
  for (size_t i = 1; i < stamps_.size(); ++i) named.push_back(stamps_[i].path);
  const std::vector<FileStamp> now = StampAll(path_, named);
  if (!force && now == stamps_) return Status::Ok();
  const std::shared_ptr<const WebSecurityState> running = current_.load();
  auto loaded = LoadGeneration(path_, healthz_exempt_, running.get());
  if (!loaded) {
    // Not retried until a file changes again (or SIGHUP), and logged once per distinct error.
    const bool refused = loaded.error().code() == StatusCode::kFailedPrecondition;
    reloads_[static_cast<size_t>(refused ? Outcome::kRefused : Outcome::kFailed)].fetch_add(1);
    stamps_ = now;
    const std::string& message = loaded.error().message();
    if (logger_ && message != last_error_) {
      logger_->error("web config reload {}, keeping generation {}: {}",
                     refused ? "refused" : "failed", generation_.load(), message);
    }
    last_error_ = message;
    return loaded.error();
  }
  current_.store(loaded->state);
  stamps_ = loaded->stamps;
  last_error_.clear();
  reloads_[static_cast<size_t>(Outcome::kLoaded)].fetch_add(1);
  const uint64_t generation = ++generation_;
  if (logger_) LogLoaded(*logger_, *loaded, generation);
  CountChanges(running->level(), loaded->state->level());
  return Status::Ok();
}

}  // namespace fabricwatch::exporter
