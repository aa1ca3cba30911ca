#pragma once
// WebSecurity: the --web.config.file settings (TLS, client certificates, basic auth, extra
// response headers) as the HTTP server uses them. The file format is exporter-toolkit's
// (README "Security"); parsing is in web_config.h, the SSL_CTX in tls_context.h and the bcrypt
// check in basic_auth.h.
//
// A WebSecurityState is one immutable generation of the file. The server takes a shared_ptr to
// the current generation when it accepts a connection and keeps it for the connection's life, so
// a reload never changes a connection midway. WebSecurity holds the current generation and
// replaces it when the file, or a certificate, key or CA file it names, changes.
//
// Fail closed (web_security_rules.h): a reload never weakens TLS, basic auth or the client
// certificate check by a missing field, and an empty file is an error; a refused or failed
// reload keeps the running generation. Each security change is logged at warning level and
// counted (web_security_metrics.h). The files are read by a thread of WebSecurity's own, never by
// the HTTP event loop (RequestCheck), with the bounded reader (collectors/sys/bounded_file.h).
//
// Thread-safety: every const member of both classes may be called from any thread.

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "exporter/http/web_security_rules.h"

namespace fabricwatch::exporter {

struct WebConfig;
class TlsContext;
class BasicAuth;

class WebSecurityState {
 public:
  // Builds a generation from a parsed, validated config (loads certificates and keys). Errors
  // name the file and the field.
  static Result<std::shared_ptr<const WebSecurityState>> Build(const WebConfig& config,
                                                               bool healthz_exempt);
  // No TLS, no auth, no headers.
  static std::shared_ptr<const WebSecurityState> Plain(bool healthz_exempt);
  ~WebSecurityState();
  WebSecurityState(const WebSecurityState&) = delete;
  WebSecurityState& operator=(const WebSecurityState&) = delete;

  // nullptr: plain HTTP. Otherwise a fully configured SSL_CTX (versions, ciphers, groups,
  // certificate, client verification mode and CA). Owned by the state; valid while it lives.
  SSL_CTX* tls_context() const;
  // After a successful handshake: client_allowed_sans and anything OpenSSL's verify mode cannot
  // express. Ok when TLS is off or no check applies. Error text is for the log (the server
  // closes the connection).
  Status CheckClientCertificate(SSL* ssl) const;

  // False when there are no basic_auth_users, or `path` is /healthz and the exemption
  // (--web.healthz-unauthenticated) is on.
  bool auth_required(std::string_view path) const;

  enum class Auth { kAllowed, kDenied, kNeedsSlowCheck };
  // Fast, never runs bcrypt: kAllowed for a cached success (keyed by SHA-256 of user, stored
  // hash and password, as exporter-toolkit does), kDenied for a missing or malformed header,
  // kNeedsSlowCheck otherwise. An unknown user also gets kNeedsSlowCheck: CheckSlow then runs
  // bcrypt against a dummy hash, as exporter-toolkit does, so a reply's timing does not tell
  // which user names exist.
  Auth CheckCached(std::string_view authorization_header) const;
  // Slow (bcrypt through libxcrypt crypt_rn, ~50 ms at cost 10). Caches a success. Thread-safe.
  bool CheckSlow(std::string_view authorization_header) const;

  // http_server_config.headers, added to every response.
  const std::vector<std::pair<std::string, std::string>>& headers() const;

  // The config file this generation came from ("" for Plain), for log lines.
  const std::string& source() const { return source_; }
  // What this generation protects (the fail-closed reload compares it with the next).
  const SecurityLevel& level() const { return level_; }
  // How many bcrypt computations CheckSlow ran (tests: a cached check runs none).
  uint64_t bcrypt_runs() const;

 private:
  WebSecurityState() = default;

  std::string source_;
  SecurityLevel level_;
  bool healthz_exempt_ = false;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::unique_ptr<TlsContext> tls_;  // null: plain HTTP
  std::unique_ptr<BasicAuth> auth_;  // null: no basic_auth_users
};

class WebSecurity {
 public:
  // No --web.config.file: plain HTTP, no auth, no extra headers.
  static std::shared_ptr<WebSecurity> Plain(bool healthz_exempt = false);
  // Loads and validates the file and everything it names. Errors name the file and the field.
  // `running`: the generation a SIGHUP reload replaces; the new file may not weaken it by a
  // missing field (kFailedPrecondition), and its security changes are logged and counted.
  static Result<std::shared_ptr<WebSecurity>> Load(
      const std::string& path, bool healthz_exempt, std::shared_ptr<spdlog::logger> logger,
      std::shared_ptr<const WebSecurityState> running = nullptr);
  ~WebSecurity();
  WebSecurity(const WebSecurity&) = delete;
  WebSecurity& operator=(const WebSecurity&) = delete;

  // The current generation; cheap (atomic shared_ptr load), thread-safe.
  std::shared_ptr<const WebSecurityState> Current() const;

  // Re-reads the file when it, or a certificate/key/CA file it names, changed (mtime, size,
  // inode), at most once per second unless `force`. On error: logs once per distinct error,
  // keeps the current generation, returns the error. Ok (and nothing done) for Plain().
  // force=true. Thread-safe; concurrent callers do not reload twice. Reads files: never call it
  // from the HTTP event loop, call RequestCheck().
  Status MaybeReload(bool force);
  // Wakes WebSecurity's reload thread to call MaybeReload(false); never blocks, never reads a
  // file. The server calls it when it accepts a connection, so a changed file is seen on the next
  // connection after it (at most one look a second). No-op for Plain().
  void RequestCheck();

  // Counters for fabricwatch_web_config_reloads_total and ..._security_changes_total.
  enum class Outcome { kLoaded, kFailed, kRefused };
  static constexpr size_t kOutcomes = 3;
  struct Stats {
    std::array<uint64_t, kOutcomes> reloads{};  // by Outcome
    std::array<uint64_t, std::size(kSecurityChangeKinds)> changes{};
  };
  Stats stats() const;

  // The --web.config.file path; "" for Plain().
  const std::string& path() const { return path_; }
  // Incremented by every successful reload (1 after Load).
  uint64_t generation() const { return generation_.load(); }

  struct FileStamp {
    std::string path;
    bool exists = false;
    int64_t mtime_ns = 0;
    int64_t size = 0;
    uint64_t inode = 0;
    uint64_t device = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
  };

 private:
  WebSecurity() = default;
  Status ReloadLocked(bool force);
  void CountChanges(const SecurityLevel& before, const SecurityLevel& after);
  void ReloadLoop(std::stop_token stop);

  std::string path_;
  bool healthz_exempt_ = false;
  std::shared_ptr<spdlog::logger> logger_;
  std::atomic<std::shared_ptr<const WebSecurityState>> current_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> last_check_ns_{0};  // steady clock, for the 1/s throttle
  std::mutex reload_mutex_;                // guards the members below
  std::vector<FileStamp> stamps_;          // the file and every file it names
  std::string last_error_;                 // the last logged reload error (log once)
  std::array<std::atomic<uint64_t>, kOutcomes> reloads_{};
  std::array<std::atomic<uint64_t>, std::size(kSecurityChangeKinds)> changes_{};
  std::atomic<bool> check_requested_{false};
  std::mutex wake_mutex_;
  std::condition_variable_any wake_;
  std::jthread reloader_;  // last: stopped and joined before the members it uses go
};

}  // namespace fabricwatch::exporter
