// libFuzzer target for the --web.config.file parser (exporter/http/web_config.h, issue 19): any
// bytes as the file. Seeds: tools/fuzz/seeds/web_config/.
//
// Besides the sanitizers' checks, every accepted config must honour what the parser promises:
// no exception escapes, TLS on means exactly one certificate and one key source, versions are
// TLS 1.2/1.3 with min <= max, a CA only with a client_auth_type that asks for a certificate,
// headers only the five exporter-toolkit allows, every user's hash a valid bcrypt hash, and every
// error names the file.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "exporter/http/web_config.h"

namespace {

using fabricwatch::exporter::ClientAuthType;
using fabricwatch::exporter::kTls12;
using fabricwatch::exporter::kTls13;
using fabricwatch::exporter::WebConfig;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckAccepted(const WebConfig& c) {
  const auto& t = c.tls;
  if (c.tls_enabled) {
    Check(t.cert_file.empty() != t.cert.empty(), "one certificate source");
    Check(t.key_file.empty() != t.key.empty(), "one key source");
    Check(t.client_ca_file.empty() || t.client_ca.empty(), "at most one CA source");
    const bool has_ca = !t.client_ca_file.empty() || !t.client_ca.empty();
    Check(!has_ca || t.client_auth_type != ClientAuthType::kNoClientCert, "CA needs client auth");
  }
  Check(t.min_version == kTls12 || t.min_version == kTls13, "min_version 1.2/1.3");
  Check(t.max_version == kTls12 || t.max_version == kTls13, "max_version 1.2/1.3");
  Check(t.min_version <= t.max_version, "min <= max");
  for (const auto& [name, value] : c.headers) {
    Check(name == "Strict-Transport-Security" || name == "X-Content-Type-Options" ||
              name == "X-Frame-Options" || name == "X-XSS-Protection" ||
              name == "Content-Security-Policy",
          "allowed header");
    Check(!value.empty() && value.find_first_of("\r\n") == std::string::npos, "header value");
  }
  for (const auto& [user, hash] : c.basic_auth_users) {
    Check(fabricwatch::exporter::ValidateBcryptHash(hash).ok(), "bcrypt hash");
    Check(user.find(':') == std::string::npos, "user without colon");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto config = fabricwatch::exporter::ParseWebConfig(text, "fuzz.yml", "/base");
    if (config) {
      CheckAccepted(*config);
    } else {
      Check(config.error().message().rfind("fuzz.yml", 0) == 0, "error names the file");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "invariant violated: exception escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
