#include "exporter/http/web_config.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/yaml_reader.h"
#include "collectors/sys/bounded_file.h"

namespace fabricwatch::exporter {
namespace {

// The cipher suites exporter-toolkit accepts: Go's tls.CipherSuites() (crypto/tls
// cipher_suites.go), by IANA name and code point. tls_context.cc maps each to OpenSSL through
// SSL_CIPHER_standard_name. The TLS_RSA_* key-exchange suites, which Go lists there but no
// longer offers by default, are accepted because a file may name them; they have no forward
// secrecy and the default policy never offers them.
struct KnownCipher {
  std::string_view name;
  uint16_t id;
  bool tls13;
};
constexpr std::array<KnownCipher, 17> kGoCipherSuites{{
    {"TLS_AES_128_GCM_SHA256", 0x1301, true},
    {"TLS_AES_256_GCM_SHA384", 0x1302, true},
    {"TLS_CHACHA20_POLY1305_SHA256", 0x1303, true},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", 0x002f, false},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", 0x0035, false},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", 0x009c, false},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", 0x009d, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 0xc009, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 0xc00a, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", 0xc013, false},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 0xc014, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xc02b, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 0xc02c, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xc02f, false},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xc030, false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca8, false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca9, false},
}};

// exporter-toolkit's curve names (web/tls_config.go `curves`) -> OpenSSL group names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kGoCurves{{
    {"CurveP256", "P-256"},
    {"CurveP384", "P-384"},
    {"CurveP521", "P-521"},
    {"X25519", "X25519"},
}};

// exporter-toolkit's extraHTTPHeaders (web/handler.go): the only headers a file may set, and
// the values allowed where the header is an enumeration.
struct AllowedHeader {
  std::string_view name;
  std::vector<std::string_view> values;  // empty: any value
};
const std::vector<AllowedHeader>& AllowedHeaders() {
  static const std::vector<AllowedHeader> headers{{"Strict-Transport-Security", {}},
                                                  {"X-Content-Type-Options", {"nosniff"}},
                                                  {"X-Frame-Options", {"deny", "sameorigin"}},
                                                  {"X-XSS-Protection", {}},
                                                  {"Content-Security-Policy", {}}};
  return headers;
}

// One parse: the directory relative paths resolve against. Field paths and file positions come
// with each YamlValue (base/yaml_reader.h).
class Parser {
 public:
  explicit Parser(const std::string& base_dir) : base_dir_(base_dir) {}

  Status Parse(const YamlDocument& document, WebConfig& out) const;

 private:
  std::string Resolve(const std::string& path) const {
    if (path.empty() || base_dir_.empty() || path.front() == '/') return path;
    return (std::filesystem::path(base_dir_) / path).lexically_normal().string();
  }
  Status ParseTls(const YamlValue& node, TlsServerConfig& tls, bool& enabled, WebConfig& out) const;
  Status ParseTlsField(const YamlEntry& entry, TlsServerConfig& tls) const;
  Status CheckTls(const YamlValue& node, const TlsServerConfig& tls) const;
  Status ParseHttp(const YamlValue& node, WebConfig& out) const;
  Status ParseHeader(const YamlEntry& header, WebConfig& out) const;
  Status ParseUsers(const YamlValue& node, WebConfig& out) const;

  const std::string& base_dir_;
};

// A key with no value ("client_allowed_sans:") where security is configured: what a file cut
// at that line leaves, never accepted (issue 39). `{}`, `[]` or "" say "none" on purpose.
Status NoBareKey(const YamlValue& value) {
  if (!value.IsBare()) return Status::Ok();
  return value.Fail("has no value (a file cut at this line?); write {} or [] for none on purpose");
}

// An empty flow mapping, written on purpose; a bare key (null) is what truncation leaves.
bool EmptyMap(const YamlValue& value) { return value.IsMap() && value.size() == 0; }

// The booleans Go's yaml reads (True and TRUE too), unquoted: a quoted "true" or a YAML 1.1
// "yes"/"on" is an error, so a typo never flips a setting (Go's yaml.v2 refuses them too).
Result<bool> GoBool(const YamlValue& value) { return value.Bool(YamlBools::kCoreSchema); }

Result<int> Version(const YamlValue& value) {
  auto name = value.String();
  if (!name) return Error(name.error());
  if (*name == "TLS12") return kTls12;
  if (*name == "TLS13") return kTls13;
  if (*name == "TLS10" || *name == "TLS11") {
    return Error(value.Fail("\"" + *name +
                            "\" is not offered: fabricwatch serves TLS 1.2 and 1.3 only (use "
                            "TLS12 or TLS13)"));
  }
  return Error(value.Fail("unknown TLS version \"" + *name + "\" (use TLS12 or TLS13)"));
}

