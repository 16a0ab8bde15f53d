#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan + UBSan) and runs each one for a
# bounded time on a copy of its seed corpus (fuzz/corpus/<target>; nothing is written into
# the repository). Crash inputs kept in fuzz/regressions/<target>/ are replayed first.
# Usage: scripts/fuzz.sh [SECONDS]   (default 60, or $FUZZ_SECONDS, per target)
# Environment: FUZZ_TARGETS (space-separated subset), FUZZ_BUILD_DIR (default build-fuzz).
# Prints one summary line per target and exits non-zero if any target crashed, naming the
# crash input.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FUZZ_SECONDS:-60}}
build=${FUZZ_BUILD_DIR:-build-fuzz}
all_targets=(config cni_env cni_netconf cni_result checkpoint podresources rdma_netlink
  sysfs_values admission dra_checkpoint kube_list_stream nri_wire)
read -r -a targets <<<"${FUZZ_TARGETS:-${all_targets[*]}}"

# clang and its runtime libraries (libFuzzer, sanitizers), for this build only.
bash scripts/install-deps.sh clang libclang-rt-14-dev

echo "== build (clang, libFuzzer + ASan + UBSan) into $build"
bash scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DHCASHARE_FUZZ=ON -DHCASHARE_BUILD_TESTS=OFF -DHCASHARE_BUILD_BENCH=OFF \
  -- "${targets[@]/%/_fuzz}"

echo "== fuzz: ${seconds} s per target"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
for t in "${targets[@]}"; do
  bin="$build/bin/${t}_fuzz"
  work="$build/fuzz-work/$t"
  artifacts="$build/fuzz-artifacts/$t"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$artifacts"
  cp fuzz/corpus/"$t"/* "$work/corpus/"
  log="$work/log"
  status=0
  regressions=(fuzz/regressions/"$t"/*)
  if [ -e "${regressions[0]}" ]; then
    "$bin" -rss_limit_mb=2048 "${regressions[@]}" >"$log.regressions" 2>&1 || {
      status=$?
      cat "$log.regressions"
      echo "fuzz: $t: a regression input crashes again (see above)"
    }
  fi
  if [ "$status" -eq 0 ]; then
    "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work/corpus" >"$log" 2>&1 || status=$?
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" 2>/dev/null || true)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" 2>/dev/null || true)
  files=$(find "$work/corpus" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $t: ok, ${execs:-?} execs, ${rate:-?} exec/s, corpus $files files"
  else
    failed=1
    [ -f "$log" ] && tail -60 "$log"
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" 2>/dev/null | tail -1)
    echo "fuzz: $t: CRASH (exit $status), input: ${crash:-see the log above}"
  fi
done
exit "$failed"
