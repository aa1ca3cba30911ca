#pragma once
// The status page at `/` (issue 25 items 5-6, README "Status page"): gathers what /metrics
// serves at one moment (GatherFamilies, routes.h), the tracker's active set, the last hour's
// transitions and the recent link events, builds the model (status_model.h) and renders it
// (status_html.h). The render is shared like /metrics' (RenderCache): a browser left open on
// every node, or a burst of 500 requests a second, costs one render a second and never waits
// on /metrics' own render.

#include <memory>
#include <string>

#include "exporter/http/render_cache.h"
#include "exporter/pages/routes.h"
#include "exporter/pages/status_model.h"

namespace fabricwatch::exporter {

// A page is shared for at most this long: the collectors sample every second or slower, and
// the page refreshes every 10 s.
inline constexpr std::chrono::milliseconds kStatusRenderMaxAge{1000};

// The inputs of the page from the agent's parts, at `now` (wall time).
status::StatusInputs GatherStatusInputs(const RouteSources& sources, const AgentFamilies& families,
                                        const std::string& hostname, detect::TimePoint now);

// The page render, shared among requests. Keep it alive as long as the routes.
std::unique_ptr<RenderCache> MakeStatusCache(const RouteSources& sources);

// This node's name (gethostname(2)), "unknown" when it has none.
std::string NodeHostname();

}  // namespace fabricwatch::exporter
