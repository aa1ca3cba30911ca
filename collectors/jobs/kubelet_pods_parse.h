#pragma once
// ParsePodList: the name and namespace of each pod in the kubelet's answer to GET /pods (issue 24,
// docs/design.md §5.10), for the `jobs` collector, which knows a pod only by the UID in its
// cgroup path (proc_jobs_parse.h).
//
// Source: the kubelet's authenticated API (kubelet pkg/kubelet/server/server.go, getPods and
// encodePods) answers GET /pods with a `v1.PodList` in JSON, the pods the kubelet runs (static
// pods with the UID the kubelet gave them, which is the one in their cgroup path, not their
// mirror pod's):
//   {"kind":"PodList","apiVersion":"v1","metadata":{},"items":[
//     {"metadata":{"name":"trainer-0","namespace":"ml","uid":"1b4e28ba-…",…},"spec":{…},…}, …]}
// `items` is null when the kubelet runs no pod (a nil Go slice). Only items[].metadata.uid, name
// and namespace are read; the rest is skipped unread.
//
// Hostile or broken input: the body is parsed by nlohmann's SAX parser, which keeps no tree (a
// 16 MB list costs the names wanted, not a DOM) and nests without recursion. Not JSON (RFC 8259,
// including invalid UTF-8), or not an object with "kind":"PodList", is an error. An item that is
// not an object, or whose uid, name or namespace is missing, not a string or not what the API
// server admits (Kubernetes apimachinery validation: a name is a DNS-1123 subdomain of at most
// 253 characters, a namespace a DNS-1123 label of at most 63, a UID a UUID or 32 hex digits), is
// skipped and counted: such a name cannot be a real pod's, and "namespace/name" must stay
// unambiguous as a label value.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::jobs {

// The largest body the parser (and the kubelet client) accepts: a node's 110 pods (the kubelet's
// default max-pods) of 10-20 KB each make 1-2 MB; 16 MB leaves room for a node with many more.
inline constexpr size_t kMaxPodListBytes = 16u << 20;

struct PodName {
  std::string pod_namespace;
  std::string name;

  friend bool operator==(const PodName&, const PodName&) = default;
};

struct PodList {
  // Pod UID → name and namespace, only of the UIDs asked for (all when none were given).
  std::map<std::string, PodName, std::less<>> by_uid;
  size_t items = 0;    // items in the list, valid or not
  size_t skipped = 0;  // items skipped as malformed (see the header comment)
};

// Parses a GET /pods body. `wanted`, when given, limits the result to those UIDs (the collector
// asks only for the pods its scan found). InvalidArgument when the body is over kMaxPodListBytes,
// not JSON, or not a PodList.
Result<PodList> ParsePodList(std::string_view body,
                             const std::set<std::string, std::less<>>* wanted = nullptr);

// The checks ParsePodList applies to an item's fields (exposed for the tests and the fuzz target).
bool IsPodUid(std::string_view uid);
bool IsDns1123Subdomain(std::string_view name);  // a pod name
bool IsDns1123Label(std::string_view name);      // a namespace

}  // namespace fabricwatch::jobs
