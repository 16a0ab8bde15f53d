#!/bin/sh
# /init of the real-kernel test guest: mounts the pseudo file systems, loads the modules
# listed by build-initramfs.sh, mounts the host's 9p share on /mnt/host, runs
# /mnt/host/guest-tests.sh, and reports its exit status through QEMU's isa-debug-exit
# device (port 0xf4): QEMU then exits with 1 when the tests passed and 3 when they did not.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
kver=$(uname -r)
while read -r ko; do
  insmod "/lib/modules/$kver/$ko" 2>/dev/null || echo "init: insmod $ko failed"
done </etc/modules.load
/usr/sbin/ip link set lo up

rc=1
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 hostshare /mnt/host; then
  /bin/sh /mnt/host/guest-tests.sh 2>&1 | tee /mnt/host/guest.log
  rc=$(cat /mnt/host/guest.rc 2>/dev/null || echo 1)
  sync
else
  echo "init: cannot mount the 9p share hostshare"
fi
code=0
[ "$rc" = 0 ] || code=1
printf "\\$(printf %03o $code)" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
poweroff -f
