#pragma once
// Two network namespaces joined by a veth pair, for the real-kernel LLDP tests: created with
// `ip`, removed in the destructor. Code runs in one of them on a thread of its own (setns(2)
// changes the calling thread only), so the test process stays in its namespace; a socket keeps
// the namespace it was created in.

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

namespace fabricwatch::peer::testing {

class VethNetns {
 public:
  // Namespaces <tag>a<pid>/<tag>b<pid>, veth ends <tag>a<pid> (in a) and <tag>b<pid> (in b).
  explicit VethNetns(const std::string& tag) {
    const std::string id = std::to_string(getpid() % 100000);
    ns_a = tag + "a" + id;
    ns_b = tag + "b" + id;
    dev_a = ns_a;
    dev_b = ns_b;
    ok_ = Sh("ip netns add " + ns_a) && Sh("ip netns add " + ns_b) &&
          Sh("ip link add " + dev_a + " type veth peer name " + dev_b) &&
          Sh("ip link set " + dev_a + " netns " + ns_a) &&
          Sh("ip link set " + dev_b + " netns " + ns_b) &&
          Sh("ip -n " + ns_a + " link set " + dev_a + " up") &&
          Sh("ip -n " + ns_b + " link set " + dev_b + " up") &&
          Sh("ip -n " + ns_a + " link set lo up") && Sh("ip -n " + ns_b + " link set lo up");
  }
  ~VethNetns() {
    Sh("ip netns del " + ns_a + " 2>/dev/null");
    Sh("ip netns del " + ns_b + " 2>/dev/null");
  }
  VethNetns(const VethNetns&) = delete;
  VethNetns& operator=(const VethNetns&) = delete;

  bool ok() const { return ok_; }

  // Runs `fn` on a new thread inside namespace `ns` and waits for it; false when setns failed.
  static bool RunIn(const std::string& ns, const std::function<void()>& fn) {
    bool entered = false;
    std::thread t([&] {
      const int fd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return;
      entered = setns(fd, CLONE_NEWNET) == 0;
      close(fd);
      if (entered) fn();
    });
    t.join();
    return entered;
  }

  static bool Sh(const std::string& command) { return std::system(command.c_str()) == 0; }

  std::string ns_a, ns_b, dev_a, dev_b;

 private:
  bool ok_ = false;
};

inline bool HaveIpNetns() { return VethNetns::Sh("ip netns list >/dev/null 2>&1"); }

}  // namespace fabricwatch::peer::testing
