// The API side of the DRA benchmarks: the fake API server (HTTPS, connections kept alive as
// the real API server keeps them) with a test-time CA, and a warm client of it without the
// client-side rate limit.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "testing/test_pki.h"

namespace hcashare::bench {

struct FakeCluster {
  std::unique_ptr<fake::TestPki> pki;
  std::unique_ptr<fake::FakeApiServer> api;
  std::unique_ptr<kube::RestClient> client;
};

// Starts the server and makes the client; the error of whichever step failed.
inline Result<FakeCluster> StartFakeCluster() {
  FakeCluster c;
  ASSIGN_OR_RETURN(c.pki, fake::TestPki::Create("bench-ca"));
  fake::FakeApiServerOptions server;
  server.keep_alive = true;
  ASSIGN_OR_RETURN(c.api, fake::FakeApiServer::Start(c.pki.get(), server));
  kube::ClusterConfig config;
  config.server = c.api->url();
  ASSIGN_OR_RETURN(config.url, kube::ParseServerUrl(config.server, "bench"));
  config.ca_pem = c.pki->ca_pem();
  config.token = "test-token";
  config.source = "bench";
  kube::RestOptions o;
  o.qps = 0;
  ASSIGN_OR_RETURN(c.client, kube::RestClient::Create(config, o));
  return c;
}

}  // namespace hcashare::bench
