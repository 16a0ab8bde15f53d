#include "kube/proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "kube/pem.h"

namespace hcashare::kube {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string TrimSpace(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// An address in `bytes` (4 or 16) when `s` is an IP address.
bool ParseIp(const std::string& s, unsigned char* bytes, int* family) {
  if (::inet_pton(AF_INET, s.c_str(), bytes) == 1) {
    *family = AF_INET;
    return true;
  }
  if (::inet_pton(AF_INET6, s.c_str(), bytes) == 1) {
    *family = AF_INET6;
    return true;
  }
  return false;
}

bool IsLoopback(const std::string& host) {
  if (Lower(host) == "localhost") return true;
  unsigned char b[16];
  int family = 0;
  if (!ParseIp(host, b, &family)) return false;
  if (family == AF_INET) return b[0] == 127;
  static const unsigned char kLoop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(b, kLoop6, 16) == 0;
}

// Whether CIDR `cidr` holds address `host`.
bool CidrHolds(const std::string& cidr, const std::string& host) {
  const size_t slash = cidr.find('/');
  unsigned char net[16], ip[16];
  int net_family = 0, ip_family = 0;
  if (!ParseIp(cidr.substr(0, slash), net, &net_family) || !ParseIp(host, ip, &ip_family) ||
      net_family != ip_family) {
    return false;
  }
  const int max = net_family == AF_INET ? 32 : 128;
  const std::string bits_text = cidr.substr(slash + 1);
  if (bits_text.empty() || bits_text.size() > 3 ||
      !std::all_of(bits_text.begin(), bits_text.end(), ::isdigit)) {
    return false;
  }
  const int bits = std::stoi(bits_text);
  if (bits > max) return false;
  for (int i = 0; i < bits; ++i) {
    const int mask = 0x80 >> (i % 8);
    if ((net[i / 8] & mask) != (ip[i / 8] & mask)) return false;
  }
  return true;
}

}  // namespace

Result<ProxyUrl> ParseProxyUrl(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(what + ": \"" + text + "\": " + why);
  };
  std::string rest = text;
  const size_t scheme_end = rest.find("://");
  if (scheme_end != std::string::npos) {
    const std::string scheme = Lower(rest.substr(0, scheme_end));
    if (scheme != "http") {
      return bad("only http:// proxies are supported (HTTPS goes through them with CONNECT)");
    }
    rest = rest.substr(scheme_end + 3);
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find_first_of("/?# ") != std::string::npos) return bad("a path is not allowed");
  ProxyUrl out;
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    out.authorization = "Basic " + EncodeBase64(rest.substr(0, at));
    rest = rest.substr(at + 1);
  }
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) return bad("unterminated [IPv6] host");
    out.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return bad("junk after ]");
      port = rest.substr(close + 2);
    }
  } else {
    const size_t colon = rest.find(':');
    out.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit)) {
      return bad("bad port");
    }
    const int n = std::stoi(port);
    if (n < 1 || n > 65535) return bad("port out of range");
    out.port = static_cast<uint16_t>(n);
  }
  const bool v6 = out.host.find(':') != std::string::npos;
  out.url = "http://" + (v6 ? "[" + out.host + "]" : out.host) + ":" + std::to_string(out.port);
  return out;
}

bool NoProxyMatches(const std::string& no_proxy, const std::string& host_in, uint16_t port) {
  const std::string host = Lower(host_in);
  size_t at = 0;
  while (at <= no_proxy.size()) {
    const size_t comma = std::min(no_proxy.find(',', at), no_proxy.size());
    std::string entry = Lower(TrimSpace(no_proxy.substr(at, comma - at)));
    at = comma + 1;
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (entry.find('/') != std::string::npos) {
      if (CidrHolds(entry, host)) return true;
      continue;
    }
    // An optional ":port" (an IPv6 entry has it only in brackets).
    std::string entry_port;
    if (!entry.empty() && entry.front() == '[') {
      const size_t close = entry.find(']');
      if (close == std::string::npos) continue;
      if (close + 2 < entry.size() && entry[close + 1] == ':') entry_port = entry.substr(close + 2);
      entry = entry.substr(1, close - 1);
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry_port = entry.substr(entry.find(':') + 1);
      entry = entry.substr(0, entry.find(':'));
    }
    if (!entry_port.empty() && entry_port != std::to_string(port)) continue;
    unsigned char b[16];
    int family = 0;
    if (ParseIp(entry, b, &family)) {
      unsigned char h[16];
      int hf = 0;
      if (ParseIp(host, h, &hf) && hf == family &&
          std::memcmp(b, h, family == AF_INET ? 4 : 16) == 0) {
        return true;
      }
      continue;
    }
    // ".example.com" and "example.com" both match the domain and its subdomains.
    if (entry.front() == '.') entry = entry.substr(1);
    if (host == entry) return true;
    if (host.size() > entry.size() &&
        host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
        host[host.size() - entry.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

Result<std::optional<ProxyUrl>> ProxyFromEnvironment(const char* (*getenv)(const char*),
                                                     const std::string& host, uint16_t port) {
  auto value = [&](const char* upper, const char* lower) -> std::string {
    const char* v = getenv(upper);
    if (v == nullptr || *v == '\0') v = getenv(lower);
    return v != nullptr ? v : "";
  };
  const std::string proxy = value("HTTPS_PROXY", "https_proxy");
  if (proxy.empty() || IsLoopback(host)) return std::optional<ProxyUrl>();
  if (NoProxyMatches(value("NO_PROXY", "no_proxy"), host, port)) {
    return std::optional<ProxyUrl>();
  }
  ASSIGN_OR_RETURN(ProxyUrl p, ParseProxyUrl(proxy, "HTTPS_PROXY"));
  return std::optional<ProxyUrl>(std::move(p));
}

}  // namespace hcashare::kube