Result<ClientAuthType> ClientAuth(const YamlValue& value) {
  auto v = value.String();
  if (!v) return Error(v.error());
  static const std::vector<std::pair<std::string_view, ClientAuthType>> kTypes{
      {"", ClientAuthType::kNoClientCert},
      {"NoClientCert", ClientAuthType::kNoClientCert},
      {"RequestClientCert", ClientAuthType::kRequestClientCert},
      {"RequireAnyClientCert", ClientAuthType::kRequireAnyClientCert},
      {"RequireClientCert", ClientAuthType::kRequireAnyClientCert},  // exporter-toolkit alias
      {"VerifyClientCertIfGiven", ClientAuthType::kVerifyClientCertIfGiven},
      {"RequireAndVerifyClientCert", ClientAuthType::kRequireAndVerifyClientCert}};
  for (const auto& [name, type] : kTypes) {
    if (*v == name) return type;
  }
  return Error(value.Fail("invalid client_auth_type \"" + *v +
                          "\" (NoClientCert, RequestClientCert, RequireAnyClientCert, "
                          "VerifyClientCertIfGiven or RequireAndVerifyClientCert)"));
}

Status CipherSuites(const YamlValue& value, std::vector<CipherSuite>& out) {
  auto items = value.Items();
  if (!items) return items.error();
  for (const YamlValue& item : *items) {
    auto name = item.Scalar();
    if (!name) return name.error();
    auto known = std::find_if(kGoCipherSuites.begin(), kGoCipherSuites.end(),
                              [&](const KnownCipher& c) { return c.name == *name; });
    if (known == kGoCipherSuites.end()) {
      return item.Fail("unknown cipher \"" + *name + "\" (Go's tls.CipherSuites() names, README)");
    }
    out.push_back({*name, known->id, known->tls13});
  }
  return Status::Ok();
}

Status Curves(const YamlValue& value, std::vector<std::string>& out) {
  auto items = value.Items();
  if (!items) return items.error();
  for (const YamlValue& item : *items) {
    auto name = item.Scalar();
    if (!name) return name.error();
    auto known = std::find_if(kGoCurves.begin(), kGoCurves.end(),
                              [&](const auto& c) { return c.first == *name; });
    if (known == kGoCurves.end()) {
      return item.Fail("unknown curve \"" + *name +
                       "\" (CurveP256, CurveP384, CurveP521 or X25519)");
    }
    out.emplace_back(known->second);
  }
  return Status::Ok();
}

template <typename T>
Status Assign(Result<T> value, T& out) {
  if (!value) return value.error();
  out = std::move(*value);
  return Status::Ok();
}

Status Parser::ParseTlsField(const YamlEntry& entry, TlsServerConfig& tls) const {
  const std::string& key = entry.key;
  const YamlValue& value = entry.value;
  const std::vector<std::pair<std::string_view, std::string*>> strings{
      {"cert", &tls.cert},           {"key", &tls.key},
      {"client_ca", &tls.client_ca}, {"cert_file", &tls.cert_file},
      {"key_file", &tls.key_file},   {"client_ca_file", &tls.client_ca_file}};
  for (const auto& [name, target] : strings) {
    if (key != name) continue;
    auto v = value.String();
    if (!v) return v.error();
    *target = key.ends_with("_file") ? Resolve(*v) : *v;
    return Status::Ok();
  }
  if (key == "client_auth_type") return Assign(ClientAuth(value), tls.client_auth_type);
  if (key == "client_allowed_sans") return Assign(value.StringList(), tls.client_allowed_sans);
  if (key == "min_version") return Assign(Version(value), tls.min_version);
  if (key == "max_version") return Assign(Version(value), tls.max_version);
  if (key == "prefer_server_cipher_suites") {
    return Assign(GoBool(value), tls.prefer_server_cipher_suites);
  }
  if (key == "cipher_suites") return CipherSuites(value, tls.cipher_suites);
  return Curves(value, tls.curve_preferences);  // curve_preferences: CheckKeys admits no other
}

