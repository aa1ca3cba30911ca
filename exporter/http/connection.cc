#include "exporter/http/connection.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace fabricwatch::exporter {
namespace {

// Bytes read at a time; a head never needs more than max_head_bytes of them.
constexpr size_t kReadChunk = 16384;
// How long a closing connection may keep sending before we close it regardless.
constexpr std::chrono::milliseconds kLinger{1000};
// What a closing connection may send (discarded) before we close it regardless.
constexpr size_t kLingerBytes = 256 * 1024;
// The largest TLS record's plaintext (RFC 8446 §5.1; OpenSSL's default max_send_fragment): what
// one SSL_write sends as one record.
constexpr size_t kTlsRecord = 16384;
// What the client must acknowledge to count as progress (Connection::Stalled): a client that
// stopped reading still takes a few bytes now and then as its window opens by a segment; one
// that reads takes this in a round trip or two.
constexpr uint64_t kProgressBytes = 16384;

// What the peer has acknowledged on this TCP socket (TCP_INFO, Linux 4.2): bytes the client's
// kernel took, so reading or about to be read. The bytes our send() took are no measure: the
// kernel grows the send buffer (up to tcp_wmem's 4 MiB) for a client that never reads. 0 when
// unknown, which makes a response stall (at the cap only) rather than never.
uint64_t BytesAcked(int fd) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 ||
      length < offsetof(tcp_info, tcpi_bytes_acked) + sizeof(info.tcpi_bytes_acked)) {
    return 0;
  }
  return info.tcpi_bytes_acked;
}

}  // namespace

Connection::Connection(sys::UniqueFd fd, std::unique_ptr<SSL, SslDeleter> ssl,
                       std::shared_ptr<const SecurityPolicy> policy, const HttpLimits& limits,
                       Clock::time_point now, std::string peer)
    : fd_(std::move(fd)),
      ssl_(std::move(ssl)),
      policy_(std::move(policy)),
      limits_(limits),
      state_(ssl_ ? State::kHandshake : State::kReadingHead),
      deadline_(now + limits.header_timeout),
      last_progress_(now),
      peer_(std::move(peer)) {}

bool Connection::Stalled(Clock::time_point now) {
  if (state_ != State::kWriting) return false;
  const uint64_t acked = BytesAcked(fd_.get());
  if (acked >= acked_mark_ + kProgressBytes) {
    acked_mark_ = acked;
    last_progress_ = now;
    return false;
  }
  return now - last_progress_ >= limits_.stalled_write;
}

void Connection::Abort() {
  const linger reset{.l_onoff = 1, .l_linger = 0};
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
}

Connection::Timeout Connection::timeout_kind() const {
  switch (state_) {
    case State::kHandshake:
    case State::kReadingHead:
      return Timeout::kHeader;
    case State::kIdle:
      return Timeout::kIdle;
    case State::kWriting:
      return Timeout::kWrite;
    case State::kLingering:
      return Timeout::kLinger;
    default:
      return Timeout::kNone;
  }
}

