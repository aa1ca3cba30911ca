#include "collectors/kmsg/kmsg_parse.h"

#include <charconv>

#include "base/utf8.h"

namespace fabricwatch::kmsg {
namespace {

Status Bad(std::string_view why) {
  return Status(StatusCode::kInvalidArgument, "kmsg record: " + std::string(why));
}

bool Number(std::string_view text, uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<KmsgRecord> ParseKmsgRecord(std::string_view text) {
  if (text.size() > kMaxKmsgRecordBytes) return Error(Bad("longer than 8192 bytes"));
  if (!IsValidUtf8(text)) return Error(Bad("not valid UTF-8"));
  const size_t newline = text.find('\n');
  const std::string_view line = text.substr(0, newline);
  const size_t semicolon = line.find(';');
  if (semicolon == std::string_view::npos) return Error(Bad("no ';' after the prefix"));
  std::string_view prefix = line.substr(0, semicolon);
  const std::string_view message = line.substr(semicolon + 1);
  if (message.size() > kMaxKmsgMessageBytes) return Error(Bad("message longer than 1024 bytes"));
  KmsgRecord r;
  std::string_view fields[4];
  for (size_t i = 0; i < 4; ++i) {
    const size_t comma = prefix.find(',');
    if (comma == std::string_view::npos && i < 3)
      return Error(Bad("prefix with fewer than 4 fields"));
    fields[i] = prefix.substr(0, comma);
    prefix = comma == std::string_view::npos ? std::string_view() : prefix.substr(comma + 1);
  }
  uint64_t syslog = 0;
  if (!Number(fields[0], syslog) || syslog > 0x7ff) return Error(Bad("bad priority field"));
  r.priority = static_cast<uint8_t>(syslog & 7);
  r.facility = static_cast<uint32_t>(syslog >> 3);
  if (!Number(fields[1], r.sequence)) return Error(Bad("bad sequence field"));
  if (!Number(fields[2], r.timestamp_us)) return Error(Bad("bad timestamp field"));
  if (fields[3].empty()) return Error(Bad("empty flags field"));
  r.fragment = fields[3][0] == 'c' || fields[3][0] == '+';
  r.message.assign(message);
  // Continuation lines: " KEY=value" each.
  std::string_view rest =
      newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view cont = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (cont.empty()) continue;
    if (cont.front() != ' ') return Error(Bad("a second line that is not a continuation"));
    cont.remove_prefix(1);
    if (cont.starts_with("SUBSYSTEM=")) r.subsystem.assign(cont.substr(10));
    if (cont.starts_with("DEVICE=")) r.device.assign(cont.substr(7));
  }
  return r;
}

std::string UnescapeKmsg(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] == '\\' && i + 3 < message.size() && message[i + 1] == 'x') {
      unsigned value = 0;
      auto [end, ec] = std::from_chars(message.data() + i + 2, message.data() + i + 4, value, 16);
      if (ec == std::errc() && end == message.data() + i + 4) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(message[i]);
  }
  return out;
}

void KmsgSplitter::Feed(std::string_view text) {
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(text);
  at_end_ = false;
}

bool KmsgSplitter::Next(std::string& record) {
  while (true) {
    const std::string_view pending(buffer_.data() + start_, buffer_.size() - start_);
    if (pending.empty()) return false;
    if (pending.front() == ' ' || pending.front() == '\n') {
      // A continuation line (or a blank line) with no record before it.
      const size_t end = pending.find('\n');
      if (end == std::string_view::npos && !finished_) return false;
      start_ += end == std::string_view::npos ? pending.size() : end + 1;
      if (pending.front() == ' ') ++dropped_, ++orphans_;
      continue;
    }
    // The record runs to the first newline not followed by a space.
    size_t at = 0;
    while (true) {
      const size_t newline = pending.find('\n', at);
      if (newline == std::string_view::npos) {
        if (!finished_) {
          if (pending.size() > kMaxKmsgRecordBytes) {  // a record that never ends
            start_ = buffer_.size();
            ++dropped_;
          }
          return false;
        }
        at = pending.size();
        break;
      }
      if (newline + 1 >= pending.size()) {
        // The next line may still be a continuation, unless the input is at its end for now.
        if (!finished_ && !at_end_) return false;
        at = newline + 1;
        break;
      }
      if (pending[newline + 1] != ' ') {
        at = newline + 1;
        break;
      }
      at = newline + 1;
    }
    const std::string_view text = pending.substr(0, at);
    start_ += at;
    if (text.size() > kMaxKmsgRecordBytes) {
      ++dropped_;
      continue;
    }
    record.assign(text);
    return true;
  }
}

}  // namespace fabricwatch::kmsg
