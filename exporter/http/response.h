#pragma once
// Serializing HTTP/1.1 response heads (RFC 9112 §4, §6), and the small plain-text answers the
// server gives on its own (errors, 401, 503).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricwatch::exporter {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

std::string_view ReasonPhrase(int status);

// "HTTP/1.1 <status> <reason>", Content-Type, Content-Length, Date, Cache-Control: no-store,
// `extra` (in order), then Connection: close when `close`, or Connection: keep-alive when
// `http10_keep_alive` (an HTTP/1.0 client asked for it).
std::string ResponseHead(int status, std::string_view content_type, size_t content_length,
                         const HeaderList& extra, bool close, bool http10_keep_alive);

// The body of a plain-text error answer: "404 page not found\n" and the like.
std::string ErrorBody(int status);

}  // namespace fabricwatch::exporter
