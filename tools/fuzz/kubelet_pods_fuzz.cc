// libFuzzer target for the kubelet's GET /pods parser of the `jobs` collector (issue 24,
// collectors/jobs/kubelet_pods_parse.h), on the bytes as a body, with and without a set of wanted
// UIDs. Besides the sanitizers' checks: a parsed list never names more pods than it had valid
// items, every name it keeps passes the API server's rules (so "namespace/name" is unambiguous
// and a plain label value), the wanted set limits the result, and an error has a short message.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "collectors/jobs/kubelet_pods_parse.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckList(const fabricwatch::Result<fabricwatch::jobs::PodList>& list,
               const std::set<std::string, std::less<>>* wanted) {
  using namespace fabricwatch::jobs;
  if (!list) {
    Check(!list.error().message().empty(), "an error without a message");
    Check(list.error().message().size() < 300, "an unbounded error message");
    return;
  }
  Check(list->skipped <= list->items, "more items skipped than read");
  Check(list->by_uid.size() <= list->items - list->skipped, "more pods than valid items");
  for (const auto& [uid, pod] : list->by_uid) {
    Check(IsPodUid(uid), "a kept UID that is not one");
    Check(IsDns1123Subdomain(pod.name), "a kept name that is not a DNS-1123 subdomain");
    Check(IsDns1123Label(pod.pod_namespace), "a kept namespace that is not a DNS-1123 label");
    Check(wanted == nullptr || wanted->contains(uid), "an unwanted UID kept");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  CheckList(fabricwatch::jobs::ParsePodList(body), nullptr);
  const std::set<std::string, std::less<>> wanted = {"1b4e28ba-2fa1-11d2-883f-0016d3cca427"};
  CheckList(fabricwatch::jobs::ParsePodList(body, &wanted), &wanted);
  return 0;
}
