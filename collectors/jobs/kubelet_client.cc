#include "collectors/jobs/kubelet_client.h"

#include <curl/curl.h>

#include <utility>

#include "base/value_parse.h"
#include "collectors/sys/curl_library.h"
#include "collectors/sys/filesystem.h"

namespace fabricwatch::jobs {
namespace {

// A ServiceAccount token is a JWT of one or two kilobytes; anything this long is not one.
constexpr size_t kMaxTokenBytes = 64 * 1024;

// Owns a header list (curl_slist_free_all on destruction).
class HeaderList {
 public:
  explicit HeaderList(const sys::CurlApi& api) : api_(api) {}
  HeaderList(const HeaderList&) = delete;
  HeaderList& operator=(const HeaderList&) = delete;
  ~HeaderList() {
    if (list_ != nullptr) api_.slist_free_all(list_);
  }

  // False when curl_slist_append fails; the list is unchanged then.
  bool Append(const std::string& line) {
    curl_slist* longer = api_.slist_append(list_, line.c_str());
    if (longer == nullptr) return false;
    list_ = longer;  // the same list, one line longer
    return true;
  }

  curl_slist* get() const { return list_; }

 private:
  const sys::CurlApi& api_;
  curl_slist* list_ = nullptr;
};

Result<std::string> ReadToken(const std::string& path) {
  const sys::RealFileSystem fs;
  auto fd = fs.Open(path);
  if (!fd) return Error(fd.error());
  std::string token(kMaxTokenBytes + 1, '\0');
  auto n = fs.ReadAt0(*fd, token, path);
  if (!n) return Error(n.error());
  if (*n > kMaxTokenBytes) {
    return Error(StatusCode::kInvalidArgument,
                 path + ": over " + std::to_string(kMaxTokenBytes) + " bytes, not a token");
  }
  token.resize(*n);
  token = std::string(TrimSpace(token));
  if (token.empty()) return Error(StatusCode::kNotFound, path + ": empty");
  // It goes into a header line: a control or non-ASCII byte would end or corrupt it (RFC 6750
  // §2.1: b64token is printable ASCII).
  for (const char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return Error(StatusCode::kInvalidArgument,
                   path + ": not a bearer token (a control or non-ASCII byte)");
    }
  }
  return token;
}

struct Body {
  std::string data;
  size_t max = 0;
  bool too_large = false;
};

// CURLOPT_WRITEFUNCTION: a short count makes libcurl stop with CURLE_WRITE_ERROR.
size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t n = size * count;
  if (n > body->max - body->data.size()) {
    body->too_large = true;
    return 0;
  }
  body->data.append(data, n);
  return n;
}

KubeletOutcome OutcomeOfCurl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return KubeletOutcome::kConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return KubeletOutcome::kTimeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_CRL_BADFILE:
      return KubeletOutcome::kTls;
    case CURLE_FILESIZE_EXCEEDED:
      return KubeletOutcome::kTooLarge;
    default:
      return KubeletOutcome::kError;
  }
}

StatusCode StatusCodeOf(KubeletOutcome outcome) {
  switch (outcome) {
    case KubeletOutcome::kTimeout:
      return StatusCode::kDeadlineExceeded;
    case KubeletOutcome::kUnauthorized:
    case KubeletOutcome::kForbidden:
      return StatusCode::kPermissionDenied;
    case KubeletOutcome::kTooLarge:
    case KubeletOutcome::kMalformed:
      return StatusCode::kInvalidArgument;
    case KubeletOutcome::kError:
      return StatusCode::kInternal;
    default:
      return StatusCode::kUnavailable;
  }
}

KubeletReply Failure(KubeletOutcome outcome, std::string message) {
  return KubeletReply{outcome, Status(StatusCodeOf(outcome), std::move(message)), {}};
}

}  // namespace

std::string_view KubeletOutcomeName(KubeletOutcome outcome) {
  switch (outcome) {
    case KubeletOutcome::kSuccess:
      return "success";
    case KubeletOutcome::kNoToken:
      return "no_token";
    case KubeletOutcome::kConnect:
      return "connect";
    case KubeletOutcome::kTimeout:
      return "timeout";
    case KubeletOutcome::kTls:
      return "tls";
    case KubeletOutcome::kUnauthorized:
      return "unauthorized";
    case KubeletOutcome::kForbidden:
      return "forbidden";
    case KubeletOutcome::kHttpError:
      return "http_error";
    case KubeletOutcome::kTooLarge:
      return "too_large";
    case KubeletOutcome::kMalformed:
      return "malformed";
    case KubeletOutcome::kError:
      return "error";
  }
  return "error";
}

