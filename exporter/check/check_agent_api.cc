#include "exporter/check/check_agent_api.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include "collectors/sys/curl_library.h"

namespace fabricwatch::exporter::check {
namespace {

struct Body {
  std::string text;
  bool too_large = false;
};

size_t Append(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t n = size * count;
  if (body->text.size() + n > kMaxAgentBodyBytes) {
    body->too_large = true;
    return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
  }
  body->text.append(data, n);
  return n;
}

Result<detect::Severity> SeverityOf(const nlohmann::json& a) {
  detect::Severity severity;
  if (!a.contains("severity") || !a["severity"].is_string() ||
      !detect::ParseSeverity(a["severity"].get<std::string>(), &severity)) {
    return Error(StatusCode::kInvalidArgument, "an anomaly without a valid severity");
  }
  return severity;
}

}  // namespace

Result<std::vector<CheckFinding>> ParseAgentAnomalies(std::string_view body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("anomalies") || !doc["anomalies"].is_array()) {
    return Error(StatusCode::kInvalidArgument,
                 "not an anomalies document ({\"anomalies\": [...]})");
  }
  std::vector<CheckFinding> findings;
  for (const nlohmann::json& a : doc["anomalies"]) {
    if (!a.is_object() || !a.contains("detector") || !a["detector"].is_string()) {
      return Error(StatusCode::kInvalidArgument, "an anomaly without a detector");
    }
    auto severity = SeverityOf(a);
    if (!severity) return Error(severity.error());
    CheckFinding f;
    f.detector = a["detector"].get<std::string>();
    f.severity = *severity;
    f.source = FindingSource::kAgent;
    if (a.contains("reason") && a["reason"].is_string()) f.reason = a["reason"].get<std::string>();
    if (a.contains("entity") && a["entity"].is_object()) {
      // nlohmann keeps object keys sorted; the agent wrote them in the contract order
      // (device, port, netdev, ...), which only the display uses, so sorted keys are fine here.
      for (const auto& [name, value] : a["entity"].items()) {
        if (value.is_string()) f.entity.emplace_back(name, value.get<std::string>());
      }
    }
    if (a.contains("evidence") && a["evidence"].is_object()) {
      for (const auto& [name, value] : a["evidence"].items()) {
        if (value.is_number()) f.evidence.push_back({name, value.get<double>()});
      }
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

Result<std::vector<CheckFinding>> FetchAgentFindings(const std::string& base_url,
                                                     std::chrono::milliseconds timeout) {
  if (base_url.rfind("http://", 0) != 0) {
    return Error(StatusCode::kInvalidArgument,
                 "--check.agent-url must be an http:// URL, got \"" + base_url + "\"");
  }
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/api/v1/anomalies";
  // libcurl is loaded here, on the only call (collectors/sys/curl_library.h): without it the check
  // decides without the agent's findings, as when the agent does not answer.
  auto api = sys::Curl();
  if (!api) return Error(api.error().WithContext(url));
  const sys::CurlApi& curl_api = **api;
  auto curl = sys::CurlEasy::Make(curl_api);
  if (!curl) return Error(curl.error());
  Body body;
  char error[CURL_ERROR_SIZE] = {};
  CURL* c = curl->get();
  const auto setopt = curl_api.easy_setopt;
  setopt(c, CURLOPT_URL, url.c_str());
  setopt(c, CURLOPT_PROTOCOLS_STR, "http");
  setopt(c, CURLOPT_NOPROXY, "*");
  setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  setopt(c, CURLOPT_NOSIGNAL, 1L);
  setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  setopt(c, CURLOPT_WRITEFUNCTION, Append);
  setopt(c, CURLOPT_WRITEDATA, &body);
  setopt(c, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_api.easy_perform(c);
  if (body.too_large) {
    return Error(StatusCode::kInvalidArgument,
                 url + ": answer larger than " + std::to_string(kMaxAgentBodyBytes) + " bytes");
  }
  if (code != CURLE_OK) {
    return Error(StatusCode::kUnavailable,
                 url + ": " + (error[0] != '\0' ? error : curl_api.easy_strerror(code)));
  }
  long status = 0;
  curl_api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    return Error(
        StatusCode::kFailedPrecondition,
        url + ": HTTP " + std::to_string(status) +
            (status == 401 ? " (the agent asks for basic auth, which check does not send)" : ""));
  }
  auto findings = ParseAgentAnomalies(body.text);
  if (!findings) return Error(findings.error().WithContext(url));
  return findings;
}

}  // namespace fabricwatch::exporter::check
