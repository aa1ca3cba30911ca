#pragma once
// What a kernel log record names (docs/reference.md §9.2): the `DEVICE=` continuation
// (`+pci:<bdf>`, `n<ifindex>`), the text prefix of the dev_* printers (`mlx5_core 0000:3b:00.0: `),
// of netdev_* (`mlx5_core 0000:3b:00.0 enp59s0f0np0: `), of mlx5_ib's pr_err (`mlx5_0/1: `), and
// the source function of an AER "received from <bdf>" line, which the Root Port prints. Pure:
// names from the text are checked (a PCI address's shape, the kernel's rules for device names)
// before anything uses them as a path. Fuzzed with the record parser (tools/fuzz, target kmsg).

#include <string>
#include <string_view>

#include "base/value_parse.h"
#include "collectors/kmsg/kmsg_parse.h"
#include "collectors/kmsg/kmsg_patterns.h"

namespace fabricwatch::kmsg {

struct RecordSubject {
  std::string pci;     // PCI function address (0000:3b:00.0), or ""
  std::string netdev;  // netdev the text names, or ""
  std::string ibdev;   // RDMA device the text names, or ""
  int ifindex = 0;     // DEVICE=n<ifindex>, or 0
  // The prefix names a device in a shape no kernel name has ("mlx5_core ../../x: "): not a line
  // that names nothing, which is attributed by its driver.
  bool bad_name = false;
  bool empty() const { return pci.empty() && netdev.empty() && ibdev.empty() && ifindex == 0; }
};

// `message` is the record's unescaped text; `pattern` the row it matched (an AER source line
// names the erring function in its text, not in its prefix).
RecordSubject SubjectOf(const kmsg::KmsgRecord& record, std::string_view message,
                        const kmsg::KernelEventPattern& pattern);

// dddd:bb:dd.f: fabricwatch::IsPciAddress (base/value_parse.h), found from here.

}  // namespace fabricwatch::kmsg
