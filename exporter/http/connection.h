#pragma once
// One HTTP connection's state machine, driven by the event loop (http_server.cc):
//
//   kHandshake (TLS only) → kReadingHead → kHandling → kWriting → kIdle (keep-alive) → kReadingHead
//                                                               ↘ kLingering (closing) → closed
//
// Drive() does every read and write possible now on the non-blocking socket (plain or OpenSSL's
// non-blocking SSL_accept/SSL_read/SSL_write) and says what the loop must do next. The loop owns
// the deadlines' enforcement (deadline(), timeout_kind()); the connection sets them: the header
// deadline runs from accept (or from the first byte of a keep-alive request) over the handshake
// and the head together, so trickling bytes does not extend it.
//
// Over TLS the head goes out with the start of the body in one SSL_write (one record, up to
// 16 KiB), and accepted sockets have TCP_NODELAY (http_server.cc): a head and a body in two
// records made the second wait for the client's delayed ACK (Nagle), ~40 ms per keep-alive
// response (issue 39 item 8).
//
// Closing after a response (Connection: close, errors) half-closes and discards what the client
// still sends for a moment (lingering), so that a request body we did not read does not make the
// kernel reset the connection before the client has read our answer (RFC 9112 §9.6).

#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "collectors/sys/unique_fd.h"
#include "exporter/http/http_server.h"
#include "exporter/http/request_head.h"

namespace fabricwatch::exporter {

using Clock = std::chrono::steady_clock;

// A response ready to write: the serialized head and a body owned by `owner` (or by `text`).
struct PendingResponse {
  std::string head;
  std::string text;                   // the body when `owner` is null
  std::shared_ptr<const void> owner;  // keeps `body` alive (a shared render)
  std::string_view body;              // points into `text` or into what `owner` holds
  bool close = false;                 // close the connection after it
};

struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

class Connection {
 public:
  enum class State { kHandshake, kReadingHead, kHandling, kWriting, kIdle, kLingering, kClosed };
  enum class Event {
    kNone,       // wait for the socket
    kHeadReady,  // head() holds a request: answer it with Respond()
    kHeadError,  // head_error() holds the status to answer (then close)
    kClose,      // the connection is over (close_reason() says why); destroy it
  };
  enum class Timeout { kNone, kHeader, kIdle, kWrite, kLinger };

  // `peer`: the source address's key (peer_limits.h PeerKey).
  Connection(sys::UniqueFd fd, std::unique_ptr<SSL, SslDeleter> ssl,
             std::shared_ptr<const SecurityPolicy> policy, const HttpLimits& limits,
             Clock::time_point now, std::string peer = {});

  Event Drive(Clock::time_point now);
  // From kHandling: write `response`, then keep alive or close. Call Drive() afterwards.
  void Respond(PendingResponse response, Clock::time_point now);

  State state() const { return state_; }
  // Whether it has not yet completed the head of its current request (evictable first).
  bool AwaitingHead() const { return state_ == State::kHandshake || state_ == State::kReadingHead; }
  bool ever_completed_head() const { return requests_ > 0; }
  // Writing a response whose client has not acknowledged 16 KiB for HttpLimits::stalled_write:
  // it stopped reading, or reads a trickle (evictable at the cap after the idle ones). Asks the
  // kernel (TCP_INFO): called at the cap only.
  bool Stalled(Clock::time_point now);
  // Makes the close that follows a reset (SO_LINGER 0), so the kernel drops what is still
  // queued for a client that does not read instead of retrying it for minutes.
  void Abort();
  const std::string& peer() const { return peer_; }
  Clock::time_point deadline() const { return deadline_; }
  Timeout timeout_kind() const;
  const RequestHead& head() const { return head_; }
  const HeadParse& head_error() const { return parse_; }
  const std::string& close_reason() const { return close_reason_; }
  bool tls_failed() const { return tls_failed_; }
  const std::shared_ptr<const SecurityPolicy>& policy() const { return policy_; }
  int fd() const { return fd_.get(); }

 private:
  enum class Io { kOk, kWouldBlock, kEof, kError };
  Io Read(char* buffer, size_t size, size_t& got);
  Io Write(const char* data, size_t size, size_t& wrote);
  Event Handshake(Clock::time_point now);
  Event ReadHead(Clock::time_point now);
  Event WriteResponse(Clock::time_point now);
  Event Linger();
  Event Close(std::string reason);
  void StartLingering(Clock::time_point now);

  sys::UniqueFd fd_;
  std::unique_ptr<SSL, SslDeleter> ssl_;
  std::shared_ptr<const SecurityPolicy> policy_;
  const HttpLimits& limits_;
  State state_;
  Clock::time_point deadline_;
  std::string input_;
  RequestHead head_;
  HeadParse parse_;
  PendingResponse response_;
  size_t written_ = 0;               // of head + body
  Clock::time_point last_progress_;  // the response's start, or when 16 KiB more were acked
  uint64_t acked_mark_ = 0;          // the socket's bytes acked at last_progress_
  std::string peer_;
  uint64_t requests_ = 0;
  std::string close_reason_;
  bool tls_failed_ = false;
};

}  // namespace fabricwatch::exporter
