// Collector `topology` against real lstopo (hwloc) XML trees
// (../shared/fixtures/external/topo/hwloc-xml, see SOURCES.md): the PCI hierarchy of each XML
// is replayed as a sysfs tree laid out the way the kernel lays it out
// (devices/pciDDDD:BB/<root port>/<switch ports...>/<function>, bus/pci/devices links,
// class/infiniband and class/net entries for the OS devices hwloc shows), the real collector
// walks it, and every GPU, NIC, NUMA node, bridge path, link attribute and GPU-NIC level is
// compared with what the XML itself says. The expected levels come from the XML tree alone
// (lowest common ancestor, bridge depths, host bridges, NUMA nodes) by the rules of
// docs/reference.md §6.4, written independently of Classify().

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/sys/sysfs.h"
#include "collectors/topology/topology.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::topology {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- a small hwloc XML reader

// One <object type="..." ...> element of an lstopo XML export.
struct XmlObject {
  std::string type;
  std::map<std::string, std::string, std::less<>> attrs;
  int parent = -1;
  std::vector<int> children;

  std::string Attr(std::string_view name) const {
    auto it = attrs.find(name);
    return it == attrs.end() ? std::string() : it->second;
  }
};

std::string Unescape(std::string_view text) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (text.substr(i).starts_with(entity)) {
          out += c;
          i += entity.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Attributes of a start tag body (after the element name): name="value" or name='value'.
bool ParseAttributes(std::string_view body, XmlObject& object) {
  size_t i = 0;
  while (true) {
    while (i < body.size() && IsSpace(body[i])) ++i;
    if (i == body.size()) return true;
    size_t name_start = i;
    while (i < body.size() && body[i] != '=' && !IsSpace(body[i])) ++i;
    std::string name(body.substr(name_start, i - name_start));
    while (i < body.size() && IsSpace(body[i])) ++i;
    if (i == body.size() || body[i] != '=') return false;
    ++i;
    while (i < body.size() && IsSpace(body[i])) ++i;
    if (i == body.size() || (body[i] != '"' && body[i] != '\'')) return false;
    const char quote = body[i++];
    size_t end = body.find(quote, i);
    if (end == std::string_view::npos) return false;
    object.attrs[name] = Unescape(body.substr(i, end - i));
    i = end + 1;
  }
}

// The tree of <object> elements; every other element (info, distances2, support, ...) is
// skipped. On malformed input `error` says where.
struct XmlTree {
  std::vector<XmlObject> objects;
  std::string error;
};

XmlTree ParseHwlocXml(const std::string& text) {
  XmlTree tree;
  std::vector<int> open;
  size_t pos = 0;
  while ((pos = text.find('<', pos)) != std::string::npos) {
    if (text.compare(pos, 4, "<!--") == 0) {
      size_t end = text.find("-->", pos);
      if (end == std::string::npos) {
        tree.error = "unterminated comment at offset " + std::to_string(pos);
        return tree;
      }
      pos = end + 3;
      continue;
    }
    size_t end = pos + 1;
    char quote = 0;
    for (; end < text.size(); ++end) {
      const char c = text[end];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      }
    }
    if (end >= text.size()) {
      tree.error = "unterminated tag at offset " + std::to_string(pos);
      return tree;
    }
    std::string_view tag(text.data() + pos + 1, end - pos - 1);
    const size_t tag_offset = pos;
    pos = end + 1;
    if (tag.starts_with('?') || tag.starts_with('!')) continue;
    if (tag.starts_with('/')) {
      std::string_view name = tag.substr(1);
      while (!name.empty() && IsSpace(name.back())) name.remove_suffix(1);
      if (name != "object") continue;
      if (open.empty()) {
        tree.error = "</object> without <object> at offset " + std::to_string(tag_offset);
        return tree;
      }
      open.pop_back();
      continue;
    }
    const bool self_closing = tag.ends_with('/');
    if (self_closing) tag.remove_suffix(1);
    size_t name_end = 0;
    while (name_end < tag.size() && !IsSpace(tag[name_end])) ++name_end;
    if (tag.substr(0, name_end) != "object") continue;
    XmlObject object;
    if (!ParseAttributes(tag.substr(name_end), object)) {
      tree.error = "bad attributes at offset " + std::to_string(tag_offset);
      return tree;
    }
    object.type = object.Attr("type");
    object.parent = open.empty() ? -1 : open.back();
    const int index = static_cast<int>(tree.objects.size());
    if (object.parent >= 0) tree.objects[object.parent].children.push_back(index);
    tree.objects.push_back(std::move(object));
    if (!self_closing) open.push_back(index);
  }
  if (!open.empty()) tree.error = std::to_string(open.size()) + " <object> left open";
  return tree;
}

