#!/usr/bin/env bash
# Tests scripts/install-cni.sh in a temporary directory (no root needed): a fresh install,
# the replacement of a binary that is running (by rename, not by writing over it), and
# the refusal of a source that does not answer VERSION (the old binary stays), the node
# file. Every run of the installer has a PATH of only the tools the image ships with it
# (scripts/build-rootfs.sh, INSTALLER_TOOLS): a command the image lacks fails here as it
# would in the init container ("cat: command not found", issue 37).
# Usage: tests/deploy_install_cni_test.sh PATH/TO/hcashare-cni PATH/TO/hcashare-nri
set -euo pipefail

cni=${1:?usage: deploy_install_cni_test.sh PATH/TO/hcashare-cni PATH/TO/hcashare-nri}
nri=${2:?usage: deploy_install_cni_test.sh PATH/TO/hcashare-cni PATH/TO/hcashare-nri}
installer=$(cd "$(dirname "$0")/.." && pwd)/scripts/install-cni.sh
tmp=$(mktemp -d)
sleeper=""
cleanup() {
  if [ -n "$sleeper" ]; then kill "$sleeper" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# A directory of only the tools the image ships for the installer, and bash.
shipped=$tmp/shipped-bin
mkdir -p "$shipped"
tools=$(sed -n 's/^INSTALLER_TOOLS=(\(.*\))$/\1/p' "${installer%/*}/build-rootfs.sh")
[ -n "$tools" ] || { echo "FAIL: no INSTALLER_TOOLS in build-rootfs.sh"; exit 1; }
for t in $tools; do ln -s "$(command -v "$t")" "$shipped/$t"; done
bash_bin=$(command -v bash)
# Runs the installer as the image would: stdout and stderr together, each run's output
# also kept in $tmp/all.out for the missing-command check at the end.
install_cni() {
  local rc=0
  PATH=$shipped "$bash_bin" "$installer" "$@" >"$tmp/last.out" 2>&1 || rc=$?
  cat "$tmp/last.out" >>"$tmp/all.out"
  cat "$tmp/last.out"
  return "$rc"
}

failures=0
passes=0
ok() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}
fails() { ! "$@" >/dev/null 2>&1; }
no_temp_left() { [ -z "$(find "$1" -name '.*' -type f)" ]; }
mode_of() { stat -c %a "$1"; }
answers_version() {
  local out
  out=$(CNI_COMMAND=VERSION "$1" <<<'{"cniVersion":"1.0.0"}') && [[ $out == *'"supportedVersions"'* ]]
}

# 1. A fresh install into a directory that does not exist yet.
dest=$tmp/opt/cni/bin
if out=$(install_cni --source "$cni" --dest-dir "$dest" 2>&1); then
  ok "fresh install succeeds"
else
  fail "fresh install: $out"
fi
check "the installed file is the source" cmp -s "$cni" "$dest/hcashare-cni"
check "the installed file is mode 755" test "$(mode_of "$dest/hcashare-cni")" = 755
check "the installed plugin answers VERSION" answers_version "$dest/hcashare-cni"
check "no temporary file is left" no_temp_left "$dest"
check "the output names the installed path" grep -q "installed $dest/hcashare-cni" <<<"$out"

# 2. Replacing a binary while it runs. Writing over it in place fails with ETXTBSY, which
# is why the installer renames; the running process keeps the old inode.
busy=$tmp/busy
mkdir -p "$busy"
cp "$(command -v sleep)" "$busy/hcashare-cni"
"$busy/hcashare-cni" 30 &
sleeper=$!
sleep 0.2
old_inode=$(stat -c %i "$busy/hcashare-cni")
if cp "$cni" "$busy/hcashare-cni" 2>/dev/null; then
  fail "writing over a running binary in place should fail (ETXTBSY)"
else
  ok "writing over a running binary in place fails, as expected"
fi
if out=$(CNI_BIN_DIR=$busy HCASHARE_CNI_SOURCE=$cni install_cni 2>&1); then
  ok "install over a running binary succeeds (environment defaults)"
else
  fail "install over a running binary: $out"
fi
check "the new binary replaced the running one" cmp -s "$cni" "$busy/hcashare-cni"
check "by rename: a new inode" test "$(stat -c %i "$busy/hcashare-cni")" != "$old_inode"
check "the running process is unaffected" kill -0 "$sleeper"
kill "$sleeper"
wait "$sleeper" 2>/dev/null || true
sleeper=""

# 3. A source that does not answer VERSION is not installed; the old binary stays.
broken=$tmp/broken-cni
printf '#!/bin/sh\necho "not a CNI plugin"\nexit 0\n' >"$broken"
chmod 755 "$broken"
before=$(stat -c %i "$dest/hcashare-cni")
if out=$(install_cni --source "$broken" --dest-dir "$dest" 2>&1); then
  fail "a source that does not answer VERSION was installed"
else
  ok "a source that does not answer VERSION is refused"
fi
check "the refusal says why" grep -q "does not answer VERSION" <<<"$out"
check "the old binary is untouched" test "$(stat -c %i "$dest/hcashare-cni")" = "$before"
check "the old binary is still the real plugin" cmp -s "$cni" "$dest/hcashare-cni"
check "no temporary file is left after a refusal" no_temp_left "$dest"

failing=$tmp/failing-cni
printf '#!/bin/sh\nexit 3\n' >"$failing"
chmod 755 "$failing"
check "a source that exits non-zero is refused" \
  fails install_cni --source "$failing" --dest-dir "$dest"
check "... and the old binary stays" cmp -s "$cni" "$dest/hcashare-cni"

