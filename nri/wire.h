// NRI's transport, as bytes: one stream socket (the trunk) carries several connections,
// multiplexed in frames of [connection ID u32][length u32] (big-endian) plus that many
// bytes (github.com/containerd/nri pkg/net/multiplex); each connection is a byte stream of
// ttrpc messages, [length u32][stream ID u32][type u8][flags u8] plus the message
// (github.com/containerd/ttrpc channel.go). The runtime calls the plugin's Plugin service
// on connection 1 and serves its Runtime service on connection 2.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hcashare::nri {

// The connection on which the runtime calls the plugin.
inline constexpr uint32_t kPluginServiceConn = 1;
// The connection on which the plugin calls the runtime.
inline constexpr uint32_t kRuntimeServiceConn = 2;

inline constexpr size_t kMuxHeaderLength = 8;
inline constexpr size_t kTtrpcHeaderLength = 10;
// ttrpc's bound on one message; a mux frame holds at most one whole message.
inline constexpr size_t kTtrpcMaxMessage = 4 << 20;
inline constexpr size_t kMuxMaxPayload = kTtrpcHeaderLength + kTtrpcMaxMessage;

// A ttrpc message type.
enum class MessageType : uint8_t { kRequest = 1, kResponse = 2, kData = 3 };

// One ttrpc message on one multiplexed connection.
struct Message {
  uint32_t conn = 0;
  uint32_t stream_id = 0;
  uint8_t type = 0;  // a MessageType, or what the peer sent
  uint8_t flags = 0;
  std::string payload;
};

// The bytes that carry `m` on the trunk: its ttrpc header and payload in mux frames of at
// most kMuxMaxPayload bytes. InvalidArgument when the payload exceeds kTtrpcMaxMessage.
Result<std::string> EncodeMessage(const Message& m);

// Splits the bytes read from a trunk into messages. A frame for a connection other than
// 1 and 2 is dropped, as the upstream mux drops data for connections nobody opened.
// Memory is bounded by one message per connection plus one frame.
class TrunkReader {
 public:
  // Takes bytes read from the trunk. An error (a frame or a message over its bound) is
  // final: the trunk is no longer in step and must be closed.
  Status Feed(std::string_view bytes);
  // The next complete message, in arrival order.
  std::optional<Message> Next();

 private:
  Status Parse();

  std::string trunk_;                      // unparsed trunk bytes
  std::map<uint32_t, std::string> conns_;  // per connection: unparsed ttrpc bytes
  std::deque<Message> ready_;
  Status error_;
};

}  // namespace hcashare::nri
