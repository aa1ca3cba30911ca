#include "exporter/http/response.h"

#include <ctime>

namespace fabricwatch::exporter {

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string ResponseHead(int status, std::string_view content_type, size_t content_length,
                         const HeaderList& extra, bool close, bool http10_keep_alive) {
  char date[64] = {};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  // IMF-fixdate (RFC 9110 §5.6.7).
  std::strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  std::string head;
  head.reserve(256);
  head += "HTTP/1.1 " + std::to_string(status) + " ";
  head += ReasonPhrase(status);
  head += "\r\nContent-Type: ";
  head += content_type;
  head += "\r\nContent-Length: " + std::to_string(content_length);
  head += "\r\nDate: ";
  head += date;
  head += "\r\nCache-Control: no-store\r\n";
  for (const auto& [name, value] : extra) head += name + ": " + value + "\r\n";
  if (close) {
    head += "Connection: close\r\n";
  } else if (http10_keep_alive) {
    head += "Connection: keep-alive\r\n";
  }
  head += "\r\n";
  return head;
}

std::string ErrorBody(int status) {
  switch (status) {
    case 400:
      return "400 bad request\n";
    case 401:
      return "401 unauthorized\n";
    case 404:
      return "404 page not found\n";
    case 405:
      return "405 method not allowed\n";
    case 429:
      return "429 too many requests\n";
    case 431:
      return "431 request header fields too large\n";
    case 500:
      return "500 internal server error\n";
    case 503:
      return "503 service unavailable\n";
    case 505:
      return "505 HTTP version not supported\n";
    default:
      return std::to_string(status) + "\n";
  }
}

}  // namespace fabricwatch::exporter
