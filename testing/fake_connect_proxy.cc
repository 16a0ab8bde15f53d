#include "testing/fake_connect_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>

namespace hcashare::fake {

Result<std::unique_ptr<FakeConnectProxy>> FakeConnectProxy::Start() {
  std::unique_ptr<FakeConnectProxy> p(new FakeConnectProxy());
  p->listener_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (::bind(p->listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::listen(p->listener_.get(), 16) != 0 ||
      ::getsockname(p->listener_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return Status::Internal(std::string("proxy listen: ") + std::strerror(errno));
  }
  p->port_ = ntohs(a.sin_port);
  p->acceptor_ = std::thread([raw = p.get()] { raw->Accept(); });
  return p;
}

FakeConnectProxy::~FakeConnectProxy() {
  stop_ = true;
  ::shutdown(listener_.get(), SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
}

std::vector<std::string> FakeConnectProxy::targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return targets_;
}

std::vector<std::string> FakeConnectProxy::authorizations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return authorizations_;
}

void FakeConnectProxy::Accept() {
  while (!stop_) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    UniqueFd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c.valid()) continue;
    std::lock_guard<std::mutex> lock(mu_);
    workers_.emplace_back([this, fd = c.Release()] { Serve(UniqueFd(fd)); });
  }
}

void FakeConnectProxy::Serve(UniqueFd client) {
  std::string head;
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 16384) {
    const ssize_t n = ::recv(client.get(), buf, sizeof(buf), 0);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
  const size_t end = head.find("\r\n\r\n");
  if (end == std::string::npos) return;
  const std::string rest = head.substr(end + 4);
  const std::string first = head.substr(0, head.find("\r\n"));
  std::string target, auth;
  if (first.rfind("CONNECT ", 0) == 0) target = first.substr(8, first.find(' ', 8) - 8);
  const std::string key = "\r\nProxy-Authorization: ";
  if (const size_t at = head.find(key); at != std::string::npos && at < end) {
    auth = head.substr(at + key.size(), head.find("\r\n", at + 2) - at - key.size());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    targets_.push_back(target);
    authorizations_.push_back(auth);
  }
  auto answer = [&](const std::string& a) {
    (void)::send(client.get(), a.data(), a.size(), MSG_NOSIGNAL);
  };
  const size_t colon = target.rfind(':');
  if (refuse_ || target.empty() || colon == std::string::npos ||
      target.substr(0, colon) != "127.0.0.1") {
    answer("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  UniqueFd server(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
  if (::connect(server.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    answer("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  answer("HTTP/1.1 200 Connection established\r\n\r\n");
  if (!rest.empty()) (void)::send(server.get(), rest.data(), rest.size(), MSG_NOSIGNAL);
  pollfd fds[2] = {{client.get(), POLLIN, 0}, {server.get(), POLLIN, 0}};
  while (!stop_) {
    if (::poll(fds, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::recv(fds[i].fd, buf, sizeof(buf), 0);
      if (n <= 0) return;
      if (::send(fds[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) return;
    }
  }
}

}  // namespace hcashare::fake
