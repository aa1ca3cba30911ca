// What a parsed request gets: the method and body checks, basic auth (cached on the loop, bcrypt
// on the auth pool), and the route run on the handler pool. Everything here runs on the event
// loop but the tasks posted to the pools.

#include <chrono>
#include <string>
#include <utility>

#include "exporter/http/render.h"
#include "exporter/http/server_impl.h"

namespace fabricwatch::exporter {
namespace {

constexpr const char* kTextPlain = "text/plain; charset=utf-8";

bool IsHttp10KeepAlive(const RequestHead& head, bool close) {
  return !close && head.version_minor == 0;
}

}  // namespace

HeaderList HttpServer::Impl::PolicyHeaders(const Connection& c) const {
  return c.policy() != nullptr ? c.policy()->headers() : HeaderList{};
}

void HttpServer::Impl::Answer(Connection& c, int status, HeaderList extra, bool close,
                              Clock::time_point now) {
  const bool head_only = c.head().method == "HEAD";  // empty after a head error
  HeaderList headers = PolicyHeaders(c);
  for (auto& header : extra) headers.push_back(std::move(header));
  PendingResponse response;
  response.text = ErrorBody(status);
  response.close = close || !c.head().KeepAlive();
  response.head = ResponseHead(status, kTextPlain, response.text.size(), headers, response.close,
                               IsHttp10KeepAlive(c.head(), response.close));
  if (head_only) response.text.clear();
  ++counters.requests;
  c.Respond(std::move(response), now);
}

void HttpServer::Impl::AnswerUnauthorized(Connection& c, Clock::time_point now) {
  Answer(c, 401, {{"WWW-Authenticate", "Basic realm=\"fabricwatch\""}}, false, now);
}

void HttpServer::Impl::Dispatch(uint64_t id, Connection& c, Clock::time_point now) {
  const RequestHead& head = c.head();
  if (head.method != "GET" && head.method != "HEAD") {
    // No write endpoints: every other method, OPTIONS * and CONNECT included (RFC 9110 §15.5.6:
    // a 405 carries Allow). The connection is closed: a body may follow that we do not read.
    Answer(c, 405, {{"Allow", "GET, HEAD"}}, /*close=*/true, now);
    return;
  }
  if (head.HasBody()) {
    Answer(c, 400, {}, /*close=*/true, now);  // a GET or HEAD has no use for a body
    return;
  }
  const std::shared_ptr<const SecurityPolicy>& policy = c.policy();
  if (policy != nullptr && policy->auth_required(head.path)) {
    const std::string authorization(head.Field("authorization").value_or(""));
    switch (policy->CheckCached(authorization)) {
      case SecurityPolicy::Auth::kAllowed:
        break;
      case SecurityPolicy::Auth::kDenied:
        // No credentials is the challenge a browser expects first, not a failed login.
        if (!authorization.empty()) ++counters.auth_failures;
        AnswerUnauthorized(c, now);
        return;
      case SecurityPolicy::Auth::kNeedsSlowCheck: {
        // The failed-login limit first (HttpLimits::auth_failure_burst): a token per check,
        // given back on success (DrainCompletions), so a limited address costs no bcrypt.
        std::chrono::seconds retry_after{1};
        if (!auth_limiter->TryTake(c.peer(), now, retry_after)) {
          ++counters.auth_limited;
          Answer(c, 429, {{"Retry-After", std::to_string(retry_after.count())}}, /*close=*/true,
                 now);
          return;
        }
        // bcrypt (~50 ms) on a pool of its own: wrong passwords queue behind each other, not
        // in front of requests with cached credentials or of the routes.
        const bool posted = auth->TryPost([self = shared_from_this(), id, policy, authorization,
                                           peer = c.peer()] {
          const bool ok = policy->CheckSlow(authorization);
          self->Complete(
              {id, ok ? Completion::Kind::kAuthorized : Completion::Kind::kUnauthorized, {}, peer});
        });
        if (!posted) {
          auth_limiter->Refund(c.peer(), now);
          ++counters.overloaded;
          Answer(c, 503, {{"Retry-After", "1"}}, /*close=*/true, now);
        }
        return;
      }
    }
  }
  RunRoute(id, c, now);
}

void HttpServer::Impl::RunRoute(uint64_t id, Connection& c, Clock::time_point now) {
  const RequestHead& head = c.head();
  auto route_it = routes.find(head.path);
  if (route_it == routes.end()) {
    Answer(c, 404, {}, /*close=*/false, now);
    return;
  }
  const Route* route = &route_it->second;
  const bool head_only = head.method == "HEAD";
  const bool close = !head.KeepAlive();
  const bool http10_keep_alive = IsHttp10KeepAlive(head, close);
  const bool gzip = route->gzip && AcceptsGzip(head.Field("accept-encoding").value_or(""));
  HeaderList headers = PolicyHeaders(c);
  const bool posted = handlers->TryPost([self = shared_from_this(), id, route, head_only, close,
                                         http10_keep_alive, gzip,
                                         headers = std::move(headers)]() mutable {
    PendingResponse response;
    response.close = close;
    std::shared_ptr<const RenderedBody> shared;
    int status = 200;
    std::string_view content_type = route->content_type;
    try {
      if (route->shared_body) {
        shared = route->shared_body();
        response.owner = shared;
        response.body = shared->text();
      } else {
        response.text = route->body();
      }
    } catch (const std::exception& e) {
      self->logger->error("rendering failed: {}", e.what());
      status = 500;
      content_type = kTextPlain;
      response = PendingResponse{};
      response.close = close;
      response.text = ErrorBody(500);
    }
    if (status == 200) {
      for (const auto& header : route->headers) headers.push_back(header);
    }
    if (status == 200 && gzip) {
      if (shared != nullptr) {
        if (const std::string* compressed = shared->Gzipped()) {
          response.body = *compressed;
          headers.emplace_back("Content-Encoding", "gzip");
          headers.emplace_back("Vary", "Accept-Encoding");
        }
      } else if (auto compressed = Gzip(response.text)) {
        response.text = std::move(*compressed);
        headers.emplace_back("Content-Encoding", "gzip");
        headers.emplace_back("Vary", "Accept-Encoding");
      }
    }
    const size_t length = response.owner ? response.body.size() : response.text.size();
    response.head = ResponseHead(status, content_type, length, headers, close, http10_keep_alive);
    if (head_only) {
      response.owner = nullptr;
      response.text.clear();
      response.body = {};
    }
    self->Complete({id, Completion::Kind::kResponse, std::move(response), {}});
  });
  if (!posted) {
    ++counters.overloaded;
    Answer(c, 503, {{"Retry-After", "1"}}, /*close=*/true, now);
  }
}

}  // namespace fabricwatch::exporter
