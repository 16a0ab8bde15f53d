#!/usr/bin/env bash
# Builds the image's file tree with scripts/build-rootfs.sh (what deploy/Dockerfile's final
# stage holds) and proves that nothing the binaries need at run time is missing:
#   1. without root: every ELF file's interpreter and NEEDED libraries are in the tree;
#      with --expect-static, the daemon and the CNI plugin have no dynamic section at all;
#   2. as root (or in a user namespace): each binary runs in a chroot of the tree, with an
#      empty environment: --version for the daemon, the CLI, bash and the coreutils, a
#      config validation by the CLI, CNI_COMMAND=VERSION for the plugin, and the CNI
#      installer itself on each of its paths (copying the plugin to a directory inside the
#      tree, the node file, --help, a usage error); the loader
#      resolves every dynamic ELF file, dlopen()ed libraries included; and, when the CLI
#      has `doctor`, doctor loads libibverbs.
# Exit code 77 (CTest: skipped) when step 2 cannot run here; step 1 has passed then.
# Usage: tests/deploy_rootfs_test.sh BIN_DIR OUT_DIR [--expect-static]
set -euo pipefail

bin_dir=${1:?usage: deploy_rootfs_test.sh BIN_DIR OUT_DIR [--expect-static]}
out=${2:?usage: deploy_rootfs_test.sh BIN_DIR OUT_DIR [--expect-static]}
expect_static=${3:-}
repo=$(cd "$(dirname "$0")/.." && pwd)

failures=0
passes=0
ok() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

bash "$repo/scripts/build-rootfs.sh" --bin-dir "$bin_dir" --out "$out"

for f in usr/local/bin/hcashare-device-plugin usr/local/bin/hcashare-cni usr/local/bin/hcashare-nri \
  usr/local/bin/hcashare usr/local/bin/hcashare-webhook usr/local/bin/hcashare-install-cni \
  usr/bin/bash; do
  if [ -x "$out/$f" ]; then ok "/$f is in the tree"; else fail "/$f is missing"; fi
done

# 1. Static closure check: resolve every NEEDED entry against the tree's library
# directories, the way the loader's default search path would (no ld.so.cache).
lib_dirs=()
for d in lib usr/lib lib64 usr/lib64; do
  [ -d "$out/$d" ] && lib_dirs+=("$out/$d")
