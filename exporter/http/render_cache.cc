#include "exporter/http/render_cache.h"

#include "exporter/http/render.h"

namespace fabricwatch::exporter {

const std::string* RenderedBody::Gzipped() const {
  std::call_once(gzip_once_, [this] {
    if (auto compressed = Gzip(text_))
      gzipped_ = std::make_unique<std::string>(std::move(*compressed));
  });
  return gzipped_.get();
}

RenderCache::RenderCache(std::function<std::string()> render, std::chrono::milliseconds max_age,
                         SteadyNow now)
    : render_(std::move(render)), max_age_(max_age), now_(std::move(now)) {}

std::shared_ptr<const RenderedBody> RenderCache::Fresh(
    std::chrono::steady_clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (current_ != nullptr && now - rendered_at_ < max_age_) return current_;
  return nullptr;
}

std::shared_ptr<const RenderedBody> RenderCache::Get() {
  if (auto body = Fresh(now_())) return body;
  std::lock_guard single_flight(render_mutex_);
  // Another caller may have rendered while this one waited for the lock.
  const auto started = now_();
  if (auto body = Fresh(started)) return body;
  auto body = std::make_shared<const RenderedBody>(render_());
  std::lock_guard lock(mutex_);
  current_ = body;
  // Aged from when the render started: its data is as old as that.
  rendered_at_ = started;
  ++renders_;
  return body;
}

uint64_t RenderCache::renders() const {
  std::lock_guard lock(mutex_);
  return renders_;
}

}  // namespace fabricwatch::exporter