// ---------------------------------------------------------------- the XML's PCI model

bool IsIoObject(const XmlObject& o) {
  return o.type == "Bridge" || o.type == "PCIDev" || o.type == "OSDev";
}
// hwloc bridge_type "<upstream>-<downstream>": 0 host, 1 PCI. A host bridge is "0-1".
bool IsHostBridge(const XmlObject& o) {
  return o.type == "Bridge" && o.Attr("bridge_type").starts_with("0-");
}
bool IsPciBridge(const XmlObject& o) {
  return o.type == "Bridge" && o.Attr("bridge_type").starts_with("1-");
}

// hwloc osdev_type bits (hwloc 3 XML): 16 network, 32 OpenFabrics; older exports use the
// enum values 2 (network) and 3 (OpenFabrics).
bool IsOpenFabrics(const XmlObject& o) {
  const int t = std::atoi(o.Attr("osdev_type").c_str());
  return o.type == "OSDev" && (t == 3 || (t >= 16 && (t & 32) != 0));
}
bool IsNetwork(const XmlObject& o) {
  const int t = std::atoi(o.Attr("osdev_type").c_str());
  return o.type == "OSDev" && !IsOpenFabrics(o) && (t == 2 || (t >= 16 && (t & 16) != 0));
}

struct PciFunction {
  int object = -1;
  std::string bdf;          // "0000:84:00.0"
  uint32_t vendor = 0;      // pci_type "0302 [10de:1094] [00de:0088] a1 00"
  uint32_t device = 0;      //   = class, vendor:device, subvendor:subdevice, revision, prog-if
  uint32_t class_code = 0;  // class << 8 | prog-if, as sysfs `class` prints it
  bool bridge = false;      // a PCI-PCI bridge (root port, switch port)
  double link_gbps = 0;     // pci_link_speed (GB/s), 0 when hwloc did not know it
  std::string host_bridge;  // "pci0000:80"
  std::vector<std::string> chain;  // BDFs from the root port down, this function last
  std::optional<int> numa_node;
  std::set<std::string> rdma_devices, netdevs;  // OS devices hwloc shows below it
  bool gpu = false, nic = false;

  std::string Path() const {
    std::string out = host_bridge;
    for (const std::string& bdf : chain) out += "/" + bdf;
    return out;
  }
};

struct Model {
  XmlTree tree;
  std::vector<PciFunction> functions;  // every pci_busid object, in XML order
  std::map<int, size_t> by_object;     // XML object index -> functions index
  std::vector<size_t> gpus, nics;      // indices into functions
  std::vector<std::string> notes;      // oddities of the XML (reported, not failed)
  std::vector<std::string> errors;     // what makes the XML unusable for the cross-check
};

