#pragma once
// The --web.config.file format: exporter-toolkit's web configuration file
// (prometheus/exporter-toolkit docs/web-configuration.md, web/tls_config.go), so a file written
// for node_exporter works here unchanged, with the limits README "Security" lists.
//
// Parsing is pure (text -> WebConfig); LoadWebConfigFile is the only I/O, and nothing here reads
// the certificate or key files (tls_context.h does). Every error names the file, the line and
// the field path ("web.yml:3:5: tls_server_config.min_version: ..."). A field we do not know or
// do not support is an error, never ignored; so is a duplicate key (Go's yaml.UnmarshalStrict,
// which exporter-toolkit uses, rejects those too).

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace fabricwatch::exporter {

// Go's crypto/tls ClientAuthType, by the names exporter-toolkit accepts.
enum class ClientAuthType {
  kNoClientCert,
  kRequestClientCert,           // ask, accept none or any certificate, verify nothing
  kRequireAnyClientCert,        // require one, verify nothing ("RequireClientCert" too)
  kVerifyClientCertIfGiven,     // none, or one that verifies against the client CA
  kRequireAndVerifyClientCert,  // one that verifies against the client CA
};
std::string_view ClientAuthTypeName(ClientAuthType type);

// TLS protocol versions as OpenSSL numbers them (TLS1_2_VERSION = 0x0303, TLS1_3_VERSION).
inline constexpr int kTls12 = 0x0303;
inline constexpr int kTls13 = 0x0304;

// One entry of cipher_suites: the name as written (IANA = Go's name) and Go's IANA code point.
struct CipherSuite {
  std::string name;
  uint16_t id = 0;
  bool tls13 = false;
};

struct TlsServerConfig {
  // Paths are absolute or relative to the config file's directory (resolved by the parser, as
  // exporter-toolkit's SetDirectory does). Inline PEM (`cert`, `key`, `client_ca`) is the
  // alternative to each file; giving both is an error.
  std::string cert_file, key_file, client_ca_file;
  std::string cert, key, client_ca;
  ClientAuthType client_auth_type = ClientAuthType::kNoClientCert;
  std::vector<std::string> client_allowed_sans;
  int min_version = kTls12;
  int max_version = kTls13;
  std::vector<CipherSuite> cipher_suites;  // empty: the default policy (tls_context.h)
  bool prefer_server_cipher_suites = true;
  std::vector<std::string> curve_preferences;  // OpenSSL group names; empty: default policy
};

struct WebConfig {
  std::string source;  // the file, for error messages
  bool tls_enabled = false;
  TlsServerConfig tls;
  // What the file says explicitly, for the fail-closed reload (web_security.h): a reload may turn
  // TLS, basic auth or client-certificate verification off only when the file says so with a
  // field, never by leaving one out (a truncated or emptied file must not open the port).
  //   tls_server_config: {}   TLS off on purpose (an empty mapping; a bare key is a null, as a
  //                           file cut after "tls_server_config:" reads)
  //   basic_auth_users: {}    basic auth off on purpose
  //   client_auth_type: X     the client-certificate policy given, not defaulted
  //   client_allowed_sans: [] the SAN restriction given (an empty list: none on purpose)
  //   min_version: X          the lowest TLS version given
  // A key with no value at all (tls_server_config:, basic_auth_users:, or any key under
  // tls_server_config) is an error at start and on reload: it is what a cut file leaves.
  bool tls_explicitly_off = false;
  bool basic_auth_explicitly_off = false;
  bool client_auth_type_given = false;
  bool client_allowed_sans_given = false;
  bool min_version_given = false;
  // http_server_config.headers, in file order; only the five exporter-toolkit allows.
  std::vector<std::pair<std::string, std::string>> headers;
  // http_server_config.http2 as written. We never offer HTTP/2 (no ALPN "h2"): true, the
  // default, is accepted and means HTTP/1.1 as with any client that does not speak h2.
  bool http2 = true;
  bool http2_given = false;  // the file says http2 (the agent logs that h2 is not offered)
  // basic_auth_users: user -> bcrypt hash ($2a$, $2b$ or $2y$, cost 4..31), checked at parse.
  std::map<std::string, std::string, std::less<>> basic_auth_users;

  // The files this config names (cert, key, client CA), for change detection.
  std::vector<std::string> NamedFiles() const;
};

// A web configuration is a few hundred bytes with inline PEM a few kB; 1 MiB is far beyond any.
inline constexpr size_t kMaxWebConfigBytes = 1 << 20;

// Parses `yaml_text`. A text with no document (empty, or only comments) is an error: an
// emptied file must never read as "plain HTTP, no auth" (issue 39); a file that means that says
// so with tls_server_config: {} (or is not given at all). `source` names the file in errors;
// relative paths in it are resolved against `base_dir` (the file's directory; "" keeps them as
// written).
Result<WebConfig> ParseWebConfig(std::string_view yaml_text, const std::string& source,
                                 const std::string& base_dir);

// Reads and parses the file at `path` (relative paths resolve against its directory).
Result<WebConfig> LoadWebConfigFile(const std::string& path);

// The bcrypt hash shape libxcrypt and Go's bcrypt accept: "$2b$10$" + 53 characters of bcrypt's
// base64. Ok or an InvalidArgument that says what is wrong (never echoes the hash).
Status ValidateBcryptHash(std::string_view hash);
// The cost of a valid hash ("$2b$10$..." -> 10).
int BcryptCost(std::string_view hash);

}  // namespace fabricwatch::exporter
