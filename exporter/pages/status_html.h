#pragma once
// The status page's HTML (issue 25 items 5-6): one self-contained document, rendered on the
// server from a StatusModel (status_model.h), with a small inline style sheet and script and no
// external resource (nodes have no internet). Every string from the model is HTML-escaped
// (HtmlEscape: invalid UTF-8 becomes U+FFFD) and bounded like a label value.
//
// Refresh: the script fetches the page again every 10 s and swaps the <main> element, so the
// scroll position and the open <details> stay where the reader left them; without script a
// <noscript> meta refresh reloads the page instead. A failed refresh says so at the top
// ("refresh failed ... the values below are stale") rather than leaving old values unmarked.
//
// Content-Security-Policy: the page sends its own strict policy (StatusPageHeaders()): nothing
// may load but the page itself (default-src 'none'), and the inline style and script run only
// because their SHA-256 hashes are listed (CSP Level 3 §8.3, "hash-source"). A hash instead of a
// nonce because the body is rendered once and shared by many requests (RenderCache): a nonce
// must differ per response. The fetch of the page itself needs connect-src 'self'.
//
// Thread-safety: pure functions.

#include <string>
#include <utility>
#include <vector>

#include "exporter/pages/status_model.h"

namespace fabricwatch::exporter::status {

// How often the page reloads itself, in seconds.
inline constexpr int kRefreshSeconds = 10;

// The whole document.
std::string RenderStatusPage(const StatusModel& model);

// Headers the page is served with: its Content-Security-Policy (hashes of the inline style and
// script). An operator's own policy (--web.config.file headers) is sent as well, and a browser
// enforces both (CSP Level 3 §8.1): README "Status page" says what such a policy must allow.
std::vector<std::pair<std::string, std::string>> StatusPageHeaders();

// "3d 4h", "2h 5m", "5m 12s", "12s".
std::string AgeText(double seconds);

}  // namespace fabricwatch::exporter::status
