#include "exporter/http/web_security_policy.h"

#include <mutex>

namespace fabricwatch::exporter {
namespace {

class StatePolicy final : public SecurityPolicy {
 public:
  explicit StatePolicy(std::shared_ptr<const WebSecurityState> state) : state_(std::move(state)) {}
  SSL_CTX* tls_context() const override { return state_->tls_context(); }
  Status CheckClientCertificate(SSL* ssl) const override {
    return state_->CheckClientCertificate(ssl);
  }
  bool auth_required(std::string_view path) const override { return state_->auth_required(path); }
  Auth CheckCached(std::string_view authorization) const override {
    switch (state_->CheckCached(authorization)) {
      case WebSecurityState::Auth::kAllowed:
        return Auth::kAllowed;
      case WebSecurityState::Auth::kDenied:
        return Auth::kDenied;
      case WebSecurityState::Auth::kNeedsSlowCheck:
        break;
    }
    return Auth::kNeedsSlowCheck;
  }
  bool CheckSlow(std::string_view authorization) const override {
    return state_->CheckSlow(authorization);
  }
  const std::vector<std::pair<std::string, std::string>>& headers() const override {
    return state_->headers();
  }
  const WebSecurityState* state() const { return state_.get(); }

 private:
  std::shared_ptr<const WebSecurityState> state_;
};

}  // namespace

SecuritySource MakeSecuritySource(std::shared_ptr<WebSecurity> security) {
  // One policy object per generation: connections of the same generation share it. Only the
  // event loop calls the source, but the lock keeps it safe for any caller.
  struct Cache {
    std::mutex mutex;
    std::shared_ptr<const StatePolicy> policy;
  };
  return [security = std::move(security),
          cache = std::make_shared<Cache>()]() -> std::shared_ptr<const SecurityPolicy> {
    // The files are read on WebSecurity's own thread, never here on the event loop; errors are
    // logged there, and the current generation is kept.
    security->RequestCheck();
    std::shared_ptr<const WebSecurityState> current = security->Current();
    std::lock_guard lock(cache->mutex);
    if (!cache->policy || cache->policy->state() != current.get()) {
      cache->policy = std::make_shared<const StatePolicy>(std::move(current));
    }
    return cache->policy;
  };
}

}  // namespace fabricwatch::exporter
