#!/usr/bin/env bash
# Installs every Debian 12 package hcashare needs to build, test and benchmark, plus any
# packages named as arguments (e.g. a script's own extras: `install-deps.sh clang`).
# Idempotent: packages already present are skipped, and apt is not touched at all
# when nothing is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
  libibverbs-dev
  nlohmann-json3-dev libyaml-cpp-dev
  googletest libgmock-dev libgtest-dev libbenchmark-dev
  libcli11-dev
  libboost-dev libssl-dev  # Boost.Beast/Asio (HTTP) and OpenSSL (TLS): docs/architecture.md
  lld  # links the static device plugin in its symbol order (daemon/CMakeLists.txt)
  iproute2 procps clang-format
  gdb  # the stacks of a test's child that did not end in time (testing/stuck_process.h)
  containernetworking-plugins  # reference IPAM plugins (host-local) for the CNI tests
  "$@"
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: must run as root to install packages" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
