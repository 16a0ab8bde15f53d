#!/usr/bin/env bash
# Builds the hcashare container image without a registry and runs it the way the
# DaemonSet does:
#   1. scripts/build-rootfs.sh assembles the image's file tree from BIN_DIR (what
#      deploy/Dockerfile's build stage does with its own build);
#   2. deploy/Dockerfile's final stage (FROM scratch, the tree, labels, ENV, USER,
#      ENTRYPOINT), taken from the Dockerfile itself, is built over that tree with podman:
#      nothing is pulled (the build stage's debian:12 is the only image the Dockerfile
#      pulls, and the tree stands in for its output);
#   3. the image holds exactly the tree, in one layer, with the Dockerfile's entrypoint,
#      user and version label;
#   4. containers of the image run as the DaemonSet's securityContext asks: read-only root
#      file system, no capabilities, no privilege escalation, the runtime's default
#      seccomp profile, and no network. In them: the entrypoint (the daemon) --version,
#      the CLI --version and `validate` on a config mounted where the ConfigMap is,
#      CNI_COMMAND=VERSION for hcashare-cni, the CNI installer into a mounted directory
#      (the init container's job), the daemon serving a fake kubelet (`hcashare demo`, with
#      the build's hcashare-demo mounted next to hcashare: the image does not hold it);
#      and the confinement itself is read back from /proc/self/status in a container.
# podman runs here without a daemon: storage (vfs driver) and state live in OUT_DIR and
# are removed at the end; runc is used when installed (crun, podman's default, refuses
# hosts with hybrid cgroup v1/v2 hierarchies).
# Exit code 77 (CTest: skipped) without podman or without root, unless
# HCASHARE_IMAGE_REQUIRED=1 makes that a failure (CI sets it; scripts/test.sh installs
# podman and runc).
# Usage: tests/deploy_image_test.sh BIN_DIR OUT_DIR
set -euo pipefail

bin_dir=${1:?usage: deploy_image_test.sh BIN_DIR OUT_DIR}
out=${2:?usage: deploy_image_test.sh BIN_DIR OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)

failures=0
passes=0
ok() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }
skip() {
  if [ "${HCASHARE_IMAGE_REQUIRED:-0}" = 1 ]; then
    echo "FAIL: HCASHARE_IMAGE_REQUIRED=1, but $*"
    exit 1
  fi
  echo "SKIP: $* (HCASHARE_IMAGE_REQUIRED=1 makes this a failure)"
  exit 77
}

command -v podman >/dev/null || skip "podman is not installed (apt-get install podman runc)"
[ "$(id -u)" -eq 0 ] || skip "the image test runs podman as root, and this is uid $(id -u)"

# Private storage and state, so that nothing of the host's containers is touched. OUT_DIR
# is wiped, so it must be new, empty, or one this script made.
marker=.hcashare-image-test
if [ -e "$out" ] && [ ! -e "$out/$marker" ] && [ -n "$(ls -A -- "$out")" ]; then
  echo "FAIL: $out exists and was not made by deploy_image_test.sh"
  exit 1
fi
rm -rf -- "$out"
mkdir -p "$out"/{storage,run,tmp,context,cni-bin}
touch "$out/$marker"
out=$(cd "$out" && pwd)
pm=(podman --root "$out/storage" --runroot "$out/run" --tmpdir "$out/tmp" --storage-driver vfs
  --cgroup-manager cgroupfs --events-backend none)
if command -v runc >/dev/null; then pm+=(--runtime "$(command -v runc)"); fi
image=localhost/hcashare-image-test:$$
cleanup() {
  "${pm[@]}" rm --all --force >/dev/null 2>&1 || true
  "${pm[@]}" image unmount --all >/dev/null 2>&1 || true
  "${pm[@]}" rmi --all --force >/dev/null 2>&1 || true
  rm -rf -- "$out"
}
trap cleanup EXIT

