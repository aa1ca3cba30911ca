// HttpServer over TLS with its own SSL_CTX (the web-security generation gives it one in the
// agent): a self-signed server certificate and a client certificate made in-process with
// OpenSSL, a real OpenSSL client on loopback. Handshakes, client certificates, the policy's own
// certificate check, and handshakes that never finish (header timeout).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "collectors/sys/unique_fd.h"
#include "exporter/http/http_server.h"

namespace fabricwatch::exporter {
namespace {

using sys::UniqueFd;

struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertDeleter {
  void operator()(X509* c) const { X509_free(c); }
};
struct CtxDeleter {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslDeleter {
  void operator()(SSL* s) const { SSL_free(s); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyDeleter>;
using Cert = std::unique_ptr<X509, CertDeleter>;
using Ctx = std::unique_ptr<SSL_CTX, CtxDeleter>;

struct Identity {
  Key key;
  Cert cert;
};

// A self-signed P-256 certificate for `common_name`, valid for a day.
Identity SelfSigned(const char* common_name) {
  Identity id;
  id.key.reset(EVP_EC_gen("P-256"));
  id.cert.reset(X509_new());
  X509* cert = id.cert.get();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, id.key.get());
  X509_sign(cert, id.key.get(), EVP_sha256());
  return id;
}

class TlsPolicy : public SecurityPolicy {
 public:
  explicit TlsPolicy(SSL_CTX* ctx, Status client_check = Status::Ok())
      : ctx_(ctx), client_check_(std::move(client_check)) {}
  SSL_CTX* tls_context() const override { return ctx_; }
  Status CheckClientCertificate(SSL*) const override { return client_check_; }
  bool auth_required(std::string_view) const override { return false; }
  Auth CheckCached(std::string_view) const override { return Auth::kAllowed; }
  bool CheckSlow(std::string_view) const override { return true; }
  const std::vector<std::pair<std::string, std::string>>& headers() const override {
    return headers_;
  }

 private:
  SSL_CTX* ctx_;
  Status client_check_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

class HttpTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);  // as main does: OpenSSL writes with write() (http_server.h)
    server_id_ = SelfSigned("localhost");
    client_id_ = SelfSigned("scraper");
    server_ctx_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_set_min_proto_version(server_ctx_.get(), TLS1_2_VERSION);
    ASSERT_EQ(SSL_CTX_use_certificate(server_ctx_.get(), server_id_.cert.get()), 1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey(server_ctx_.get(), server_id_.key.get()), 1);
  }

  void Start(std::shared_ptr<const SecurityPolicy> policy, HttpLimits limits = {}) {
    std::map<std::string, Route> routes;
    routes["/plain"] = Route{"text/plain", [] { return std::string("ok\n"); }, false, {}};
    auto started = HttpServer::Start(
        ListenAddress{"127.0.0.1", 0, false}, std::move(routes),
        std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>()),
        limits, [policy] { return policy; });
    ASSERT_TRUE(started) << started.error().ToString();
    server_ = std::move(*started);
    port_ = server_->ports()[0];
  }

  UniqueFd Connect() const {
    UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    timeval tv{.tv_sec = 10, .tv_usec = 0};
    setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return s;
  }

