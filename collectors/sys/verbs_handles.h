#pragma once
// RAII owners of libibverbs handles (design.md §6: every OS resource has an RAII owner), shared
// by the port-event listener (verbs_events.h) and the port query (verbs_ports.h).

#include <infiniband/verbs.h>

#include <memory>

namespace fabricwatch::sys {

struct VerbsDeviceListFree {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct VerbsContextClose {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
// ibv_get_device_list()'s array; the ibv_device pointers in it stay valid only while it lives,
// but a context opened from one outlives the list (libibverbs keeps the device referenced).
using VerbsDeviceList = std::unique_ptr<ibv_device*, VerbsDeviceListFree>;
using VerbsContext = std::unique_ptr<ibv_context, VerbsContextClose>;

}  // namespace fabricwatch::sys