done
while IFS= read -r d; do lib_dirs+=("$d"); done < <(find "$out/usr/lib" -mindepth 1 -maxdepth 1 -type d)
elf_count=0
while IFS= read -r -d '' f; do
  readelf -h "$f" >/dev/null 2>&1 || continue  # not an ELF file (the installer script)
  elf_count=$((elf_count + 1))
  rel=${f#"$out"}
  interp=$(readelf -l "$f" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  if [ -n "$interp" ] && [ ! -e "$out$interp" ]; then fail "$rel: interpreter $interp missing"; fi
  missing=""
  while read -r lib; do
    found=""
    for d in "${lib_dirs[@]}"; do
      if [ -e "$d/$lib" ]; then found=1; break; fi
    done
    [ -n "$found" ] || missing+=" $lib"
  done < <(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if [ -n "$missing" ]; then fail "$rel: libraries missing from the tree:$missing"; else ok "$rel: every library is in the tree"; fi
done < <(find "$out" -type f -print0)
if [ "$elf_count" -ge 8 ]; then ok "$elf_count ELF files checked"; else fail "only $elf_count ELF files"; fi

if [ "$expect_static" = --expect-static ]; then
  for b in hcashare-device-plugin hcashare-cni hcashare-nri; do
    if readelf -d "$out/usr/local/bin/$b" 2>&1 | grep -q "no dynamic section"; then
      ok "$b is statically linked"
    else
      fail "$b is dynamically linked, but the image documents it as static"
    fi
  done
fi

# 2. Run everything in a chroot of the tree.
runner=()
if [ "$(id -u)" -eq 0 ]; then
  runner=(chroot "$out")
elif unshare -r true 2>/dev/null; then
  runner=(unshare -r chroot "$out")
else
  echo "$passes passed, $failures failed (the chroot checks need root or user namespaces)"
  [ "$failures" -eq 0 ] || exit 1
  exit 77
fi
in_tree() { env -i PATH=/usr/local/bin:/usr/bin:/bin "$(command -v "${runner[0]}")" "${runner[@]:1}" "$@"; }

expect_version=$("$bin_dir/hcashare-device-plugin" --version)
if got=$(in_tree /usr/local/bin/hcashare-device-plugin --version 2>&1) && [ "$got" = "$expect_version" ]; then
  ok "hcashare-device-plugin runs: $got"
else
  fail "hcashare-device-plugin --version in the tree: $got"
fi
if got=$(in_tree hcashare --version 2>&1) && [[ $got == "hcashare "* ]]; then
  ok "hcashare runs: $got"
else
  fail "hcashare --version in the tree: $got"
fi
if got=$(in_tree hcashare-webhook --version 2>&1) && [[ $got == "hcashare-webhook "* ]]; then
  ok "hcashare-webhook runs: $got"
else
  fail "hcashare-webhook --version in the tree: $got"
fi
# Past the command line it reads its certificate (OpenSSL linked in): a clear error, exit 1.
got=$(in_tree hcashare-webhook --tls-cert-file=/tmp/none.crt --tls-private-key-file=/tmp/none.key \
  --kubeconfig=/tmp/none.yaml 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 1 ] && [[ $got == *none.yaml* ]]; then
  ok "hcashare-webhook starts in the tree and says what is missing"
else
  fail "hcashare-webhook in the tree (exit $rc): $got"
fi
cp "$repo/deploy/examples/config-with-vf-pool.json" "$out/tmp/config.json"
if got=$(in_tree hcashare validate /tmp/config.json 2>&1); then
  ok "hcashare validate runs (yaml-cpp, nlohmann, libstdc++ in the tree)"
else
  fail "hcashare validate in the tree: $got"
fi
rm -f "$out/tmp/config.json"
if got=$(in_tree env 2>&1); then
  fail "the tree has an env binary (expected only what the installer needs)"
else
  ok "no tools beyond the installer's (env is absent)"
fi
got=$(echo '{"cniVersion":"1.0.0"}' | env -i CNI_COMMAND=VERSION "$(command -v "${runner[0]}")" \
  "${runner[@]:1}" /usr/local/bin/hcashare-cni 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 0 ] && [[ $got == '{"cniVersion":"1.0.0","supportedVersions":'* ]]; then
  ok "hcashare-cni answers VERSION: $got"
else
  fail "hcashare-cni VERSION in the tree (exit $rc): $got"
fi
for t in bash cp mv rm mkdir chmod sync; do
  if in_tree "/usr/bin/$t" --version >/dev/null 2>&1; then ok "$t runs"; else fail "$t does not run in the tree"; fi
done
if got=$(in_tree hcashare-install-cni --dest-dir /tmp/opt/cni/bin 2>&1) &&
  cmp -s "$out/usr/local/bin/hcashare-cni" "$out/tmp/opt/cni/bin/hcashare-cni"; then
  ok "the CNI installer runs in the tree: $got"
else
  fail "the CNI installer in the tree: $got"
fi
rm -rf "$out/tmp/opt"
# Every other path of the installer, as the DaemonSet runs it: the node file with each
# option, --help, a usage error. A tool the tree lacks shows as "command not found".
if got=$(in_tree hcashare-install-cni --dest-dir /tmp/opt/cni/bin --node-config /tmp/etc/cni.json \
  --kubelet-root-dir /var/lib/kubelet --device-plugin-dir /var/lib/kubelet/device-plugins \
  --state-dir /var/lib/cni/hcashare --host-root /host \
  --device-info-dir /var/run/k8s.cni.cncf.io/devinfo/cni 2>&1) &&
  [[ $got == *"wrote the node file /tmp/etc/cni.json: {"*'"hostRoot": "/host"'* ]] &&
  [[ $got != *"not found"* ]]; then
  ok "the CNI installer writes and shows the node file in the tree"
else
  fail "the CNI installer's node file in the tree: $got"
fi
got=$(in_tree hcashare-install-cni --help 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 0 ] && [[ $got == "Usage: install-cni.sh"* ]] && [[ $got != *"not found"* ]]; then
  ok "the CNI installer's --help runs in the tree"
else
  fail "the CNI installer's --help in the tree (exit $rc): $got"
fi
got=$(in_tree hcashare-install-cni --bogus 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 2 ] && [[ $got != *"not found"* ]]; then
  ok "the CNI installer's usage error runs in the tree"
else
  fail "the CNI installer's usage error in the tree (exit $rc): $got"
fi
rm -rf "$out/tmp/opt" "$out/tmp/etc"

# The loader resolves every dynamic ELF file of the tree inside the tree, including the
# libraries that are only dlopen()ed (libibverbs and its providers, for hcashare doctor).
loader=$(readelf -l "$out/usr/local/bin/hcashare" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
unresolved=""
while IFS= read -r -d '' f; do
  readelf -d "$f" 2>/dev/null | grep -q "(NEEDED)" || continue
  rel=${f#"$out"}
  if ! got=$(in_tree "$loader" --list "$rel" 2>&1) || [[ $got == *"not found"* ]]; then
    unresolved+=" $rel"
    echo "$got"
  fi
done < <(find "$out" -type f -print0)
if [ -z "$unresolved" ]; then
  ok "the loader resolves every dynamic ELF file in the tree"
else
  fail "unresolved in the tree:$unresolved"
fi
if in_tree hcashare doctor --help >/dev/null 2>&1; then
  got=$(in_tree hcashare doctor 2>&1 || true)
  if grep -q "libibverbs.*cannot load" <<<"$got"; then
    fail "hcashare doctor cannot load libibverbs in the tree: $(grep libibverbs <<<"$got")"
  else
    ok "hcashare doctor loads libibverbs in the tree"
  fi
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