  // A TLS GET /plain (trusting the server's certificate, presenting the client's when
  // `with_client_cert`); the whole response, or "" when TLS failed.
  std::string TlsGet(bool with_client_cert, int requests = 1) {
    Ctx ctx(SSL_CTX_new(TLS_client_method()));
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), server_id_.cert.get());
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (with_client_cert) {
      SSL_CTX_use_certificate(ctx.get(), client_id_.cert.get());
      SSL_CTX_use_PrivateKey(ctx.get(), client_id_.key.get());
    }
    UniqueFd s = Connect();
    std::unique_ptr<SSL, SslDeleter> ssl(SSL_new(ctx.get()));
    SSL_set_fd(ssl.get(), s.get());
    SSL_set_tlsext_host_name(ssl.get(), "localhost");
    if (SSL_connect(ssl.get()) != 1) return "";
    std::string out;
    for (int i = 0; i < requests; ++i) {
      const std::string request = std::string("GET /plain HTTP/1.1\r\nHost: localhost\r\n") +
                                  (i + 1 == requests ? "Connection: close\r\n" : "") + "\r\n";
      if (SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) <= 0) return out;
    }
    char buf[4096];
    int n = 0;
    while ((n = SSL_read(ssl.get(), buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

  // The server counts a failure when it closes; a client may see the alert a moment before.
  bool TlsFailuresReach(uint64_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (server_->stats().tls_failures < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return server_->stats().tls_failures == n;
  }

  static int Count(const std::string& text, const std::string& what) {
    int count = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
      ++count;
    }
    return count;
  }

  Identity server_id_, client_id_;
  Ctx server_ctx_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpTlsTest, ServesOverTlsWithKeepAlive) {
  Start(std::make_shared<TlsPolicy>(server_ctx_.get()));
  const std::string out = TlsGet(false, 3);
  EXPECT_EQ(Count(out, "HTTP/1.1 200 OK\r\n"), 3) << out;
  EXPECT_EQ(Count(out, "\r\n\r\nok\n"), 3);
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(server_->stats().tls_failures, 0u);
}

TEST_F(HttpTlsTest, PlainHttpOnTheTlsPortIsClosed) {
  Start(std::make_shared<TlsPolicy>(server_ctx_.get()));
  UniqueFd s = Connect();
  const std::string request = "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n";
  ::send(s.get(), request.data(), request.size(), MSG_NOSIGNAL);
  char buf[256];
  ssize_t n = 0;
  std::string got;
  while ((n = ::recv(s.get(), buf, sizeof(buf), 0)) > 0) got.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(got.find("200 OK"), std::string::npos);
  EXPECT_TRUE(n == 0 || errno == ECONNRESET) << "not closed: " << std::strerror(errno);
  EXPECT_TRUE(TlsFailuresReach(1));
}

TEST_F(HttpTlsTest, RequiredClientCertificate) {
  SSL_CTX_set_verify(server_ctx_.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(server_ctx_.get()), client_id_.cert.get());
  Start(std::make_shared<TlsPolicy>(server_ctx_.get()));
  EXPECT_EQ(TlsGet(false).find("200 OK"), std::string::npos) << "served without a certificate";
  EXPECT_TRUE(TlsFailuresReach(1));
  EXPECT_NE(TlsGet(true).find("HTTP/1.1 200 OK"), std::string::npos);
}

TEST_F(HttpTlsTest, PolicyCertificateCheckFailureCloses) {
  Start(std::make_shared<TlsPolicy>(
      server_ctx_.get(), Status(StatusCode::kPermissionDenied, "SAN not in client_allowed_sans")));
  EXPECT_EQ(TlsGet(false).find("200 OK"), std::string::npos);
  EXPECT_TRUE(TlsFailuresReach(1));
}

TEST_F(HttpTlsTest, UnfinishedHandshakeHitsTheHeaderTimeout) {
  HttpLimits limits;
  limits.header_timeout = std::chrono::milliseconds(300);
  Start(std::make_shared<TlsPolicy>(server_ctx_.get()), limits);
  UniqueFd s = Connect();
  const char partial_hello[] = {
      0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, static_cast<char>(0xfc)};
  ::send(s.get(), partial_hello, sizeof(partial_hello), MSG_NOSIGNAL);
  char buf[64];
  ssize_t n = 0;
  while ((n = ::recv(s.get(), buf, sizeof(buf), 0)) > 0) {
  }
  EXPECT_TRUE(n == 0 || errno == ECONNRESET) << "not closed: " << std::strerror(errno);
  EXPECT_EQ(server_->stats().header_timeouts, 1u);
  // The server still serves.
  EXPECT_NE(TlsGet(false).find("HTTP/1.1 200 OK"), std::string::npos);
}

// Application-data records a client received (SSL_CTX_set_msg_callback): in TLS 1.2 a record
// header of type 23, in TLS 1.3 (where every encrypted record's outer type is 23, session
// tickets too) the inner content type.
struct RecordCount {
  int tls12 = 0;
  int tls13 = 0;
};

void CountRecords(int write_p, int /*version*/, int content_type, const void* buf, size_t len,
                  SSL* /*ssl*/, void* arg) {
  auto* count = static_cast<RecordCount*>(arg);
  if (write_p != 0 || len < 1) return;
  const auto type = static_cast<const unsigned char*>(buf)[0];
  if (content_type == SSL3_RT_HEADER && type == SSL3_RT_APPLICATION_DATA) ++count->tls12;
  if (content_type == SSL3_RT_INNER_CONTENT_TYPE && type == SSL3_RT_APPLICATION_DATA) {
    ++count->tls13;
  }
}

// One response by its Content-Length through `ssl`; "" on failure.
std::string SslReadResponse(SSL* ssl) {
  std::string data;
  char buf[4096];
  while (true) {
    const size_t end = data.find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t cl = data.find("Content-Length: ");
      const size_t length = cl < end ? std::stoul(data.substr(cl + 16)) : 0;
      if (data.size() >= end + 4 + length) return data;
    }
    const int n = SSL_read(ssl, buf, sizeof(buf));
    if (n <= 0) return "";
    data.append(buf, static_cast<size_t>(n));
  }
}

// Head and body in one record (issue 39 item 8): in two, the body waited for the client's
// delayed ACK of the head (Nagle), ~40 ms per keep-alive response.
TEST_F(HttpTlsTest, ASmallResponseIsOneTlsRecord) {
  Start(std::make_shared<TlsPolicy>(server_ctx_.get()));
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    Ctx ctx(SSL_CTX_new(TLS_client_method()));
    SSL_CTX_set_max_proto_version(ctx.get(), version);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), server_id_.cert.get());
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    RecordCount count;
    SSL_CTX_set_msg_callback(ctx.get(), CountRecords);
    SSL_CTX_set_msg_callback_arg(ctx.get(), &count);
    UniqueFd s = Connect();
    std::unique_ptr<SSL, SslDeleter> ssl(SSL_new(ctx.get()));
    SSL_set_fd(ssl.get(), s.get());
    SSL_set_tlsext_host_name(ssl.get(), "localhost");
    ASSERT_EQ(SSL_connect(ssl.get()), 1) << version;
    ASSERT_EQ(SSL_version(ssl.get()), version);
    constexpr int kRequests = 3;
    for (int i = 0; i < kRequests; ++i) {
      const std::string request = "GET /plain HTTP/1.1\r\nHost: localhost\r\n\r\n";
      ASSERT_GT(SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())), 0);
      const std::string response = SslReadResponse(ssl.get());
      ASSERT_NE(response.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << response;
      ASSERT_NE(response.find("\r\n\r\nok\n"), std::string::npos) << response;
    }
    const int records = version == TLS1_3_VERSION ? count.tls13 : count.tls12;
    EXPECT_EQ(records, kRequests) << (version == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2")
                                  << ": each response should be one record, head and body";
  }
}

}  // namespace
}  // namespace fabricwatch::exporter