Status Parser::ParseTls(const YamlValue& node, TlsServerConfig& tls, bool& enabled,
                        WebConfig& out) const {
  static constexpr std::string_view kKnown[] = {"cert",
                                                "key",
                                                "client_ca",
                                                "cert_file",
                                                "key_file",
                                                "client_auth_type",
                                                "client_ca_file",
                                                "cipher_suites",
                                                "curve_preferences",
                                                "min_version",
                                                "max_version",
                                                "prefer_server_cipher_suites",
                                                "client_allowed_sans"};
  auto entries = node.Entries();
  if (!entries) return entries.error();
  if (Status s = node.CheckKeys(kKnown, "field"); !s.ok()) return s;
  for (const YamlEntry& entry : *entries) {
    if (Status bare = NoBareKey(entry.value); !bare.ok()) return bare;
    out.client_auth_type_given |= entry.key == "client_auth_type";
    out.client_allowed_sans_given |= entry.key == "client_allowed_sans";
    out.min_version_given |= entry.key == "min_version";
    if (Status s = ParseTlsField(entry, tls); !s.ok()) return s;
  }
  // exporter-toolkit's TLSConfig.IsEnabled: TLS is on when any of these is set.
  enabled = !tls.cert_file.empty() || !tls.cert.empty() || !tls.key_file.empty() ||
            !tls.key.empty() || !tls.client_ca_file.empty() || !tls.client_ca.empty() ||
            out.client_auth_type_given;
  if (!enabled) {
    if (!entries->empty()) {
      return node.Fail(
          "settings without a certificate: give cert_file and key_file (or cert and key), or "
          "remove tls_server_config");
    }
    return Status::Ok();
  }
  return CheckTls(node, tls);
}

// The cross-field rules: exporter-toolkit's validateTLSPaths and ConfigToTLSConfig, plus the
// combinations Go accepts but that cannot do what they say (README "Security"). Each names the
// field it is about, at the field's line when it is given.
Status Parser::CheckTls(const YamlValue& node, const TlsServerConfig& tls) const {
  if (tls.cert_file.empty() == tls.cert.empty()) {
    return node.Fail("give exactly one of cert_file and cert");
  }
  if (tls.key_file.empty() == tls.key.empty()) {
    return node.Fail("give exactly one of key_file and key");
  }
  if (!tls.client_ca_file.empty() && !tls.client_ca.empty()) {
    return node.Fail("give at most one of client_ca_file and client_ca");
  }
  const bool has_ca = !tls.client_ca_file.empty() || !tls.client_ca.empty();
  if (has_ca && tls.client_auth_type == ClientAuthType::kNoClientCert) {
    return node.Get("client_auth_type")
        .Fail("a client CA is configured without a client_auth_type that asks for a certificate");
  }
  const bool verifies = tls.client_auth_type == ClientAuthType::kVerifyClientCertIfGiven ||
                        tls.client_auth_type == ClientAuthType::kRequireAndVerifyClientCert;
  if (verifies && !has_ca) {
    return node.Get("client_ca_file")
        .Fail("client_auth_type " + std::string(ClientAuthTypeName(tls.client_auth_type)) +
              " needs client_ca_file (or client_ca) to verify against");
  }
  if (!tls.client_allowed_sans.empty() && tls.client_auth_type == ClientAuthType::kNoClientCert) {
    return node.Get("client_allowed_sans")
        .Fail("needs a client_auth_type that asks for a client certificate");
  }
  if (tls.min_version > tls.max_version) {
    return node.Get("min_version").Fail("is above max_version");
  }
  return Status::Ok();
}

