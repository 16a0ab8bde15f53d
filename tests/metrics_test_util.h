// Helpers shared by the metrics tests: raw HTTP exchanges with the metrics server and
// reading samples out of a Prometheus text scrape.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "common/unique_fd.h"

namespace hcashare::testing {

// The value of the sample `series` (its name and labels exactly as rendered) in `text`.
inline std::optional<double> SampleValue(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const std::string all = "\n" + text;
  const size_t at = all.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(all.c_str() + at + key.size(), nullptr);
}

// The samples of the counter families named hcashare_* in `text`: series -> value.
inline std::map<std::string, double> OurCounters(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  std::string family;  // the current family, when it is one of ours and a counter
  while (std::getline(in, line)) {
    const size_t sp = line.rfind(' ');
    if (line.rfind("# TYPE hcashare_", 0) == 0 && line.substr(sp + 1) == "counter") {
      family = line.substr(7, sp - 7);
    } else if (line.rfind("# ", 0) == 0) {
      family.clear();
    } else if (!family.empty() && line.rfind(family, 0) == 0) {
      out[line.substr(0, sp)] = std::strtod(line.c_str() + sp + 1, nullptr);
    }
  }
  return out;
}

// A response read off a raw socket.
struct Reply {
  std::string raw;          // everything received
  std::string status_line;  // "HTTP/1.1 200 OK", "" if nothing arrived
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Connects to `ip`:`port` (blocking, 5 s send/receive timeouts). Invalid on failure.
inline UniqueFd Connect(int port, const std::string& ip = "127.0.0.1") {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, ip.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(*sin);
  } else if (::inet_pton(AF_INET6, ip.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(*sin6);
  } else {
    return UniqueFd();
  }
  UniqueFd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  timeval tv{5, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return UniqueFd();
  return fd;
}

// Reads until EOF, an error (e.g. a reset) or the receive timeout.
inline std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

inline Reply ParseReply(std::string raw) {
  Reply r;
  r.raw = std::move(raw);
  size_t end = r.raw.find("\r\n\r\n");
  if (end == std::string::npos) return r;
  r.body = r.raw.substr(end + 4);
  size_t pos = r.raw.find("\r\n");
  r.status_line = r.raw.substr(0, pos);
  if (r.status_line.size() >= 12) r.status = std::atoi(r.status_line.c_str() + 9);
  while (pos < end) {
    size_t next = r.raw.find("\r\n", pos + 2);
    std::string line = r.raw.substr(pos + 2, next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t v = line.find_first_not_of(' ', colon + 1);
      r.headers[name] = v == std::string::npos ? "" : line.substr(v);
    }
    pos = next;
  }
  return r;
}

// Sends `request` verbatim and reads the whole response.
inline Reply Exchange(int port, const std::string& request, const std::string& ip = "127.0.0.1") {
  UniqueFd fd = Connect(port, ip);
  if (!fd.valid()) return Reply();
  ::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL);
  return ParseReply(ReadAll(fd.get()));
}

// GET `path` over HTTP/1.1.
inline Reply HttpGet(int port, const std::string& path) {
  return Exchange(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\n\r\n");
}

}  // namespace hcashare::testing
