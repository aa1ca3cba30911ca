#pragma once
// The HTTP server's view (SecurityPolicy, http_server.h) of the --web.config.file settings
// (WebSecurity, web_security.h): on each accepted connection, re-check the file (at most once a
// second, WebSecurity::MaybeReload) and hand the connection the current generation.

#include <memory>

#include "exporter/http/http_server.h"
#include "exporter/http/web_security.h"

namespace fabricwatch::exporter {

SecuritySource MakeSecuritySource(std::shared_ptr<WebSecurity> security);

}  // namespace fabricwatch::exporter
