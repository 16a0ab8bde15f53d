#include "http/listen.h"

#include <arpa/inet.h>

#include <boost/asio/ip/v6_only.hpp>
#include <cerrno>
#include <cstring>

namespace hcashare::http_internal {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr int kBacklog = 128;

// Opens, binds and listens `acceptor` on `ep`. Returns the failing call's name, or null.
const char* BindListen(tcp::acceptor* acceptor, const tcp::endpoint& ep, bool dual_stack,
                       error_code* ec) {
  error_code ignored;
  acceptor->close(ignored);
  if (acceptor->open(ep.protocol(), *ec)) return "socket";
  if (acceptor->set_option(asio::socket_base::reuse_address(true), *ec)) {
    return "setsockopt SO_REUSEADDR";
  }
  if (dual_stack && acceptor->set_option(asio::ip::v6_only(false), *ec)) {
    return "setsockopt IPV6_V6ONLY";
  }
  if (acceptor->bind(ep, *ec)) return "bind";
  if (acceptor->listen(kBacklog, *ec)) return "listen";
  return nullptr;
}

}  // namespace

Result<ListenAddress> ParseAddress(const std::string& address) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("listen address \"" + address + "\": " + why);
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return bad("expected host:port or :port");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    return bad("bad port");
  }
  unsigned long port_num = std::stoul(port);  // cannot throw: 1-5 digits
  if (port_num > 65535) return bad("port out of range");

  ListenAddress out;
  out.port = static_cast<uint16_t>(port_num);
  if (host.empty()) {
    out.kind = ListenAddress::kAny;
  } else if (host.front() == '[') {
    if (host.size() < 2 || host.back() != ']') return bad("unterminated [IPv6] host");
    std::string inner = host.substr(1, host.size() - 2);
    if (::inet_pton(AF_INET6, inner.c_str(), &out.v6) != 1) return bad("bad IPv6 address");
    out.kind = ListenAddress::kV6;
  } else if (host == "localhost") {
    out.v4.s_addr = htonl(INADDR_LOOPBACK);
    out.kind = ListenAddress::kV4;
  } else if (::inet_pton(AF_INET, host.c_str(), &out.v4) == 1) {
    out.kind = ListenAddress::kV4;
  } else {
    return bad("host must be a numeric IPv4 address, [IPv6 address] or localhost");
  }
  return out;
}

Status Listen(tcp::acceptor* acceptor, const ListenAddress& a, const std::string& address) {
  error_code ec;
  const char* what = nullptr;
  switch (a.kind) {
    case ListenAddress::kV4: {
      asio::ip::address_v4::bytes_type b;
      std::memcpy(b.data(), &a.v4, b.size());
      what = BindListen(acceptor, {asio::ip::address_v4(b), a.port}, false, &ec);
      break;
    }
    case ListenAddress::kV6: {
      asio::ip::address_v6::bytes_type b;
      std::memcpy(b.data(), &a.v6, b.size());
      what = BindListen(acceptor, {asio::ip::address_v6(b), a.port}, false, &ec);
      break;
    }
    case ListenAddress::kAny: {
      what = BindListen(acceptor, {tcp::v6(), a.port}, true, &ec);
      const int err = ec.value();
      // No IPv6 (not built, disabled by sysctl or boot option): serve IPv4 only.
      if (what != nullptr && (err == EAFNOSUPPORT || err == EPROTONOSUPPORT ||
                              err == EADDRNOTAVAIL || err == ENOPROTOOPT || err == EINVAL)) {
        ec.clear();
        what = BindListen(acceptor, {tcp::v4(), a.port}, false, &ec);
      }
      break;
    }
  }
  if (what != nullptr) return ErrnoStatus(ec.value(), std::string(what) + " " + address);
  return Status::Ok();
}

}  // namespace hcashare::http_internal
