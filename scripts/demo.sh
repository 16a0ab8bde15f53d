#!/usr/bin/env bash
# The demo: installs dependencies, builds the plugin and the CLI, and runs the real
# hcashare-device-plugin on a built-in simulated node with a built-in fake kubelet
# (`hcashare demo` runs hcashare-demo, the demo's own binary, from build/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -- hcashare hcashare-demo \
  hcashare-device-plugin
exec ./build/bin/hcashare demo "$@"
