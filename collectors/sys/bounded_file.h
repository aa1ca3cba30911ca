#pragma once
// One reader for every file the agent reads by a path an operator gives it (--config.file,
// --web.config.file and the certificates, keys and CAs it names, --shape.file, the state file):
// a bad path must give a clear error at once, never block the caller, never exhaust memory
// (issue 39: a FIFO blocked open() with the stop signals blocked, /dev/zero was read to 2 GB).
//
//   - open(O_RDONLY | O_NONBLOCK | O_NOCTTY): opening a FIFO or a terminal never waits for a
//     writer or takes a controlling terminal (open(2) O_NONBLOCK, fifo(7));
//   - O_NOFOLLOW where a link is not expected (the state file); configuration files may be links
//     (a Kubernetes ConfigMap or Secret volume is a tree of symlinks swapped atomically);
//   - fstat() on the opened descriptor: anything but a regular file is refused (a device, FIFO,
//     socket or directory), so the check and the read are on the same inode;
//   - a size cap per kind of file, checked on st_size and again while reading (a file that grows
//     while read is cut off and refused, never read without bound);
//   - the owner is returned, so a caller that must not trust another user's file can say so.
//
// Errors name the kind and the path and say what is wrong; they never quote the file's bytes.

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::sys {

struct BoundedFileOptions {
  std::string_view kind;  // for messages: "web config file", "state file", ...
  size_t max_bytes = 1 << 20;
  bool follow_symlinks = true;
};

struct BoundedFile {
  std::string text;
  uid_t owner = 0;
  mode_t mode = 0;
};

// kNotFound when the path does not exist; kInvalidArgument when it is not a regular file, a
// link where none is allowed, or larger than the cap; other codes for I/O errors.
Result<BoundedFile> ReadBoundedFile(const std::string& path, const BoundedFileOptions& options);

// Ok when nothing exists at `path` (lstat) or it is a regular file; kInvalidArgument naming what
// is there otherwise (a device, FIFO, socket, directory or, when links are not followed, a
// symlink). For paths the agent will create or replace, checked before it writes.
Status CheckRegularOrAbsent(const std::string& path, const BoundedFileOptions& options);

// "a FIFO", "a character device", ... for messages.
std::string_view FileTypeName(mode_t mode);

}  // namespace fabricwatch::sys
