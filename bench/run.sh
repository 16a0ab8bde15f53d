#!/usr/bin/env bash
# The benchmark report: builds the release tree, runs every benchmark with a performance
# target from the issues, and prints one Markdown table (what, target, measured, ratio to
# the target, status) headed by the machine and the date. docs/benchmarks.md holds the
# last report; regenerate it with this script.
#
# Usage: bench/run.sh [--quick] [BUILD_DIR]   (default build; --quick: fewer repetitions)
# Needs root (hcashare-cni moves netdevs between network namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then
  quick=1
  shift
fi
build=${1:-build}
bash scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
bin=$build/bin
if [ "$quick" = 1 ]; then
  runs=3 allocs=2000 rounds=20 cycles=30 reps=3
else
  runs=7 allocs=5000 rounds=100 cycles=200 reps=5
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "running benchmarks (quick=$quick); this takes a few minutes" >&2
"$bin/discovery_bench" --benchmark_filter='BM_DiscoveryScan/1024$' \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true >"$out/scan" 2>&1
"$bin/dp_bench" --runs "$runs" --allocs "$allocs" >"$out/dp" 2>&1
"$bin/event_bench" --rounds "$rounds" >"$out/event" 2>&1
"$bin/cni_bench" --cycles "$cycles" >"$out/cni" 2>&1
"$bin/podres_bench" --benchmark_filter=BM_GetLookup --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true >"$out/podres" 2>&1
"$bin/prompt_bench" --runs "$runs" >"$out/prompt" 2>&1 || true  # a failed run prints no line
"$bin/webhook_bench" --nads 10000 --rate 200 --seconds "$([ "$quick" = 1 ] && echo 5 || echo 20)" \
  >"$out/webhook" 2>&1 || true
"$bin/webhook_bench" --nads 10000 --rate 200 --seconds "$([ "$quick" = 1 ] && echo 5 || echo 20)" \
  --keep-alive >"$out/webhook_keep" 2>&1 || true
# The baseline: every NAD lookup a GET (no cache), at a rate the API client's limit allows.
"$bin/webhook_bench" --nads 10000 --rate 8 --seconds 10 --no-cache >"$out/webhook_nocache" 2>&1 || true
# Issue 27: NodePrepareResources with a warm API client (128 claims: a node's pods' worth).
"$bin/dra_prepare_bench" --claims 128 >"$out/dra_prepare" 2>&1 || true

# field FILE LINE_PREFIX KEY: the value of KEY=VALUE on the line starting with LINE_PREFIX.
field() { grep "^$2" "$1" | head -1 | tr ' ' '\n' | sed -n "s/^$3=//p" | head -1; }
# gbench_median FILE NAME: the median real time of a Google Benchmark, in ms.
gbench_median() {
  awk -v n="$2" '$1 ~ n && $1 ~ /_median$/ {
    v = $2; u = $3; if (u == "us") v /= 1000; else if (u == "ns") v /= 1e6; else if (u == "s") v *= 1000
    printf "%.2f", v; exit }' "$1"
}

scan_ms=$(gbench_median "$out/scan" BM_DiscoveryScan/1024)
alloc_p50=$(field "$out/dp" allocate_round_trip_us p50)
alloc_p99=$(field "$out/dp" allocate_round_trip_us p99)
rss_kib=$(field "$out/dp" idle_rss_kib VmRSS)
start_ms=$(field "$out/dp" start_to_first_list_ms median)
hotplug_p50=$(field "$out/event" hotplug_uevent_to_listandwatch p50)
hotplug_p99=$(field "$out/event" hotplug_uevent_to_listandwatch p99)
netdev_p99=$(field "$out/event" netdev_state_link_event_to_listandwatch p99)
cni_p50=$(field "$out/cni" cni_add_plus_del p50)
kernel_floor=$(field "$out/cni" kernel_floor_two_moves_in_process p50)
cni_cpu=$(field "$out/cni" cpu_of_plugin_add_plus_del p50)
floor_cpu=$(field "$out/cni" cpu_of_kernel_floor p50)
cni_wall_over=$(awk -v a="$cni_p50" -v b="$kernel_floor" 'BEGIN { if (a != "" && b != "") printf "%.2f", a - b }')
cni_cpu_over=$(awk -v a="$cni_cpu" -v b="$floor_cpu" 'BEGIN { if (a != "" && b != "") printf "%.2f", a - b }')
get_ms=$(gbench_median "$out/podres" BM_GetLookup)
term_start_p50=$(field "$out/prompt" sigterm_at_start_up: p50)
term_start_p99=$(field "$out/prompt" sigterm_at_start_up: p99)
term_stalled_p50=$(field "$out/prompt" sigterm_during_stalled_registration: p50)
term_stalled_p99=$(field "$out/prompt" sigterm_during_stalled_registration: p99)
term_list_p50=$(field "$out/prompt" sigterm_during_first_list_8x50000: p50)
term_list_p99=$(field "$out/prompt" sigterm_during_first_list_8x50000: p99)
probe_p50=$(field "$out/prompt" healthz_with_100_stalled_connections: p50)
probe_p99=$(field "$out/prompt" healthz_with_100_stalled_connections: p99)
wh_p50=$(field "$out/webhook" webhook p50_ms)
wh_p99=$(field "$out/webhook" webhook p99_ms)
wh_rss=$(field "$out/webhook" webhook hwm_kib)
wh_sync=$(field "$out/webhook" webhook sync_ms)
wh_hostile=$(field "$out/webhook" webhook hostile_hwm_kib)
wh_base_p99=$(field "$out/webhook_nocache" webhook p99_ms)
wh_keep_p50=$(field "$out/webhook_keep" webhook p50_ms)
wh_keep_p99=$(field "$out/webhook_keep" webhook p99_ms)
dra_p50=$(field "$out/dra_prepare" prepare_first p50_ms)
dra_p99=$(field "$out/dra_prepare" prepare_first p99_ms)
dra_again_p99=$(field "$out/dra_prepare" prepare_again p99_ms)

