#!/usr/bin/env bash
# Regenerates daemon/symbol-order.txt: the functions hcashare-device-plugin runs from
# start to idle (bench/dp_bench's workload: 4 shared resources, registration, ListAndWatch,
# 5000 Allocates, 5 s idle with health polls), as mangled names. The static daemon is linked with lld and this file as
# its --symbol-ordering-file, so that the code an idle daemon runs sits in few pages instead
# of being spread over the whole 13 MB text (docs/benchmarks.md, "idle RSS").
#
# Usage: scripts/dp-symbol-order.sh [BUILD_DIR]   (default: build; needs dp_bench built)
# A stale file only loses part of the gain; tests/dp_symbol_order_test.cc fails when too
# few of its names are left in the daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bash scripts/install-deps.sh valgrind
bin=$PWD/$build/bin
[ -x "$bin/hcashare-device-plugin" ] && [ -x "$bin/dp_bench" ] ||
  { echo "dp-symbol-order: build hcashare-device-plugin and dp_bench in $build first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/plugin" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --demangle=no --callgrind-out-file=$work/cg.%p.out \
  "$bin/hcashare-device-plugin" "\$@"
EOF
chmod +x "$work/plugin"
# Under callgrind the daemon is ~50x slower: one start-up, and it is stopped (SIGTERM) by
# dp_bench at the end, which writes the profile.
"$bin/dp_bench" --runs 1 --allocs 5000 --idle-seconds 5 --plugin "$work/plugin" \
  >"$work/bench.log" 2>&1 || { cat "$work/bench.log" >&2; exit 1; }

# Every function that has costs of its own (an "fn=" block). Callgrind compresses names:
# "fn=(id) name" or "cfn=(id) name" defines id, a later "fn=(id)" reuses it. Kept only
# when the daemon defines the name as a function (nm: T/t/W/w).
for f in "$work"/cg.*.out; do
  awk '
    /^c?fn=\([0-9]+\)/ {
      split($0, kv, "="); split(kv[2], parts, " "); id = parts[1]
      if (parts[2] != "") name[id] = parts[2]
      if (kv[1] == "fn" && (id in name)) print name[id]
    }' "$f"
done | sort -u >"$work/ran.txt"
nm --defined-only "$bin/hcashare-device-plugin" | awk '$2 ~ /^[TtWw]$/ { print $3 }' |
  sort -u >"$work/defined.txt"
comm -12 "$work/ran.txt" "$work/defined.txt" >daemon/symbol-order.txt
echo "dp-symbol-order: $(wc -l <daemon/symbol-order.txt) functions in daemon/symbol-order.txt"
