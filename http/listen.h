// Listen addresses as the HTTP servers take them ("host:port", "[v6]:port", "localhost:port",
// ":port"), and binding an Asio acceptor to one. Internal to hcashare_http.
#pragma once

#include <netinet/in.h>

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace hcashare::http_internal {

// A parsed listen address.
struct ListenAddress {
  enum Kind { kAny, kV4, kV6 } kind = kAny;  // kAny: every address (IPv6 dual-stack or IPv4)
  in_addr v4{};
  in6_addr v6{};
  uint16_t port = 0;
};

// Parses `address`; InvalidArgument naming it and what is wrong.
Result<ListenAddress> ParseAddress(const std::string& address);

// Opens, binds and listens `acceptor` on `a` (IPv4 only when ":port" finds no IPv6). An
// errno Status naming the failing call and `address`.
Status Listen(boost::asio::ip::tcp::acceptor* acceptor, const ListenAddress& a,
              const std::string& address);

}  // namespace hcashare::http_internal
