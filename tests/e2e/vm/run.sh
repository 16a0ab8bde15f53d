#!/usr/bin/env bash
# The real-kernel end-to-end suite: boots Debian's own kernel under QEMU with Soft-RoCE and
# an emulated igb NIC (real PCI SR-IOV), and runs the project's binaries inside it
# (guest-tests.sh). See docs/testing.md.
#
# Usage: tests/e2e/vm/run.sh [BUILD_DIR]   (default: build; binaries in BUILD_DIR/bin)
# Env:   HCASHARE_VM_WORK      cache dir for the kernel and initramfs (/var/tmp/hcashare-vm)
#        HCASHARE_VM=0         skip the suite
#        HCASHARE_VM_REQUIRED=1  a host that cannot run it fails instead of skipping
#        HCASHARE_VM_TIMEOUT   seconds before the guest is killed (300)
# Exit status: 0 when every guest check passed (or the suite was skipped), 1 otherwise.
# The last line is "N passed, M failed" (or a SKIP line).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=${HCASHARE_VM_WORK:-/var/tmp/hcashare-vm}
timeout_s=${HCASHARE_VM_TIMEOUT:-300}
t_start=$(date +%s)

skip() {
  if [ "${HCASHARE_VM_REQUIRED:-0}" = 1 ]; then
    echo "FAIL: real-kernel VM suite cannot run here: $*"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "SKIP: real-kernel VM suite: $*"
  exit 0
}
phase() { echo "== vm: $* ($(($(date +%s) - t_start)) s)"; }

