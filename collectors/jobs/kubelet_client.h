#pragma once
// KubeletClient: GET <kubelet>/pods from the node's kubelet (issue 24, docs/design.md §5.10), so
// that the `jobs` collector can name the pods it knows by UID (kubelet_pods_parse.h parses the
// answer).
//
// The kubelet's authenticated HTTPS API (default port 10250; kubelet
// pkg/kubelet/server/server.go) checks a bearer token with the API server (TokenReview) and
// authorises GET /pods with a SubjectAccessReview (kubelet docs "Kubelet
// authentication/authorization"; pkg/kubelet/server/auth.go): verb `get` on `nodes/pods` from
// Kubernetes 1.33 (KEP-2862, feature gate KubeletFineGrainedAuthz, beta and on by default), on
// `nodes/proxy` before. The agent's ServiceAccount needs that one ClusterRole rule
// (deploy/kubernetes/10-rbac.yaml; README "Attribution").
//
// - The token is read from its file on every request: a projected ServiceAccount token expires
//   (one hour by default) and the kubelet rewrites the file before it does.
// - TLS: the server certificate is checked against `ca_file` (the ServiceAccount's ca.crt by
//   default, which signs kubelet serving certificates only where serverTLSBootstrap is on) and
//   the URL's host name; `insecure_skip_verify` turns both checks off for the kubelet's default
//   self-signed certificate (the token is then sent to whoever answers on the URL).
// - Bounded: `timeout` caps the connection and the whole transfer; a body over kMaxPodListBytes
//   is cut off and is an error. No proxy from the environment is used (the token must go to the
//   kubelet only), no redirect is followed, and only https:// URLs are accepted.
//
// libcurl (Debian libcurl4) does the HTTP and TLS. It is loaded on the first request, not linked
// (curl_library.h, docs/libraries.md): without it every request is kError naming the library and
// the package, and the jobs collector goes on without pod names.
//
// Thread-safety: GetPods() may be called from one thread at a time (the jobs collector's).

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "collectors/jobs/kubelet_pods_parse.h"

namespace fabricwatch::jobs {

struct KubeletConfig {
  std::string url = "https://127.0.0.1:10250";  // no trailing slash; /pods is appended
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  bool insecure_skip_verify = false;
  std::chrono::milliseconds timeout{2000};
  size_t max_body_bytes = kMaxPodListBytes;
};

// How one request ended: the `outcome` label of fabric_jobs_kubelet_requests_total.
enum class KubeletOutcome {
  kSuccess,       // 200 and a PodList
  kNoToken,       // the token file is missing, unreadable or empty
  kConnect,       // no connection (refused, unreachable, name not resolved)
  kTimeout,       // the connection or the transfer ran past the timeout
  kTls,           // handshake failed or the certificate was not trusted
  kUnauthorized,  // 401: the kubelet rejected the token
  kForbidden,     // 403: the token's account may not get nodes/pods (nodes/proxy)
  kHttpError,     // another status than 200
  kTooLarge,      // a body over max_body_bytes
  kMalformed,     // 200 but not a PodList (set by the caller that parses it)
  kError,         // anything else libcurl reports
};
inline constexpr KubeletOutcome kKubeletOutcomes[] = {
    KubeletOutcome::kSuccess,   KubeletOutcome::kNoToken,   KubeletOutcome::kConnect,
    KubeletOutcome::kTimeout,   KubeletOutcome::kTls,       KubeletOutcome::kUnauthorized,
    KubeletOutcome::kForbidden, KubeletOutcome::kHttpError, KubeletOutcome::kTooLarge,
    KubeletOutcome::kMalformed, KubeletOutcome::kError};

// "success", "no_token", "connect", ...
std::string_view KubeletOutcomeName(KubeletOutcome outcome);

struct KubeletReply {
  KubeletOutcome outcome = KubeletOutcome::kError;
  Status status;     // Ok on success, else what failed, naming the URL or the token file
  std::string body;  // on success
};

// Checks a URL for KubeletConfig::url: https://, a host, no query or fragment.
Status ValidateKubeletUrl(std::string_view url);

class KubeletClient {
 public:
  explicit KubeletClient(KubeletConfig config) : config_(std::move(config)) {}

  // One GET <url>/pods; blocks at most about `timeout`.
  KubeletReply GetPods() const;

  const KubeletConfig& config() const { return config_; }

 private:
  KubeletConfig config_;
};

}  // namespace fabricwatch::jobs