# 1. The tree.
bash "$repo/scripts/build-rootfs.sh" --bin-dir "$bin_dir" --out "$out/context/rootfs"
tree=$out/context/rootfs

# 2. The Dockerfile's final stage, over the tree instead of the build stage's /rootfs.
stage=$(sed -n '/^FROM scratch$/,$p' "$repo/deploy/Dockerfile")
if [ "$(grep -c '^FROM ' <<<"$stage")" -ne 1 ] ||
  [ "$(grep -c '^COPY --from=build /rootfs/ / *$' <<<"$stage")" -ne 1 ] ||
  [ "$(grep -c -e '--from=' <<<"$stage")" -ne 1 ]; then
  fail "deploy/Dockerfile's final stage is not 'FROM scratch' + 'COPY --from=build /rootfs/ /':"
  echo "$stage"
  echo "$passes passed, $failures failed"
  exit 1
fi
sed 's|^COPY --from=build /rootfs/ / *$|COPY rootfs/ /|' <<<"$stage" >"$out/Containerfile"
daemon_version=$("$bin_dir/hcashare-device-plugin" --version)
version=$(sed -n 's/.*(\(.*\))$/\1/p' <<<"$daemon_version")
if build_log=$("${pm[@]}" build --isolation chroot --pull=never --layers=false \
  --build-arg VERSION="${version:-unknown}" --build-arg REVISION=image-test \
  -f "$out/Containerfile" -t "$image" "$out/context" 2>&1); then
  ok "the image builds from deploy/Dockerfile's final stage ($image)"
else
  fail "podman build: $build_log"
  echo "$passes passed, $failures failed"
  exit 1
fi

# 3. What the image is.
config=$("${pm[@]}" image inspect --format \
  '{{.Config.Entrypoint}} {{.Config.User}} {{len .RootFS.Layers}} {{index .Config.Labels "org.opencontainers.image.version"}}' \
  "$image")
want="[/usr/local/bin/hcashare-device-plugin] 0:0 1 ${version:-unknown}"
if [ "$config" = "$want" ]; then
  ok "entrypoint, user, one layer, version label: $config"
else
  fail "image config is '$config', expected '$want'"
fi
if mnt=$("${pm[@]}" image mount "$image" 2>&1) && [ -d "$mnt" ]; then
  if diff_out=$(diff <(cd "$tree" && find . -mindepth 1 ! -name .hcashare-rootfs | sort) \
    <(cd "$mnt" && find . -mindepth 1 ! -name .hcashare-rootfs | sort)); then
    ok "the image holds exactly the tree ($(cd "$mnt" && find . -type f | wc -l) files)"
  else
    fail "the image's files differ from the tree: $diff_out"
  fi
  "${pm[@]}" image unmount "$image" >/dev/null
else
  fail "podman image mount: $mnt"
fi

