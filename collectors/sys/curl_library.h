#pragma once
// libcurl, loaded on first use (collectors/sys/shared_library.h; docs/libraries.md): the kubelet
// client of the `jobs` collector (kubelet_client.h) and `fabricwatch check`'s query of the agent
// (exporter/check/check_agent_api.h) are its only users, and most nodes run neither. Linked, its
// dependency tree (GnuTLS, nettle, p11-kit, Kerberos, LDAP, libssh2, nghttp2...) cost every agent
// about 3.4 MiB of resident memory (issue 40).
//
// curl_global_init(3) runs once, inside the loader's once, before any handle is made: it is not
// thread-safe before curl 7.84, and doing it first keeps the first curl_easy_init() from doing it
// implicitly on whichever thread comes first.

#include <curl/curl.h>

#include "base/status.h"

namespace fabricwatch::sys {

// The libcurl functions the agent calls, typed by <curl/curl.h>.
struct CurlApi {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

// libcurl.so.4 (Debian libcurl4), loaded and initialised on the first call; kUnavailable (or
// kNotFound for a missing symbol) naming the library and the package when it cannot be.
Result<const CurlApi*> Curl();

// Owns one easy handle (curl_easy_cleanup on destruction).
class CurlEasy {
 public:
  // A new handle; kInternal when curl_easy_init fails.
  static Result<CurlEasy> Make(const CurlApi& api);

  CurlEasy(CurlEasy&& other) noexcept : api_(other.api_), curl_(other.curl_) {
    other.curl_ = nullptr;
  }
  CurlEasy(const CurlEasy&) = delete;
  CurlEasy& operator=(const CurlEasy&) = delete;
  CurlEasy& operator=(CurlEasy&&) = delete;
  ~CurlEasy() {
    if (curl_ != nullptr) api_->easy_cleanup(curl_);
  }

  CURL* get() const { return curl_; }

 private:
  CurlEasy(const CurlApi& api, CURL* curl) : api_(&api), curl_(curl) {}

  const CurlApi* api_;
  CURL* curl_;
};

}  // namespace fabricwatch::sys
