// The HTTP proxy an API client goes through, as client-go chooses it: a kubeconfig
// cluster's proxy-url, else HTTPS_PROXY (https_proxy) unless NO_PROXY (no_proxy) names the
// server or the server is localhost or a loopback address (Go's httpproxy rules). Only
// http:// proxies are supported (HTTPS is then tunnelled with CONNECT); user info becomes
// a Basic Proxy-Authorization.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace hcashare::kube {

// An http:// proxy.
struct ProxyUrl {
  std::string host;  // DNS name or IP address, IPv6 without brackets
  uint16_t port = 80;
  std::string authorization;  // "Basic <base64>" from user info, or ""
  std::string url;            // as configured, without user info (for messages)
};

// Parses "http://[user[:password]@]host[:port][/]" (Go also takes a bare "host:port").
// InvalidArgument naming `what` otherwise (https:// and socks5:// are refused by name).
Result<ProxyUrl> ParseProxyUrl(const std::string& url, const std::string& what);

// Whether `no_proxy` (comma-separated: "*", host names and ".domain" suffixes, IP
// addresses, CIDRs, each with an optional ":port") exempts `host`:`port`.
bool NoProxyMatches(const std::string& no_proxy, const std::string& host, uint16_t port);

// The environment's proxy for an https server at `host`:`port`: none when HTTPS_PROXY (or
// https_proxy) is unset or empty, NO_PROXY (or no_proxy) exempts it, or `host` is localhost
// or a loopback address. `getenv` reads a variable (nullptr when unset).
Result<std::optional<ProxyUrl>> ProxyFromEnvironment(const char* (*getenv)(const char*),
                                                     const std::string& host, uint16_t port);

}  // namespace hcashare::kube
