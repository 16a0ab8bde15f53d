#include "nri/wire.h"

#include <algorithm>

namespace hcashare::nri {
namespace {

void PutU32(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v >> 24));
  out->push_back(static_cast<char>(v >> 16));
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

uint32_t GetU32(std::string_view b) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(b[0])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(b[1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(b[2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(b[3]));
}

}  // namespace

Result<std::string> EncodeMessage(const Message& m) {
  if (m.payload.size() > kTtrpcMaxMessage) {
    return Status::InvalidArgument("ttrpc message of " + std::to_string(m.payload.size()) +
                                   " bytes exceeds the " + std::to_string(kTtrpcMaxMessage) +
                                   "-byte limit");
  }
  std::string body;
  body.reserve(kTtrpcHeaderLength + m.payload.size());
  PutU32(&body, static_cast<uint32_t>(m.payload.size()));
  PutU32(&body, m.stream_id);
  body.push_back(static_cast<char>(m.type));
  body.push_back(static_cast<char>(m.flags));
  body += m.payload;
  std::string out;
  out.reserve(body.size() + kMuxHeaderLength);
  for (size_t at = 0; at < body.size(); at += kMuxMaxPayload) {
    const size_t n = std::min(kMuxMaxPayload, body.size() - at);
    PutU32(&out, m.conn);
    PutU32(&out, static_cast<uint32_t>(n));
    out.append(body, at, n);
  }
  return out;
}

Status TrunkReader::Feed(std::string_view bytes) {
  if (!error_.ok()) return error_;
  trunk_.append(bytes);
  error_ = Parse();
  return error_;
}

Status TrunkReader::Parse() {
  size_t at = 0;
  while (trunk_.size() - at >= kMuxHeaderLength) {
    const std::string_view head(trunk_.data() + at, kMuxHeaderLength);
    const uint32_t conn = GetU32(head);
    const uint32_t length = GetU32(head.substr(4));
    if (length > kMuxMaxPayload) {
      return Status::InvalidArgument("NRI mux frame of " + std::to_string(length) +
                                     " bytes exceeds the " + std::to_string(kMuxMaxPayload) +
                                     "-byte limit");
    }
    if (trunk_.size() - at - kMuxHeaderLength < length) break;
    const std::string_view data(trunk_.data() + at + kMuxHeaderLength, length);
    at += kMuxHeaderLength + length;
    if (conn != kPluginServiceConn && conn != kRuntimeServiceConn) continue;
    std::string& stream = conns_[conn];
    stream.append(data);
    size_t used = 0;
    while (stream.size() - used >= kTtrpcHeaderLength) {
      const std::string_view h(stream.data() + used, kTtrpcHeaderLength);
      const uint32_t n = GetU32(h);
      if (n > kTtrpcMaxMessage) {
        return Status::InvalidArgument("ttrpc message of " + std::to_string(n) +
                                       " bytes exceeds the " + std::to_string(kTtrpcMaxMessage) +
                                       "-byte limit");
      }
      if (stream.size() - used - kTtrpcHeaderLength < n) break;
      Message m;
      m.conn = conn;
      m.stream_id = GetU32(h.substr(4));
      m.type = static_cast<uint8_t>(h[8]);
      m.flags = static_cast<uint8_t>(h[9]);
      m.payload.assign(stream, used + kTtrpcHeaderLength, n);
      used += kTtrpcHeaderLength + n;
      ready_.push_back(std::move(m));
    }
    stream.erase(0, used);
  }
  trunk_.erase(0, at);
  return Status::Ok();
}

std::optional<Message> TrunkReader::Next() {
  if (ready_.empty()) return std::nullopt;
  Message m = std::move(ready_.front());
  ready_.pop_front();
  return m;
}

}  // namespace hcashare::nri
