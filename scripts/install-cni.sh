#!/bin/bash
# Installs the hcashare-cni binary into a CNI bin directory, atomically.
#
# The binary is copied to a temporary file in the target directory, checked (it must
# answer CNI_COMMAND=VERSION with its supported versions and exit 0), flushed to disk and
# only then renamed over the old one. The container runtime may start the plugin at any
# moment: it sees either the old binary or the new one, never a partly written file, and
# a binary that cannot run on this host is never installed. Writing over the old file in
# place would also fail with "Text file busy" while an instance runs.
#
# In the image this is /usr/local/bin/hcashare-install-cni, run by the DaemonSet's init
# container with the host's CNI bin directory mounted at /host/opt/cni/bin. It needs
# bash and coreutils (cp, mv, rm, mkdir, chmod, sync), nothing else: the image ships only
# those (scripts/build-rootfs.sh, INSTALLER_TOOLS), and tests/deploy_install_cni_test.sh
# runs every path of this script with a PATH of only them.
#
# With --node-config it also writes hcashare-cni's node file (cni/node_config.h: the host
# paths no NetworkAttachmentDefinition may set), atomically, mode 0644, owned by the
# installer (root); the directory is created 0755.
#
# Usage: install-cni.sh [--source FILE] [--dest-dir DIR] [--name NAME]
#                       [--node-config FILE [--kubelet-root-dir DIR] [--device-plugin-dir DIR]
#                                          [--state-dir DIR] [--host-root DIR]
#                                          [--device-info-dir DIR]]
#                       [--nri-plugin-dir DIR [--nri-source FILE] [--nri-name NAME]]
#   --source    the plugin to install (default: $HCASHARE_CNI_SOURCE, else hcashare-cni
#               next to this script)
#   --dest-dir  the CNI bin directory (default: $CNI_BIN_DIR, else /host/opt/cni/bin);
#               created if missing
#   --name      the installed file name, the "type" NADs use (default: hcashare-cni)
#   --node-config       where to write the node file (the host's /etc/hcashare/cni.json,
#                       e.g. /host/etc/hcashare/cni.json); not written without it
#   --kubelet-root-dir  the node's kubelet root, "kubeletRootDir" (default: left out,
#                       /var/lib/kubelet)
#   --device-plugin-dir the kubelet's device-plugin directory, "devicePluginDir" (default:
#                       left out, /var/lib/kubelet/device-plugins whatever the root)
#   --state-dir         the plugin's state directory, "stateDir" (default: left out,
#                       /var/lib/cni/hcashare)
#   --host-root         where the plugin finds the host's /sys, /dev and /proc, "hostRoot"
#                       (default: left out, /; containerised hosts and test nodes)
#   --device-info-dir   the only directory runtimeConfig.CNIDeviceInfoFile may name a file
#                       in, "deviceInfoDir" (default: left out, Multus's
#                       /var/run/k8s.cni.cncf.io/devinfo/cni)
#   --nri-plugin-dir    also install hcashare-nri as a pre-installed NRI plugin into this
#                       directory (the host's /opt/nri/plugins, e.g. /host/opt/nri/plugins),
#                       the same way (checked with --version); the runtime starts it at its
#                       own next start (docs/dra.md, "NRI")
#   --nri-source        the NRI plugin to install (default: hcashare-nri next to this script)
#   --nri-name          its file name, IDX-NAME as NRI wants it (default: 90-hcashare)
# Exit codes: 0 installed; 1 not installed (the old binary, if any, is left untouched);
# 2 bad usage.
set -euo pipefail

self_dir=${BASH_SOURCE[0]%/*}
[ "$self_dir" != "${BASH_SOURCE[0]}" ] || self_dir=.
source=${HCASHARE_CNI_SOURCE:-$self_dir/hcashare-cni}
dest_dir=${CNI_BIN_DIR:-/host/opt/cni/bin}
name=hcashare-cni
node_config=
kubelet_root_dir=
device_plugin_dir=
state_dir=
host_root=
device_info_dir=
nri_plugin_dir=
nri_source=$self_dir/hcashare-nri
nri_name=90-hcashare

# The header from "# Usage:" to "# Exit codes", uncommented; bash alone (no sed in the image).
usage() {
  local line printing=0
  while IFS= read -r line; do
    [[ $line != '# Usage:'* ]] || printing=1
    [ "$printing" -eq 1 ] || continue
    line=${line#\#}
    echo "${line# }"
    [[ $line != ' Exit codes'* ]] || break
  done <"${BASH_SOURCE[0]}"
}
log() { echo "install-cni: $*"; }
die() {
  echo "install-cni: error: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --source) source=${2:?--source needs a value}; shift 2 ;;
    --dest-dir) dest_dir=${2:?--dest-dir needs a value}; shift 2 ;;
    --name) name=${2:?--name needs a value}; shift 2 ;;
    --node-config) node_config=${2:?--node-config needs a value}; shift 2 ;;
    --kubelet-root-dir) kubelet_root_dir=${2:?--kubelet-root-dir needs a value}; shift 2 ;;
    --device-plugin-dir) device_plugin_dir=${2:?--device-plugin-dir needs a value}; shift 2 ;;
    --state-dir) state_dir=${2:?--state-dir needs a value}; shift 2 ;;
    --host-root) host_root=${2:?--host-root needs a value}; shift 2 ;;
    --device-info-dir) device_info_dir=${2:?--device-info-dir needs a value}; shift 2 ;;
    --nri-plugin-dir) nri_plugin_dir=${2:?--nri-plugin-dir needs a value}; shift 2 ;;
    --nri-source) nri_source=${2:?--nri-source needs a value}; shift 2 ;;
    --nri-name) nri_name=${2:?--nri-name needs a value}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install-cni: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
case $name in
  "" | */* | . | ..) echo "install-cni: invalid --name: '$name'" >&2; exit 2 ;;
