#!/usr/bin/env bash
# The shipping binaries (what the image holds: hcashare-device-plugin, hcashare-cni,
# hcashare) link nothing from testing/: no symbol of namespace hcashare::fake and no
# double or simulator by name (Fake*, Sim*, RecordingVfOps, the restart storm), wherever
# it is declared. The same check must find such symbols in hcashare-demo, which links
# testing/, so that it cannot pass by matching nothing.
# Usage: shipping_symbols_test.sh BIN_DIR [NM]
set -euo pipefail
bin_dir=$1
nm=${2:-nm}
w='[[:alnum:]_]'
pattern="hcashare::($w+::)*(fake::|Fake$w*|Sim[A-Z]$w*|RecordingVfOps|RunRestartStorm|PopulateDemo)"

# Demangled symbols of $1, failing when it has none (a stripped binary proves nothing).
symbols() {
  local out
  out=$("$nm" -C "$1") || { echo "FAIL: $nm cannot read $1" >&2; return 1; }
  if ! grep -q ' main$' <<<"$out"; then
    echo "FAIL: $1 has no symbol table (stripped?): cannot check it" >&2
    return 1
  fi
  printf '%s\n' "$out"
}

status=0
demo_syms=$(symbols "$bin_dir/hcashare-demo") || exit 1
if ! grep -qE "$pattern" <<<"$demo_syms"; then
  echo "FAIL: the pattern finds nothing in hcashare-demo, which links testing/" >&2
  exit 1
fi
for b in hcashare-device-plugin hcashare-cni hcashare; do
  syms=$(symbols "$bin_dir/$b") || { status=1; continue; }
  if hits=$(grep -E "$pattern" <<<"$syms"); then
    echo "FAIL: $b links test doubles from testing/:" >&2
    head -20 <<<"$hits" >&2
    status=1
  else
    echo "ok: $b links nothing from testing/"
  fi
done
exit $status
