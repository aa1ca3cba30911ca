#include "tools/fabricsim/tree_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "collectors/sys/unique_fd.h"

namespace fabricwatch::sim {

namespace fs = std::filesystem;

std::string TreeWriter::Path(std::string_view relative) const {
  return root_ + "/" + std::string(relative);
}

Status TreeWriter::MakeDirs(std::string_view relative) {
  std::error_code ec;
  fs::create_directories(Path(relative), ec);
  if (ec) return FromErrno(ec.value(), "mkdir -p " + Path(relative));
  return Status::Ok();
}

Status TreeWriter::Write(std::string_view relative, std::string_view content) {
  std::string key(relative);
  auto it = last_.find(key);
  if (it != last_.end() && it->second == content) return Status::Ok();
  const std::string path = Path(relative);
  if (it == last_.end()) {
    const size_t slash = key.rfind('/');
    if (slash != std::string::npos) {
      if (Status s = MakeDirs(key.substr(0, slash)); !s.ok()) return s;
    }
  }
  // No O_TRUNC: the inode and the agent's open fds stay valid (see the header).
  sys::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) return FromErrno(errno, "open " + path);
  const ssize_t n = ::pwrite(fd.get(), content.data(), content.size(), 0);
  if (n < 0 || static_cast<size_t>(n) != content.size()) {
    return FromErrno(n < 0 ? errno : EIO, "pwrite " + path);
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(content.size())) != 0) {
    return FromErrno(errno, "ftruncate " + path);
  }
  ++writes_;
  if (it == last_.end()) {
    last_.emplace(std::move(key), std::string(content));
  } else {
    it->second.assign(content);
  }
  return Status::Ok();
}

Status TreeWriter::WriteBytes(std::string_view relative, std::span<const uint8_t> content) {
  return Write(relative,
               std::string_view(reinterpret_cast<const char*>(content.data()), content.size()));
}

Status TreeWriter::Append(std::string_view relative, std::string_view content) {
  const std::string path = Path(relative);
  last_.erase(std::string(relative));  // its content is no longer what Write() last wrote
  sys::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd) return FromErrno(errno, "open " + path);
  size_t done = 0;
  while (done < content.size()) {
    // One write() normally; a short one (a signal, a full disk) is continued, not dropped.
    const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return FromErrno(n < 0 ? errno : EIO, "append " + path);
    done += static_cast<size_t>(n);
  }
  ++writes_;
  return Status::Ok();
}

Status TreeWriter::Symlink(std::string_view relative, std::string_view target) {
  const std::string path = Path(relative);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return FromErrno(ec.value(), "mkdir -p for link " + path);
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    if (fs::read_symlink(path, ec) == fs::path(target)) return Status::Ok();
    fs::remove(path, ec);
  }
  if (::symlink(std::string(target).c_str(), path.c_str()) != 0) {
    return FromErrno(errno, "symlink " + path + " -> " + std::string(target));
  }
  return Status::Ok();
}

Status TreeWriter::Remove(std::string_view relative) {
  const std::string path = Path(relative);
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return FromErrno(ec.value(), "rm -r " + path);
  const std::string prefix = std::string(relative) + "/";
  std::erase_if(last_, [&](const auto& kv) {
    return kv.first == relative || kv.first.starts_with(prefix);
  });
  return Status::Ok();
}

}  // namespace fabricwatch::sim