Status Parser::ParseHeader(const YamlEntry& header, WebConfig& out) const {
  const auto& allowed = AllowedHeaders();
  auto it = std::find_if(allowed.begin(), allowed.end(),
                         [&](const auto& h) { return h.name == header.key; });
  if (it == allowed.end()) {
    return header.value.Fail(
        "this header can not be configured (exporter-toolkit allows Content-Security-Policy, "
        "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security)");
  }
  auto v = header.value.String();
  if (!v) return v.error();
  if (!it->values.empty() &&
      std::find(it->values.begin(), it->values.end(), *v) == it->values.end()) {
    std::string names;
    for (auto a : it->values) names += " \"" + std::string(a) + "\"";
    return header.value.Fail("must be one of" + names);
  }
  if (std::any_of(v->begin(), v->end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    return header.value.Fail("control characters are not allowed");
  }
  if (!v->empty()) out.headers.emplace_back(header.key, *v);  // blank: unset
  return Status::Ok();
}

Status Parser::ParseHttp(const YamlValue& node, WebConfig& out) const {
  static constexpr std::string_view kKnown[] = {"headers", "http2"};
  auto entries = node.Entries();
  if (!entries) return entries.error();
  if (Status s = node.CheckKeys(kKnown, "field"); !s.ok()) return s;
  for (const YamlEntry& entry : *entries) {
    if (entry.key == "http2") {
      if (Status s = Assign(GoBool(entry.value), out.http2); !s.ok()) return s;
      out.http2_given = true;
      continue;
    }
    auto headers = entry.value.Entries();  // headers: CheckKeys admits no other
    if (!headers) return headers.error();
    for (const YamlEntry& header : *headers) {
      if (Status s = ParseHeader(header, out); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

Status Parser::ParseUsers(const YamlValue& node, WebConfig& out) const {
  auto users = node.Entries();
  if (!users) return users.error();
  for (const YamlEntry& user : *users) {
    if (user.key.find(':') != std::string::npos) {
      return user.value.Fail(
          "a user name with ':' can never log in (RFC 7617 splits the credentials at the first "
          "colon)");
    }
    auto hash = user.value.String();
    if (!hash) return hash.error();
    if (Status s = ValidateBcryptHash(*hash); !s.ok()) return user.value.Fail(s.message());
    out.basic_auth_users.emplace(user.key, *hash);
  }
  return Status::Ok();
}

Status Parser::Parse(const YamlDocument& document, WebConfig& out) const {
  out.source = document.source();
  if (document.empty()) {
    return document.Fail(
        "is empty: an emptied or truncated web config never means plain HTTP without "
        "authentication; write tls_server_config: {} to serve plain HTTP on purpose");
  }
  static constexpr std::string_view kKnown[] = {"tls_server_config", "http_server_config",
                                                "basic_auth_users", "rate_limit"};
  const YamlValue& root = document.root();
  auto entries = root.Entries();
  if (!entries) return entries.error();
  if (Status s = root.CheckKeys(kKnown, "field"); !s.ok()) return s;
  for (const YamlEntry& entry : *entries) {
    Status s = Status::Ok();
    if (entry.key == "tls_server_config") {
      if (Status bare = NoBareKey(entry.value); !bare.ok()) return bare;
      out.tls_explicitly_off = EmptyMap(entry.value);
      s = ParseTls(entry.value, out.tls, out.tls_enabled, out);
    } else if (entry.key == "http_server_config") {
      s = ParseHttp(entry.value, out);
    } else if (entry.key == "basic_auth_users") {
      if (Status bare = NoBareKey(entry.value); !bare.ok()) return bare;
      out.basic_auth_explicitly_off = EmptyMap(entry.value);
      s = ParseUsers(entry.value, out);
    } else {
      s = entry.value.Fail(
          "not supported by fabricwatch (the HTTP server bounds connections itself; README "
          "\"Security\")");
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

std::string_view ClientAuthTypeName(ClientAuthType type) {
  switch (type) {
    case ClientAuthType::kNoClientCert:
      return "NoClientCert";
    case ClientAuthType::kRequestClientCert:
      return "RequestClientCert";
    case ClientAuthType::kRequireAnyClientCert:
      return "RequireAnyClientCert";
    case ClientAuthType::kVerifyClientCertIfGiven:
      return "VerifyClientCertIfGiven";
    case ClientAuthType::kRequireAndVerifyClientCert:
      return "RequireAndVerifyClientCert";
  }
  return "?";
}

std::vector<std::string> WebConfig::NamedFiles() const {
  std::vector<std::string> files;
  for (const std::string* f : {&tls.cert_file, &tls.key_file, &tls.client_ca_file}) {
    if (tls_enabled && !f->empty()) files.push_back(*f);
  }
  return files;
}

Status ValidateBcryptHash(std::string_view hash) {
  auto bad = [](std::string_view what) {
    return Status(StatusCode::kInvalidArgument, "not a bcrypt hash: " + std::string(what) +
                                                    " (want $2b$10$ and 53 characters, e.g. "
                                                    "from htpasswd -nBC 10 \"\")");
  };
  if (hash.size() < 7 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$') {
    return bad("it does not start like $2b$NN$");
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') {
    return bad("the variant must be $2a$, $2b$ or $2y$");
  }
  if (!std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5]))) {
    return bad("the cost must be two digits");
  }
  const int cost = BcryptCost(hash);
  if (cost < 4 || cost > 31) return bad("the cost must be 4 to 31");
  if (hash.size() != 60) {
    return bad("it is " + std::to_string(hash.size()) + " characters long, not 60");
  }
  for (char c : hash.substr(7)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '/') {
      return bad("salt and hash must be bcrypt base64 ([./A-Za-z0-9])");
    }
  }
  return Status::Ok();
}

int BcryptCost(std::string_view hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

Result<WebConfig> ParseWebConfig(std::string_view yaml_text, const std::string& source,
                                 const std::string& base_dir) {
  auto document = YamlDocument::Parse(yaml_text, source);
  if (!document) return Error(document.error());
  WebConfig config;
  if (Status s = Parser(base_dir).Parse(*document, config); !s.ok()) return Error(s);
  return config;
}

Result<WebConfig> LoadWebConfigFile(const std::string& path) {
  auto file =
      sys::ReadBoundedFile(path, {.kind = "web config file", .max_bytes = kMaxWebConfigBytes});
  if (!file) return Error(file.error());
  return ParseWebConfig(file->text, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace fabricwatch::exporter
