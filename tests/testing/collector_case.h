#pragma once
// CollectorCase: the inputs of one collector golden, read from a data file,
// tests/golden/collectors/<collector>/<case>.args (the golden test, tests/unit/collectors/
// golden_test.cc, builds the collector from them). One `key = value` per line; `#` starts a
// comment; keys may repeat where noted. Paths are relative to tests/fixtures/ unless they start
// with $sysfs/ or $ethtool/ (the sysfs root and the ethtool replay directory of this case).
//
//   sysfs = sysfs/roce-node/sys          the sysfs root (required)
//   ethtool_replay = ethtool/mlx5        an ethtool replay directory (--path.ethtool)
//   <source>_replay = kmsg/hgx-faults    the replay of a source the collector declares
//                                        (CollectorInfo::sources, --path.<source>): kmsg_replay,
//                                        smp_replay, lldp_replay, procfs_replay, ...; a source the
//                                        collector does not declare fails the case
//   replay_module = enp1s0f0 sfp-internal
//                                        (repeats) a netdev of the replay holding a module image
//                                        of tests/testing/module_images.h (sfp-internal,
//                                        sfp-external, qsfp28-paged, qsfp-flat-dac, cmis-8-lane,
//                                        cmis-flat-dac), or `none`: a cage without a module. The
//                                        replay is then a temporary copy of ethtool_replay (or an
//                                        empty directory) with these netdevs added.
//   option.<key> = <value>               (repeats) --collector.<name>.<key>, over the registry's
//                                        defaults
//   clock = 1795000000                   the wall clock, Unix seconds (required)
//   interval = 30s                       the collector interval (default: the registry's)
//   link_events = listening | idle       a link-event log, listener up or not
//   link_event = <unix s> <ifindex> <netdev> <up|down>
//                                        (repeats) a carrier transition recorded in that log
//   inject = <open|read|listdir|readlink> <path> <ERRNO>
//                                        (repeats) that operation on that path fails
//                                        (FakeFileSystem)
//   content = <path> <text>              (repeats) a read of <path> returns <text> and a newline
//   baseline = <case>                    a case of the same collector without the faults: this
//                                        case's samples must be exactly the baseline's golden
//                                        samples minus the lines that contain an `omitted` text
//   omitted = <text>                     (repeats) see baseline

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/core/collector.h"
#include "base/status.h"
#include "collectors/sys/link_events.h"
#include "tests/testing/fake_filesystem.h"

namespace fabricwatch::testing {

struct CollectorCase {
  struct Fault {
    FakeFileSystem::Op op;
    std::string path;  // as written, $sysfs/ or $ethtool/ not yet expanded
    int err;
  };
  struct Content {
    std::string path;
    std::string text;
  };
  struct Module {
    std::string netdev;
    std::string image;  // "none": an empty cage
  };

  std::string sysfs;
  std::string ethtool_replay;
  std::map<std::string, std::string> source_replays;  // by source name (<source>_replay)
  std::vector<Module> replay_modules;
  CollectorOptions options;
  std::chrono::system_clock::time_point clock;
  std::optional<std::chrono::milliseconds> interval;
  std::optional<bool> link_events_listening;
  std::vector<sys::LinkEvent> link_events;
  std::vector<Fault> faults;
  std::vector<Content> contents;
  std::string baseline;
  std::vector<std::string> omitted;
};

// Parses the text of a .args file. Errors name the line.
Result<CollectorCase> ParseCollectorCase(std::string_view text);

// The bytes of a module image of tests/testing/module_images.h by its .args name; NotFound for
// another name.
Result<std::vector<uint8_t>> ModuleImageNamed(std::string_view name);

}  // namespace fabricwatch::testing
