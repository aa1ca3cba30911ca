#include "exporter/pages/status_assets.h"

#include "exporter/pages/csp_hash.h"

namespace fabricwatch::exporter::status {
namespace {

// Marked values carry a text mark and a note besides their colour (status_html.cc), so the
// colours only help; a phone scrolls the wide tables sideways (.scroll) and wraps the anomaly
// details.
constexpr std::string_view kStyleText =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}"
    "main{max-width:1500px;margin:0 auto;padding:12px}"
    "h1{font-size:1.5em;margin:.2em 0;overflow-wrap:anywhere}"
    "h2{font-size:1.15em;margin:1.2em 0 .4em;border-bottom:1px solid #ccc}"
    ".summary{font-size:1.15em;font-weight:600;padding:8px 10px;border-radius:4px;margin:.4em 0}"
    ".summary.ok{background:#e3f4e3;color:#14521c}"
    ".summary.bad{background:#fde2e1;color:#8a1010}"
    ".summary.wait{background:#fff3cd;color:#6b4e00}"
    ".meta{color:#555;margin:.3em 0}.stale{color:#8a1010;font-weight:600}"
    "nav{display:flex;flex-wrap:wrap;gap:2px 14px}"
    ".scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}"
    "table{border-collapse:collapse;background:#fff}"
    "th,td{border:1px solid #d4d4d4;padding:3px 7px;text-align:left;vertical-align:top;"
    "white-space:nowrap}"
    "td.wrap{white-space:normal;min-width:14em;max-width:40em;overflow-wrap:anywhere}"
    "th{background:#eee}"
    "td.bad{background:#fde2e1;color:#8a1010;font-weight:600}"
    "td.ok{color:#14521c}"
    "td small{display:block;font-weight:400;color:#555;white-space:normal;max-width:13em}"
    "td.bad small{color:#8a1010}"
    "td.near{font-weight:700;background:#e3f4e3}"
    ".anomaly{background:#fff;border:1px solid #d4d4d4;border-left:6px solid #b58100;"
    "padding:6px 10px;margin:8px 0}"
    ".anomaly.critical{border-left-color:#c00}"
    ".badge{display:inline-block;padding:0 6px;border-radius:3px;background:#8a6100;color:#fff;"
    "font-size:.85em}"
    ".critical .badge{background:#b00}"
    ".anomaly h3{font-size:1em;margin:.2em 0;overflow-wrap:anywhere}.reason{margin:.3em 0}"
    ".anomaly dl{display:flex;flex-wrap:wrap;gap:2px 22px;margin:.3em 0}"
    ".anomaly dl div{display:flex;gap:6px}dt{color:#555}"
    "dd{margin:0;overflow-wrap:anywhere;font-variant-numeric:tabular-nums}"
    ".evidence{border-top:1px dotted #ccc;padding-top:3px}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f3f3;padding:4px;"
    "margin:.3em 0;font-size:.9em}"
    "@media (max-width:700px){main{padding:6px}.anomaly dl{gap:0 14px}th,td{padding:2px 5px}}";

// Every kRefreshSeconds (status_html.h; 10000 ms below), and when the tab becomes visible again:
// fetch the page and swap <main id=status>, so the scroll position stays; on failure say so and
// mark the old values stale. Only textContent is written from script; the new <main> comes from
// DOMParser, which runs no script.
constexpr std::string_view kScriptText =
    "(function(){var busy=false;"
    "function refresh(){if(busy||document.hidden)return;busy=true;"
    "fetch(location.pathname,{cache:'no-store',credentials:'same-origin'})"
    ".then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.text();})"
    ".then(function(text){var doc=new DOMParser().parseFromString(text,'text/html');"
    "var next=doc.getElementById('status');if(!next)throw new Error('no status in the answer');"
    "document.getElementById('status').replaceWith(document.adoptNode(next));"
    "document.title=doc.title;})"
    ".catch(function(e){var s=document.getElementById('refresh-state');if(s){s.textContent="
    "'\\u26a0 refresh failed at '+new Date().toLocaleTimeString()+' ('+e.message+"
    "'): the values below are stale';s.className='stale';}})"
    ".finally(function(){busy=false;});}"
    "setInterval(refresh,10000);"
    "document.addEventListener('visibilitychange',function(){if(!document.hidden)refresh();});"
    "})();";

// Computed by the compiler (csp_hash.h): building the policy at start (routes.cc) calls no
// OpenSSL, so libcrypto's code stays unread unless TLS is on (docs/libraries.md).
constexpr Sha256Base64 kStyleHash = Base64(Sha256(kStyleText));
constexpr Sha256Base64 kScriptHash = Base64(Sha256(kScriptText));

std::string HashSource(const Sha256Base64& base64) {
  return "'sha256-" + std::string(base64.data(), base64.size()) + "'";
}

}  // namespace

const std::string_view kStatusStyle = kStyleText;
const std::string_view kStatusScript = kScriptText;

std::string CspHashSource(std::string_view text) { return HashSource(Base64(Sha256(text))); }

std::string StatusPagePolicy() {
  return "default-src 'none'; style-src " + HashSource(kStyleHash) + "; script-src " +
         HashSource(kScriptHash) +
         "; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}

}  // namespace fabricwatch::exporter::status
