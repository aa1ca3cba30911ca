#include "exporter/http/tls_context.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "collectors/sys/bounded_file.h"

namespace fabricwatch::exporter {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

// OpenSSL's error queue as one line (and emptied, so a later call starts clean).
std::string OpenSslErrors() {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    text += (text.empty() ? "" : "; ") + std::string(buf);
  }
  return text.empty() ? "no detail from OpenSSL" : text;
}

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

// A PEM source: a file (`path` set) or inline text from the config file.
struct Pem {
  std::string what;  // "tls_server_config.cert_file /etc/x.crt" or "... .cert in web.yml"
  std::string text;
};

Result<Pem> ReadPem(const std::string& path, const std::string& inline_text,
                    const std::string& field, const std::string& source) {
  if (path.empty()) return Pem{"tls_server_config." + field + " in " + source, inline_text};
  Pem pem{"tls_server_config." + field + "_file " + path, {}};
  // A CA bundle is the largest PEM a file names: Debian's whole ca-certificates.crt is ~220 kB.
  auto file = sys::ReadBoundedFile(
      path, {.kind = "tls_server_config." + field + "_file", .max_bytes = 4 << 20});
  if (!file) return Error(file.error());
  pem.text = std::move(file->text);
  return pem;
}

Result<std::vector<X509Ptr>> ParseCertificates(const Pem& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.text.data(), pem.text.size()));
  std::vector<X509Ptr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  ERR_clear_error();  // the loop ends on "no start line"
  if (certs.empty()) return Error(Invalid(pem.what + ": no PEM certificate in it"));
  return certs;
}

std::string TimeText(const ASN1_TIME* time) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(bio.get(), time);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n);
}

// Never prompts for a passphrase (OpenSSL would read the terminal): an encrypted key fails.
int NoPassphrase(char*, int, int, void*) { return -1; }

Status LoadCertificateAndKey(SSL_CTX* ctx, const TlsServerConfig& config,
                             const std::string& source) {
  auto cert_pem = ReadPem(config.cert_file, config.cert, "cert", source);
  if (!cert_pem) return cert_pem.error();
  auto certs = ParseCertificates(*cert_pem);
  if (!certs) return certs.error();
  X509* leaf = certs->front().get();
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0) {
    return Invalid(cert_pem->what + ": the certificate expired on " +
                   TimeText(X509_get0_notAfter(leaf)));
  }
  if (SSL_CTX_use_certificate(ctx, leaf) != 1) {
    return Invalid(cert_pem->what + ": " + OpenSslErrors());
  }
  for (size_t i = 1; i < certs->size(); ++i) {
    if (SSL_CTX_add1_chain_cert(ctx, (*certs)[i].get()) != 1) {
      return Invalid(cert_pem->what + ": chain certificate " + std::to_string(i) + ": " +
                     OpenSslErrors());
    }
  }
  auto key_pem = ReadPem(config.key_file, config.key, "key", source);
  if (!key_pem) return key_pem.error();
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(key_pem->text.data(), key_pem->text.size()));
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) {
    ERR_clear_error();
    return Invalid(key_pem->what + ": no unencrypted PEM private key in it");
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Invalid(key_pem->what + ": the key does not match the certificate of " + cert_pem->what);
  }
  return Status::Ok();
}

// IANA (Go) cipher names -> an OpenSSL cipher string, through SSL_CIPHER_standard_name.
Result<std::string> OpenSslCipherList(const std::vector<CipherSuite>& suites,
                                      const std::string& source) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> all(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  SSL_CTX_set_cipher_list(all.get(), "ALL:COMPLEMENTOFALL:@SECLEVEL=0");
  STACK_OF(SSL_CIPHER)* known = SSL_CTX_get_ciphers(all.get());
  std::string list;
  for (const CipherSuite& suite : suites) {
    if (suite.tls13) continue;
    const char* name = nullptr;
    for (int i = 0; i < sk_SSL_CIPHER_num(known); ++i) {
      const SSL_CIPHER* c = sk_SSL_CIPHER_value(known, i);
      if (suite.name == SSL_CIPHER_standard_name(c)) name = SSL_CIPHER_get_name(c);
    }
    if (name == nullptr) {
      return Error(Invalid(source + ": tls_server_config.cipher_suites: " + suite.name +
                           " is not available in this OpenSSL"));
    }
    list += (list.empty() ? "" : ":") + std::string(name);
  }
  return list;
}