// NUMA node of an I/O object: the NUMANode below its nearest non-I/O ancestor that has any
// (hwloc attaches I/O trees to the Package/Group/Machine they are local to; memory children
// hang below the same parent). Several nodes there (a Machine-level attachment) → unknown.
std::optional<int> NumaNodeOf(const XmlTree& tree, int index) {
  for (int a = tree.objects[index].parent; a >= 0; a = tree.objects[a].parent) {
    if (IsIoObject(tree.objects[a])) continue;
    std::vector<int> nodes;
    std::vector<int> todo{a};
    while (!todo.empty()) {
      const int o = todo.back();
      todo.pop_back();
      if (tree.objects[o].type == "NUMANode") nodes.push_back(o);
      for (int c : tree.objects[o].children) {
        if (!IsIoObject(tree.objects[c])) todo.push_back(c);
      }
    }
    if (nodes.empty()) continue;
    if (nodes.size() > 1) return std::nullopt;
    return std::atoi(tree.objects[nodes[0]].Attr("os_index").c_str());
  }
  return std::nullopt;
}

Model BuildModel(const std::string& text) {
  Model m;
  m.tree = ParseHwlocXml(text);
  if (!m.tree.error.empty()) {
    m.errors.push_back("XML: " + m.tree.error);
    return m;
  }
  const auto& objects = m.tree.objects;
  for (int i = 0; i < static_cast<int>(objects.size()); ++i) {
    const XmlObject& o = objects[i];
    if (o.Attr("pci_busid").empty()) continue;
    PciFunction f;
    f.object = i;
    f.bdf = o.Attr("pci_busid");
    unsigned cls = 0, vendor = 0, device = 0, subv = 0, subd = 0, rev = 0, progif = 0;
    if (std::sscanf(o.Attr("pci_type").c_str(), "%x [%x:%x] [%x:%x] %x %x", &cls, &vendor, &device,
                    &subv, &subd, &rev, &progif) != 7) {
      m.errors.push_back(f.bdf + ": unreadable pci_type \"" + o.Attr("pci_type") + "\"");
      continue;
    }
    f.vendor = vendor;
    f.device = device;
    f.class_code = (cls << 8) | progif;
    f.bridge = IsPciBridge(o);
    f.link_gbps = std::atof(o.Attr("pci_link_speed").c_str());
    // The kernel directory chain: every PCI-PCI bridge above, up to the host bridge.
    f.chain.push_back(f.bdf);
    int a = o.parent;
    for (; a >= 0 && IsPciBridge(objects[a]); a = objects[a].parent) {
      f.chain.insert(f.chain.begin(), objects[a].Attr("pci_busid"));
    }
    if (a < 0 || !IsHostBridge(objects[a])) {
      m.errors.push_back(f.bdf + ": no host bridge above it in the XML");
      continue;
    }
    // bridge_pci="0000:[80-84]": domain and the root bus behind the host bridge.
    const std::string range = objects[a].Attr("bridge_pci");
    const size_t colon = range.find(":[");
    if (colon == std::string::npos || range.size() < colon + 4) {
      m.errors.push_back(f.bdf + ": host bridge with bridge_pci \"" + range + "\"");
      continue;
    }
    f.host_bridge = "pci" + range.substr(0, colon) + ":" + range.substr(colon + 2, 2);
    f.numa_node = NumaNodeOf(m.tree, i);
    for (int c : o.children) {
      if (IsOpenFabrics(objects[c])) f.rdma_devices.insert(objects[c].Attr("name"));
      if (IsNetwork(objects[c])) f.netdevs.insert(objects[c].Attr("name"));
    }
    // docs/reference.md §6.2: GPU = vendor NVIDIA/AMD with base class 0x03 or 0x12; NIC = base
    // class 0x02, or any function with an RDMA (OpenFabrics) device.
    const uint32_t base = cls >> 8;
    f.gpu = !f.bridge && (vendor == 0x10de || vendor == 0x1002) && (base == 0x03 || base == 0x12);
    f.nic = !f.bridge && !f.gpu && (base == 0x02 || !f.rdma_devices.empty());

    // Sanity of the XML itself: `depth` counts the bridges above a bridge (host bridge 0), and
    // a function's bus is inside its parent bridge's secondary range.
    if (f.bridge && o.Attr("depth") != std::to_string(f.chain.size())) {
      m.notes.push_back(f.bdf + ": depth=\"" + o.Attr("depth") + "\" but " +
                        std::to_string(f.chain.size()) + " bridges above and including it");
    }
    const std::string parent_range = objects[o.parent].Attr("bridge_pci");
    unsigned lo = 0, hi = 0, bus = 0;
    const size_t open_bracket = parent_range.find('[');
    if (open_bracket != std::string::npos &&
        std::sscanf(parent_range.c_str() + open_bracket, "[%x-%x]", &lo, &hi) == 2 &&
        std::sscanf(f.bdf.c_str() + f.bdf.find(':') + 1, "%x", &bus) == 1 &&
        (bus < lo || bus > hi)) {
      m.notes.push_back(f.bdf + ": bus outside its parent bridge's range " + parent_range + " (" +
                        f.Path() + ")");
    }
    m.by_object[i] = m.functions.size();
    m.functions.push_back(std::move(f));
  }
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (m.functions[i].gpu) m.gpus.push_back(i);
    if (m.functions[i].nic) m.nics.push_back(i);
  }
  return m;
}

