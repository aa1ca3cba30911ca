#include "collectors/sys/sysfs.h"

#include <algorithm>
#include <cerrno>

#include "base/value_parse.h"

namespace fabricwatch::sys {
namespace {

// sysfs attributes are at most one page; a read that fills this buffer was truncated.
constexpr size_t kMaxAttributeBytes = 4096;
// Counters and states are short; start small, grow once if an attribute is longer.
constexpr size_t kInitialAttributeBuffer = 128;

Result<std::string_view> ReadInto(const FileSystem& fs, const UniqueFd& fd, std::string& buffer,
                                  const std::string& path) {
  for (;;) {
    auto n = fs.ReadAt0(fd, std::span<char>(buffer.data(), buffer.size()), path);
    if (!n) return Error(n.error());
    if (*n < buffer.size()) return TrimSpace(std::string_view(buffer.data(), *n));
    if (buffer.size() >= kMaxAttributeBytes) {
      return Error(StatusCode::kInvalidArgument,
                   "read " + path + ": value longer than " +
                       std::to_string(kMaxAttributeBytes) + " bytes");
    }
    buffer.resize(kMaxAttributeBytes);  // pread at 0 again: sysfs regenerates the whole value
  }
}

}  // namespace

SysFs::SysFs(std::string root, const FileSystem& fs, FdBudget* fd_budget)
    : root_(std::move(root)), fs_(fs), fd_budget_(fd_budget) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string SysFs::Path(std::string_view relative) const {
  std::string path;
  AssignPath(relative, path);
  return path;
}

void SysFs::AssignPath(std::string_view relative, std::string& path) const {
  path.assign(root_);
  if (relative.empty()) return;
  if (path != "/") path += '/';
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  path += relative;
}

Result<std::string> SysFs::ReadString(std::string_view relative) const {
  std::string path = Path(relative);
  auto fd = fs_.Open(path);
  if (!fd) return Error(fd.error());
  std::string buffer(kInitialAttributeBuffer, '\0');
  auto value = ReadInto(fs_, *fd, buffer, path);
  if (!value) return Error(value.error());
  return std::string(*value);
}

Result<size_t> SysFs::ReadBinary(std::string_view relative, std::span<uint8_t> buf) const {
  std::string path = Path(relative);
  auto fd = fs_.Open(path);
  if (!fd) return Error(fd.error());
  return fs_.ReadAt0(*fd, std::span<char>(reinterpret_cast<char*>(buf.data()), buf.size()), path);
}

Result<uint64_t> SysFs::ReadUint64(std::string_view relative) const {
  auto text = ReadString(relative);
  if (!text) return Error(text.error());
  return ParseUint64(*text, Path(relative));
}

Result<int64_t> SysFs::ReadInt64(std::string_view relative) const {
  auto text = ReadString(relative);
  if (!text) return Error(text.error());
  return ParseInt64(*text, Path(relative));
}

Result<std::vector<std::string>> SysFs::ListDir(std::string_view relative) const {
  auto names = fs_.ListDir(Path(relative));
  if (names) std::sort(names->begin(), names->end());
  return names;
}

Status SysFs::ListDirInto(std::string_view relative, std::vector<std::string>& names) const {
  thread_local std::string path;  // this thread's scratch: SysFs is shared between collectors
  AssignPath(relative, path);
  if (Status status = fs_.ListDirInto(path, names); !status.ok()) return status;
  std::sort(names.begin(), names.end());
  return Status::Ok();
}

Result<std::string> SysFs::ReadLink(std::string_view relative) const {
  return fs_.ReadLink(Path(relative));
}

Result<std::string> SysFs::ReadLinkBasename(std::string_view relative) const {
  auto target = ReadLink(relative);
  if (!target) return Error(target.error());
  std::string_view t = *target;
  while (!t.empty() && t.back() == '/') t.remove_suffix(1);
  size_t slash = t.rfind('/');
  std::string base(slash == std::string_view::npos ? t : t.substr(slash + 1));
  if (base.empty() || base == "." || base == "..") {
    return Error(StatusCode::kInvalidArgument,
                 "readlink " + Path(relative) + ": unusable target \"" + *target + "\"");
  }
  return base;
}

AttributeFile::AttributeFile(const SysFs& sysfs, std::string relative, bool keep_open)
    : fs_(&sysfs.fs()),
      fd_budget_(sysfs.fd_budget()),
      path_(sysfs.Path(relative)),
      keep_open_(keep_open) {}

Result<std::string_view> AttributeFile::Read() {
  if (absent_) return Error(*absent_);
  if (!fd_) {
    auto fd = fs_->Open(path_);
    if (!fd) {
      if (fd.error().sys_errno() == ENOENT) absent_ = fd.error();
      return Error(fd.error());
    }
    fd_ = std::move(*fd);
  }
  auto value = [&]() -> Result<std::string_view> {
    if (overflow_.empty()) {
      auto n = fs_->ReadAt0(fd_, std::span<char>(inline_.data(), inline_.size()), path_);
      if (!n) return Error(n.error());
      if (*n < inline_.size()) return TrimSpace(std::string_view(inline_.data(), *n));
      overflow_.resize(kMaxAttributeBytes);  // longer than inline_: read again, whole, into a page
    }
    return ReadInto(*fs_, fd_, overflow_, path_);
  }();
  // Drop the fd on error (ENODEV after hot-unplug) so the next read reopens the path. Keep it
  // only with a slot of the budget (taken again on every read while there is none).
  const bool keep =
      value && keep_open_ && (fd_budget_ == nullptr || slot_ || (slot_ = fd_budget_->Take()));
  if (!keep) {
    fd_.Reset();
    slot_.Reset();
  }
  return value;
}

Result<uint64_t> AttributeFile::ReadUint64() {
  auto text = Read();
  if (!text) return Error(text.error());
  return ParseUint64(*text, path_);
}

Result<int64_t> AttributeFile::ReadInt64() {
  auto text = Read();
  if (!text) return Error(text.error());
  return ParseInt64(*text, path_);
}

}  // namespace fabricwatch::sys
