#include "exporter/http/web_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "collectors/core/yaml_checks.h"
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

// One parse: the file name for errors and the directory relative paths resolve against.
class Parser {
 public:
  Parser(const std::string& source, const std::string& base_dir)
      : source_(source), base_dir_(base_dir) {}

  Status Parse(const YAML::Node& root, WebConfig& out);

 private:
  Status Fail(const YAML::Node& node, std::string_view field, std::string_view what) const {
    std::string where = source_;
    const YAML::Mark mark = node.Mark();
    if (!mark.is_null()) {
      where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    if (!field.empty()) where += ": " + std::string(field);
    return Status(StatusCode::kInvalidArgument, where + ": " + std::string(what));
  }

  // Calls `each(key, value)` for every entry of a mapping (null: none). Unknown keys (not in
  // `known`, when given) and duplicate keys are errors.
  Status ForEach(const YAML::Node& node, const std::string& field,
                 const std::vector<std::string_view>* known,
                 const std::function<Status(const std::string&, const YAML::Node&)>& each) const;
  Result<std::string> String(const YAML::Node& node, std::string_view field) const;
  Result<bool> Bool(const YAML::Node& node, std::string_view field) const;
  Result<std::vector<std::pair<std::string, YAML::Node>>> List(const YAML::Node& node,
                                                               std::string_view field) const;
  Result<int> Version(const YAML::Node& node, std::string_view field) const;
  std::string Resolve(const std::string& path) const {
    if (path.empty() || base_dir_.empty() || path.front() == '/') return path;
    return (std::filesystem::path(base_dir_) / path).lexically_normal().string();
  }
  Status ParseTls(const YAML::Node& node, TlsServerConfig& tls, bool& enabled,
                  WebConfig& out) const;
  // A key with no value ("client_allowed_sans:") where security is configured: what a file cut
  // at that line leaves, never accepted (issue 39). `{}`, `[]` or "" say "none" on purpose.
  Status NoBareKey(const YAML::Node& value, const std::string& field) const {
    if (!value.IsNull() || value.Tag() == "tag:yaml.org,2002:null") return Status::Ok();
    return Fail(value, field,
                "has no value (a file cut at this line?); write {} or [] for none on purpose");
  }
  Status ParseTlsField(const std::string& key, const YAML::Node& value, TlsServerConfig& tls) const;
  Status CheckTls(const YAML::Node& node, const TlsServerConfig& tls) const;
  Status ParseHttp(const YAML::Node& node, WebConfig& out) const;
  Status ParseUsers(const YAML::Node& node, WebConfig& out) const;

  const std::string& source_;
  const std::string& base_dir_;
};

Status Parser::ForEach(
    const YAML::Node& node, const std::string& field, const std::vector<std::string_view>* known,
    const std::function<Status(const std::string&, const YAML::Node&)>& each) const {
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) return Fail(node, field, "must be a mapping");
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return Fail(entry.first, field, "keys must be strings");
    const std::string key = entry.first.Scalar();
    const std::string path = field.empty() ? key : field + "." + key;
    if (!seen.insert(key).second) return Fail(entry.first, path, "duplicate key");
    if (known != nullptr && std::find(known->begin(), known->end(), key) == known->end()) {
      std::string names;
      for (std::string_view k : *known) names += (names.empty() ? "" : ", ") + std::string(k);
      return Fail(entry.first, path, "unknown field (supported: " + names + ")");
    }
    if (Status s = each(key, entry.second); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::string> Parser::String(const YAML::Node& node, std::string_view field) const {
  if (node.IsNull()) return std::string();
  if (!node.IsScalar()) return Error(Fail(node, field, "must be a string"));
  return node.Scalar();
}

// YAML booleans only, unquoted: a quoted "true" or a YAML 1.1 "yes"/"on" is an error, so a typo
// never flips a setting (Go's yaml.v2 refuses a quoted string for a bool too).
Result<bool> Parser::Bool(const YAML::Node& node, std::string_view field) const {
  if (node.IsScalar() && node.Tag() != "!") {
    const std::string& v = node.Scalar();
    if (v == "true" || v == "True" || v == "TRUE") return true;
    if (v == "false" || v == "False" || v == "FALSE") return false;
  }
  return Error(Fail(node, field, "must be true or false"));
}

Result<std::vector<std::pair<std::string, YAML::Node>>> Parser::List(const YAML::Node& node,
                                                                     std::string_view field) const {
  std::vector<std::pair<std::string, YAML::Node>> items;
  if (node.IsNull()) return items;
  if (!node.IsSequence()) return Error(Fail(node, field, "must be a list of strings"));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) return Error(Fail(item, field, "must be a list of strings"));
    items.emplace_back(item.Scalar(), item);
  }
  return items;
}

