#include "exporter/http/web_security_rules.h"

namespace fabricwatch::exporter {
namespace {

// How much a client-certificate policy checks: none, asked for, required unverified or verified
// when given, required and verified (Go crypto/tls ClientAuthType, in that order of strength;
// RequireAnyClientCert and VerifyClientCertIfGiven each check something the other does not, so
// they rank alike and a move between them is not called weaker).
int Strength(ClientAuthType type) {
  switch (type) {
    case ClientAuthType::kNoClientCert:
      return 0;
    case ClientAuthType::kRequestClientCert:
      return 1;
    case ClientAuthType::kRequireAnyClientCert:
    case ClientAuthType::kVerifyClientCertIfGiven:
      return 2;
    case ClientAuthType::kRequireAndVerifyClientCert:
      return 3;
  }
  return 0;
}

}  // namespace

SecurityLevel LevelOf(const WebConfig& config) {
  const bool tls = config.tls_enabled;
  return SecurityLevel{
      .tls = tls,
      .client_auth = tls ? config.tls.client_auth_type : ClientAuthType::kNoClientCert,
      .basic_auth = !config.basic_auth_users.empty(),
      .client_sans_restricted = tls && !config.tls.client_allowed_sans.empty(),
      .min_version = tls ? config.tls.min_version : 0};
}

Status CheckNoSilentWeakening(const SecurityLevel& running, const WebConfig& next) {
  const SecurityLevel level = LevelOf(next);
  std::string refused;
  const auto add = [&refused](const std::string& what) {
    refused += (refused.empty() ? "" : "; ") + what;
  };
  if (running.tls && !level.tls && !next.tls_explicitly_off) {
    add("it has no TLS certificate, which would turn TLS off (write tls_server_config: {} to "
        "serve plain HTTP on purpose)");
  }
  if (running.basic_auth && !level.basic_auth && !next.basic_auth_explicitly_off) {
    add("it has no basic_auth_users, which would turn basic auth off (write basic_auth_users: {} "
        "to turn it off on purpose)");
  }
  if (level.tls && Strength(level.client_auth) < Strength(running.client_auth) &&
      !next.client_auth_type_given) {
    add("it has no client_auth_type, which would weaken the client-certificate check from " +
        std::string(ClientAuthTypeName(running.client_auth)) + " to " +
        std::string(ClientAuthTypeName(level.client_auth)) + " (write client_auth_type: to do so)");
  }
  if (level.tls && running.client_sans_restricted && !level.client_sans_restricted &&
      !next.client_allowed_sans_given) {
    add("it has no client_allowed_sans, which would accept any client certificate of the CA "
        "(write client_allowed_sans: [] to do so)");
  }
  if (level.tls && running.tls && level.min_version < running.min_version &&
      !next.min_version_given) {
    add("it has no min_version, which would lower the lowest TLS version (write min_version: to "
        "do so)");
  }
  if (refused.empty()) return Status::Ok();
  return Status(
      StatusCode::kFailedPrecondition,
      next.source + ": refused, a reload never weakens security by a missing field: " + refused);
}

std::vector<SecurityChange> SecurityChanges(const SecurityLevel& before,
                                            const SecurityLevel& after) {
  std::vector<SecurityChange> changes;
  if (before.tls != after.tls) {
    changes.push_back(after.tls ? SecurityChange{"tls_on", false, "TLS turned on"}
                                : SecurityChange{"tls_off", true, "TLS turned off"});
  }
  if (before.basic_auth != after.basic_auth) {
    changes.push_back(after.basic_auth
                          ? SecurityChange{"basic_auth_on", false, "basic auth turned on"}
                          : SecurityChange{"basic_auth_off", true, "basic auth turned off"});
  }
  const int was = Strength(before.client_auth), now = Strength(after.client_auth);
  if (before.tls && after.tls && was != now) {
    const std::string text = "client_auth_type " +
                             std::string(ClientAuthTypeName(before.client_auth)) + " -> " +
                             std::string(ClientAuthTypeName(after.client_auth));
    changes.push_back(now < was ? SecurityChange{"client_cert_weaker", true, text}
                                : SecurityChange{"client_cert_stronger", false, text});
  }
  if (before.tls && after.tls && before.client_sans_restricted != after.client_sans_restricted) {
    changes.push_back(after.client_sans_restricted
                          ? SecurityChange{"client_sans_on", false, "client_allowed_sans set"}
                          : SecurityChange{"client_sans_off", true,
                                           "client_allowed_sans removed: any certificate of the "
                                           "client CA is accepted"});
  }
  if (before.tls && after.tls && before.min_version != after.min_version) {
    const bool lower = after.min_version < before.min_version;
    changes.push_back(
        SecurityChange{lower ? "min_version_lower" : "min_version_higher", lower,
                       lower ? "min_version lowered to TLS 1.2" : "min_version raised to TLS 1.3"});
  }
  return changes;
}

}  // namespace fabricwatch::exporter
