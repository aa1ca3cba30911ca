#include "detectors/config_drift/pcie_checks.h"

#include <algorithm>
#include <map>
#include <set>

#include "detectors/config_drift/majority.h"

namespace fabricwatch::detect::drift {
namespace {

struct Path {
  const GpuNicPair* pair = nullptr;
  std::vector<std::string> functions;    // GPU .. common ancestor .. NIC
  std::vector<std::string> acs_bridges;  // below the common ancestor (PIX/PXB only)
};

Path PathOf(const NodeConfig& config, const GpuNicPair& pair) {
  Path path;
  path.pair = &pair;
  const auto gpu = UpstreamChain(config, pair.gpu);
  const auto nic = UpstreamChain(config, pair.nic);
  auto common = gpu.end();
  auto common_in_nic = nic.end();
  for (auto g = gpu.begin(); g != gpu.end() && common == gpu.end(); ++g) {
    if (auto n = std::find(nic.begin(), nic.end(), *g); n != nic.end())
      common = g, common_in_nic = n;
  }
  if (common == gpu.end()) {
    // Through the host bridge(s): every function of both chains.
    path.functions = gpu;
    path.functions.insert(path.functions.end(), nic.rbegin(), nic.rend());
    return path;
  }
  path.functions.assign(gpu.begin(), common + 1);
  path.functions.insert(path.functions.end(), std::make_reverse_iterator(common_in_nic),
                        nic.rend());
  if (pair.level == "PIX" || pair.level == "PXB") {
    if (gpu.begin() + 1 < common) path.acs_bridges.assign(gpu.begin() + 1, common);
    if (nic.begin() + 1 < common_in_nic) {
      path.acs_bridges.insert(path.acs_bridges.end(), nic.begin() + 1, common_in_nic);
    }
  }
  return path;
}

std::string Describe(const PciFunction& f) { return f.role + " " + f.bdf; }

void Add(DriftReport& report, const PciFunction& f, std::string_view setting, double observed,
         double expected, std::string reason) {
  Drift d;
  d.subject = f.bdf;
  d.setting = std::string(setting);
  d.entity = {{"device", f.bdf}, {"role", f.role}, {"setting", d.setting}};
  d.observed = observed;
  d.expected = expected;
  d.reason = std::move(reason);
  report.drifts.push_back(std::move(d));
}

void AcsRedirect(const NodeConfig& config, const Path& path, std::set<std::string>& reported,
                 DriftReport& report) {
  for (const std::string& bdf : path.acs_bridges) {
    const PciFunction& f = config.functions.at(bdf);
    if (!f.request_redirect && !f.completion_redirect) continue;
    report.checked.emplace(bdf, "acs_redirect");
    const bool request = f.request_redirect.value_or(false);
    const bool completion = f.completion_redirect.value_or(false);
    if ((!request && !completion) || !reported.insert(bdf).second) continue;
    std::string which = request && completion ? "P2P Request and Completion Redirect"
                        : request             ? "P2P Request Redirect"
                                              : "P2P Completion Redirect";
    Add(report, f, "acs_redirect", 1, 0,
        Describe(f) + " between GPU " + path.pair->gpu + " and NIC " + path.pair->nic + " (" +
            path.pair->level + ") has ACS " + which +
            " on, expected off: their peer-to-peer traffic goes through the root complex");
  }
}

void MaxPayload(const NodeConfig& config, const Path& path, std::set<std::string>& reported,
                DriftReport& report) {
  std::vector<int> values;
  for (const std::string& bdf : path.functions) {
    if (const auto& mps = config.functions.at(bdf).max_payload) values.push_back(*mps);
  }
  if (values.size() < 2) return;
  const Majority<int> majority = StrictMajority(values);
  const int expected = majority.value.value_or(*std::max_element(values.begin(), values.end()));
  const std::string source = majority.value
                                 ? std::to_string(majority.count) + " of " +
                                       std::to_string(majority.total) + " functions on the path"
                                 : "the path's largest (no majority)";
  for (const std::string& bdf : path.functions) {
    const PciFunction& f = config.functions.at(bdf);
    if (!f.max_payload) continue;
    report.checked.emplace(bdf, "max_payload");
    if (*f.max_payload == expected || !reported.insert(bdf).second) continue;
    Add(report, f, "max_payload", *f.max_payload, expected,
        Describe(f) + " Max_Payload_Size " + std::to_string(*f.max_payload) +
            " bytes on the path GPU " + path.pair->gpu + " -> NIC " + path.pair->nic +
            ", expected " + std::to_string(expected) + " from " + source);
  }
}

void MaxReadRequest(const NodeConfig& config, const std::set<std::string>& endpoints,
                    DriftReport& report) {
  std::map<std::string, std::vector<int>> by_role;
  for (const std::string& bdf : endpoints) {
    const PciFunction& f = config.functions.at(bdf);
    if (f.max_read_request) by_role[f.role].push_back(*f.max_read_request);
  }
  for (const std::string& bdf : endpoints) {
    const PciFunction& f = config.functions.at(bdf);
    if (!f.max_read_request) continue;
    report.checked.emplace(bdf, "max_read_request");
    const Majority<int> majority = StrictMajority(by_role[f.role]);
    if (!majority.value || *majority.value == *f.max_read_request) continue;
    Add(report, f, "max_read_request", *f.max_read_request, *majority.value,
        Describe(f) + " Max_Read_Request_Size " + std::to_string(*f.max_read_request) +
            " bytes, expected " + std::to_string(*majority.value) + " from the other " + f.role +
            "s on GPU-NIC paths (" + std::to_string(majority.count) + " of " +
            std::to_string(majority.total) + ")");
  }
}

}  // namespace

void CheckPcie(const NodeConfig& config, DriftReport& report) {
  std::set<std::string> acs_reported, mps_reported, endpoints;
  for (const GpuNicPair& pair : config.nearest) {
    if (!config.functions.contains(pair.gpu) || !config.functions.contains(pair.nic)) continue;
    const Path path = PathOf(config, pair);
    AcsRedirect(config, path, acs_reported, report);
    MaxPayload(config, path, mps_reported, report);
    endpoints.insert(pair.gpu);
    endpoints.insert(pair.nic);
  }
  MaxReadRequest(config, endpoints, report);
}

}  // namespace fabricwatch::detect::drift