[ "${HCASHARE_VM:-1}" != 0 ] || skip "HCASHARE_VM=0"
[ "$(id -u)" = 0 ] || skip "needs root (apt-get, kernel extraction)"
[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 host"
for b in hcashare-device-plugin hcashare-cni hcashare-nri hcashare hcashare-e2e-kubelet hcashare-e2e-rebind; do
  [ -x "$build/bin/$b" ] || { echo "missing $build/bin/$b (build first)"; exit 1; }
done

# ---------------------------------------------------------------- packages
phase packages
export DEBIAN_FRONTEND=noninteractive
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || skip "cannot tell the Debian release from /etc/os-release"
# QEMU >= 8 (igb, with SR-IOV) is in <codename>-backports. Its apt entry is derived from
# the machine's own Debian entry: the stanzas (or lines) of the bare release suite.
add_backports() {
  grep -rqs -- "$codename-backports" /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
  local out=/etc/apt/sources.list.d/hcashare-$codename-backports
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk -v c="$codename" 'BEGIN { RS = ""; ORS = "\n\n" }
      { keep = 0; out = ""; n = split($0, l, "\n")
        for (i = 1; i <= n; i++) {
          if (l[i] ~ /^Suites:/) {
            m = split(substr(l[i], 8), s, " "); for (j = 1; j <= m; j++) if (s[j] == c) keep = 1
            out = out "Suites: " c "-backports\n"
          } else if (l[i] !~ /^#/) out = out l[i] "\n"
        }
        if (keep) printf "%s", out }' "$f" >>"$out.sources"
  done
  if [ -e /etc/apt/sources.list ]; then
    awk -v c="$codename" '$1 == "deb" && $3 == c { $3 = c "-backports"; print }' \
      /etc/apt/sources.list >>"$out.list"
  fi
  for f in "$out.sources" "$out.list"; do [ -s "$f" ] || rm -f "$f"; done
  ls "$out".* >/dev/null 2>&1 || return 1
  apt-get update -qq
}
add_backports || skip "no Debian apt entry to derive $codename-backports from"
pkgs=(busybox-static kmod cpio xz-utils zstd iproute2 ibverbs-utils ibverbs-providers binutils)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    skip "cannot install ${missing[*]}"
fi
if ! qemu-system-x86_64 -device help 2>/dev/null | grep -q '"igb"'; then
  apt-get install -y -qq --no-install-recommends -t "$codename-backports" qemu-system-x86 \
    >/dev/null || skip "cannot install qemu-system-x86 from $codename-backports"
fi
qemu-system-x86_64 -device help 2>/dev/null | grep -q '"igb"' ||
  skip "QEMU $(qemu-system-x86_64 --version | head -1) has no igb device (needs >= 8.0)"

# ---------------------------------------------------------------- kernel
phase kernel
kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[ -n "$kpkg" ] || skip "cannot resolve linux-image-amd64"
kver=${kpkg#linux-image-}
kdir=$work/kernel-$kver
mkdir -p "$work"
if [ ! -e "$kdir/boot/vmlinuz-$kver" ]; then
  # Extracted, not installed: no initramfs-tools run, nothing under /boot or /lib/modules.
  rm -rf "$kdir" "$work"/linux-image-*.deb
  (cd "$work" && apt-get download -qq "$kpkg") || skip "cannot download $kpkg"
  dpkg-deb -x "$work/${kpkg}"_*.deb "$kdir"
  rm -f "$work/${kpkg}"_*.deb
fi
# QEMU boots an uncompressed ELF vmlinux directly (PVH), skipping the firmware and the
# in-guest decompression: seconds faster under TCG.
kernel=$kdir/boot/vmlinuz-$kver
if [ ! -s "$work/vmlinux-$kver" ]; then
  off=$(LC_ALL=C grep -aboP '\xFD7zXZ\x00' "$kernel" | head -1 | cut -d: -f1 || true)
  if [ -n "$off" ]; then
    tail -c +$((off + 1)) "$kernel" | xz -dc 2>/dev/null >"$work/vmlinux-$kver" || true
  fi
fi
if readelf -n "$work/vmlinux-$kver" 2>/dev/null | grep -q Xen; then kernel=$work/vmlinux-$kver; fi

# ---------------------------------------------------------------- initramfs + share
phase initramfs
bash "$here/build-initramfs.sh" -r "$kdir" -k "$kver" -i "$here/init.sh" \
  -o "$work/initramfs.cpio.gz" -b "$build/bin/hcashare" -b "$build/bin/hcashare-e2e-rebind"
share=$work/share
rm -rf "$share"
mkdir -p "$share/bin" "$share/cni"
for b in hcashare-device-plugin hcashare-cni hcashare-nri hcashare hcashare-e2e-kubelet hcashare-e2e-rebind; do
  cp "$build/bin/$b" "$share/bin/"
done
hostlocal=$(ls /usr/lib/cni/host-local /opt/cni/bin/host-local 2>/dev/null | head -1 || true)
[ -n "$hostlocal" ] || { echo "missing host-local (containernetworking-plugins)"; exit 1; }
cp "$hostlocal" "$share/cni/"
cp "$here/guest-tests.sh" "$share/"

# ---------------------------------------------------------------- boot
accel=tcg
# KVM only where the CPU really offers it (a nested "PVM" /dev/kvm hangs a stock kernel).
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then accel=kvm; fi
phase "boot $kver ($(basename "$kernel"), accel $accel)"
console=$work/console.log
boot_guest() {
  rm -f "$share/results" "$share/guest.log" "$share/guest.rc"
  timeout "$timeout_s" qemu-system-x86_64 -accel "$accel" -m 1024 -smp 2 \
    -display none -monitor none -serial "file:$console" -no-reboot -nic none \
    -kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
    -append "console=ttyS0 quiet panic=-1" \
    -virtfs "local,path=$share,mount_tag=hostshare,security_model=none,id=hostshare" \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
    -M q35 -device pcie-root-port,id=rp0,slot=1 \
    -netdev hubport,id=n0,hubid=0 -device igb,bus=rp0,netdev=n0 </dev/null
}
set +e
boot_guest
qemu_rc=$?
# QEMU itself killed by a signal (not the timeout, 124) before the guest ran a single
# test is the emulator failing, not our code: say so and boot once more.
if [ "$qemu_rc" -ge 128 ] && [ ! -s "$share/results" ]; then
  echo "QEMU died (exit $qemu_rc) before the guest ran any test; console:"
  tr -d '\r' <"$console" | tail -n 20
  phase "boot again"
  boot_guest
  qemu_rc=$?
fi
set -e
phase "guest finished (QEMU exit $qemu_rc)"
passed=$(grep -c '^PASS' "$share/results" 2>/dev/null || true)
failed=$(grep -c '^FAIL' "$share/results" 2>/dev/null || true)
passed=${passed:-0}
failed=${failed:-0}
if [ "$qemu_rc" != 1 ] || [ "$failed" != 0 ] || [ "$passed" = 0 ]; then
  echo "---- guest console"
  tr -d '\r' <"$console" | tail -n 400
  grep '^FAIL' "$share/results" 2>/dev/null || true
  # QEMU exits 1 when the guest reported success, 3 on failure; anything else is a crash,
  # a panic or the timeout.
  [ "$qemu_rc" = 1 ] || [ "$qemu_rc" = 3 ] || failed=$((failed + 1))
  echo "$passed passed, $failed failed"
  exit 1
fi
grep -E '^(PASS|FAIL)|ListAndWatch in' "$share/guest.log" || true
echo "$passed passed, $failed failed"
