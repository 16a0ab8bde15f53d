#!/usr/bin/env bash
# Builds the guest's initramfs for the real-kernel suite: busybox, the kernel modules of the
# RDMA stack (Soft-RoCE), virtio/9p and the emulated igb NIC, iproute2 (ip, rdma),
# libibverbs with the rxe provider and the ibv_* tools, and the shared libraries of the
# project's dynamically linked binaries. The project's binaries themselves come over 9p.
#
# Usage: build-initramfs.sh -r MODROOT -k KVER -i INIT -o OUT [-b BINARY]...
#   MODROOT  a tree holding lib/modules/KVER (a kernel .deb extracted with dpkg-deb -x)
#   INIT     the script installed as /init
#   BINARY   a dynamically linked binary whose libraries the guest needs (repeatable)
set -euo pipefail

modroot= kver= init= out=
extra_bins=()
while getopts "r:k:i:o:b:" opt; do
  case $opt in
    r) modroot=$OPTARG ;; k) kver=$OPTARG ;; i) init=$OPTARG ;; o) out=$OPTARG ;;
    b) extra_bins+=("$OPTARG") ;;
    *) echo "usage: $0 -r MODROOT -k KVER -i INIT -o OUT [-b BINARY]..." >&2; exit 2 ;;
  esac
done
[ -n "$modroot" ] && [ -n "$kver" ] && [ -n "$init" ] && [ -n "$out" ] || {
  echo "usage: $0 -r MODROOT -k KVER -i INIT -o OUT [-b BINARY]..." >&2
  exit 2
}
moddir=$modroot/lib/modules/$kver
[ -d "$moddir/kernel" ] || { echo "no kernel modules in $moddir" >&2; exit 1; }
# dpkg-deb -x does not run the package's depmod.
[ -e "$moddir/modules.dep" ] || depmod -b "$modroot" "$kver"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,run,tmp,root,mnt/host,var}
ln -s ../run "$stage/var/run"

# Modules, with their dependencies, in load order. rdma_rxe computes its ICRC through the
# crypto API's "crc32", which it requests at `rdma link add` time: crc32_generic provides it.
modules=(ib_core ib_uverbs ib_umad rdma_cm rdma_ucm rdma_rxe crc32_generic veth
  virtio_pci 9pnet_virtio 9p igb igbvf)
kdir=$stage/lib/modules/$kver
mkdir -p "$kdir"
: >"$stage/etc/modules.load"
for m in "${modules[@]}"; do
  deps=$(modprobe -d "$modroot" -S "$kver" --show-depends "$m" 2>/dev/null) || {
    echo "module $m not found for $kver" >&2
    exit 1
  }
  while read -r kind path _; do
    [ "$kind" = insmod ] || continue # "builtin X" needs nothing
    rel=${path#"$moddir"/}
    plain=${rel%.xz}
    plain=${plain%.zst}
    grep -qxF "$plain" "$stage/etc/modules.load" && continue
    mkdir -p "$kdir/$(dirname "$rel")"
    cp "$path" "$kdir/$rel"
    case $rel in # busybox insmod takes plain .ko only
      *.ko.xz) xz -df "$kdir/$rel" ;;
      *.ko.zst) zstd -qdf --rm "$kdir/$rel" ;;
    esac
    echo "$plain" >>"$stage/etc/modules.load"
  done <<<"$deps"
done
depmod -b "$stage" "$kver"

# Binaries with the libraries ldd names. glibc loads libgcc_s at thread exit without
# ldd listing it, and libibverbs loads its providers from /etc/libibverbs.d.
copy_with_libs() {
  local f=$1
  mkdir -p "$stage$(dirname "$f")"
  cp -L "$f" "$stage$f"
  ldd "$f" 2>/dev/null | grep -oE '/[^ ]+' | while read -r lib; do
    [ -e "$lib" ] || continue
    mkdir -p "$stage$(dirname "$lib")"
    cp -Ln "$lib" "$stage$lib"
  done
}
for b in /usr/sbin/ip /usr/bin/rdma /usr/sbin/modprobe /usr/bin/ibv_devices /usr/bin/ibv_devinfo \
  /usr/bin/ibv_rc_pingpong /lib/x86_64-linux-gnu/libgcc_s.so.1 \
  /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so "${extra_bins[@]}"; do
  [ -e "$b" ] || { echo "missing $b" >&2; exit 1; }
  copy_with_libs "$b"
done
mkdir -p "$stage/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$stage/etc/libibverbs.d/"
[ -d /etc/iproute2 ] && cp -r /etc/iproute2 "$stage/etc/"

# busybox for everything else, without shadowing the real ip and modprobe; the kernel's
# request_module() runs /sbin/modprobe.
cp /bin/busybox "$stage/bin/busybox"
for applet in $("$stage/bin/busybox" --list-full); do
  case $applet in */ip | */modprobe) continue ;; esac
  [ -e "$stage/$applet" ] && continue
  mkdir -p "$stage/$(dirname "$applet")"
  ln -s /bin/busybox "$stage/$applet"
done
ln -sf /usr/sbin/modprobe "$stage/sbin/modprobe"
install -m 0755 "$init" "$stage/init"
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"

(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1)), kernel $kver, $(wc -l <"$stage/etc/modules.load") modules"