// ---------------------------------------------------------------- expected level (§6.4)

// From the XML tree: the lowest common ancestor of the two functions decides.
//   - a PCI-PCI bridge: count, per side, the bridges strictly between it and the function (by
//     the XML `depth` attributes); both ≤ 1 → PIX, else PXB;
//   - their host bridge → PHB;
//   - above the PCI trees (different host bridges): same known NUMA node, or both unknown →
//     NODE; otherwise SYS.
std::string ExpectedLevel(const Model& m, const PciFunction& a, const PciFunction& b,
                          std::string* why) {
  const auto& objects = m.tree.objects;
  if (a.object == b.object) return "X";
  std::set<int> above_b;
  for (int o = objects[b.object].parent; o >= 0; o = objects[o].parent) above_b.insert(o);
  int lca = objects[a.object].parent;
  while (lca >= 0 && !above_b.contains(lca)) lca = objects[lca].parent;
  const XmlObject* common = lca >= 0 ? &objects[lca] : nullptr;
  if (common != nullptr && IsPciBridge(*common)) {
    const int depth = std::atoi(common->Attr("depth").c_str());
    auto below = [&](const PciFunction& f) {
      return std::atoi(objects[objects[f.object].parent].Attr("depth").c_str()) - depth;
    };
    *why = "deepest common bridge " + common->Attr("pci_busid") + " (depth " +
           std::to_string(depth) + "), bridges below it: " + std::to_string(below(a)) + " and " +
           std::to_string(below(b));
    return below(a) <= 1 && below(b) <= 1 ? "PIX" : "PXB";
  }
  if (common != nullptr && IsHostBridge(*common)) {
    *why = "common host bridge " + a.host_bridge + " only";
    return "PHB";
  }
  auto node = [](const PciFunction& f) {
    return f.numa_node ? std::to_string(*f.numa_node) : std::string("unknown");
  };
  *why = "host bridges " + a.host_bridge + " / " + b.host_bridge + ", NUMA nodes " + node(a) +
         " / " + node(b);
  if (a.numa_node.has_value() != b.numa_node.has_value()) return "SYS";
  return a.numa_node == b.numa_node ? "NODE" : "SYS";
}

int LevelRank(std::string_view level) {
  static const std::map<std::string_view, int> kRank{{"X", 0},    {"PIX", 10},  {"PXB", 20},
                                                     {"PHB", 30}, {"NODE", 40}, {"SYS", 50}};
  auto it = kRank.find(level);
  return it == kRank.end() ? 99 : it->second;
}

// ---------------------------------------------------------------- link attributes