Status ValidateKubeletUrl(std::string_view url) {
  constexpr std::string_view kScheme = "https://";
  auto bad = [&](std::string_view why) {
    return Status(StatusCode::kInvalidArgument,
                  "kubelet URL " + QuoteForMessage(url, 200) + ": " + std::string(why));
  };
  if (!url.starts_with(kScheme)) {
    return bad("want an https:// URL (the bearer token must not travel in clear text)");
  }
  const std::string_view rest = url.substr(kScheme.size());
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') return bad("no host");
  for (const char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return bad("a space, control or non-ASCII byte");
    }
    if (c == '?' || c == '#') return bad("a query or fragment (/pods is appended to the URL)");
  }
  return Status::Ok();
}

KubeletReply KubeletClient::GetPods() const {
  const std::string url = config_.url + "/pods";
  auto token = ReadToken(config_.token_file);
  if (!token) {
    return Failure(KubeletOutcome::kNoToken, "kubelet token: " + token.error().ToString());
  }
  // libcurl is loaded on the first request (curl_library.h); without it the client fails
  // like any other error, and the jobs collector goes on without pod names.
  auto api = sys::Curl();
  if (!api) return Failure(KubeletOutcome::kError, "GET " + url + ": " + api.error().ToString());
  const sys::CurlApi& curl_api = **api;
  auto curl = sys::CurlEasy::Make(curl_api);
  if (!curl) return Failure(KubeletOutcome::kError, curl.error().ToString());
  HeaderList headers(curl_api);
  for (const std::string& line :
       {"Authorization: Bearer " + *token, std::string("Accept: application/json")}) {
    if (!headers.Append(line)) return Failure(KubeletOutcome::kError, "curl_slist_append failed");
  }
  Body body;
  body.max = config_.max_body_bytes;
  char error[CURL_ERROR_SIZE] = {};
  CURL* c = curl->get();
  const auto setopt = curl_api.easy_setopt;
  const long timeout_ms = static_cast<long>(config_.timeout.count());
  setopt(c, CURLOPT_URL, url.c_str());
  setopt(c, CURLOPT_PROTOCOLS_STR, "https");
  setopt(c, CURLOPT_HTTPGET, 1L);
  setopt(c, CURLOPT_HTTPHEADER, headers.get());
  setopt(c, CURLOPT_USERAGENT, "fabricwatch");
  setopt(c, CURLOPT_ERRORBUFFER, error);
  // No signals: the agent is multi-threaded, and a SIGALRM-based resolver timeout would hit
  // another thread (libcurl-thread(3)).
  setopt(c, CURLOPT_NOSIGNAL, 1L);
  setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  setopt(c, CURLOPT_PROXY, "");  // never https_proxy from the environment
  setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(config_.max_body_bytes));
  setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  setopt(c, CURLOPT_WRITEDATA, &body);
  if (config_.insecure_skip_verify) {
    setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!config_.ca_file.empty()) {
    setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  }
  const CURLcode rc = curl_api.easy_perform(c);
  if (rc != CURLE_OK) {
    const KubeletOutcome outcome = body.too_large ? KubeletOutcome::kTooLarge : OutcomeOfCurl(rc);
    const std::string why = body.too_large ? "body over " + std::to_string(body.max) + " bytes"
                            : error[0]     ? std::string(error)
                                           : std::string(curl_api.easy_strerror(rc));
    return Failure(outcome, "GET " + url + ": " + why);
  }
  long http_status = 0;
  curl_api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http_status);
  if (http_status != 200) {
    const KubeletOutcome outcome = http_status == 401   ? KubeletOutcome::kUnauthorized
                                   : http_status == 403 ? KubeletOutcome::kForbidden
                                                        : KubeletOutcome::kHttpError;
    return Failure(outcome, "GET " + url + ": HTTP " + std::to_string(http_status) + " " +
                                QuoteForMessage(TrimSpace(body.data), 120));
  }
  return KubeletReply{KubeletOutcome::kSuccess, Status::Ok(), std::move(body.data)};
}

}  // namespace fabricwatch::jobs
