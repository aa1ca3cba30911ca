#include "exporter/http/web_security_metrics.h"

namespace fabricwatch::exporter {
namespace {

constexpr MetricDesc kReloads{
    "fabricwatch_web_config_reloads_total",
    "Loads of --web.config.file (the first at start included) by outcome: loaded; failed (not "
    "readable, empty or invalid; the running generation is kept); refused (it would have turned "
    "TLS, basic auth or the client-certificate check off by a missing field; kept as well).",
    MetricKind::kCounter,
    {"outcome"}};
constexpr MetricDesc kChanges{
    "fabricwatch_web_config_security_changes_total",
    "Security changes made by a web-config reload, by change: tls_off, tls_on, basic_auth_off, "
    "basic_auth_on, client_cert_weaker, client_cert_stronger, client_sans_off, client_sans_on, "
    "min_version_lower, min_version_higher (each also logged at warning).",
    MetricKind::kCounter,
    {"change"}};
constexpr MetricDesc kProtection{
    "fabricwatch_web_protection_enabled",
    "1 when the serving web configuration has the protection on: tls, basic_auth, client_cert "
    "(client certificates verified: VerifyClientCertIfGiven or RequireAndVerifyClientCert).",
    MetricKind::kGauge,
    {"protection"}};

constexpr MetricDesc kAll[] = {kReloads, kChanges, kProtection};
constexpr std::string_view kOutcomeNames[WebSecurity::kOutcomes] = {"loaded", "failed", "refused"};

}  // namespace

std::span<const MetricDesc> WebSecurityMetricDescs() { return kAll; }

void ExportWebSecurity(const WebSecurity& security, MetricSink& sink) {
  const WebSecurity::Stats stats = security.stats();
  const auto d = [](uint64_t v) { return static_cast<double>(v); };
  if (!security.path().empty()) {
    for (size_t i = 0; i < WebSecurity::kOutcomes; ++i) {
      sink.Add(kReloads, {{"outcome", kOutcomeNames[i]}}, d(stats.reloads[i]));
    }
    for (size_t i = 0; i < std::size(kSecurityChangeKinds); ++i) {
      sink.Add(kChanges, {{"change", kSecurityChangeKinds[i]}}, d(stats.changes[i]));
    }
  }
  const SecurityLevel& level = security.Current()->level();
  const bool verified = level.client_auth == ClientAuthType::kVerifyClientCertIfGiven ||
                        level.client_auth == ClientAuthType::kRequireAndVerifyClientCert;
  sink.Add(kProtection, {{"protection", "tls"}}, level.tls ? 1 : 0);
  sink.Add(kProtection, {{"protection", "basic_auth"}}, level.basic_auth ? 1 : 0);
  sink.Add(kProtection, {{"protection", "client_cert"}}, verified ? 1 : 0);
}

}  // namespace fabricwatch::exporter