esac
# NRI runs the plugins of its directory named IDX-NAME, IDX two digits, in IDX order.
if [ -n "$nri_plugin_dir" ] && ! [[ $nri_name =~ ^[0-9][0-9]-[A-Za-z0-9._-]+$ ]]; then
  echo "install-cni: invalid --nri-name: '$nri_name' (NRI wants IDX-NAME, IDX two digits)" >&2
  exit 2
fi

# Node paths go into JSON as they are: absolute, and only characters that need no escaping.
for pair in "--kubelet-root-dir:$kubelet_root_dir" "--device-plugin-dir:$device_plugin_dir" \
  "--state-dir:$state_dir" "--host-root:$host_root" "--device-info-dir:$device_info_dir" \
  "--node-config:$node_config"; do
  value=${pair#*:}
  if [ -n "$value" ] && ! [[ $value =~ ^/[A-Za-z0-9._/-]*$ ]]; then
    echo "install-cni: invalid ${pair%%:*}: '$value' (an absolute path of [A-Za-z0-9._/-])" >&2
    exit 2
  fi
done
node_paths=$kubelet_root_dir$device_plugin_dir$state_dir$host_root$device_info_dir
if [ -z "$node_config" ] && [ -n "$node_paths" ]; then
  echo "install-cni: --kubelet-root-dir, --device-plugin-dir, --state-dir, --host-root and" \
    "--device-info-dir need --node-config" >&2
  exit 2
fi

# Installs executable $1 as $2/$3 atomically after `check_$4 FILE` accepted the copy; the
# copy is flushed to disk before the rename, and the directory after it.
installing=()
trap 'rm -f -- "${installing[@]}"' EXIT
install_binary() {
  local src=$1 dir=$2 file=$3 kind=$4 out rc
  [ -f "$src" ] || die "source $src is not a file"
  [ -x "$src" ] || die "source $src is not executable"
  mkdir -p -- "$dir" || die "cannot create $dir"
  [ -d "$dir" ] || die "$dir is not a directory"
  local dest=$dir/$file
  # A fixed temporary name in the same directory (so that the rename is atomic): a run
  # that was killed leaves at most this one file, which the next run replaces.
  local tmp=$dir/.$file.installing
  installing+=("$tmp")
  rm -f -- "$tmp"
  cp -- "$src" "$tmp" || die "cannot copy $src to $tmp"
  chmod 0755 "$tmp"
  set +e
  out=$("check_$kind" "$tmp")
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || die "$out"
  sync -- "$tmp"
  mv -f -T -- "$tmp" "$dest" || die "cannot rename $tmp to $dest"
  sync -- "$dir"
  log "installed $dest ($out)"
}
# The copy must run here: a VERSION request on stdin, a JSON answer naming the
# supported spec versions on stdout, exit 0.
check_cni() {
  local out rc=0
  out=$(CNI_COMMAND=VERSION "$1" 2>&1 <<<'{"cniVersion":"1.0.0"}') || rc=$?
  if [ "$rc" -ne 0 ] || [[ $out != *'"supportedVersions"'* ]]; then
    echo "the copied plugin does not answer VERSION (exit $rc): $out"
    return 1
  fi
  echo "$out"
}
# The NRI plugin must run here too: `--version` prints its name and version, exit 0.
check_nri() {
  local out rc=0
  out=$("$1" --version 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] || [[ $out != 'hcashare-nri '* ]]; then
    echo "the copied NRI plugin does not answer --version (exit $rc): $out"
    return 1
  fi
  echo "$out"
}

install_binary "$source" "$dest_dir" "$name" cni
[ -z "$nri_plugin_dir" ] || install_binary "$nri_source" "$nri_plugin_dir" "$nri_name" nri

if [ -n "$node_config" ]; then
  node_dir=${node_config%/*}
  mkdir -p -m 0755 -- "$node_dir" || die "cannot create $node_dir"
  members=()
  [ -z "$kubelet_root_dir" ] || members+=("\"kubeletRootDir\": \"$kubelet_root_dir\"")
  [ -z "$device_plugin_dir" ] || members+=("\"devicePluginDir\": \"$device_plugin_dir\"")
  [ -z "$state_dir" ] || members+=("\"stateDir\": \"$state_dir\"")
  [ -z "$host_root" ] || members+=("\"hostRoot\": \"$host_root\"")
  [ -z "$device_info_dir" ] || members+=("\"deviceInfoDir\": \"$device_info_dir\"")
  joined=$(IFS=,; echo "${members[*]}")
  node_tmp=$node_dir/.cni.json.installing
  installing+=("$node_tmp")
  printf '{%s}\n' "$joined" >"$node_tmp" || die "cannot write $node_tmp"
  chmod 0644 "$node_tmp"
  sync -- "$node_tmp"
  mv -f -T -- "$node_tmp" "$node_config" || die "cannot rename $node_tmp to $node_config"
  # $(<file) is bash's own read: the image has no cat.
  log "wrote the node file $node_config: $(<"$node_config")"
fi
