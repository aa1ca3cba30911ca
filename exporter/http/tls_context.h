#pragma once
// TlsContext: the OpenSSL SSL_CTX for one web config generation (tls_server_config).
//
// Policy (README "Security"): TLS 1.2 and 1.3 only. Unless cipher_suites says otherwise, TLS 1.2
// offers only ECDHE key exchange with AES-GCM or ChaCha20-Poly1305 (kDefaultTls12Ciphers), and
// TLS 1.3 OpenSSL's default suites (AES-256-GCM, ChaCha20-Poly1305, AES-128-GCM). Groups: X25519,
// P-256, P-384, P-521 unless curve_preferences says otherwise. No renegotiation, no compression.
//
// Loading checks what Go would only find on the first handshake, or never: the certificate and
// key parse, the key matches the certificate, the certificate has not expired, the client CA
// file holds at least one certificate. Every error names the file (or the inline field).
//
// client_auth_type maps to OpenSSL verify modes (Go's crypto/tls ClientAuthType):
//   NoClientCert                SSL_VERIFY_NONE
//   RequestClientCert           SSL_VERIFY_PEER, any certificate accepted unverified
//   RequireAnyClientCert        SSL_VERIFY_PEER|FAIL_IF_NO_PEER_CERT, accepted unverified
//   VerifyClientCertIfGiven     SSL_VERIFY_PEER, verified against the client CA
//   RequireAndVerifyClientCert  SSL_VERIFY_PEER|FAIL_IF_NO_PEER_CERT, verified
// client_allowed_sans is checked after the handshake (CheckClientCertificate), as
// exporter-toolkit's VerifyPeerCertificate does.

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "exporter/http/web_config.h"

namespace fabricwatch::exporter {

inline constexpr const char* kDefaultTls12Ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20";
inline constexpr const char* kDefaultGroups = "X25519:P-256:P-384:P-521";

class TlsContext {
 public:
  // `source` is the web config file, for errors about inline PEM.
  static Result<std::unique_ptr<TlsContext>> Create(const TlsServerConfig& config,
                                                    const std::string& source);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* ctx() const { return ctx_; }

  // After the handshake: client_allowed_sans against the peer certificate's DNS, IP, e-mail and
  // URI SANs (exact match). Ok when no SANs are configured.
  Status CheckClientCertificate(SSL* ssl) const;

 private:
  TlsContext() = default;

  SSL_CTX* ctx_ = nullptr;
  std::vector<std::string> allowed_sans_;
};

// The SAN values of a certificate as exporter-toolkit compares them: DNS names, e-mail
// addresses, IP addresses (Go's net.IP String form) and URIs.
std::vector<std::string> SubjectAltNames(X509* cert);

}  // namespace fabricwatch::exporter
