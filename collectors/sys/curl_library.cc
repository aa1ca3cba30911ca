#include "collectors/sys/curl_library.h"

#include "collectors/sys/shared_library.h"

namespace fabricwatch::sys {
namespace {

void BindCurl(SymbolBinder& b, CurlApi& api) {
  b.Bind(api.global_init, "curl_global_init");
  b.Bind(api.easy_init, "curl_easy_init");
  b.Bind(api.easy_cleanup, "curl_easy_cleanup");
  b.Bind(api.easy_setopt, "curl_easy_setopt");
  b.Bind(api.easy_perform, "curl_easy_perform");
  b.Bind(api.easy_getinfo, "curl_easy_getinfo");
  b.Bind(api.easy_strerror, "curl_easy_strerror");
  b.Bind(api.slist_append, "curl_slist_append");
  b.Bind(api.slist_free_all, "curl_slist_free_all");
}

Status InitCurl(const CurlApi& api) {
  const CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    return Status(StatusCode::kInternal,
                  std::string("curl_global_init: ") + api.easy_strerror(code));
  }
  return Status::Ok();
}

}  // namespace

Result<const CurlApi*> Curl() {
  // Never destroyed: the library stays loaded for the life of the process (shared_library.h).
  static auto* library = new OnDemandLibrary<CurlApi>(
      {.soname = "libcurl.so.4",
       .package = "libcurl4",
       .feature = "the kubelet client (jobs collector) and check's agent query"},
      BindCurl, InitCurl);
  return library->Get();
}

Result<CurlEasy> CurlEasy::Make(const CurlApi& api) {
  CURL* curl = api.easy_init();
  if (curl == nullptr) return Error(StatusCode::kInternal, "curl_easy_init failed");
  return CurlEasy(api, curl);
}

}  // namespace fabricwatch::sys