# 4. Run it as the DaemonSet does. Lower open-file and process limits than podman's
# default (the host's, or 1048576 files): a container's init could not raise them to
# those in a restricted sandbox (EPERM), while lowering them is always allowed.
run=("${pm[@]}" run --rm --pull=never --network=none --read-only --read-only-tmpfs=false
  --cap-drop=all --security-opt=no-new-privileges --user 0:0
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

if got=$("${run[@]}" "$image" --version 2>&1) && [ "$got" = "$daemon_version" ]; then
  ok "the entrypoint runs: $got"
else
  fail "the entrypoint --version: $got (expected $daemon_version)"
fi
if got=$("${run[@]}" --entrypoint hcashare "$image" --version 2>&1) &&
  [[ $got == "hcashare "* ]]; then
  ok "hcashare (on the image's PATH) runs: $got"
else
  fail "hcashare --version in the image: $got"
fi
if got=$("${run[@]}" \
  -v "$repo/deploy/examples/config-with-vf-pool.json:/k8s-rdma-shared-dev-plugin/config.json:ro" \
  --entrypoint hcashare "$image" validate /k8s-rdma-shared-dev-plugin/config.json 2>&1); then
  ok "hcashare validate reads a config mounted where the ConfigMap is"
else
  fail "hcashare validate in the image: $got"
fi
got=$(echo '{"cniVersion":"1.0.0"}' | "${run[@]}" -i -e CNI_COMMAND=VERSION \
  --entrypoint /usr/local/bin/hcashare-cni "$image" 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 0 ] && [[ $got == '{"cniVersion":"1.0.0","supportedVersions":'* ]]; then
  ok "hcashare-cni answers VERSION: $got"
else
  fail "hcashare-cni VERSION in the image (exit $rc): $got"
fi
if got=$("${run[@]}" -v "$out/cni-bin:/host/opt/cni/bin" \
  --entrypoint /usr/local/bin/hcashare-install-cni "$image" --dest-dir /host/opt/cni/bin 2>&1) &&
  cmp -s "$tree/usr/local/bin/hcashare-cni" "$out/cni-bin/hcashare-cni"; then
  ok "the CNI installer copies hcashare-cni to a mounted directory: $got"
else
  fail "the CNI installer in the image: $got"
fi

# The daemon at work, not only its --version: `hcashare demo` runs the image's daemon
# against a simulated node and a fake kubelet (registration and ListAndWatch over gRPC on
# unix sockets, Allocate, inotify, netlink, SIGTERM), all under the same confinement. Its
# simulated node needs a writable /tmp, the only difference from the DaemonSet's pod. The
# demo's own binary (hcashare-demo: the simulated node and the fake kubelet) is a test
# binary that the image does not hold; it is mounted read-only next to the image's
# hcashare, which runs it.
# What confinement would break shows as a warning (e.g. "no kernel uevents"): the demo
# must warn of nothing that the same demo outside a container does not.
warnings() { sed -n 's/^[0-9T:.Z-]* \(warn\|error\) /\1 /p' | sort -u; }
demo_mount=(-v "$bin_dir/hcashare-demo:/usr/local/bin/hcashare-demo:ro")
if got=$("${run[@]}" --tmpfs /tmp "${demo_mount[@]}" --entrypoint hcashare "$image" demo 2>&1) &&
  [ "$(tail -1 <<<"$got")" = "demo OK" ]; then
  ok "the daemon serves a fake kubelet in the container (hcashare demo)"
  if extra=$(comm -23 <(warnings <<<"$got") <("$bin_dir/hcashare" demo 2>&1 | warnings)) &&
    [ -z "$extra" ]; then
    ok "no warning in the container that the demo outside it does not log"
  else
    fail "the daemon warns in the container only: $extra"
  fi
else
  fail "hcashare demo in the image: $got"
fi

# The confinement those runs had, read inside a container (bash is in the image for the
# installer).
# shellcheck disable=SC2016  # the script is for the container's bash
status=$("${run[@]}" --entrypoint /usr/bin/bash "$image" -c '
  while read -r k v _; do
    case $k in CapEff: | NoNewPrivs: | Seccomp:) echo "$k$v" ;; esac
  done </proc/self/status
  if { echo x >/probe; } 2>/dev/null; then echo rootfs:rw; else echo rootfs:ro; fi' 2>&1 |
  tr '\n' ' ') || true
want="CapEff:0000000000000000 NoNewPrivs:1 Seccomp:2 rootfs:ro "
if [ "$("${pm[@]}" info --format '{{.Host.Security.SECCOMPEnabled}}' 2>&1)" != true ]; then
  echo "note: podman reports no seccomp support on this host; the filter is not checked"
  want=${want/Seccomp:2 /}
  status=$(sed 's/Seccomp:[0-9] //' <<<"$status")
fi
if [ "$status" = "$want" ]; then
  ok "the containers run confined: $status"
else
  fail "confinement in the container: '$status', expected '$want'"
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
