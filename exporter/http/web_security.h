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
// Thread-safety: every const member of both classes may be called from any thread.

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/core/status.h"

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
  // How many bcrypt computations CheckSlow ran (tests: a cached check runs none).
  uint64_t bcrypt_runs() const;

 private:
  WebSecurityState() = default;

  std::string source_;
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
  static Result<std::shared_ptr<WebSecurity>> Load(const std::string& path, bool healthz_exempt,
                                                   std::shared_ptr<spdlog::logger> logger);

  // The current generation; cheap (atomic shared_ptr load), thread-safe.
  std::shared_ptr<const WebSecurityState> Current() const;

  // Re-reads the file when it, or a certificate/key/CA file it names, changed (mtime, size,
  // inode), at most once per second unless `force`. On error: logs once per distinct error,
  // keeps the current generation, returns the error. Ok (and nothing done) for Plain().
  // The server calls MaybeReload(false) when it accepts a connection; SIGHUP calls it with
  // force=true. Thread-safe; concurrent callers do not reload twice.
  Status MaybeReload(bool force);

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

  std::string path_;
  bool healthz_exempt_ = false;
  std::shared_ptr<spdlog::logger> logger_;
  std::atomic<std::shared_ptr<const WebSecurityState>> current_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> last_check_ns_{0};  // steady clock, for the 1/s throttle
  std::mutex reload_mutex_;                // guards the members below
  std::vector<FileStamp> stamps_;          // the file and every file it names
  std::string last_error_;                 // the last logged reload error (log once)
};

}  // namespace fabricwatch::exporter