# row WHAT TARGET_TEXT TARGET MEASURED_TEXT MEASURED: a table row with ratio and status.
row() {
  awk -v what="$1" -v ttext="$2" -v t="$3" -v mtext="$4" -v m="$5" 'BEGIN {
    if (m == "") { printf "| %s | %s | %s | | not measured |\n", what, ttext, "(no result)"; exit }
    r = m / t
    printf "| %s | %s | %s | %.2f | %s |\n", what, ttext, mtext, r, (r <= 1 ? "met" : "**not met**") }'
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
echo "Machine: $(nproc) cores ($cpu), $mem, $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)."
echo "Load average before the run: $load_before (other work on the machine slows every figure)."
echo "Date: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $( [ "$quick" = 1 ] && echo quick || echo full) run."
echo
echo "| what | target | measured | ratio | status |"
echo "|---|---|---|---|---|"
row "discovery scan, 1024 PCI functions" "< 50 ms" 50 "${scan_ms} ms (median)" "$scan_ms"
row "Allocate round trip" "p99 < 500 µs" 500 "p50 ${alloc_p50} µs, p99 ${alloc_p99} µs" "$alloc_p99"
row "start → first ListAndWatch, 4 × 1000 IDs" "< 50 ms" 50 "${start_ms} ms (median)" "$start_ms"
row "idle RSS after ${allocs} Allocates" "< 8 MiB" 8192 "${rss_kib} KiB" "$rss_kib"
row "hot-plug (uevent) → ListAndWatch" "< 1 s" 1000 "p50 ${hotplug_p50} ms, p99 ${hotplug_p99} ms" "$hotplug_p99"
row "netdev state change → ListAndWatch" "< 1 s" 1000 "p99 ${netdev_p99} ms" "$netdev_p99"
row "CNI ADD+DEL (VF on veth, no IPAM)" "median < 10 ms" 10 "${cni_p50} ms (the kernel's two moves alone: ${kernel_floor} ms)" "$cni_p50"
row "CNI ADD+DEL above the kernel floor, wall" "≤ 5 ms" 5 "${cni_wall_over} ms" "$cni_wall_over"
row "CNI ADD+DEL above the kernel floor, CPU" "≤ 5 ms" 5 "${cni_cpu_over} ms" "$cni_cpu_over"
row "pod-resources v1 Get" "median < 2 ms" 2 "${get_ms} ms" "$get_ms"
row "SIGTERM → exit, right after start" "p99 < 100 ms" 100 "p50 ${term_start_p50} ms, p99 ${term_start_p99} ms" "$term_start_p99"
row "SIGTERM → exit, registration stalled" "p99 < 100 ms" 100 "p50 ${term_stalled_p50} ms, p99 ${term_stalled_p99} ms" "$term_stalled_p99"
row "SIGTERM → exit, first ListAndWatch of 8 × 50,000 IDs" "p99 < 100 ms" 100 "p50 ${term_list_p50} ms, p99 ${term_list_p99} ms" "$term_list_p99"
row "/healthz with 100 stalled connections" "p99 < 100 ms" 100 "p50 ${probe_p50} ms, p99 ${probe_p99} ms" "$probe_p99"
row "webhook admission, 200/s, 10,000 NADs cached, kept connections" "p99 < 5 ms" 5 "p50 ${wh_keep_p50} ms, p99 ${wh_keep_p99} ms" "$wh_keep_p99"
row "webhook admission, 200/s, 10,000 NADs cached, a TLS handshake each" "p99 < 5 ms" 5 "p50 ${wh_p50} ms, p99 ${wh_p99} ms (every lookup a GET: p99 ${wh_base_p99} ms at 8/s)" "$wh_p99"
row "webhook peak RSS, 10,000 NADs cached" "< 128 MiB (its limit)" 131072 "${wh_rss} KiB (cache synced in ${wh_sync} ms)" "$wh_rss"
row "DRA NodePrepareResources, warm API client, 128 claims" "p99 < 10 ms" 10 "p50 ${dra_p50} ms, p99 ${dra_p99} ms (prepared again: p99 ${dra_again_p99} ms)" "$dra_p99"
row "webhook peak RSS, then 8 hostile 3 MiB bodies at once" "< 128 MiB (its limit)" 131072 "${wh_hostile} KiB" "$wh_hostile"