Result<int> Parser::Version(const YAML::Node& node, std::string_view field) const {
  auto name = String(node, field);
  if (!name) return Error(name.error());
  if (*name == "TLS12") return kTls12;
  if (*name == "TLS13") return kTls13;
  if (*name == "TLS10" || *name == "TLS11") {
    return Error(Fail(node, field,
                      "\"" + *name +
                          "\" is not offered: fabricwatch serves TLS 1.2 and 1.3 only "
                          "(use TLS12 or TLS13)"));
  }
  return Error(Fail(node, field, "unknown TLS version \"" + *name + "\" (use TLS12 or TLS13)"));
}

Status Parser::ParseTlsField(const std::string& key, const YAML::Node& value,
                             TlsServerConfig& tls) const {
  const std::string field = "tls_server_config." + key;
  const std::vector<std::pair<std::string_view, std::string*>> strings{
      {"cert", &tls.cert},           {"key", &tls.key},
      {"client_ca", &tls.client_ca}, {"cert_file", &tls.cert_file},
      {"key_file", &tls.key_file},   {"client_ca_file", &tls.client_ca_file}};
  for (const auto& [name, target] : strings) {
    if (key != name) continue;
    auto v = String(value, field);
    if (!v) return v.error();
    *target = key.ends_with("_file") ? Resolve(*v) : *v;
    return Status::Ok();
  }
  if (key == "client_auth_type") {
    auto v = String(value, field);
    if (!v) return v.error();
    static const std::vector<std::pair<std::string_view, ClientAuthType>> kTypes{
        {"", ClientAuthType::kNoClientCert},
        {"NoClientCert", ClientAuthType::kNoClientCert},
        {"RequestClientCert", ClientAuthType::kRequestClientCert},
        {"RequireAnyClientCert", ClientAuthType::kRequireAnyClientCert},
        {"RequireClientCert", ClientAuthType::kRequireAnyClientCert},  // exporter-toolkit alias
        {"VerifyClientCertIfGiven", ClientAuthType::kVerifyClientCertIfGiven},
        {"RequireAndVerifyClientCert", ClientAuthType::kRequireAndVerifyClientCert}};
    for (const auto& [name, type] : kTypes) {
      if (*v == name) {
        tls.client_auth_type = type;
        return Status::Ok();
      }
    }
    return Fail(value, field,
                "invalid client_auth_type \"" + *v +
                    "\" (NoClientCert, RequestClientCert, RequireAnyClientCert, "
                    "VerifyClientCertIfGiven or RequireAndVerifyClientCert)");
  }
  if (key == "client_allowed_sans") {
    auto items = List(value, field);
    if (!items) return items.error();
    for (auto& item : *items) tls.client_allowed_sans.push_back(item.first);
    return Status::Ok();
  }
  if (key == "min_version" || key == "max_version") {
    auto v = Version(value, field);
    if (!v) return v.error();
    (key == "min_version" ? tls.min_version : tls.max_version) = *v;
    return Status::Ok();
  }
  if (key == "prefer_server_cipher_suites") {
    auto v = Bool(value, field);
    if (!v) return v.error();
    tls.prefer_server_cipher_suites = *v;
    return Status::Ok();
  }
  if (key == "cipher_suites") {
    auto items = List(value, field);
    if (!items) return items.error();
    for (const auto& item : *items) {
      const std::string& name = item.first;
      const YAML::Node& node = item.second;
      auto known = std::find_if(kGoCipherSuites.begin(), kGoCipherSuites.end(),
                                [&](const KnownCipher& c) { return c.name == name; });
      if (known == kGoCipherSuites.end()) {
        return Fail(node, field,
                    "unknown cipher \"" + name + "\" (Go's tls.CipherSuites() names, README)");
      }
      tls.cipher_suites.push_back({name, known->id, known->tls13});
    }
    return Status::Ok();
  }
  // curve_preferences (the list of known keys admits nothing else).
  auto items = List(value, field);
  if (!items) return items.error();
  for (const auto& item : *items) {
    const std::string& name = item.first;
    const YAML::Node& node = item.second;
    auto known = std::find_if(kGoCurves.begin(), kGoCurves.end(),
                              [&](const auto& c) { return c.first == name; });
    if (known == kGoCurves.end()) {
      return Fail(node, field,
                  "unknown curve \"" + name + "\" (CurveP256, CurveP384, CurveP521 or X25519)");
    }
    tls.curve_preferences.emplace_back(known->second);
  }
  return Status::Ok();
}

