#include "exporter/http/request_head.h"

#include <cctype>

namespace fabricwatch::exporter {
namespace {

// tchar (RFC 9110 §5.6.2).
bool IsTokenChar(unsigned char c) {
  if (std::isalnum(c) != 0) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':  // NOLINT
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':  // NOLINT
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// field-value characters (RFC 9110 §5.5): VCHAR, obs-text, SP and HTAB.
bool IsFieldValue(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\t' || c == ' ') continue;
    if (c < 0x21 || c == 0x7f) return false;
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether a comma-separated list (Connection) holds `token`, case-insensitively.
bool ListHas(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (EqualsIgnoreCase(Trim(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

HeadParse Fail(int status, std::string reason) {
  HeadParse p;
  p.state = HeadParse::State::kError;
  p.status = status;
  p.reason = std::move(reason);
  return p;
}

// The path part of a request target (RFC 9112 §3.2): origin-form up to '?', the path of an
// absolute-form URI, nothing for asterisk-form and authority-form.
std::string PathOf(std::string_view target) {
  if (target.empty() || target == "*") return {};
  if (target.front() != '/') {
    const size_t scheme = target.find("://");
    if (scheme == std::string_view::npos) return {};  // authority-form (CONNECT)
    const size_t slash = target.find('/', scheme + 3);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  return std::string(target.substr(0, target.find_first_of("?#")));
}

// Parses "METHOD SP target SP HTTP/1.x".
std::optional<HeadParse> ParseRequestLine(std::string_view line, RequestHead& head) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Fail(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Fail(400, "malformed method");
  if (target.empty()) return Fail(400, "empty request target");
  for (char ch : target) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) return Fail(400, "control character in the request target");
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      std::isdigit(static_cast<unsigned char>(version[5])) == 0 ||
      std::isdigit(static_cast<unsigned char>(version[7])) == 0) {
    return Fail(400, "malformed HTTP version");
  }
  if (version[5] != '1') return Fail(505, "HTTP version not supported");
  head.method = std::string(method);
  head.target = std::string(target);
  head.path = PathOf(target);
  head.version_minor = version[7] - '0';
  return std::nullopt;
}

// Framing fields checked once the head is complete (RFC 9112 §6.3, §3.2).
std::optional<HeadParse> CheckFields(const RequestHead& head) {
  int hosts = 0;
  std::optional<std::string_view> length;
  for (const auto& [name, value] : head.fields) {
    if (EqualsIgnoreCase(name, "host")) ++hosts;
    if (!EqualsIgnoreCase(name, "content-length")) continue;
    if (value.empty() || value.size() > 18) return Fail(400, "invalid Content-Length");
    for (char c : value) {
      if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
        return Fail(400, "invalid Content-Length");
      }
    }
    if (length && *length != value) return Fail(400, "conflicting Content-Length fields");
    length = value;
  }
  if (length && head.Field("transfer-encoding")) {
    return Fail(400, "both Content-Length and Transfer-Encoding");
  }
  if (hosts > 1 || (hosts == 0 && head.version_minor >= 1)) {
    return Fail(400, hosts == 0 ? "HTTP/1.1 request without Host" : "more than one Host field");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> RequestHead::Field(std::string_view name) const {
  for (const auto& [n, v] : fields) {
    if (EqualsIgnoreCase(n, name)) return std::string_view(v);
  }
  return std::nullopt;
}

bool RequestHead::KeepAlive() const {
  const std::string_view connection = Field("connection").value_or("");
  if (ListHas(connection, "close")) return false;
  return version_minor >= 1 || ListHas(connection, "keep-alive");
}

bool RequestHead::HasBody() const {
  if (Field("transfer-encoding")) return true;
  const auto length = Field("content-length");
  return length && length->find_first_not_of('0') != std::string_view::npos;
}

HeadParse ParseRequestHead(std::string_view buffer, const HeadLimits& limits) {
  HeadParse result;
  size_t pos = 0;
  // A server SHOULD ignore at least one empty line before the request line (RFC 9112 §2.2).
  while (pos < buffer.size() && pos < 4 && (buffer[pos] == '\r' || buffer[pos] == '\n')) ++pos;
  bool request_line = true;
  while (true) {
    const size_t eol = buffer.find('\n', pos);
    if (eol == std::string_view::npos) {
      // Refuse early what can never become a head: binary junk, a TLS ClientHello on the plain
      // port, or a head over the size limit.
      if (request_line) {
        for (size_t i = pos; i < buffer.size() && buffer[i] != ' '; ++i) {
          if (!IsTokenChar(static_cast<unsigned char>(buffer[i])) && buffer[i] != '\r') {
            return Fail(400, "malformed method");
          }
        }
      }
      if (buffer.size() > limits.max_head_bytes) return Fail(431, "request head too large");
      return result;  // kIncomplete
    }
    if (eol + 1 > limits.max_head_bytes) return Fail(431, "request head too large");
    std::string_view line = buffer.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = eol + 1;
    if (request_line) {
      if (auto error = ParseRequestLine(line, result.head)) return *error;
      request_line = false;
      continue;
    }
    if (line.empty()) break;  // the end of the head
    if (line.front() == ' ' || line.front() == '\t') {
      return Fail(400, "obsolete line folding");  // RFC 9112 §5.2
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Fail(400, "malformed header field");
    }
    const std::string_view value = Trim(line.substr(colon + 1));
    if (!IsFieldValue(value)) return Fail(400, "control character in a header field value");
    if (result.head.fields.size() >= limits.max_fields) {
      return Fail(431, "too many header fields");
    }
    result.head.fields.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  if (auto error = CheckFields(result.head)) return *error;
  result.state = HeadParse::State::kComplete;
  result.head_bytes = pos;
  return result;
}

}  // namespace fabricwatch::exporter
