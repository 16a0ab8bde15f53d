#!/usr/bin/env bash
# All tests: installs dependencies, builds everything, runs every unit and integration
# test, runs them again under AddressSanitizer + UndefinedBehaviorSanitizer, fuzzes every
# parser briefly, runs the device-plugin server tests under ThreadSanitizer, runs the demo
# as an end-to-end smoke test, and runs the real-kernel suite in a QEMU guest
# (docs/testing.md). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# podman and runc build and run the container image (tests/deploy_image_test.sh),
# prometheus provides promtool, which lints the daemon's /metrics (tests/metrics_test.cc),
# Go with sprig and sigs.k8s.io/yaml builds the Helm chart's renderer (tests/helm-render),
# and openssl runs scripts/injector-certs.sh and checks certificates
# (tests/deploy_injector_certs_test.cc); they are test tools, not build dependencies, so
# they stay out of install-deps.sh's own list (which the image's build stage installs too).
bash scripts/install-deps.sh podman runc prometheus openssl \
  golang-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev jq

echo "== format (clang-format, config in .clang-format)"
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

echo "== build (RelWithDebInfo)"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== tests"
ctest --test-dir build --output-on-failure --timeout 300

echo "== build (ASan + UBSan)"
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DHCASHARE_SANITIZE=ON \
  -DHCASHARE_BUILD_BENCH=OFF
echo "== tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --timeout 600

echo "== fuzz (libFuzzer + ASan + UBSan, 20 s per target; docs/reliability.md)"
bash scripts/fuzz.sh 20

echo "== device-plugin server tests under ThreadSanitizer"
bash scripts/tsan.sh

echo "== demo (end-to-end smoke)"
./build/bin/hcashare demo >/tmp/hcashare-demo.log 2>&1 || { cat /tmp/hcashare-demo.log; exit 1; }
tail -1 /tmp/hcashare-demo.log

echo "== real-kernel suite (QEMU guest; one SKIP line when this host cannot run it)"
bash tests/e2e/vm/run.sh build
