// ParseRequestHead (exporter/http/request_head.h): the request line, header fields, limits, and
// what arrives in pieces.

#include "exporter/http/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace fabricwatch::exporter {
namespace {

using State = HeadParse::State;

HeadParse Parse(const std::string& text, HeadLimits limits = {}) {
  return ParseRequestHead(text, limits);
}

TEST(RequestHeadTest, ParsesRequestLineAndFields) {
  const std::string text =
      "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept-Encoding:  gzip \r\nX-Empty:\r\n\r\nNEXT";
  HeadParse p = Parse(text);
  ASSERT_EQ(p.state, State::kComplete) << p.reason;
  EXPECT_EQ(p.head_bytes, text.size() - 4);
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_EQ(p.head.target, "/metrics?x=1");
  EXPECT_EQ(p.head.path, "/metrics");
  EXPECT_EQ(p.head.version_minor, 1);
  ASSERT_EQ(p.head.fields.size(), 3u);
  EXPECT_EQ(p.head.Field("accept-encoding").value_or("?"), "gzip");
  EXPECT_EQ(p.head.Field("X-EMPTY").value_or("?"), "");
  EXPECT_FALSE(p.head.Field("missing").has_value());
  EXPECT_TRUE(p.head.KeepAlive());
  EXPECT_FALSE(p.head.HasBody());
}

TEST(RequestHeadTest, IncompleteUntilTheEmptyLine) {
  const std::string text = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
  for (size_t n = 0; n < text.size(); ++n) {
    EXPECT_EQ(Parse(text.substr(0, n)).state, State::kIncomplete) << n << " bytes";
  }
  EXPECT_EQ(Parse(text).state, State::kComplete);
}

TEST(RequestHeadTest, BareLineFeedsAndOneLeadingEmptyLine) {
  HeadParse p = Parse("\r\nGET /a HTTP/1.0\nX: y\n\n");
  ASSERT_EQ(p.state, State::kComplete) << p.reason;
  EXPECT_EQ(p.head.path, "/a");
  EXPECT_EQ(p.head.version_minor, 0);
  EXPECT_FALSE(p.head.KeepAlive()) << "HTTP/1.0 closes unless asked";
}

TEST(RequestHeadTest, KeepAliveRules) {
  EXPECT_FALSE(Parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").head.KeepAlive());
  EXPECT_FALSE(
      Parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: TE, Close\r\n\r\n").head.KeepAlive());
  EXPECT_TRUE(Parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").head.KeepAlive());
}

TEST(RequestHeadTest, AsteriskAuthorityAndAbsoluteForms) {
  HeadParse options = Parse("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(options.state, State::kComplete);
  EXPECT_EQ(options.head.path, "");
  HeadParse connect = Parse("CONNECT example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(connect.state, State::kComplete);
  EXPECT_EQ(connect.head.path, "");
  HeadParse absolute = Parse("GET http://h:1/metrics?q HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(absolute.state, State::kComplete);
  EXPECT_EQ(absolute.head.path, "/metrics");
}

TEST(RequestHeadTest, BodiesAreRecognised) {
  EXPECT_TRUE(Parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n").head.HasBody());
  EXPECT_FALSE(Parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n").head.HasBody());
  EXPECT_TRUE(
      Parse("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n").head.HasBody());
}

TEST(RequestHeadTest, MalformedIs400) {
  for (const char* text : {
           "GARBAGE\r\n\r\n",
           "GET /\r\n\r\n",
           "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.1 x\r\nHost: a\r\n\r\n",
           "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET / HTTQ/1.1\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nNo colon\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nBad Name: v\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n folded\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n",
           "GET / HTTP/1.1\r\n\r\n",  // no Host
           "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: x\r\n\r\n",
       }) {
    HeadParse p = Parse(text);
    EXPECT_EQ(p.state, State::kError) << text;
    EXPECT_EQ(p.status, 400) << text;
    EXPECT_FALSE(p.reason.empty()) << text;
  }
  EXPECT_EQ(Parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n").status, 505);
}

TEST(RequestHeadTest, BinaryBeforeTheFirstLineEndIsRefusedAtOnce) {
  // A TLS ClientHello on the plain port: refused without waiting for a line end.
  HeadParse p = Parse(std::string("\x16\x03\x01\x02\x00\x01", 6));
  EXPECT_EQ(p.state, State::kError);
  EXPECT_EQ(p.status, 400);
  EXPECT_EQ(Parse("GET /partial-without-end").state, State::kIncomplete);
}

TEST(RequestHeadTest, SizeAndFieldCountLimitsAre431) {
  const HeadLimits limits{.max_head_bytes = 100, .max_fields = 3};
  EXPECT_EQ(Parse("GET /" + std::string(200, 'a'), limits).status, 431) << "incomplete, too big";
  EXPECT_EQ(
      Parse("GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(100, 'v') + "\r\n\r\n", limits).status,
      431);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits).status, 431);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", limits).state,
            State::kComplete);
}

}  // namespace
}  // namespace fabricwatch::exporter