Status Parser::ParseTls(const YAML::Node& node, TlsServerConfig& tls, bool& enabled,
                        WebConfig& out) const {
  static const std::vector<std::string_view> kKnown{"cert",
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
  Status s = ForEach(node, "tls_server_config", &kKnown,
                     [&](const std::string& key, const YAML::Node& value) {
                       if (Status bare = NoBareKey(value, "tls_server_config." + key); !bare.ok()) {
                         return bare;
                       }
                       out.client_auth_type_given |= key == "client_auth_type";
                       out.client_allowed_sans_given |= key == "client_allowed_sans";
                       out.min_version_given |= key == "min_version";
                       return ParseTlsField(key, value, tls);
                     });
  if (!s.ok()) return s;
  // exporter-toolkit's TLSConfig.IsEnabled: TLS is on when any of these is set.
  enabled = !tls.cert_file.empty() || !tls.cert.empty() || !tls.key_file.empty() ||
            !tls.key.empty() || !tls.client_ca_file.empty() || !tls.client_ca.empty() ||
            out.client_auth_type_given;
  if (!enabled) {
    if (!node.IsNull() && node.size() > 0) {
      return Fail(node, "tls_server_config",
                  "settings without a certificate: give cert_file and key_file (or cert and "
                  "key), or remove tls_server_config");
    }
    return Status::Ok();
  }
  return CheckTls(node, tls);
}

// The cross-field rules: exporter-toolkit's validateTLSPaths and ConfigToTLSConfig, plus the
// combinations Go accepts but that cannot do what they say (README "Security").
Status Parser::CheckTls(const YAML::Node& node, const TlsServerConfig& tls) const {
  const std::string field = "tls_server_config";
  if (tls.cert_file.empty() == tls.cert.empty()) {
    return Fail(node, field, "give exactly one of cert_file and cert");
  }
  if (tls.key_file.empty() == tls.key.empty()) {
    return Fail(node, field, "give exactly one of key_file and key");
  }
  if (!tls.client_ca_file.empty() && !tls.client_ca.empty()) {
    return Fail(node, field, "give at most one of client_ca_file and client_ca");
  }
  const bool has_ca = !tls.client_ca_file.empty() || !tls.client_ca.empty();
  if (has_ca && tls.client_auth_type == ClientAuthType::kNoClientCert) {
    return Fail(node, field + ".client_auth_type",
                "a client CA is configured without a client_auth_type that asks for a "
                "certificate");
  }
  const bool verifies = tls.client_auth_type == ClientAuthType::kVerifyClientCertIfGiven ||
                        tls.client_auth_type == ClientAuthType::kRequireAndVerifyClientCert;
  if (verifies && !has_ca) {
    return Fail(node, field + ".client_ca_file",
                "client_auth_type " + std::string(ClientAuthTypeName(tls.client_auth_type)) +
                    " needs client_ca_file (or client_ca) to verify against");
  }
  if (!tls.client_allowed_sans.empty() && tls.client_auth_type == ClientAuthType::kNoClientCert) {
    return Fail(node, field + ".client_allowed_sans",
                "needs a client_auth_type that asks for a client certificate");
  }
  if (tls.min_version > tls.max_version) {
    return Fail(node, field + ".min_version", "is above max_version");
  }
  return Status::Ok();
}

Status Parser::ParseHttp(const YAML::Node& node, WebConfig& out) const {
  static const std::vector<std::string_view> kKnown{"headers", "http2"};
  return ForEach(
      node, "http_server_config", &kKnown, [&](const std::string& key, const YAML::Node& value) {
        if (key == "http2") {
          auto v = Bool(value, "http_server_config.http2");
          if (!v) return v.error();
          out.http2 = *v;
          out.http2_given = true;
          return Status::Ok();
        }
        return ForEach(value, "http_server_config.headers", nullptr,
                       [&](const std::string& name, const YAML::Node& header) {
                         const std::string field = "http_server_config.headers." + name;
                         const auto& allowed = AllowedHeaders();
                         auto it = std::find_if(allowed.begin(), allowed.end(),
                                                [&](const auto& h) { return h.name == name; });
                         if (it == allowed.end()) {
                           return Fail(header, field,
                                       "this header can not be configured (exporter-toolkit "
                                       "allows Content-Security-Policy, X-Frame-Options, "
                                       "X-Content-Type-Options, X-XSS-Protection, "
                                       "Strict-Transport-Security)");
                         }
                         auto v = String(header, field);
                         if (!v) return v.error();
                         if (!it->values.empty() && std::find(it->values.begin(), it->values.end(),
                                                              *v) == it->values.end()) {
                           std::string names;
                           for (auto a : it->values) names += " \"" + std::string(a) + "\"";
                           return Fail(header, field, "must be one of" + names);
                         }
                         if (std::any_of(v->begin(), v->end(),
                                         [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
                           return Fail(header, field, "control characters are not allowed");
                         }
                         if (!v->empty()) out.headers.emplace_back(name, *v);  // blank: unset
                         return Status::Ok();
                       });
      });
}

Status Parser::ParseUsers(const YAML::Node& node, WebConfig& out) const {
  return ForEach(node, "basic_auth_users", nullptr,
                 [&](const std::string& user, const YAML::Node& value) {
                   const std::string field = "basic_auth_users." + user;
                   if (user.find(':') != std::string::npos) {
                     return Fail(value, field,
                                 "a user name with ':' can never log in (RFC 7617 splits the "
                                 "credentials at the first colon)");
                   }
                   auto hash = String(value, field);
                   if (!hash) return hash.error();
                   if (Status s = ValidateBcryptHash(*hash); !s.ok()) {
                     return Fail(value, field, s.message());
                   }
                   out.basic_auth_users.emplace(user, *hash);
                   return Status::Ok();
                 });
}

Status Parser::Parse(const YAML::Node& root, WebConfig& out) {
  out.source = source_;
  if (root.IsNull()) {
    return Fail(root, "",
                "is empty: an emptied or truncated web config never means plain HTTP without "
                "authentication; write tls_server_config: {} to serve plain HTTP on purpose");
  }
  static const std::vector<std::string_view> kKnown{"tls_server_config", "http_server_config",
                                                    "basic_auth_users", "rate_limit"};
  // An empty flow mapping, written on purpose; a bare key (null) is what truncation leaves.
  const auto empty_map = [](const YAML::Node& value) { return value.IsMap() && value.size() == 0; };
  return ForEach(root, "", &kKnown, [&](const std::string& key, const YAML::Node& value) {
    if (key == "tls_server_config") {
      if (Status bare = NoBareKey(value, key); !bare.ok()) return bare;
      out.tls_explicitly_off = empty_map(value);
      return ParseTls(value, out.tls, out.tls_enabled, out);
    }
    if (key == "http_server_config") return ParseHttp(value, out);
    if (key == "basic_auth_users") {
      if (Status bare = NoBareKey(value, key); !bare.ok()) return bare;
      out.basic_auth_explicitly_off = empty_map(value);
      return ParseUsers(value, out);
    }
    return Fail(value, key,
                "not supported by fabricwatch (the HTTP server bounds connections itself; "
                "README \"Security\")");
  });
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
  auto loaded = LoadStrictYaml(yaml_text, source);
  if (!loaded) return Error(loaded.error());
  YAML::Node root = std::move(*loaded);  // not const: operator[] const on an absent key throws
  WebConfig config;
  Parser parser(source, base_dir);
  try {
    if (Status s = parser.Parse(root, config); !s.ok()) return Error(s);
  } catch (const YAML::Exception& e) {
    return Error(StatusCode::kInvalidArgument, source + ": " + e.what());
  }
  return config;
}

Result<WebConfig> LoadWebConfigFile(const std::string& path) {
  auto file =
      sys::ReadBoundedFile(path, {.kind = "web config file", .max_bytes = kMaxWebConfigBytes});
  if (!file) return Error(file.error());
  return ParseWebConfig(file->text, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace fabricwatch::exporter
