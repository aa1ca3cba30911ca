#include "tests/testing/fake_filesystem.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace fabricwatch::testing {

void FakeFileSystem::Inject(Op op, const std::string& path, int err) {
  std::lock_guard lock(mutex_);
  errors_[{op, path}] = err;
}

void FakeFileSystem::InjectReads(const std::string& path, int err, int count) {
  std::lock_guard lock(mutex_);
  read_budget_[path] = {err, count};
}

void FakeFileSystem::Clear() {
  std::lock_guard lock(mutex_);
  errors_.clear();
  read_budget_.clear();
  contents_.clear();
}

void FakeFileSystem::SetContent(const std::string& path, std::string content) {
  std::lock_guard lock(mutex_);
  contents_[path] = std::move(content);
}

int FakeFileSystem::open_calls() const {
  std::lock_guard lock(mutex_);
  return open_calls_;
}

int FakeFileSystem::read_calls() const {
  std::lock_guard lock(mutex_);
  return read_calls_;
}

std::optional<int> FakeFileSystem::Injected(Op op, const std::string& path) const {
  auto it = errors_.find({op, path});
  if (it != errors_.end()) return it->second;
  if (op == Op::kRead) {
    auto budget = read_budget_.find(path);
    if (budget != read_budget_.end() && budget->second.second > 0) {
      --budget->second.second;
      return budget->second.first;
    }
  }
  return std::nullopt;
}

Result<sys::UniqueFd> FakeFileSystem::Open(const std::string& path) const {
  {
    std::lock_guard lock(mutex_);
    ++open_calls_;
    if (auto err = Injected(Op::kOpen, path)) return Error(FromErrno(*err, "open " + path));
    if (contents_.contains(path)) {
      // Any readable fd will do; ReadAt0 serves the content by path.
      return sys::UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    }
  }
  return real_.Open(path);
}

Result<size_t> FakeFileSystem::ReadAt0(const sys::UniqueFd& fd, std::span<char> buf,
                                       const std::string& path) const {
  {
    std::lock_guard lock(mutex_);
    ++read_calls_;
    if (auto err = Injected(Op::kRead, path)) return Error(FromErrno(*err, "read " + path));
    auto content = contents_.find(path);
    if (content != contents_.end()) {
      size_t n = std::min(buf.size(), content->second.size());
      std::memcpy(buf.data(), content->second.data(), n);
      return n;
    }
  }
  return real_.ReadAt0(fd, buf, path);
}

Result<std::vector<std::string>> FakeFileSystem::ListDir(const std::string& path) const {
  {
    std::lock_guard lock(mutex_);
    if (auto err = Injected(Op::kListDir, path)) {
      return Error(FromErrno(*err, "opendir " + path));
    }
  }
  return real_.ListDir(path);
}

Result<std::string> FakeFileSystem::ReadLink(const std::string& path) const {
  {
    std::lock_guard lock(mutex_);
    if (auto err = Injected(Op::kReadLink, path)) {
      return Error(FromErrno(*err, "readlink " + path));
    }
  }
  return real_.ReadLink(path);
}

}  // namespace fabricwatch::testing
