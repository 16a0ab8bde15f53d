#!/usr/bin/env bash
# Assembles the runtime file tree of the hcashare container image in a directory.
#
# deploy/Dockerfile's final stage is exactly this tree (FROM scratch, then one COPY), so
# what tests/deploy_rootfs_test.sh checks here, by running every binary in a chroot, is
# what the image holds. The tree is a merged-/usr Debian layout with:
#   /usr/local/bin/hcashare-device-plugin   the daemon (statically linked)
#   /usr/local/bin/hcashare-cni             the CNI plugin (statically linked)
#   /usr/local/bin/hcashare-nri             the NRI plugin (statically linked; installed
#                                           onto hosts by the installer's --nri-plugin-dir)
#   /usr/local/bin/hcashare                 the operator CLI (dynamically linked)
#   /usr/local/bin/hcashare-webhook         the network resources injector (dynamically
#                                           linked; OpenSSL statically)
#   /usr/local/bin/hcashare-install-cni     scripts/install-cni.sh (the init container)
#   /usr/bin/{bash,cp,mv,rm,mkdir,chmod,sync}  what the installer runs
#   libibverbs and its providers (when the CLI loads libibverbs, for `hcashare doctor`)
#   the shared libraries that ldd reports for every binary above, and their loader
#   /usr/share/doc/<package>/copyright      for every Debian package the tree draws on
#
# Usage: scripts/build-rootfs.sh --out DIR [--bin-dir DIR] [--no-strip]
#   --out      the tree to (re)create; must be absent, empty, or a tree made by this script
#   --bin-dir  where the five binaries are (default: build/bin)
#   --no-strip keep debug information (the default strips our binaries)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin_dir=$repo/build/bin
out=""
strip_bins=1

usage() { sed -n '/^# Usage:/,/^# *--no-strip/p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
  echo "build-rootfs: error: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --bin-dir) bin_dir=${2:?--bin-dir needs a value}; shift 2 ;;
    --no-strip) strip_bins=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-rootfs: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { usage >&2; exit 2; }

# What the image runs, and what the CNI installer runs.
BINARIES=(hcashare-device-plugin hcashare-cni hcashare-nri hcashare hcashare-webhook)
INSTALLER_TOOLS=(bash cp mv rm mkdir chmod sync)
# Debian packages whose code is linked statically into the binaries (their copyright
# files go into the tree too; the dynamic ones are found with dpkg).
STATIC_PACKAGES=(libc6-dev libstdc++-12-dev libgcc-12-dev libgrpc++-dev libgrpc-dev
  libprotobuf-dev libabsl-dev libc-ares-dev libre2-dev zlib1g-dev libnl-3-dev
  libnl-route-3-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libboost1.74-dev libssl-dev)

for b in "${BINARIES[@]}"; do
  [ -x "$bin_dir/$b" ] || die "$bin_dir/$b is missing (build it first: scripts/build.sh build)"
done

# Refuse to wipe a directory this script did not make.
marker=.hcashare-rootfs
if [ -e "$out" ]; then
  if [ -e "$out/$marker" ]; then
    rm -rf -- "$out"
  elif [ -d "$out" ] && [ -z "$(ls -A -- "$out")" ]; then
    rmdir -- "$out"
  else
    die "$out exists and was not made by build-rootfs.sh"
  fi
fi
mkdir -p -- "$out"
out=$(cd "$out" && pwd)
touch "$out/$marker"

# Merged /usr, as in Debian 12: /bin, /lib and /lib64 are links into /usr, so the paths
# that ldd prints (/lib/x86_64-linux-gnu/..., /lib64/ld-linux-...) land in /usr.
mkdir -p "$out"/usr/{bin,lib,local/bin,share/doc} "$out/etc" "$out/tmp"
chmod 1777 "$out/tmp"
ln -s usr/bin "$out/bin"
ln -s usr/lib "$out/lib"
if [ -d /lib64 ]; then
  mkdir -p "$out/usr/lib64"
  ln -s usr/lib64 "$out/lib64"
fi

