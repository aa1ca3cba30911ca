#pragma once
// RAII owners of the verbs objects one probe creates (design.md §6: every OS resource has an
// RAII owner). One ProbeSide is a QP with everything under it; its members are declared in the
// order they are created, so they are destroyed in the reverse order the verbs API requires:
// QP, CQ, MR (then the buffer it pinned), PD, context.

#include <infiniband/verbs.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <memory>

#include "collectors/sys/verbs_handles.h"

namespace fabricwatch::probe {

struct VerbsPdFree {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct VerbsMrFree {
  void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct VerbsCqFree {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct VerbsQpFree {
  void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};
using VerbsPd = std::unique_ptr<ibv_pd, VerbsPdFree>;
using VerbsMr = std::unique_ptr<ibv_mr, VerbsMrFree>;
using VerbsCq = std::unique_ptr<ibv_cq, VerbsCqFree>;
using VerbsQp = std::unique_ptr<ibv_qp, VerbsQpFree>;
// An anonymous mapping of whole pages: the pages pinned are exactly the buffer's, and
// MADV_DONTFORK on it touches nothing else (a heap buffer would share its last page).
class MappedBuffer {
 public:
  MappedBuffer() = default;
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  ~MappedBuffer() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  // errno on failure.
  int Map(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return errno;
    data_ = static_cast<uint8_t*>(p);
    bytes_ = bytes;
    return 0;
  }
  uint8_t* get() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

// Where a QP is reached: its port's LID (InfiniBand) or GID (RoCE), and the QP number.
struct QpAddress {
  bool ethernet = false;
  uint16_t lid = 0;
  ibv_gid gid{};
  int gid_index = -1;  // the local GID index used as the source (RoCE only)
  uint32_t qp_num = 0;
};

struct ProbeSide {
  std::string label;  // "rxe0/1", for error lines
  uint8_t port = 1;
  ibv_port_attr port_attr{};
  QpAddress address;
  sys::VerbsContext context;
  VerbsPd pd;
  MappedBuffer buffer;
  VerbsMr mr;
  VerbsCq cq;
  VerbsQp qp;
};

}  // namespace fabricwatch::probe
