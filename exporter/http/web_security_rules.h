#pragma once
// The fail-closed rule of a web-config reload (issue 39; README "Security"): a reload, by file
// change or SIGHUP, may never weaken TLS, basic auth or client-certificate verification that the
// running generation has unless the new file says so with a field (web_config.h
// tls_explicitly_off, basic_auth_explicitly_off, client_auth_type_given, client_allowed_sans_given,
// min_version_given). An emptied or truncated
// file leaves fields out; it never says so, so it can never open the port. Pure: no I/O, no log.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "exporter/http/web_config.h"

namespace fabricwatch::exporter {

// What a generation protects.
struct SecurityLevel {
  bool tls = false;
  ClientAuthType client_auth = ClientAuthType::kNoClientCert;
  bool basic_auth = false;
  bool client_sans_restricted = false;  // client_allowed_sans non-empty (with TLS)
  int min_version = 0;                  // TLS only; kTls12 or kTls13
  friend bool operator==(const SecurityLevel&, const SecurityLevel&) = default;
};

SecurityLevel LevelOf(const WebConfig& config);

// Ok, or kFailedPrecondition naming each protection `next` drops by leaving a field out, and
// the field that would drop it on purpose.
Status CheckNoSilentWeakening(const SecurityLevel& running, const WebConfig& next);

// One security-relevant difference between two generations, for the log (warning when weaker)
// and fabricwatch_web_config_security_changes_total{change}.
struct SecurityChange {
  std::string_view change;  // one of kSecurityChangeKinds
  bool weaker = false;
  std::string text;  // "TLS turned off (tls_server_config: {})"
};
inline constexpr std::string_view kSecurityChangeKinds[] = {"tls_off",
                                                            "tls_on",
                                                            "basic_auth_off",
                                                            "basic_auth_on",
                                                            "client_cert_weaker",
                                                            "client_cert_stronger",
                                                            "client_sans_off",
                                                            "client_sans_on",
                                                            "min_version_lower",
                                                            "min_version_higher"};
std::vector<SecurityChange> SecurityChanges(const SecurityLevel& before,
                                            const SecurityLevel& after);

}  // namespace fabricwatch::exporter
