// KubeletClient (collectors/jobs/kubelet_client.h) without a kubelet: URL checks, a token file that
// is missing, empty or not a token, a port nobody listens on, and a listener that never answers
// the TLS handshake (bounded by the timeout). The HTTPS exchange with a kubelet that checks the
// token (200, 401, TLS trust) is tests/e2e/kubelet_pods_test.sh.

#include "collectors/jobs/kubelet_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>

#include "collectors/sys/unique_fd.h"
#include "tests/testing/temp_dir.h"

namespace fabricwatch::jobs {
namespace {

using ::fabricwatch::testing::TempDir;

TEST(ValidateKubeletUrl, wants_https_and_a_host) {
  EXPECT_TRUE(ValidateKubeletUrl("https://127.0.0.1:10250").ok());
  EXPECT_TRUE(ValidateKubeletUrl("https://gpu-a17.example:10250").ok());
  // Through the API server's node proxy (the same nodes/proxy permission).
  EXPECT_TRUE(ValidateKubeletUrl("https://10.0.0.1:6443/api/v1/nodes/gpu-a17/proxy").ok());
  for (const char* bad : {"http://127.0.0.1:10255", "127.0.0.1:10250", "https://", "https:///pods",
                          "https://h:1/?x=1", "https://h:1/#f", "https://h 1", "auto-ish"}) {
    const Status status = ValidateKubeletUrl(bad);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad;
  }
}

// A TCP port on 127.0.0.1: listening (and never accepting) or, once closed, refusing.
struct Listener {
  sys::UniqueFd fd;
  int port = 0;
};

Listener Listen() {
  Listener l;
  l.fd = sys::UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(l.fd.get(), 4), 0);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  l.port = ntohs(addr.sin_port);
  return l;
}

class KubeletClientTest : public ::testing::Test {
 protected:
  KubeletConfig Config(int port) {
    KubeletConfig config;
    config.url = "https://127.0.0.1:" + std::to_string(port);
    config.token_file = dir_.Path("token");
    config.ca_file = dir_.Path("ca.crt");
    config.timeout = std::chrono::milliseconds(300);
    return config;
  }
  void WriteToken(const std::string& text) { std::ofstream(dir_.Path("token")) << text; }

  TempDir dir_;
};

TEST_F(KubeletClientTest, no_token_file_is_no_token_and_no_request) {
  Listener kubelet = Listen();
  const KubeletReply reply = KubeletClient(Config(kubelet.port)).GetPods();
  EXPECT_EQ(reply.outcome, KubeletOutcome::kNoToken);
  EXPECT_NE(reply.status.message().find("/token"), std::string::npos) << reply.status.ToString();
}

TEST_F(KubeletClientTest, an_empty_or_broken_token_is_no_token) {
  Listener kubelet = Listen();
  for (const char* text : {"", " \n", "abc\r\nX-Injected: 1", "tok\xc3\xa9n"}) {
    WriteToken(text);
    const KubeletReply reply = KubeletClient(Config(kubelet.port)).GetPods();
    EXPECT_EQ(reply.outcome, KubeletOutcome::kNoToken) << reply.status.ToString();
  }
}

TEST_F(KubeletClientTest, a_closed_port_is_connect) {
  int port = 0;
  {
    Listener gone = Listen();
    port = gone.port;
  }
  WriteToken("eyJhbGciOiJSUzI1NiJ9.e30.sig\n");
  const KubeletReply reply = KubeletClient(Config(port)).GetPods();
  EXPECT_EQ(reply.outcome, KubeletOutcome::kConnect) << reply.status.ToString();
  EXPECT_NE(reply.status.message().find("/pods"), std::string::npos) << reply.status.ToString();
}

TEST_F(KubeletClientTest, a_silent_server_is_a_timeout_within_the_bound) {
  Listener kubelet = Listen();  // the kernel completes the handshake; nobody answers TLS
  WriteToken("eyJhbGciOiJSUzI1NiJ9.e30.sig\n");
  KubeletConfig config = Config(kubelet.port);
  config.insecure_skip_verify = true;
  const auto start = std::chrono::steady_clock::now();
  const KubeletReply reply = KubeletClient(config).GetPods();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reply.outcome, KubeletOutcome::kTimeout) << reply.status.ToString();
  EXPECT_EQ(reply.status.code(), StatusCode::kDeadlineExceeded);
  // 300 ms asked; generous slack for a loaded CI machine, far below "forever".
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST_F(KubeletClientTest, a_missing_ca_file_is_tls) {
  Listener kubelet = Listen();
  WriteToken("eyJhbGciOiJSUzI1NiJ9.e30.sig\n");
  const KubeletReply reply = KubeletClient(Config(kubelet.port)).GetPods();  // no ca.crt written
  EXPECT_EQ(reply.outcome, KubeletOutcome::kTls) << reply.status.ToString();
  EXPECT_NE(reply.status.message().find("ca.crt"), std::string::npos) << reply.status.ToString();
}

TEST(KubeletOutcomeName, names_every_outcome_distinctly) {
  std::set<std::string_view> names;
  for (const KubeletOutcome outcome : kKubeletOutcomes) names.insert(KubeletOutcomeName(outcome));
  EXPECT_EQ(names.size(), std::size(kKubeletOutcomes));
  EXPECT_TRUE(names.contains("unauthorized"));
}

}  // namespace
}  // namespace fabricwatch::jobs
