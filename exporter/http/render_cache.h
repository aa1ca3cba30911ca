#pragma once
// RenderCache: concurrent scrapers share one render of /metrics.
//
// The exposition only changes when a collector publishes a snapshot or the detectors evaluate
// (a few times a second), but Prometheus HA pairs, federation and ad-hoc curl can scrape at once.
// Rendering ~3000 series costs a few milliseconds of CPU; 16 scrapers each rendering their own
// copy would cost 16 times that and queue on two cores. So a body younger than `max_age` is served
// as it is, and when it is older the first caller renders while the others wait for that render
// (single flight) instead of starting their own. The gzip of a body is made once, on first demand.
// `max_age` (100 ms in the agent) is small against the 1 s sampling, so a scrape never sees data
// noticeably older than without the cache.
//
// Thread-safety: Get() may be called from any number of threads.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace fabricwatch::exporter {

class RenderedBody {
 public:
  explicit RenderedBody(std::string text) : text_(std::move(text)) {}
  const std::string& text() const { return text_; }
  // The gzip (RFC 1952) of text(), made on the first call; nullptr if compression failed.
  const std::string* Gzipped() const;

 private:
  std::string text_;
  mutable std::once_flag gzip_once_;
  mutable std::unique_ptr<std::string> gzipped_;
};

class RenderCache {
 public:
  using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;
  RenderCache(
      std::function<std::string()> render, std::chrono::milliseconds max_age,
      SteadyNow now = [] { return std::chrono::steady_clock::now(); });

  // The current body: the cached one while it is younger than max_age, else a fresh render.
  // An exception from the render function propagates to the caller that ran it (the HTTP server
  // answers 500); the cache keeps its previous body.
  std::shared_ptr<const RenderedBody> Get();
  uint64_t renders() const;

 private:
  std::shared_ptr<const RenderedBody> Fresh(std::chrono::steady_clock::time_point now) const;

  std::function<std::string()> render_;
  std::chrono::milliseconds max_age_;
  SteadyNow now_;
  std::mutex render_mutex_;   // held while rendering: the single flight
  mutable std::mutex mutex_;  // guards the fields below
  std::shared_ptr<const RenderedBody> current_;
  std::chrono::steady_clock::time_point rendered_at_;
  uint64_t renders_ = 0;
};

}  // namespace fabricwatch::exporter
