#pragma once
// The status page's inline style sheet and script (status_html.h), and the SHA-256 hashes its
// Content-Security-Policy allows them by. Kept apart from the HTML so that the hashed bytes are
// in one place: the page writes exactly kStatusStyle between <style> and </style> and exactly
// kStatusScript between <script> and </script>, which is what a browser hashes.

#include <string>
#include <string_view>

namespace fabricwatch::exporter::status {

extern const std::string_view kStatusStyle;
extern const std::string_view kStatusScript;

// "'sha256-<base64>'" (CSP Level 3 hash-source) of `text`.
std::string CspHashSource(std::string_view text);

// The policy: nothing from anywhere but the page's own hashed style and script, and fetches of
// the page itself.
std::string StatusPagePolicy();

}  // namespace fabricwatch::exporter::status
