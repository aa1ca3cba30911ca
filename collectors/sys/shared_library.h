#pragma once
// Shared libraries that only one optional feature needs, loaded when that feature is first used
// (issue 40 item 2; docs/libraries.md): libcurl for the kubelet client and `fabricwatch check`,
// libibmad and libibumad for SMP queries, liblldpctl for the lldpd source. Linked, they were
// mapped, relocated and partly resident in every agent, with their own dependency trees (libcurl
// alone brings GnuTLS, nettle, p11-kit, Kerberos, LDAP...), on nodes that never use them.
//
// - SharedLibrary: one dlopen(3) handle, RTLD_NOW | RTLD_LOCAL (every symbol resolved at load, so
//   a broken library fails here and not in the middle of a call; nothing it exports is seen by
//   later loads), dlclose'd by its destructor.
// - SymbolBinder fills a struct of function pointers, typed by the library's own header
//   (`decltype(&curl_easy_init)`), so a changed prototype is a compile error, not a crash.
// - OnDemandLibrary<Api>: the library of one feature, loaded and bound once on the first Get()
//   (std::call_once, so concurrent first calls are safe), kept for the life of the process (never
//   dlclose'd: a function pointer may be in use on another thread, and libcurl's global state is
//   not meant to be unloaded). A failure is logged once, naming the library, the Debian package
//   that provides it and the feature that is off; every Get() returns the same error, which the
//   caller reports through its usual error path.
//
// The libraries' headers still give the types and constants: the build takes their include
// directories but does not link them (CMakeLists.txt).

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace fabricwatch::sys {

// What to load and what to say when it cannot be.
struct LibrarySpec {
  std::string_view soname;   // "libcurl.so.4": the ABI the headers describe, not the -dev link
  std::string_view package;  // "libcurl4": the Debian package that provides `soname`
  std::string_view feature;  // "the kubelet client (jobs.kubelet)": what is off without it
};

class SharedLibrary {
 public:
  // dlopen(soname, RTLD_NOW | RTLD_LOCAL). kUnavailable naming the library, dlerror() and the
  // package to install.
  static Result<SharedLibrary> Open(const LibrarySpec& spec);

  SharedLibrary(SharedLibrary&& other) noexcept
      : spec_(other.spec_), handle_(std::exchange(other.handle_, nullptr)) {}
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // dlsym(3); kNotFound naming the symbol and the library when it is not exported.
  Result<void*> Symbol(const char* name) const;

  const LibrarySpec& spec() const { return spec_; }

 private:
  SharedLibrary(const LibrarySpec& spec, void* handle) : spec_(spec), handle_(handle) {}

  LibrarySpec spec_;
  void* handle_ = nullptr;
};

// Resolves symbols into typed function pointers; the first missing one is kept as the status.
class SymbolBinder {
 public:
  explicit SymbolBinder(const SharedLibrary& library) : library_(library) {}

  template <typename Fn>
  void Bind(Fn*& slot, const char* name) {
    slot = nullptr;
    if (!status_.ok()) return;
    auto symbol = library_.Symbol(name);
    if (!symbol) {
      status_ = symbol.error();
      return;
    }
    // POSIX dlsym(3): a function's address comes back as void*; the conversion is the documented
    // way to use it (conditionally supported in C++, supported by every POSIX compiler).
    slot = reinterpret_cast<Fn*>(*symbol);
  }

  const Status& status() const { return status_; }

 private:
  const SharedLibrary& library_;
  Status status_;
};

// The one log line of a library that could not be loaded: warn on the agent's "main" logger, or
// spdlog's default one; none when neither exists (the returned error still says it all).
void LogLoadFailure(const Status& status);

// Loads `spec`, binds with `bind` and runs `init` (may be null) once; logs a failure once.
// Api: a struct of function pointers, value-initialised.
template <typename Api>
class OnDemandLibrary {
 public:
  using BindFn = void (*)(SymbolBinder&, Api&);
  using InitFn = Status (*)(const Api&);

  OnDemandLibrary(LibrarySpec spec, BindFn bind, InitFn init = nullptr)
      : spec_(spec), bind_(bind), init_(init) {}

  // The bound functions, or why they are not there (the same answer on every call).
  Result<const Api*> Get() {
    std::call_once(once_, [this] { status_ = Load(); });
    if (!status_.ok()) return Error(status_);
    return &api_;
  }

 private:
  Status Load() {
    auto library = SharedLibrary::Open(spec_);
    Status status = library ? Status::Ok() : library.error();
    if (library) {
      SymbolBinder binder(*library);
      bind_(binder, api_);
      status = binder.status();
      if (status.ok() && init_ != nullptr) status = init_(api_);
    }
    if (!status.ok()) {
      api_ = Api{};
      status = status.WithContext(std::string(spec_.feature) + " unavailable");
      LogLoadFailure(status);
      return status;
    }
    library_.emplace(std::move(*library));
    return status;
  }

  LibrarySpec spec_;
  BindFn bind_;
  InitFn init_;
  std::once_flag once_;
  Status status_;
  Api api_{};
  std::optional<SharedLibrary> library_;
};

}  // namespace fabricwatch::sys