// hwloc's pci_link_speed is lanes × GT/s × encoding / 8 (GB/s). The first (generation, width)
// that gives the value back; the split is ambiguous (Gen3 x16 = Gen4 x8), the oldest wins.
struct Link {
  double gts = 0;
  int width = 0;
};
double LinkGBps(double gts, double width) {
  const double encoding = gts <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gts * width * encoding / 8.0;
}
std::optional<Link> DecomposeLink(double gbps) {
  if (!(gbps > 0)) return std::nullopt;
  for (double gts : {2.5, 5.0, 8.0, 16.0, 32.0, 64.0}) {
    for (int width : {1, 2, 4, 8, 12, 16, 32}) {
      if (std::fabs(LinkGBps(gts, width) - gbps) < 1e-4) return Link{gts, width};
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- the sysfs replay

class ReplayTree {
 public:
  explicit ReplayTree(const std::string& name)
      : root_(fs::temp_directory_path() /
              ("fabricwatch-topo-xml-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(root_);
    fs::create_directories(root_ / "sys/bus/pci/devices");
  }
  ~ReplayTree() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path sys() const { return root_ / "sys"; }

  void Write(const fs::path& relative, const std::string& content) {
    fs::create_directories((sys() / relative).parent_path());
    std::ofstream(sys() / relative) << content << "\n";
  }
  void Link(const std::string& target, const fs::path& relative) {
    fs::create_directories((sys() / relative).parent_path());
    fs::create_symlink(target, sys() / relative);
  }

 private:
  fs::path root_;
};

std::string Hex(uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, value);
  return buf;
}

std::string GtsText(double gts) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GT/s PCIe", gts);
  return buf;
}

// Lays the model out like the kernel: devices/<path>/{vendor,device,class,numa_node,
// {current,max}_link_{speed,width}}, bus/pci/devices/<bdf> -> ../../../devices/<path>, and
// class/{infiniband,net}/<name> -> ../../devices/<path>/{infiniband,net}/<name> whose `device`
// is ../../../<bdf>. A BDF the XML holds twice gets its bus/pci/devices link to the GPU/NIC.
void Replay(Model& m, ReplayTree& tree) {
  std::map<std::string, std::vector<size_t>> by_bdf;
  for (size_t i = 0; i < m.functions.size(); ++i) by_bdf[m.functions[i].bdf].push_back(i);
  for (const auto& [bdf, list] : by_bdf) {
    size_t linked = list.front();
    int endpoints = 0;
    for (size_t i : list) {
      if (m.functions[i].gpu || m.functions[i].nic) {
        linked = i;
        ++endpoints;
      }
    }
    if (list.size() > 1) {
      std::string where;
      for (size_t i : list) where += " " + m.functions[i].Path();
      m.notes.push_back("BDF " + bdf + " appears " + std::to_string(list.size()) +
                        " times in the XML:" + where + "; bus/pci/devices links to " +
                        m.functions[linked].Path());
      if (endpoints > 1) m.errors.push_back("two GPUs/NICs share BDF " + bdf);
    }
    const std::string dir = "devices/" + m.functions[linked].Path();
    tree.Link("../../../" + dir, fs::path("bus/pci/devices") / bdf);
  }
  for (const PciFunction& f : m.functions) {
    const fs::path dir = fs::path("devices") / f.Path();
    tree.Write(dir / "vendor", Hex(f.vendor, 4));
    tree.Write(dir / "device", Hex(f.device, 4));
    tree.Write(dir / "class", Hex(f.class_code, 6));
    tree.Write(dir / "numa_node", f.numa_node ? std::to_string(*f.numa_node) : "-1");
    if (auto link = DecomposeLink(f.link_gbps)) {
      for (const char* prefix : {"current", "max"}) {
        tree.Write(dir / (std::string(prefix) + "_link_speed"), GtsText(link->gts));
        tree.Write(dir / (std::string(prefix) + "_link_width"), std::to_string(link->width));
      }
    } else if (f.link_gbps > 0) {
      m.notes.push_back(f.bdf + ": pci_link_speed " + std::to_string(f.link_gbps) +
                        " GB/s matches no PCIe generation × width; no link files");
    }
    for (const auto& [cls, names] :
         {std::pair{"infiniband", &f.rdma_devices}, std::pair{"net", &f.netdevs}}) {
      for (const std::string& name : *names) {
        tree.Link("../../../" + f.bdf, dir / cls / name / "device");
        tree.Link("../../" + (dir / cls / name).string(), fs::path("class") / cls / name);
      }
    }
  }
}

// ---------------------------------------------------------------- the collector

struct Collection {
  Status status;
  std::vector<Status> errors;
  std::string text;
};

Collection CollectTree(const std::string& root) {
  testing::CollectorTestContext inputs(root);
  auto collector = NewTopologyCollector(inputs.Context());
  if (!collector) return Collection{collector.error(), {}, ""};
  MetricSink sink;
  Collection run;
  run.status = (*collector)->Collect(sink);
  run.errors = sink.errors();
  run.text = testing::Exposition(sink.TakeFamilies());
  return run;
}

std::vector<std::string> LinesWith(const std::string& text, std::string_view prefix) {
  std::istringstream lines(text);
  std::vector<std::string> out;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) out.push_back(line);
  }
  return out;
}

