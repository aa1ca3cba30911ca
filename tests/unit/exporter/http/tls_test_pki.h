#pragma once
// Test certificates made with the real `openssl` CLI in a temp dir, and an in-process TLS
// handshake between a server SSL_CTX and an OpenSSL client over a socketpair (issue 19: "openssl
// generates a CA, a server certificate and a client certificate for the test").
//
// Keys are ECDSA P-256 (fast to make). Files in dir():
//   ca.crt/ca.key            the test CA (signs server and client certificates)
//   server.crt/server.key    CN=localhost, SAN DNS:localhost, IP:127.0.0.1
//   server2.crt/server2.key  the same names, another key (a rotated certificate)
//   client.crt/client.key    SANs: DNS client.example, email ops@example.com,
//                            URI spiffe://cluster/prometheus, IP 10.0.0.7
//   other.crt/other.key      signed by the CA, SAN DNS:other.example
//   rogue.crt/rogue.key      self-signed (not from the CA), SAN DNS:client.example
//   stranger.key             a key that matches no certificate
//   expired.crt/expired.key  signed by the CA, valid 2020-01-01 to 2020-01-02 (`openssl ca`)

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "collectors/sys/unique_fd.h"
#include "tests/testing/temp_dir.h"

namespace fabricwatch::testing {

class TestPki {
 public:
  TestPki() : dir_("fw-pki") {}

  // Makes every file above; false (with the openssl output in `error`) when a command failed.
  bool Make(std::string& error) {
    const std::string d = dir_.str();
    Write("ca.cnf", "[ca]\ndefault_ca=d\n[d]\ndatabase=" + d + "/index.txt\nnew_certs_dir=" + d +
                        "\nserial=" + d +
                        "/serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n");
    Write("index.txt", "");
    Write("serial", "1000\n");
    Write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
    Write("server2.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
    Write("client.ext",
          "subjectAltName=DNS:client.example,email:ops@example.com,"
          "URI:spiffe://cluster/prometheus,IP:10.0.0.7\n");
    Write("other.ext", "subjectAltName=DNS:other.example\n");
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    const std::string commands[] = {
        "openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 3 -subj /CN=fw-test-ca",
        Leaf("server", "localhost", key),
        Leaf("server2", "localhost", key),
        Leaf("client", "prometheus", key),
        Leaf("other", "other", key),
        "openssl req -x509 " + key +
            " -keyout rogue.key -out rogue.crt -days 3 -subj /CN=rogue "
            "-addext subjectAltName=DNS:client.example",
        "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out stranger.key",
        "openssl req -new " + key + " -keyout expired.key -out expired.csr -subj /CN=expired",
        "openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr "
        "-out expired.crt -startdate 20200101000000Z -enddate 20200102000000Z -notext",
    };
    for (const std::string& command : commands) {
      const std::string log = Path("openssl.log");
      const std::string line = "cd '" + d + "' && (" + command + ") >'" + log + "' 2>&1";
      if (std::system(line.c_str()) != 0) {
        error = command + ":\n" + Read(log);
        return false;
      }
    }
    return true;
  }

  std::string Path(const std::string& name) const { return dir_.Path(name); }
  std::string dir() const { return dir_.str(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  static std::string Leaf(const std::string& name, const std::string& cn, const std::string& key) {
    return "openssl req -new " + key + " -keyout " + name + ".key -out " + name +
           ".csr -subj /CN=" + cn + " && openssl x509 -req -in " + name +
           ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 -extfile " + name + ".ext -out " +
           name + ".crt";
  }

  TempDir dir_;
};

// What the client side of a handshake does.
struct TlsClient {
  std::string ca_file;              // verify the server against this CA
  std::string cert_file, key_file;  // empty: no client certificate
  int min_version = 0, max_version = 0;
  std::string tls12_ciphers;  // OpenSSL names; empty: OpenSSL's default
  std::string tls13_ciphers;
  std::string groups;
};

struct HandshakeResult {
  bool server_ok = false;  // SSL_accept succeeded
  SSL* server = nullptr;   // valid until the result is destroyed (for CheckClientCertificate)
  std::string cipher;      // IANA name of the negotiated suite
  std::string version;     // "TLSv1.2", "TLSv1.3"
  int group_nid = 0;

  HandshakeResult() = default;
  HandshakeResult(const HandshakeResult&) = delete;
  HandshakeResult& operator=(const HandshakeResult&) = delete;
  ~HandshakeResult() { SSL_free(server); }
};

// One handshake over a socketpair: the server in this thread, the client in another.
inline void Handshake(SSL_CTX* server_ctx, const TlsClient& client, HandshakeResult& result) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  sys::UniqueFd server_fd(fds[0]);
  sys::UniqueFd client_fd(fds[1]);
  SSL_CTX* cctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, nullptr);
  EXPECT_EQ(SSL_CTX_load_verify_locations(cctx, client.ca_file.c_str(), nullptr), 1);
  if (!client.cert_file.empty()) {
    EXPECT_EQ(SSL_CTX_use_certificate_chain_file(cctx, client.cert_file.c_str()), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(cctx, client.key_file.c_str(), SSL_FILETYPE_PEM), 1);
  }
  if (client.min_version != 0) SSL_CTX_set_min_proto_version(cctx, client.min_version);
  if (client.max_version != 0) SSL_CTX_set_max_proto_version(cctx, client.max_version);
  if (!client.tls12_ciphers.empty()) {
    EXPECT_EQ(SSL_CTX_set_cipher_list(cctx, client.tls12_ciphers.c_str()), 1);
  }
  if (!client.tls13_ciphers.empty()) {
    EXPECT_EQ(SSL_CTX_set_ciphersuites(cctx, client.tls13_ciphers.c_str()), 1);
  }
  if (!client.groups.empty()) {
    EXPECT_EQ(SSL_CTX_set1_groups_list(cctx, client.groups.c_str()), 1);
  }
  SSL* c = SSL_new(cctx);
  SSL_set_fd(c, client_fd.get());
  SSL_set_tlsext_host_name(c, "localhost");
  SSL_set1_host(c, "localhost");
  std::thread client_thread([c] {
    if (SSL_connect(c) == 1) {
      // TLS 1.3: the server checks the client certificate after the client's Finished; read
      // until the server closes, so a server-side failure is not hidden by an early close.
      char byte;
      SSL_read(c, &byte, 1);
    }
  });
  result.server = SSL_new(server_ctx);
  SSL_set_fd(result.server, server_fd.get());
  result.server_ok = SSL_accept(result.server) == 1;
  if (result.server_ok) {
    result.cipher = SSL_CIPHER_standard_name(SSL_get_current_cipher(result.server));
    result.version = SSL_get_version(result.server);
    result.group_nid = SSL_get_negotiated_group(result.server);
    SSL_shutdown(result.server);
  }
  ::shutdown(server_fd.get(), SHUT_RDWR);
  client_thread.join();
  SSL_free(c);
  SSL_CTX_free(cctx);
  ERR_clear_error();
}

}  // namespace fabricwatch::testing