for b in "${BINARIES[@]}"; do
  # Stripped as it is copied: the unstripped daemon is ~160 MB, and the tree is often
  # made on a small /tmp.
  if [ "$strip_bins" -eq 1 ]; then
    strip --strip-unneeded -o "$out/usr/local/bin/$b" "$bin_dir/$b"
    chmod 0755 "$out/usr/local/bin/$b"
  else
    install -m 0755 "$bin_dir/$b" "$out/usr/local/bin/$b"
  fi
done
install -m 0755 "$repo/scripts/install-cni.sh" "$out/usr/local/bin/hcashare-install-cni"

host_files=()
for t in "${INSTALLER_TOOLS[@]}"; do
  p=$(command -v "$t") || die "$t not found on this host"
  case $p in /*) ;; *) die "$t is not an executable file ($p)" ;; esac
  install -m 0755 "$p" "$out/usr/bin/$t"
  host_files+=("$p")
done

# Libraries loaded with dlopen(), which ldd cannot see. `hcashare doctor` loads
# libibverbs.so.1 at run time (as NCCL does), and libibverbs loads the HCA's provider
# (e.g. libmlx5) named by /etc/libibverbs.d/*.driver from <libdir>/libibverbs/. They are
# shipped when the CLI refers to libibverbs, so that doctor in this image sees what an
# RDMA application would.
if grep -qa 'libibverbs\.so\.1' "$out/usr/local/bin/hcashare"; then
  libc=$(ldd "$bin_dir/hcashare" | awk '$1 ~ /^libc\.so/ { print $3 }')
  libdir=$(dirname "${libc:-/nonexistent/libc}")
  if [ ! -e "$libdir/libibverbs.so.1" ] || [ ! -d "$libdir/libibverbs" ] ||
    [ ! -d /etc/libibverbs.d ]; then
    die "hcashare loads libibverbs.so.1, but libibverbs1 and ibverbs-providers are not" \
      "installed here (scripts/install-deps.sh installs them)"
  fi
  cp -L --parents -- "$libdir/libibverbs.so.1" "$out/"
  for provider in "$libdir"/libibverbs/*.so; do
    cp -P --parents -- "$provider" "$out/"
    target=$(readlink -f -- "$provider")
    [ "$target" = "$provider" ] || cp --parents -- "$target" "$out/"
    host_files+=("$target")
  done
  cp --parents -- /etc/libibverbs.d/*.driver "$out/"
  host_files+=("$libdir/libibverbs.so.1")
fi

# Every shared library (and the loader) that each dynamically linked file in the tree
# needs; ldd already follows the dependencies of the dependencies.
libs=()
while IFS= read -r -d '' f; do
  if ! ldd_out=$(ldd "$f" 2>&1); then
    continue  # statically linked, or not an ELF file
  fi
  if grep -q "not found" <<<"$ldd_out"; then
    die "ldd $f: a library is missing on this host:
$ldd_out"
  fi
  while read -r lib; do
    libs+=("$lib")
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$ldd_out")
done < <(find "$out/usr/local/bin" "$out/usr/bin" "$out/usr/lib" -type f -print0)

mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)
if [ "${#libs[@]}" -gt 0 ]; then
  cp -L --parents -- "${libs[@]}" "$out/"
  host_files+=("${libs[@]}")
fi

# Copyright files: the packages owning the copied host files, and the statically linked
# ones.
# dpkg knows a file by one of its two merged-/usr names; ask for both, in one call.
queries=()
for p in "${host_files[@]}"; do
  alt=${p#/usr}
  [ "$alt" != "$p" ] || alt=/usr$p
  queries+=("$p" "$alt")
done
packages=("${STATIC_PACKAGES[@]}")
while IFS= read -r pkg; do
  packages+=("$pkg")
done < <(dpkg -S "${queries[@]}" 2>/dev/null | sed -n 's/^\([^:, ]*\)[:,].*/\1/p' || true)
copyrights=()
for pkg in $(printf '%s\n' "${packages[@]}" | sort -u); do
  [ ! -f "/usr/share/doc/$pkg/copyright" ] || copyrights+=("/usr/share/doc/$pkg/copyright")
done
[ "${#copyrights[@]}" -eq 0 ] || cp -L --parents -- "${copyrights[@]}" "$out/"

files=$(find "$out" -type f | wc -l)
echo "build-rootfs: $out: $files files, $(du -sh "$out" | cut -f1)"
