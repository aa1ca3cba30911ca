#pragma once
// The HTTP/1.1 request head (request line and header fields, RFC 9112 §2-§5), parsed from bytes
// as they arrive. Pure: no I/O, no allocation beyond the result, so it can be fuzzed
// (tools/fuzz/http_head_fuzz.cc). The server (http_server.cc) feeds it the connection's buffer
// after every read; it answers "need more bytes", "a complete head of N bytes", or an error with
// the status to answer (400 malformed, 431 too large or too many fields, 501/505 for what we
// cannot serve).
//
// Strict where leniency is an attack surface (RFC 9112 §11): no obsolete line folding, no
// whitespace between a field name and its colon, CRLF or bare LF line ends (§2.2 allows a
// recipient to accept LF), a single Content-Length, no Transfer-Encoding together with it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricwatch::exporter {

struct HeadLimits {
  size_t max_head_bytes = 16384;  // request line + fields + the empty line
  size_t max_fields = 100;
};

struct RequestHead {
  std::string method;     // case-sensitive (RFC 9110 §9.1)
  std::string target;     // as sent: origin-form, "*", or absolute/authority form
  std::string path;       // target without the query; empty for "*" and authority-form
  int version_minor = 1;  // HTTP/1.x
  std::vector<std::pair<std::string, std::string>> fields;  // names as sent, values trimmed

  // The first field of that name (case-insensitive), or nullopt.
  std::optional<std::string_view> Field(std::string_view name) const;
  // Whether the connection may stay open after the response (RFC 9112 §9.3).
  bool KeepAlive() const;
  // Whether the request announces a body: Content-Length > 0 or any Transfer-Encoding.
  bool HasBody() const;
};

struct HeadParse {
  enum class State { kIncomplete, kComplete, kError };
  State state = State::kIncomplete;
  size_t head_bytes = 0;  // kComplete: bytes the head took (the rest is the next request)
  int status = 0;         // kError: the status to answer
  std::string reason;     // kError: for the log
  RequestHead head;       // kComplete
};

// Parses the head at the start of `buffer`.
HeadParse ParseRequestHead(std::string_view buffer, const HeadLimits& limits);

}  // namespace fabricwatch::exporter