Connection::Io Connection::Read(char* buffer, size_t size, size_t& got) {
  got = 0;
  if (ssl_ && state_ != State::kLingering) {
    ERR_clear_error();
    const int n = SSL_read(ssl_.get(), buffer, static_cast<int>(size));
    if (n > 0) {
      got = static_cast<size_t>(n);
      return Io::kOk;
    }
    const int error = SSL_get_error(ssl_.get(), n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return Io::kWouldBlock;
    return error == SSL_ERROR_ZERO_RETURN ? Io::kEof : Io::kError;
  }
  while (true) {
    const ssize_t n = ::recv(fd_.get(), buffer, size, 0);
    if (n > 0) {
      got = static_cast<size_t>(n);
      return Io::kOk;
    }
    if (n == 0) return Io::kEof;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWouldBlock : Io::kError;
  }
}

Connection::Io Connection::Write(const char* data, size_t size, size_t& wrote) {
  wrote = 0;
  if (ssl_) {
    ERR_clear_error();
    size_t n = 0;
    if (SSL_write_ex(ssl_.get(), data, size, &n) == 1) {
      wrote = n;
      return Io::kOk;
    }
    const int error = SSL_get_error(ssl_.get(), 0);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return Io::kWouldBlock;
    return Io::kError;
  }
  while (true) {
    const ssize_t n = ::send(fd_.get(), data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      wrote = static_cast<size_t>(n);
      return Io::kOk;
    }
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWouldBlock : Io::kError;
  }
}

Connection::Event Connection::Close(std::string reason) {
  state_ = State::kClosed;
  close_reason_ = std::move(reason);
  return Event::kClose;
}

Connection::Event Connection::Drive(Clock::time_point now) {
  while (true) {
    Event event = Event::kNone;
    const State before = state_;
    switch (state_) {
      case State::kHandshake:
        event = Handshake(now);
        break;
      case State::kReadingHead:
      case State::kIdle:
        event = ReadHead(now);
        break;
      case State::kWriting:
        event = WriteResponse(now);
        break;
      case State::kLingering:
        event = Linger();
        break;
      case State::kHandling:
        return Event::kNone;  // pipelined bytes wait in the socket until we have answered
      case State::kClosed:
        return Event::kClose;
    }
    // Go on while the state moved without needing the socket (e.g. written → idle → a
    // pipelined request already buffered).
    if (event != Event::kNone || state_ == before) return event;
  }
}

Connection::Event Connection::Handshake(Clock::time_point /*now*/) {
  ERR_clear_error();
  const int rc = SSL_accept(ssl_.get());
  if (rc == 1) {
    if (policy_ != nullptr) {
      if (Status status = policy_->CheckClientCertificate(ssl_.get()); !status.ok()) {
        tls_failed_ = true;
        return Close("client certificate refused: " + status.message());
      }
    }
    state_ = State::kReadingHead;  // the header deadline keeps running
    return Event::kNone;
  }
  const int error = SSL_get_error(ssl_.get(), rc);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return Event::kNone;
  tls_failed_ = true;
  const unsigned long code = ERR_peek_last_error();  // NOLINT(runtime/int): OpenSSL's type
  char text[256] = "connection closed during the handshake";
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  return Close(std::string("TLS handshake failed: ") + text);
}

Connection::Event Connection::ReadHead(Clock::time_point now) {
  while (true) {
    if (!input_.empty()) {
      HeadLimits head_limits{limits_.max_head_bytes, limits_.max_header_fields};
      parse_ = ParseRequestHead(input_, head_limits);
      if (state_ == State::kIdle) {  // the first byte of the next request starts its clock
        state_ = State::kReadingHead;
        deadline_ = now + limits_.header_timeout;
      }
      if (parse_.state == HeadParse::State::kComplete) {
        head_ = std::move(parse_.head);
        input_.erase(0, parse_.head_bytes);
        state_ = State::kHandling;
        ++requests_;
        return Event::kHeadReady;
      }
      if (parse_.state == HeadParse::State::kError) {
        head_ = RequestHead{};
        state_ = State::kHandling;
        return Event::kHeadError;
      }
    }
    char buffer[kReadChunk];
    size_t got = 0;
    switch (Read(buffer, sizeof(buffer), got)) {
      case Io::kOk:
        input_.append(buffer, got);
        continue;
      case Io::kWouldBlock:
        return Event::kNone;
      case Io::kEof:
        return Close(input_.empty() ? "closed by the client" : "closed mid-request");
      case Io::kError:
        return Close("read error");
    }
  }
}

void Connection::Respond(PendingResponse response, Clock::time_point now) {
  response_ = std::move(response);
  if (!response_.owner) response_.body = response_.text;
  if (ssl_ && response_.head.size() < kTlsRecord && !response_.body.empty()) {
    // One record for the head and the start of the body (see the file comment): the head
    // takes up to a record's worth of the body, which is then written from there.
    const size_t take = std::min(response_.body.size(), kTlsRecord - response_.head.size());
    response_.head.append(response_.body.substr(0, take));
    response_.body.remove_prefix(take);
  }
  written_ = 0;
  state_ = State::kWriting;
  deadline_ = now + limits_.write_timeout;
  last_progress_ = now;
  acked_mark_ = BytesAcked(fd_.get());
}

Connection::Event Connection::WriteResponse(Clock::time_point now) {
  const size_t head_size = response_.head.size();
  const size_t total = head_size + response_.body.size();
  while (written_ < total) {
    size_t wrote = 0;
    Io io = Io::kOk;
    if (!ssl_ && written_ < head_size && !response_.body.empty()) {
      // Plain: head and body in one segment when they fit.
      iovec parts[2] = {{response_.head.data() + written_, head_size - written_},
                        {const_cast<char*>(response_.body.data()), response_.body.size()}};
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = 2;
      const ssize_t n = ::sendmsg(fd_.get(), &message, MSG_NOSIGNAL);
      if (n >= 0) {
        wrote = static_cast<size_t>(n);
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        io = Io::kWouldBlock;
      } else if (errno != EINTR) {
        io = Io::kError;
      }
    } else if (written_ < head_size) {
      io = Write(response_.head.data() + written_, head_size - written_, wrote);
    } else {
      const size_t offset = written_ - head_size;
      io = Write(response_.body.data() + offset, response_.body.size() - offset, wrote);
    }
    if (io == Io::kWouldBlock) return Event::kNone;
    if (io != Io::kOk) return Close("write error");
    written_ += wrote;
  }
  const bool close = response_.close;
  response_ = PendingResponse{};
  if (close) {
    StartLingering(now);
  } else {
    state_ = State::kIdle;
    deadline_ = now + limits_.idle_timeout;
  }
  return Event::kNone;
}

void Connection::StartLingering(Clock::time_point now) {
  if (ssl_) {
    ERR_clear_error();
    SSL_shutdown(ssl_.get());  // close_notify, best effort: we are closing anyway
  }
  ::shutdown(fd_.get(), SHUT_WR);
  state_ = State::kLingering;
  deadline_ = now + kLinger;
  input_.clear();
  written_ = 0;  // counts discarded bytes from here on
}

Connection::Event Connection::Linger() {
  char buffer[kReadChunk];
  while (written_ < kLingerBytes) {
    size_t got = 0;
    switch (Read(buffer, sizeof(buffer), got)) {
      case Io::kOk:
        written_ += got;
        continue;
      case Io::kWouldBlock:
        return Event::kNone;
      case Io::kEof:
      case Io::kError:
        return Close("closed after the response");
    }
  }
  return Close("closed after the response (the client kept sending)");
}

}  // namespace fabricwatch::exporter