// The value of label `name` in an exposition line, or nullopt.
std::optional<std::string> Label(const std::string& line, std::string_view name) {
  const std::string key = std::string(name) + "=\"";
  size_t at = line.find("{" + key);
  if (at == std::string::npos) at = line.find("," + key);
  if (at == std::string::npos) return std::nullopt;
  at += key.size() + 1;
  const size_t end = line.find('"', at);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(at, end - at);
}

std::optional<double> SampleValue(const std::string& text, const std::string& series) {
  const auto lines = LinesWith(text, series + " ");
  if (lines.size() != 1) return std::nullopt;
  return std::atof(lines[0].substr(series.size() + 1).c_str());
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

// ---------------------------------------------------------------- the cross-check

struct XmlCase {
  const char* file;
  size_t gpus;  // what the XML holds (a check of the reader above, not of the collector)
  size_t nics;
};

class TopologyXmlTest : public ::testing::TestWithParam<XmlCase> {};

TEST_P(TopologyXmlTest, walk_matches_the_hwloc_tree) {
  const fs::path corpus = testing::SourcePath("../shared/fixtures/external");
  if (!fs::is_directory(corpus)) GTEST_SKIP() << "external corpus not found: " << corpus;
  const fs::path xml = corpus / "topo/hwloc-xml" / GetParam().file;
  ASSERT_TRUE(fs::is_regular_file(xml)) << "missing from the corpus: " << xml;

  Model m = BuildModel(testing::ReadTextFile(xml.string()));
  ASSERT_TRUE(m.errors.empty()) << ::testing::PrintToString(m.errors);
  ASSERT_EQ(m.gpus.size(), GetParam().gpus) << "GPUs in the XML";
  ASSERT_EQ(m.nics.size(), GetParam().nics) << "NICs in the XML";

  ReplayTree tree(fs::path(GetParam().file).stem().string());
  Replay(m, tree);
  ASSERT_TRUE(m.errors.empty()) << ::testing::PrintToString(m.errors);
  const Collection run = CollectTree(tree.sys().string());
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_TRUE(run.errors.empty()) << run.errors.size() << " errors, first: "
                                  << (run.errors.empty() ? "" : run.errors[0].ToString());

  auto node_label = [](const PciFunction& f) {
    return f.numa_node ? std::to_string(*f.numa_node) : std::string();
  };
  // Every GPU and NIC, once, with the XML's host bridge and NUMA node; nothing invented.
  for (size_t i : m.gpus) {
    const PciFunction& g = m.functions[i];
    EXPECT_THAT(LinesWith(run.text, "fabric_topology_gpu_info{"),
                ::testing::Contains("fabric_topology_gpu_info{gpu=\"" + g.bdf + "\",vendor_id=\"" +
                                    Hex(g.vendor, 4) + "\",device_id=\"" + Hex(g.device, 4) +
                                    "\",host_bridge=\"" + g.host_bridge + "\",numa_node=\"" +
                                    node_label(g) + "\",local_cpulist=\"\"} 1"))
        << "GPU " << g.Path();
  }
  for (size_t i : m.nics) {
    const PciFunction& n = m.functions[i];
    EXPECT_THAT(LinesWith(run.text, "fabric_topology_nic_info{"),
                ::testing::Contains("fabric_topology_nic_info{nic=\"" + n.bdf + "\",vendor_id=\"" +
                                    Hex(n.vendor, 4) + "\",device_id=\"" + Hex(n.device, 4) +
                                    "\",rdma_device=\"" + Join(n.rdma_devices) + "\",netdev=\"" +
                                    Join(n.netdevs) + "\",host_bridge=\"" + n.host_bridge +
                                    "\",numa_node=\"" + node_label(n) + "\",local_cpulist=\"\"} 1"))
        << "NIC " << n.Path();
  }
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_info{").size(), m.gpus.size());
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_nic_info{").size(), m.nics.size());

  // Every GPU-NIC pair at the level the XML structure gives.
  std::map<std::string, int> histogram;
  std::ostringstream pair_report;
  bool any_rdma = false;
  for (size_t i : m.nics) any_rdma |= !m.functions[i].rdma_devices.empty();
  for (size_t gi : m.gpus) {
    const PciFunction& g = m.functions[gi];
    int nearest = 99;
    std::vector<std::pair<const PciFunction*, std::string>> expected;
    for (size_t ni : m.nics) {
      const PciFunction& n = m.functions[ni];
      std::string why;
      const std::string want = ExpectedLevel(m, g, n, &why);
      expected.emplace_back(&n, want);
      if (!any_rdma || !n.rdma_devices.empty()) nearest = std::min(nearest, LevelRank(want));
      ++histogram[want];
      const auto lines = LinesWith(run.text, "fabric_topology_gpu_nic_link_info{gpu=\"" + g.bdf +
                                                 "\",nic=\"" + n.bdf + "\",");
      const std::string got =
          lines.size() == 1 ? Label(lines[0], "level").value_or("(no level)") : "(no pair)";
      EXPECT_EQ(got, want) << "GPU " << g.bdf << " - NIC " << n.bdf << ": collector " << got
                           << ", XML-derived " << want << " (" << why << "); paths " << g.Path()
                           << " and " << n.Path();
      const auto distance =
          SampleValue(run.text, "fabric_topology_gpu_nic_distance{gpu=\"" + g.bdf + "\",nic=\"" +
                                    n.bdf + "\",rdma_device=\"" + Join(n.rdma_devices) + "\"}");
      EXPECT_EQ(distance.value_or(-1), LevelRank(want)) << g.bdf << " - " << n.bdf;
      pair_report << "\n    GPU " << g.bdf << " (node " << node_label(g) << ") - NIC " << n.bdf
                  << (n.rdma_devices.empty() ? "" : " " + Join(n.rdma_devices)) << " (node "
                  << node_label(n) << "): " << want << " [collector " << got << "]";
    }
    if (m.nics.empty()) continue;
    // The nearest NICs (RDMA-capable ones only when there is any) and the remote flag.
    std::set<std::string> want_nearest, got_nearest;
    for (const auto& [n, level] : expected) {
      if ((any_rdma && n->rdma_devices.empty()) || LevelRank(level) != nearest) continue;
      want_nearest.insert(n->bdf + " " + level);
    }
    for (const std::string& line :
         LinesWith(run.text, "fabric_topology_gpu_nearest_nic_info{gpu=\"" + g.bdf + "\",")) {
      got_nearest.insert(Label(line, "nic").value_or("?") + " " +
                         Label(line, "level").value_or("?"));
    }
    EXPECT_EQ(got_nearest, want_nearest) << "nearest NICs of GPU " << g.bdf;
    EXPECT_EQ(SampleValue(run.text, "fabric_topology_gpu_nic_remote{gpu=\"" + g.bdf + "\"}"),
              std::optional<double>(nearest >= LevelRank("NODE") ? 1 : 0))
        << "remote flag of GPU " << g.bdf;
  }
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_nic_link_info{").size(),
            m.gpus.size() * m.nics.size());
  if (m.nics.empty()) {
    EXPECT_THAT(LinesWith(run.text, "fabric_topology_gpu_nic_remote{"), ::testing::IsEmpty());
  }

  // The tree the walk rebuilt: each GPU, NIC and bridge on their paths with the XML's parent
  // (upstream) and host bridge, and with link attributes giving the XML's GB/s back.
  std::set<std::string> path_bridges;
  std::vector<std::pair<const PciFunction*, std::string>> reported;
  for (const std::vector<size_t>* list : {&m.gpus, &m.nics}) {
    for (size_t i : *list) {
      const PciFunction& f = m.functions[i];
      reported.emplace_back(&f, f.gpu ? "gpu" : "nic");
      for (size_t k = 0; k + 1 < f.chain.size(); ++k) path_bridges.insert(f.chain[k]);
    }
  }
  for (const PciFunction& f : m.functions) {
    if (f.bridge && path_bridges.contains(f.bdf)) reported.emplace_back(&f, "bridge");
  }
  int links_checked = 0;
  for (const auto& [f, role] : reported) {
    const std::string upstream =
        f->chain.size() >= 2 ? f->chain[f->chain.size() - 2] : f->host_bridge;
    const std::string device = "{device=\"" + f->bdf + "\",role=\"" + role + "\"";
    EXPECT_THAT(
        LinesWith(run.text, "fabric_pcie_device_info" + device),
        ::testing::ElementsAre("fabric_pcie_device_info" + device + ",vendor_id=\"" +
                               Hex(f->vendor, 4) + "\",device_id=\"" + Hex(f->device, 4) +
                               "\",pci_class=\"" + Hex(f->class_code, 6) + "\",upstream=\"" +
                               upstream + "\",host_bridge=\"" + f->host_bridge + "\"} 1"))
        << f->Path();
    const auto speed =
        SampleValue(run.text, "fabric_pcie_link_speed_transfers_per_second" + device + "}");
    const auto width = SampleValue(run.text, "fabric_pcie_link_width_lanes" + device + "}");
    if (!DecomposeLink(f->link_gbps)) {
      EXPECT_FALSE(speed.has_value()) << f->Path();
      continue;
    }
    ASSERT_TRUE(speed && width) << "no link speed/width for " << f->Path();
    EXPECT_NEAR(LinkGBps(*speed / 1e9, *width), f->link_gbps, 1e-5) << f->Path();
    EXPECT_EQ(SampleValue(run.text, "fabric_pcie_link_downtrained" + device + "}"),
              std::optional<double>(0))
        << f->Path();
    ++links_checked;
  }
  EXPECT_EQ(LinesWith(run.text, "fabric_pcie_device_info{").size(), reported.size());

  // Summary.
  std::ostringstream summary;
  summary << "[hwloc-xml] " << GetParam().file << ": " << m.gpus.size() << " GPUs, "
          << m.nics.size() << " NICs, " << m.gpus.size() * m.nics.size() << " pairs";
  for (const auto& [level, count] : histogram) summary << " " << level << "=" << count;
  summary << "; " << path_bridges.size() << " path bridges, " << links_checked
          << " links checked; GPUs (NUMA node):";
  for (size_t i : m.gpus)
    summary << " " << m.functions[i].bdf << "(" << node_label(m.functions[i]) << ")";
  for (const std::string& note : m.notes) summary << "\n    note: " << note;
  std::cout << summary.str() << pair_report.str() << std::endl;
}

INSTANTIATE_TEST_SUITE_P(HwlocXml, TopologyXmlTest,
                         ::testing::Values(XmlCase{"hwloc_32em64t-2n8c2t-pci-wholeio.xml", 4, 3},
                                           XmlCase{"hwloc_nvidiaDGX2.xml", 16, 0},
                                           XmlCase{"hwloc_power8gpudistances.xml", 4, 0}),
                         [](const ::testing::TestParamInfo<XmlCase>& info) {
                           std::string name = fs::path(info.param.file).stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace fabricwatch::topology