Status ApplyPolicy(SSL_CTX* ctx, const TlsServerConfig& config, const std::string& source) {
  SSL_CTX_set_min_proto_version(ctx, config.min_version);
  SSL_CTX_set_max_proto_version(ctx, config.max_version);
  uint64_t options = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
  if (config.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, options);
  auto tls12 = OpenSslCipherList(config.cipher_suites, source);
  if (!tls12) return tls12.error();
  // Go applies cipher_suites to TLS 1.2 only; a list without TLS 1.2 names keeps the default.
  const std::string tls12_list = tls12->empty() ? kDefaultTls12Ciphers : *tls12;
  if (SSL_CTX_set_cipher_list(ctx, tls12_list.c_str()) != 1) {
    return Invalid(source + ": tls_server_config.cipher_suites: " + OpenSslErrors());
  }
  std::string tls13;
  for (const CipherSuite& suite : config.cipher_suites) {
    if (suite.tls13) tls13 += (tls13.empty() ? "" : ":") + suite.name;  // same names in OpenSSL
  }
  if (!tls13.empty() && SSL_CTX_set_ciphersuites(ctx, tls13.c_str()) != 1) {
    return Invalid(source + ": tls_server_config.cipher_suites: " + OpenSslErrors());
  }
  std::string groups;
  for (const std::string& g : config.curve_preferences) groups += (groups.empty() ? "" : ":") + g;
  if (SSL_CTX_set1_groups_list(ctx, groups.empty() ? kDefaultGroups : groups.c_str()) != 1) {
    return Invalid(source + ": tls_server_config.curve_preferences: " + OpenSslErrors());
  }
  // Needed once clients are verified, or a resumed session fails (SSL_CTX_set_verify(3)).
  static constexpr unsigned char kSessionContext[] = "fabricwatch";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  return Status::Ok();
}

// Accepts any certificate: Request/RequireAnyClientCert ask for one but verify nothing.
int AcceptAny(int, X509_STORE_CTX*) { return 1; }

Status ApplyClientAuth(SSL_CTX* ctx, const TlsServerConfig& config, const std::string& source) {
  if (!config.client_ca_file.empty() || !config.client_ca.empty()) {
    auto pem = ReadPem(config.client_ca_file, config.client_ca, "client_ca", source);
    if (!pem) return pem.error();
    auto certs = ParseCertificates(*pem);
    if (!certs) return certs.error();
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    for (const X509Ptr& cert : *certs) {
      if (X509_STORE_add_cert(store, cert.get()) != 1 ||
          SSL_CTX_add_client_CA(ctx, cert.get()) != 1) {
        return Invalid(pem->what + ": " + OpenSslErrors());
      }
    }
  }
  switch (config.client_auth_type) {
    case ClientAuthType::kNoClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuthType::kRequestClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAny);
      break;
    case ClientAuthType::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, AcceptAny);
      break;
    case ClientAuthType::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuthType::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<TlsContext>> TlsContext::Create(const TlsServerConfig& config,
                                                       const std::string& source) {
  std::unique_ptr<TlsContext> tls(new TlsContext());
  tls->ctx_ = SSL_CTX_new(TLS_server_method());
  if (tls->ctx_ == nullptr) return Error(Invalid("SSL_CTX_new: " + OpenSslErrors()));
  tls->allowed_sans_ = config.client_allowed_sans;
  if (Status s = ApplyPolicy(tls->ctx_, config, source); !s.ok()) return Error(s);
  if (Status s = LoadCertificateAndKey(tls->ctx_, config, source); !s.ok()) return Error(s);
  if (Status s = ApplyClientAuth(tls->ctx_, config, source); !s.ok()) return Error(s);
  return tls;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> sans;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return sans;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_DNS || name->type == GEN_EMAIL || name->type == GEN_URI) {
      const ASN1_IA5STRING* s = name->d.ia5;
      sans.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                        ASN1_STRING_length(s));
    } else if (name->type == GEN_IPADD) {
      const unsigned char* ip = ASN1_STRING_get0_data(name->d.iPAddress);
      const int len = ASN1_STRING_length(name->d.iPAddress);
      char text[INET6_ADDRSTRLEN] = {};
      // Go's net.IP.String prints an IPv4-mapped IPv6 address in dotted form.
      static constexpr unsigned char kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      if (len == 4 || (len == 16 && std::memcmp(ip, kV4Mapped, 12) == 0)) {
        inet_ntop(AF_INET, ip + (len - 4), text, sizeof(text));
      } else if (len == 16) {
        inet_ntop(AF_INET6, ip, text, sizeof(text));
      }
      if (text[0] != '\0') sans.emplace_back(text);
    }
  }
  GENERAL_NAMES_free(names);
  return sans;
}

Status TlsContext::CheckClientCertificate(SSL* ssl) const {
  if (allowed_sans_.empty()) return Status::Ok();
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr) {
    return Status(StatusCode::kPermissionDenied,
                  "client sent no certificate, and client_allowed_sans needs one");
  }
  const std::vector<std::string> sans = SubjectAltNames(peer);
  for (const std::string& san : sans) {
    if (std::find(allowed_sans_.begin(), allowed_sans_.end(), san) != allowed_sans_.end()) {
      return Status::Ok();
    }
  }
  std::string found;
  for (const std::string& san : sans) found += (found.empty() ? "" : ", ") + san;
  return Status(StatusCode::kPermissionDenied,
                "client certificate SANs [" + found + "] match no entry of client_allowed_sans");
}

}  // namespace fabricwatch::exporter