# 4. Usage errors and missing inputs.
check "a missing source fails" fails install_cni --source /nonexistent --dest-dir "$dest"
set +e
install_cni --bogus >/dev/null 2>&1
rc=$?
set -e
check "an unknown argument exits 2" test "$rc" = 2
check "a name with a slash is refused" \
  fails install_cni --source "$cni" --dest-dir "$dest" --name a/b
mkdir -p "$tmp/dirdest/hcashare-cni/sub"
check "a directory in the way is not replaced" \
  fails install_cni --source "$cni" --dest-dir "$tmp/dirdest"
check "... and is left as it was" test -d "$tmp/dirdest/hcashare-cni/sub"
check "--help prints the usage" grep -q "^Usage: install-cni.sh" <<<"$(install_cni --help)"

# 5. The node file (cni/node_config.h): written with the node's paths, atomically, 0644;
# without paths it is "{}" (the built-in defaults); paths that would need escaping are
# refused before anything is written.
node=$tmp/host-etc/hcashare/cni.json
check "the node file is written" install_cni --source "$cni" --dest-dir "$dest" \
  --node-config "$node" --kubelet-root-dir /var/lib/k3s-kubelet --state-dir /run/hcashare
check "... with the node's paths" \
  grep -qx '{"kubeletRootDir": "/var/lib/k3s-kubelet","stateDir": "/run/hcashare"}' "$node"
check "the device-plugin directory goes in apart" install_cni --source "$cni" \
  --dest-dir "$dest" --node-config "$node" --kubelet-root-dir /data/kubelet \
  --device-plugin-dir /var/lib/kubelet/device-plugins
check "... as devicePluginDir" grep -qx \
  '{"kubeletRootDir": "/data/kubelet","devicePluginDir": "/var/lib/kubelet/device-plugins"}' "$node"
check "... mode 644" test "$(mode_of "$node")" = 644
check "... its directory mode 755" test "$(mode_of "${node%/*}")" = 755
check "no temporary node file is left" no_temp_left "${node%/*}"
check "the node file without paths is {}" install_cni --source "$cni" --dest-dir "$dest" \
  --node-config "$node"
check "... and reads {}" grep -qx '{}' "$node"
cp "$node" "$tmp/node.before"
set +e
install_cni --source "$cni" --dest-dir "$dest" --node-config "$node" \
  --kubelet-root-dir '/var/lib/"x' >/dev/null 2>&1
rc=$?
set -e
check "a path that needs escaping exits 2" test "$rc" = 2
check "... and leaves the node file as it was" cmp -s "$node" "$tmp/node.before"
check "a node path without --node-config is refused" \
  fails install_cni --source "$cni" --dest-dir "$dest" --kubelet-root-dir /var/lib/k
for opt in --host-root --device-info-dir; do
  check "$opt without --node-config is refused" \
    fails install_cni --source "$cni" --dest-dir "$dest" "$opt" /var/lib/k
  check "$opt that needs escaping is refused" fails install_cni --source "$cni" \
    --dest-dir "$dest" --node-config "$node" "$opt" 'rel/ative'
done

# 6. hostRoot and deviceInfoDir (containerised hosts, test nodes; issue 37), and the log
# line that shows the file written (it read it with cat, which the image lacks).
out=$(install_cni --source "$cni" --dest-dir "$dest" --node-config "$node" \
  --host-root /host --device-info-dir /run/multus/devinfo --state-dir /run/hcashare)
want='{"stateDir": "/run/hcashare","hostRoot": "/host","deviceInfoDir": "/run/multus/devinfo"}'
check "hostRoot and deviceInfoDir go into the node file" grep -qxF "$want" "$node"
check "... which the log line shows" grep -qxF "install-cni: wrote the node file $node: $want" \
  <<<"$out"
# 7. The NRI plugin (issue 33): installed beside the CNI install, into the runtime's plugin
# directory under its IDX-NAME, by the same checked, atomic copy.
plugins=$tmp/opt/nri/plugins
out=$(install_cni --source "$cni" --dest-dir "$dest" --nri-plugin-dir "$plugins" --nri-source "$nri")
check "the NRI plugin is installed as 90-hcashare" cmp -s "$nri" "$plugins/90-hcashare"
check "... mode 755" test "$(mode_of "$plugins/90-hcashare")" = 755
check "... and the log names it" grep -q "installed $plugins/90-hcashare (hcashare-nri " <<<"$out"
check "no temporary file is left in the plugin directory" no_temp_left "$plugins"
check "another IDX-NAME" install_cni --source "$cni" --dest-dir "$dest" \
  --nri-plugin-dir "$plugins" --nri-source "$nri" --nri-name 10-rdma
check "... is used" test -x "$plugins/10-rdma"
before=$(stat -c %i "$plugins/90-hcashare")
set +e
install_cni --source "$cni" --dest-dir "$dest" --nri-plugin-dir "$plugins" --nri-name hcashare \
  --nri-source "$nri" >/dev/null 2>&1
rc=$?
set -e
check "a name without its index exits 2" test "$rc" = 2
out=$(install_cni --source "$cni" --dest-dir "$dest" --nri-plugin-dir "$plugins" \
  --nri-source "$cni" 2>&1) && rc=0 || rc=$?
check "a source that is not the NRI plugin is refused" test "$rc" = 1
check "... saying why" grep -q "does not answer --version" <<<"$out"
check "... and the installed plugin stays" test "$(stat -c %i "$plugins/90-hcashare")" = "$before"
check "... with no temporary file left" no_temp_left "$plugins"

check "the installer's PATH holds no cat (the image has none)" \
  fails env PATH="$shipped" "$bash_bin" -c 'command -v cat'
if grep -n "command not found" "$tmp/all.out"; then
  fail "the installer ran a command the image does not ship"
else
  ok "every run found every command among the image's tools"
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
