// libFuzzer target for the /dev/kmsg record parser and the record splitter of the --path.kmsg
// replay (collectors/kmsg/kmsg_parse.h, issue 23), the pattern table's matcher and the subject
// reader that turns a record's text into device names (collectors/kmsg/kmsg_subject.h): the bytes
// as one record, and as a stream fed in two chunks. Besides the sanitizers' checks: a parsed record
// honours the bounds (message at most 1024 bytes, priority 0-7), an error has a message, and the
// splitter never returns more bytes than it was fed nor a record over the bound.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectors/kmsg/kmsg_parse.h"
#include "collectors/kmsg/kmsg_patterns.h"
#include "collectors/kmsg/kmsg_subject.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricwatch::kmsg;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto r = ParseKmsgRecord(text)) {
    Check(r->message.size() <= kMaxKmsgMessageBytes, "a message over the bound");
    Check(r->priority <= 7, "a priority over 7");
    const std::string message = UnescapeKmsg(r->message);
    Check(message.size() <= r->message.size(), "unescaping grew the message");
    // The pattern table and the subject reader (collectors/kmsg/kmsg_subject.h) see hostile text
    // too: whatever they return must be bounded and never a path outside sysfs.
    if (const KernelEventPattern* pattern = MatchKernelEvent(message)) {
      const auto subject = fabricwatch::kmsg::SubjectOf(*r, message, *pattern);
      for (const std::string* name : {&subject.netdev, &subject.ibdev}) {
        Check(name->size() <= 63, "a device name over the kernel's bound");
        Check(name->find('/') == std::string::npos && *name != "." && *name != "..",
              "a device name that is a path");
      }
      Check(subject.pci.empty() || fabricwatch::IsPciAddress(subject.pci),
            "a PCI address of the wrong shape");
    }
    (void)FabricDriverOf(message);
  } else {
    Check(!r.error().message().empty(), "an error without a message");
  }
  KmsgSplitter splitter;
  splitter.Feed(text.substr(0, size / 2));
  std::string record;
  size_t out = 0;
  while (splitter.Next(record)) {
    Check(record.size() <= kMaxKmsgRecordBytes, "a split record over the bound");
    out += record.size();
  }
  splitter.Feed(text.substr(size / 2));
  splitter.Finish();
  while (splitter.Next(record)) {
    Check(record.size() <= kMaxKmsgRecordBytes, "a split record over the bound");
    out += record.size();
  }
  Check(out <= size, "the splitter returned more than it was fed");
  return 0;
}
