#!/bin/sh
# The real-kernel end-to-end tests, run by /init inside the QEMU guest (busybox sh).
# The project's binaries are in /mnt/host/bin, host-local in /mnt/host/cni. Every check
# prints "PASS <name>" or "FAIL <name>: <why>" (also to /mnt/host/results); the exit status
# (in /mnt/host/guest.rc) is 0 only when every check passed.
#
# Hardware: one QEMU igb PF (real PCI SR-IOV) with two VFs, Soft-RoCE (rdma_rxe) devices.
#   VF0      hcashare-cni's real SR-IOV VF (step 3), later the Soft-RoCE move (step 4)
#   VF1      carries rxe0: the shared pool's HCA, doctor's and the data path's device
#   veth0/1  carry rxe1 and rxe2: the exclusive pool, hot-plugged (step 1)
set -u
BIN=/mnt/host/bin
RESULTS=/mnt/host/results
WORK=/tmp/e2e
KROOT=/run/kubelet
: >"$RESULTS"
mkdir -p "$WORK" "$KROOT/device-plugins"
FAILED=0
# Debian's busybox prefers its own applets to $PATH: call iproute2 by path.
ip() { /usr/sbin/ip "$@"; }

pass() { echo "PASS $1" | tee -a "$RESULTS"; }
fail() {
  echo "FAIL $1: $2" | tee -a "$RESULTS"
  FAILED=1
}
# check NAME CMD...: PASS when CMD exits 0; otherwise FAIL with the end of its output.
check() {
  name=$1
  shift
  if out=$("$@" 2>&1); then
    pass "$name"
  else
    fail "$name" "$(echo "$out" | tail -5 | tr '\n' ' ')"
  fi
}
say() { echo "=== $*"; }
uptime_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# wait_for SECONDS CMD...: retries CMD every 50 ms until it succeeds.
wait_for() {
  deadline=$(($(uptime_ms) + $1 * 1000))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$(uptime_ms)" -lt "$deadline" ] || return 1
    usleep 50000
  done
}

# ---------------------------------------------------------------- kubelet log helpers
KLOG=$WORK/kubelet.log
# The latest ListAndWatch line of a resource: "<ms> <resource> n=<count> <devices>".
latest() { grep " $1 n=" "$KLOG" | tail -1; }
# has_list RESOURCE TEXT [SINCE_MS]: the latest list (newer than SINCE_MS) contains TEXT.
has_list() {
  line=$(latest "$1")
  [ -n "$line" ] && [ "${line%% *}" -ge "${3:-0}" ] && echo "$line" | grep -q -- "$2"
}
endpoint() { grep " $1 endpoint=" "$KLOG" | tail -1 | sed 's/.*endpoint=//'; }
# The host paths of an Allocate response (JSON on stdin).
host_paths() { grep -o '"host_path": "[^"]*"' | sed 's/.*: "//; s/"$//'; }

# ---------------------------------------------------------------- hardware
say "kernel $(uname -r): SR-IOV VFs and Soft-RoCE devices"
PF_DIR=
for d in /sys/bus/pci/devices/*; do [ -e "$d/sriov_totalvfs" ] && PF_DIR=$d && break; done
if [ -z "$PF_DIR" ]; then
  fail setup "no SR-IOV PF (QEMU igb) in the guest"
  echo 1 >/mnt/host/guest.rc
  exit 1
fi
PF=$(ls "$PF_DIR/net")
ip link set "$PF" up
echo 2 >"$PF_DIR/sriov_numvfs"
wait_for 10 ls "$PF_DIR/virtfn1/net/" || fail setup "VF netdevs did not appear"
VF0_PCI=$(basename "$(readlink "$PF_DIR/virtfn0")")
VF1_PCI=$(basename "$(readlink "$PF_DIR/virtfn1")")
VF0=$(ls "$PF_DIR/virtfn0/net")
VF1=$(ls "$PF_DIR/virtfn1/net")
VF0_MAC=$(cat "/sys/class/net/$VF0/address")
echo "PF $PF ($(basename "$PF_DIR")), VF0 $VF0 ($VF0_PCI), VF1 $VF1 ($VF1_PCI)"
ip link set "$VF1" up
ip addr add 192.168.78.1/24 dev "$VF1"
ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up
ip addr add 192.168.77.1/24 dev veth0
check rxe0-on-vf rdma link add rxe0 type rxe netdev "$VF1"
check rxe1-on-veth rdma link add rxe1 type rxe netdev veth0
# The VF's carrier follows the emulated PF's link watchdog and mailbox, which
# under TCG on a loaded host can take well over 10 s; bounce the VF once if
# it is slow, and give each attempt 30 s before calling setup failed.
vf1_active() { grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state; }
if ! wait_for 30 vf1_active; then
  echo "rxe0 not ACTIVE after 30 s (VF1 carrier $(cat "/sys/class/net/$VF1/carrier" 2>&1)," \
    "PF operstate $(cat "/sys/class/net/$PF/operstate")); bouncing $VF1"
  ip link set "$VF1" down
  ip link set "$VF1" up
  wait_for 30 vf1_active ||
    fail setup "rxe0 port not ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state)"
fi
rdma link show

# ---------------------------------------------------------------- 1. device plugin
say "1. device plugin against the real /sys and /dev"
cat >"$WORK/dp.json" <<EOF
{"configList": [
  {"resourceName": "rxe_shared", "resourcePrefix": "rdma", "rdmaHcaMax": 4,
   "selectors": {"ifNames": ["$VF1"]}},
  {"resourceName": "rxe_excl", "resourcePrefix": "rdma", "mode": "exclusive",
   "selectors": {"ifNames": ["veth0", "veth1"]}}
]}
EOF
start_dp() { # start_dp LOG: the daemon and the kubelet, both fresh
  : >"$KLOG"
  "$BIN/hcashare-e2e-kubelet" watch --root "$KROOT" --resource rdma/rxe_shared \
    --resource rdma/rxe_excl --log "$KLOG" &
  KUBELET_PID=$!
  wait_for 10 test -S "$KROOT/device-plugins/kubelet.sock"
  "$BIN/hcashare-device-plugin" --config "${DP_CONFIG:-$WORK/dp.json}" --kubelet-root-dir "$KROOT" \
    --device-plugin-dir "$KROOT/device-plugins" --registration kubelet --pool-info-dir "" --device-info-dir "$WORK/devinfo" \
    >"$1" 2>&1 &
  DP_PID=$!
}
stop_dp() {
  kill "$DP_PID" "$KUBELET_PID" 2>/dev/null
  wait "$DP_PID" "$KUBELET_PID" 2>/dev/null
}
start_dp "$WORK/dp.log"
if wait_for 15 has_list rdma/rxe_shared "n=4 " && wait_for 5 has_list rdma/rxe_excl "rxe1:Healthy"; then
  pass dp-registers-and-lists
else
  fail dp-registers-and-lists "kubelet saw: $(tail -3 "$KLOG" | tr '\n' ' ') daemon: $(tail -5 "$WORK/dp.log" | tr '\n' ' ')"
fi
latest rdma/rxe_shared
latest rdma/rxe_excl

# Allocate hands out the real char devices of rxe0: S_ISCHR with the kernel's numbers.
SHARED_ID=$(latest rdma/rxe_shared | awk '{ print $4 }' | cut -d: -f1)
"$BIN/hcashare-e2e-kubelet" allocate --socket "$(endpoint rdma/rxe_shared)" --ids "$SHARED_ID" \
  >"$WORK/alloc.json" 2>&1
cat "$WORK/alloc.json"
ALLOC_DEVS=$(host_paths <"$WORK/alloc.json")
real_char_devices() { # real_char_devices PATHS: rxe0's uverbs node, rdma_cm, umad/issm
  uverbs=0
  for p in $1; do
    [ "$(stat -c %F "$p")" = "character special file" ] || { echo "$p is not a char device"; return 1; }
    got=$((0x$(stat -c %t "$p"))):$((0x$(stat -c %T "$p")))
    n=$(basename "$p")
    case $n in
      uverbs*) want=$(cat "/sys/class/infiniband_verbs/$n/dev")
        [ "$(cat "/sys/class/infiniband_verbs/$n/ibdev")" = rxe0 ] || { echo "$n is not rxe0's"; return 1; }
        uverbs=$((uverbs + 1)) ;;
      umad* | issm*) want=$(cat "/sys/class/infiniband_mad/$n/dev") ;;
      rdma_cm) want=$(cat /sys/class/misc/rdma_cm/dev) ;;
      *) echo "unexpected $p"; return 1 ;;
    esac
    [ "$got" = "$want" ] || { echo "$p is $got, the kernel says $want"; return 1; }
    echo "$p $got ok"
  done
  [ "$uverbs" = 1 ] || { echo "want exactly rxe0's uverbs node, got $uverbs"; return 1; }
  echo "$1" | grep -q /dev/infiniband/rdma_cm || { echo "no rdma_cm"; return 1; }
}
check dp-allocate-real-char-devices real_char_devices "$ALLOC_DEVS"

# within_1s NAME RESOURCE TEXT CMD...: runs CMD; PASS when the resource's list shows TEXT
# within 1 s (the measured latency is printed).
within_1s() {
  name=$1 res=$2 text=$3
  shift 3
  t0=$(uptime_ms)
  "$@"
  if wait_for 3 has_list "$res" "$text" "$t0"; then
    dt=$(($(latest "$res" | cut -d' ' -f1) - t0))
    echo "$* -> ListAndWatch in ${dt} ms"
    if [ "$dt" -le 1000 ]; then pass "$name"; else fail "$name" "took ${dt} ms"; fi
  else
    fail "$name" "no update: $(latest "$res")"
  fi
}
# Hot-unplug and hot-plug through uevents; a port going down (the netdev's carrier)
# through rtnetlink.
within_1s dp-unplug-within-1s rdma/rxe_excl "n=0 " rdma link delete rxe1
within_1s dp-hotplug-within-1s rdma/rxe_excl "rxe2:Healthy" rdma link add rxe2 type rxe netdev veth1
within_1s dp-port-down-unhealthy-within-1s rdma/rxe_excl "rxe2:Unhealthy" ip link set veth0 down
ip link set veth0 up
stop_dp

# ---------------------------------------------------------------- 2. doctor
say "2. hcashare doctor on the real stack"
# As in a pod: with the env the Allocate response gives the container.
# (rdma/rxe_shared's own variable: with two resources there is no generic one.)
POD_DEVICES=$(grep -o '"HCASHARE_RDMA_DEVICES_RDMA_RXE_SHARED": "[^"]*"' "$WORK/alloc.json" |
  sed 's/.*: "//; s/"$//')
HCASHARE_RDMA_DEVICES_RDMA_RXE_SHARED=$POD_DEVICES "$BIN/hcashare" doctor >"$WORK/doctor.txt" 2>&1
doctor_rc=$?
cat "$WORK/doctor.txt"
doctor_passes() {
  [ "$doctor_rc" = 0 ] || { echo "exit $doctor_rc"; return 1; }
  for c in uverbs libibverbs verbs-ports roce-gid rdma-netns plugin-env; do
    grep -q "^PASS  $c " "$WORK/doctor.txt" || { echo "$c did not pass"; return 1; }
  done
  grep -q "^PASS  libibverbs .*rxe0" "$WORK/doctor.txt" || { echo "libibverbs did not list rxe0"; return 1; }
  grep -q "^PASS  rdma-netns .*shared" "$WORK/doctor.txt" || { echo "netns mode not read as shared"; return 1; }
  ! grep -q "^WARN\|^FAIL" "$WORK/doctor.txt" || { echo "not all PASS"; return 1; }
}
check doctor-all-pass doctor_passes
HCASHARE_RDMA_DEVICES_RDMA_RXE_SHARED=$POD_DEVICES NCCL_IB_DISABLE=1 "$BIN/hcashare" doctor \
  >"$WORK/doctor-nccl.txt" 2>&1
check doctor-warns-nccl-ib-disable grep -q "^WARN  nccl-ib-disable" "$WORK/doctor-nccl.txt"

# ---------------------------------------------------------------- 5. data path
say "5. data path: ibv_rc_pingpong with only the Allocate response's char devices"
# A container-like sandbox: new mount and network namespaces, and a /dev that holds
# nothing but bind mounts of the nodes Allocate handed out (plus /dev/null).
sandbox() { # sandbox DEVICES CMD: runs CMD (sh -c) in the sandbox
  unshare -m -n sh -c '
    /usr/sbin/ip link set lo up
    mkdir -p /tmp/hostdev && mount --bind /dev /tmp/hostdev
    mount -t tmpfs -o mode=755 tmpfs /dev
    mkdir /dev/infiniband
    touch /dev/null && mount --bind /tmp/hostdev/null /dev/null
    for p in $1; do touch "$p" && mount --bind "/tmp/hostdev/${p#/dev/}" "$p" || exit 1; done
    umount -l /tmp/hostdev
    eval "$2"' sandbox "$1" "$2"
}
PINGPONG='ls /dev/infiniband
  ibv_rc_pingpong -d rxe0 -g 1 -n 200 -s 4096 >/tmp/pp-server.log 2>&1 &
  sleep 1
  timeout 60 ibv_rc_pingpong -d rxe0 -g 1 -n 200 -s 4096 127.0.0.1; rc=$?
  wait; cat /tmp/pp-server.log; exit $rc'
check datapath-allocated-nodes-suffice sandbox "$ALLOC_DEVS" "$PINGPONG"
# The control: the same sandbox without the uverbs node cannot do RDMA.
NO_UVERBS=$(echo "$ALLOC_DEVS" | grep -v uverbs)
if sandbox "$NO_UVERBS" "$PINGPONG" >"$WORK/pp-no-uverbs.log" 2>&1; then
  fail datapath-needs-uverbs "ibv_rc_pingpong worked without a uverbs node"
else
  pass datapath-needs-uverbs
fi

# ---------------------------------------------------------------- 5b. DRA
say "5b. DRA: the daemon publishes rxe0 and prepares a claim; the CDI spec's nodes alone suffice"
# The real daemon with a DRA resource, against an API server in the guest (the fake one, over
# HTTPS with a CA made there) holding the Node and a claim allocating rxe0, and the kubelet's
# DRA client (hcashare-e2e-kubelet dra-*). No igb VF carries an RDMA device of its own
# (igbvf has no RDMA): the device is Soft-RoCE's rxe0, on VF1's netdev.
DRA_DRIVER=rdma.hcashare.io
DRA_CDI=$WORK/dra-cdi
DRA_SLICES=$WORK/dra-slices.log
mkdir -p "$KROOT/plugins_registry"
: >"$DRA_SLICES"
"$BIN/hcashare-e2e-kubelet" dra-api --kubeconfig "$WORK/dra.kubeconfig" --node e2e-node \
  --claim-device rdma-rxe0 --uid-file "$WORK/dra-claim.uid" --log "$DRA_SLICES" \
  >"$WORK/dra-api.log" 2>&1 &
DRA_API_PID=$!
cat >"$WORK/dra.json" <<EOF
{"configList": [
  {"resourceName": "rxe_dra", "resourcePrefix": "rdma", "api": "dra", "mode": "exclusive",
   "selectors": {"ifNames": ["$VF1"]}}
]}
EOF
wait_for 30 test -s "$WORK/dra-claim.uid" || fail dra-api-server "$(cat "$WORK/dra-api.log")"
DRA_UID=$(cat "$WORK/dra-claim.uid")
"$BIN/hcashare-device-plugin" --config "$WORK/dra.json" --kubelet-root-dir "$KROOT" \
  --device-plugin-dir "$KROOT/device-plugins" --registration kubelet --pool-info-dir "" \
  --device-info-dir "$WORK/devinfo" --kubeconfig "$WORK/dra.kubeconfig" --node-name e2e-node \
  --cdi-spec-dir "$DRA_CDI" >"$WORK/dp-dra.log" 2>&1 &
DRA_DP_PID=$!
# The latest list of the driver's published devices: "<ms> n=<count> <device>:<rdma>:<healthy>".
dra_published() { tail -1 "$DRA_SLICES" | grep -q " n=1 rdma-rxe0:rxe0:true$"; }
if wait_for 30 dra_published; then
  pass dra-publishes-rxe0
else
  fail dra-publishes-rxe0 "slices: $(tail -1 "$DRA_SLICES") daemon: $(tail -5 "$WORK/dp-dra.log" | tr '\n' ' ')"
fi
tail -1 "$DRA_SLICES"
dra_claim() { # dra_claim VERB: dra-prepare or dra-unprepare of the claim, its answer in $WORK
  "$BIN/hcashare-e2e-kubelet" "$1" --root "$KROOT" --driver "$DRA_DRIVER" --uid "$DRA_UID" \
    >"$WORK/$1.json" 2>&1
}
wait_for 10 test -S "$KROOT/plugins_registry/$DRA_DRIVER-reg.sock"
check dra-register-and-prepare dra_claim dra-prepare
cat "$WORK/dra-prepare.json"
DRA_CDI_ID=$(grep -o "\"$DRA_DRIVER/claim=[^\"]*\"" "$WORK/dra-prepare.json" | tr -d '"')
DRA_SPEC=$DRA_CDI/hcashare-dra-$(echo "$DRA_DRIVER" | tr . _)-$DRA_UID.json
cat "$DRA_SPEC"
# What a runtime takes from the spec for the returned CDI ID: containerEdits.deviceNodes.
DRA_DEVS=$("$BIN/hcashare-e2e-kubelet" cdi-nodes --spec "$DRA_SPEC" --id "$DRA_CDI_ID" 2>&1)
dra_prepared() {
  grep -q '"deviceName": "rdma-rxe0"' "$WORK/dra-prepare.json" || { echo "rdma-rxe0 not prepared"; return 1; }
  [ "$DRA_CDI_ID" = "$DRA_DRIVER/claim=$DRA_UID-rdma-rxe0" ] || { echo "CDI ID '$DRA_CDI_ID'"; return 1; }
  "$BIN/hcashare-e2e-kubelet" cdi-nodes --spec "$DRA_SPEC" --id "$DRA_CDI_ID" >/dev/null
}
check dra-prepare-answers-rxe0-and-its-cdi-id dra_prepared
check dra-cdi-spec-real-char-devices real_char_devices "$DRA_DEVS"
check dra-cdi-device-nodes-suffice sandbox "$DRA_DEVS" "$PINGPONG"
# The control: the spec's nodes without the uverbs node cannot do RDMA.
if sandbox "$(echo "$DRA_DEVS" | grep -v uverbs)" "$PINGPONG" >"$WORK/pp-dra-no-uverbs.log" 2>&1; then
  fail dra-cdi-needs-uverbs "ibv_rc_pingpong worked without a uverbs node"
else
  pass dra-cdi-needs-uverbs
fi
# The CNI's DRA step ("mode": "dra", chained after the default network; issue 33). The
# kubelet's pod-resources (hcashare-e2e-kubelet podres) names the pod's claim device.
#  (a) The claim above holds rxe0, a Soft-RoCE device (the driver's device ID, no function of
#      its own): the step leaves it and its netdev in the host (rxe cannot change namespace).
#  (b) A claim holding VF0 (a real igbvf VF; no DRA device, as it has no RDMA device, so its
#      checkpoint entry is written here as the driver writes one): the claim alone puts its
#      netdev into the pod, named by the claim's config and sized by the step's MTU, and DEL
#      returns it as it was.
podres() { # podres ROOT DEVICE: serves ROOT's pod-resources for pod e2e/dra-pod
  "$BIN/hcashare-e2e-kubelet" podres --root "$1" --pod dra-pod --uid dra-pod-uid \
    --pool e2e-node --device "$2" >"$WORK/podres.log" 2>&1 &
  PODRES_PID=$!
  wait_for 10 test -S "$1/pod-resources/kubelet.sock" || fail dra-podres "$(cat "$WORK/podres.log")"
}
dra_step() { # dra_step VERB ROOT: the step for pod e2e/dra-pod, its result on stdout
  echo "{\"stateDir\": \"/run/hcashare-cni-dra\", \"kubeletRootDir\": \"$2\",
    \"devicePluginDir\": \"$2/device-plugins\"}" >"$WORK/cni-dra.json"
  CNI_COMMAND=$1 CNI_CONTAINERID=e2e-dra CNI_NETNS=/run/netns/drapod CNI_IFNAME=eth0 \
    CNI_PATH=/mnt/host/cni HCASHARE_CNI_CONFIG="$WORK/cni-dra.json" \
    CNI_ARGS="K8S_POD_NAMESPACE=e2e;K8S_POD_NAME=dra-pod;K8S_POD_UID=dra-pod-uid" \
    "$BIN/hcashare-cni" <<EOF
{"cniVersion": "1.0.0", "name": "cluster", "type": "hcashare-cni", "mode": "dra", "mtu": 1400}
EOF
}
link_facts() { cat "/sys/class/net/$1/address" "/sys/class/net/$1/mtu" | tr '\n' ' '; }
no_state() { [ -z "$(ls /run/hcashare-cni-dra/attachments 2>/dev/null)" ]; }
ip netns add drapod
podres "$KROOT" rdma-rxe0
VF1_LINK_BEFORE=$(link_facts "$VF1")
dra_step_leaves_soft_roce() {
  out=$(dra_step ADD "$KROOT") || { echo "$out"; return 1; }
  [ "$(link_facts "$VF1")" = "$VF1_LINK_BEFORE" ] || { echo "$VF1 changed: $out"; return 1; }
  rdma dev show rxe0 >/dev/null || { echo "rxe0 is gone"; return 1; }
  no_state || { echo "state written"; return 1; }
  dra_step DEL "$KROOT"
}
check cni-dra-step-leaves-a-soft-roce-device dra_step_leaves_soft_roce
kill "$PODRES_PID" 2>/dev/null
wait "$PODRES_PID" 2>/dev/null
VF0_ROOT=$WORK/kroot-vf0
mkdir -p "$VF0_ROOT/plugins/$DRA_DRIVER"
cat >"$VF0_ROOT/plugins/$DRA_DRIVER/checkpoint.json" <<EOF
{"version": 1, "claims": {"uid-vf0": {"namespace": "e2e", "name": "vf0-claim", "cdiSpecFile": "",
  "devices": [{"requests": ["nic"], "pool": "e2e-node", "device": "vf0", "pciAddress": "$VF0_PCI",
  "resource": "rdma/vf0", "rdmaDevices": [], "cdiDeviceIds": [], "interfaceName": "rdma0"}]}}}
EOF
chmod 0600 "$VF0_ROOT/plugins/$DRA_DRIVER/checkpoint.json"
podres "$VF0_ROOT" vf0
VF0_LINK_BEFORE=$(link_facts "$VF0")
dra_step_attaches() {
  out=$(dra_step ADD "$VF0_ROOT") || { echo "$out"; return 1; }
  echo "$out"
  echo "$out" | grep -q '"name": *"rdma0"' || { echo "rdma0 not in the result"; return 1; }
  ip -n drapod link show rdma0 | grep -q "mtu 1400" || { echo "rdma0 not in the pod at 1400"; return 1; }
  ! ip link show "$VF0" >/dev/null 2>&1 || { echo "$VF0 is still in the host"; return 1; }
}
check cni-dra-step-a-claim-alone-attaches-a-real-vf dra_step_attaches
dra_step_detaches() {
  dra_step DEL "$VF0_ROOT" || return 1
  [ "$(link_facts "$VF0")" = "$VF0_LINK_BEFORE" ] || { echo "$VF0 is '$(link_facts "$VF0")'"; return 1; }
  no_state || { echo "state left"; return 1; }
  [ -z "$(ip -n drapod -o link show | grep -v ' lo:')" ] || { echo "the pod kept a link"; return 1; }
}
check cni-dra-step-del-returns-the-vf dra_step_detaches
# (c) The same claim through hcashare-nri (NRI, no CNI configuration): the fake runtime's
#     RunPodSandbox puts VF0 into the pod as rdma0; after a reconnection (a runtime restart,
#     whose synchronization leaves the attached VF alone) StopPodSandbox returns it.
NRI_SOCK=$WORK/nri.sock
echo "{\"stateDir\": \"/run/hcashare-cni-dra\", \"kubeletRootDir\": \"$VF0_ROOT\",
  \"devicePluginDir\": \"$VF0_ROOT/device-plugins\"}" >"$WORK/cni-nri.json"
HCASHARE_CNI_CONFIG="$WORK/cni-nri.json" "$BIN/hcashare-nri" --socket "$NRI_SOCK" \
  --cni-bin "$BIN/hcashare-cni" --cni-path /mnt/host/cni >"$WORK/nri.log" 2>&1 &
NRI_PID=$!
nri_event() { # nri_event run|stop: one runtime session with the plugin
  "$BIN/hcashare-e2e-kubelet" nri-runtime --socket "$NRI_SOCK" --event "$1" --pod dra-pod \
    --uid dra-pod-uid --sandbox e2e-nri-sandbox --netns /run/netns/drapod
}
nri_attaches() {
  nri_event run || { tail -5 "$WORK/nri.log"; return 1; }
  ip -n drapod link show rdma0 >/dev/null || { echo "rdma0 not in the pod"; return 1; }
  ! ip link show "$VF0" >/dev/null 2>&1 || { echo "$VF0 is still in the host"; return 1; }
}
check nri-a-claim-alone-attaches-a-real-vf-at-sandbox-start nri_attaches
nri_detaches() {
  nri_event stop || { tail -5 "$WORK/nri.log"; return 1; }
  [ "$(link_facts "$VF0")" = "$VF0_LINK_BEFORE" ] || { echo "$VF0 is '$(link_facts "$VF0")'"; return 1; }
  no_state || { echo "state left"; return 1; }
  [ -z "$(ip -n drapod -o link show | grep -v ' lo:')" ] || { echo "the pod kept a link"; return 1; }
}
check nri-stop-after-a-reconnection-returns-the-vf nri_detaches
kill "$NRI_PID" 2>/dev/null
wait "$NRI_PID" 2>/dev/null
kill "$PODRES_PID" 2>/dev/null
wait "$PODRES_PID" 2>/dev/null
ip netns delete drapod
dra_unprepared() {
  dra_claim dra-unprepare || { cat "$WORK/dra-unprepare.json"; return 1; }
  [ ! -e "$DRA_SPEC" ] || { echo "$DRA_SPEC is still there"; return 1; }
}
check dra-unprepare-removes-spec dra_unprepared
kill "$DRA_DP_PID" "$DRA_API_PID" 2>/dev/null
wait "$DRA_DP_PID" "$DRA_API_PID" 2>/dev/null

# ---------------------------------------------------------------- 3. CNI on real SR-IOV
say "3. hcashare-cni on a real SR-IOV VF ($VF0_PCI)"
# The node's settings (cni/node_config.h): a root-owned /etc/hcashare/cni.json with the state
# dir the NADs below repeat, and no allocation check (the guest's pods are bare namespaces;
# no kubelet allocates VFs to them).
mkdir -p /etc/hcashare
chmod 0755 /etc/hcashare
echo '{"stateDir": "/run/hcashare-cni", "checkAllocation": false}' >/etc/hcashare/cni.json
chmod 0644 /etc/hcashare/cni.json
mkdir -p /run/netns
cni() { # cni VERB NETNS CONF: runs hcashare-cni, its result on stdout
  CNI_COMMAND=$1 CNI_CONTAINERID=e2e-$2 CNI_NETNS=/run/netns/$2 CNI_IFNAME=net1 \
    CNI_PATH=/mnt/host/cni CNI_ARGS="K8S_POD_NAMESPACE=e2e;K8S_POD_NAME=$2" \
    "$BIN/hcashare-cni" <<EOF
$3
EOF
}
netconf() { # netconf EXTRA_JSON_MEMBERS
  echo '{"cniVersion": "1.0.0", "name": "sriov-e2e", "type": "hcashare-cni",
  "deviceID": "'"$VF0_PCI"'", "stateDir": "/run/hcashare-cni", "mtu": 1400,
  "ipam": {"type": "host-local", "subnet": "10.56.0.0/24", "dataDir": "/run/cni-ipam"}'"$1"'}'
}
PF_SETTINGS=', "vlan": 100, "mac": "02:11:22:33:44:55", "spoofchk": "off", "trust": "on", "max_tx_rate": 100'
vf0_line() { ip -d link show "$PF" | grep "vf 0 "; }
echo "VF 0 before: $(vf0_line)"
VF0_BEFORE=$(vf0_line)
ip netns add pod1
ADD=$(cni ADD pod1 "$(netconf "$PF_SETTINGS")")
add_rc=$?
echo "$ADD"
cni_add_applies() {
  [ "$add_rc" = 0 ] || { echo "ADD exit $add_rc"; return 1; }
  line=$(vf0_line)
  echo "VF 0 after ADD: $line"
  for want in "02:11:22:33:44:55" "vlan 100" "spoof checking off" "trust on" "max_tx_rate 100Mbps"; do
    echo "$line" | grep -q "$want" || { echo "PF side lacks '$want'"; return 1; }
  done
  ! ip link show "$VF0" >/dev/null 2>&1 || { echo "$VF0 still in the host"; return 1; }
  pod=$(ip -n pod1 -d link show net1) || { echo "no net1 in the pod"; return 1; }
  echo "$pod"
  echo "$pod" | grep -q "mtu 1400" || { echo "MTU not applied"; return 1; }
  echo "$pod" | grep -q "link/ether 02:11:22:33:44:55" || { echo "MAC not applied"; return 1; }
  echo "$pod" | grep -q "state UP\|,UP" || { echo "not up"; return 1; }
  ip -n pod1 addr show net1 | grep -q "inet 10.56.0." || { echo "no IPAM address"; return 1; }
}
check cni-add-real-vf cni_add_applies
CHECK_CONF=$(netconf "$PF_SETTINGS, \"prevResult\": $ADD")
check cni-check-passes cni CHECK pod1 "$CHECK_CONF"
vf0_restored() {
  ip link show "$VF0" >/dev/null 2>&1 || { echo "$VF0 is not back in the host"; return 1; }
  [ "$(cat "/sys/class/net/$VF0/mtu")" = 1500 ] || { echo "MTU not restored"; return 1; }
  [ "$(cat "/sys/class/net/$VF0/address")" = "$VF0_MAC" ] || { echo "MAC not restored"; return 1; }
  line=$(vf0_line)
  echo "VF 0 after DEL: $line"
  [ "$line" = "$VF0_BEFORE" ] || { echo "PF side differs from before: $VF0_BEFORE"; return 1; }
  [ -z "$(ls /run/hcashare-cni/attachments 2>/dev/null)" ] || { echo "state left behind"; return 1; }
  ! ls /run/cni-ipam/sriov-e2e 2>/dev/null | grep -q '^10\.' || { echo "IPAM lease left"; return 1; }
}
cni DEL pod1 "$(netconf "$PF_SETTINGS")"
del_rc=$?
check cni-del-exit-0 test "$del_rc" = 0
check cni-del-restores-vf-and-pf vf0_restored
# DEL after the pod's netns is gone: the kernel hands the physical VF back to the host
# namespace (under whatever name is free); DEL finds it and restores it.
cni ADD pod1 "$(netconf "$PF_SETTINGS")" >/dev/null
ip netns delete pod1
wait_for 10 sh -c "ls /sys/bus/pci/devices/$VF0_PCI/net/ | grep -q ." ||
  echo "VF netdev not yet back in the host"
echo "after netns deletion: $(ls "/sys/bus/pci/devices/$VF0_PCI/net/")"
cni DEL pod1 "$(netconf "$PF_SETTINGS")"
check cni-del-after-netns-gone-exit-0 test $? = 0
check cni-del-after-netns-gone-restores vf0_restored
# Killed (SIGKILL) at a step of ADD or DEL on the real VF, then DEL: everything restored,
# including PF-side settings the fixtures cannot have.
crash_then_del() { # crash_then_del POINT
  ip netns add pod3
  export HCASHARE_CNI_CRASH_AT=$1
  case $1 in
    add:*) cni ADD pod3 "$(netconf "$PF_SETTINGS")" >/dev/null 2>&1 && { echo "not killed"; return 1; } ;;
    del:*)
      unset HCASHARE_CNI_CRASH_AT
      cni ADD pod3 "$(netconf "$PF_SETTINGS")" >/dev/null 2>&1 || { echo "ADD failed"; return 1; }
      export HCASHARE_CNI_CRASH_AT=$1
      cni DEL pod3 "$(netconf "$PF_SETTINGS")" >/dev/null 2>&1 && { echo "not killed"; return 1; } ;;
  esac
  unset HCASHARE_CNI_CRASH_AT
  cni DEL pod3 "$(netconf "$PF_SETTINGS")" >/dev/null || { echo "DEL after the kill failed"; return 1; }
  ip netns delete pod3
  vf0_restored
}
for point in add:pf-set add:netdev-moved add:ipam-added del:netdev-returned del:pf-restored; do
  check "cni-killed-at-$point-then-del-restores" crash_then_del "$point"
done

# ---------------------------------------------------------------- 3b. the oracle
say "3b. every fault point on the real VF and PF, judged by a snapshot of the node"
# The pod has an eth0 of its own (up, addressed), which no outcome may touch.
# Its IPv6 duplicate address detection is off, so that its link-local address and route
# exist at once rather than a second later (no DAD for the host's end either).
ip netns add pod4
ip netns exec pod4 sh -c 'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad'
ip link add e2epeer type veth peer name eth0 netns pod4
echo 0 >/proc/sys/net/ipv6/conf/e2epeer/accept_dad
ip -n pod4 addr add 10.244.9.5/24 dev eth0
ip -n pod4 link set eth0 up
ip link set e2epeer up
# The kernel applies carrier to routes asynchronously (linkwatch): the clean snapshot is
# taken once the pod's subnet route is there without the linkdown flag and no address is
# tentative.
pod_eth0_settled() {
  ip -n pod4 route | grep "^10.244.9.0/24 dev eth0" | grep -qv linkdown &&
    ! ip -n pod4 addr | grep -q tentative && ! ip addr show e2epeer | grep -q tentative
}
wait_for 10 pod_eth0_settled || echo "pod4's eth0 has not settled: $(ip -n pod4 addr; ip -n pod4 route)"
# Everything a CNI invocation could change that can be observed: links (the PF's line
# carries the real VF table) with addresses and routes in the host and the pod, the state
# dir and the IPAM leases. Left out: link-netnsid (assigned on first observation), address
# lifetimes and DAD flags, unheld lock files, host-local's cursor and lock file.
snapshot() {
  for ns in "" pod4; do
    n=${ns:+-n $ns}
    echo "## netns ${ns:-host}"
    ip $n -d link show | sed 's/ link-netnsid [0-9]*//; s/ altname [^ ]*//'
    ip $n addr show | grep -v valid_lft | sed 's/ tentative//; s/ dadfailed//'
    ip $n route show table all
    ip $n -6 route show table all
  done
  echo "## files"
  find /run/hcashare-cni /run/cni-ipam -type f ! -name '*.lock' ! -name lock \
    ! -name 'last_reserved_ip*' 2>/dev/null | sort | while read -r f; do
    echo "== $f $(cat "$f")"
  done
}
# same_as FILE: the node's snapshot equals FILE (carrier and operstate settle
# asynchronously after a link changes namespace: callers retry with wait_for).
same_as() { snapshot >"$WORK/now.snap" && diff "$1" "$WORK/now.snap" >"$WORK/snap.diff"; }
settled_as() { # settled_as FILE WHAT: the snapshot converges to FILE within 10 s
  wait_for 10 same_as "$1" || { echo "after $2:"; cat "$WORK/snap.diff"; return 1; }
}
ORACLE_SETTINGS="$PF_SETTINGS"', "vlanQoS": 3, "vlanProto": "802.1q"'
ORACLE_CONF=$(netconf "$ORACLE_SETTINGS")
snapshot >"$WORK/clean.snap"
# with_env VAR=VALUE CMD...: CMD (a shell function too) with VAR exported, in a subshell.
with_env() { (
  export "$1"
  shift
  "$@"
); }
crash_list() { with_env HCASHARE_CNI_CRASH_LIST=1 cni "$1" pod4 "$ORACLE_CONF" 2>&1 >/dev/null |
  sed -n 's/^hcashare-cni crash point: //p'; }
# The oracle sees what matters: the PF's VF table and the pod's eth0 are in the snapshot,
# and an attachment makes it differ (a snapshot that saw nothing would always match).
snapshot_sees() { grep -q "vf 0 .*link/ether" "$1" && grep -q "10.244.9.5/24" "$1"; }
check cni-oracle-snapshot-sees-vf-table-and-pod snapshot_sees "$WORK/clean.snap"
ADD_POINTS=$(crash_list ADD)
vlan_qos_applied() { vf0_line | grep -q "vlan 100, qos 3"; }
check cni-pf-vlan-qos-and-proto-applied vlan_qos_applied
differs() { ! same_as "$WORK/clean.snap" || { echo "an attachment left the snapshot unchanged"; return 1; }; }
check cni-oracle-sees-an-attachment differs
DEL_POINTS=$(crash_list DEL)
echo "ADD points: $(echo $ADD_POINTS)"
echo "DEL points: $(echo $DEL_POINTS)"
check cni-oracle-clean-add-del settled_as "$WORK/clean.snap" "a clean ADD and DEL"
gc() { "$BIN/hcashare" cni-gc --state-dir /run/hcashare-cni --cni-path /mnt/host/cni; }
# ADD failed (error return) at each point: the node as before, exactly.
add_errors() {
  for p in $ADD_POINTS; do
    with_env "HCASHARE_CNI_FAIL_AT=$p" cni ADD pod4 "$ORACLE_CONF" >/dev/null 2>&1 &&
      { echo "ADD did not fail at $p"; return 1; }
    settled_as "$WORK/clean.snap" "an ADD failed at $p" || return 1
  done
}
# ADD killed at each point, then the runtime's DEL, then (separately) cni-gc.
add_kills() {
  for p in $ADD_POINTS; do
    for recover in del gc; do
      with_env "HCASHARE_CNI_CRASH_AT=$p" cni ADD pod4 "$ORACLE_CONF" >/dev/null 2>&1 &&
        { echo "ADD not killed at $p"; return 1; }
      if [ $recover = gc ] && [ "$p" != add:done ]; then
        gc >/dev/null || { echo "cni-gc failed after $p"; return 1; }
      else # add:done: complete as far as the node can tell; cni-gc keeps it, DEL releases
        cni DEL pod4 "$ORACLE_CONF" >/dev/null || { echo "DEL failed after $p"; return 1; }
      fi
      settled_as "$WORK/clean.snap" "an ADD killed at $p, then $recover" || return 1
    done
  done
}
# DEL failed or killed at each point: the attachment is kept, and the retried DEL
# restores the node exactly.
del_faults() {
  for p in $DEL_POINTS; do
    for how in FAIL CRASH; do
      cni ADD pod4 "$ORACLE_CONF" >/dev/null || { echo "ADD failed"; return 1; }
      with_env "HCASHARE_CNI_${how}_AT=$p" cni DEL pod4 "$ORACLE_CONF" >/dev/null 2>&1 &&
        { echo "DEL did not stop at $p ($how)"; return 1; }
      [ "$p" = del:state-removed ] || [ -n "$(ls /run/hcashare-cni/attachments)" ] ||
        { echo "a DEL that did not finish at $p forgot the attachment"; return 1; }
      cni DEL pod4 "$ORACLE_CONF" >/dev/null || { echo "retried DEL failed after $p"; return 1; }
      settled_as "$WORK/clean.snap" "a DEL $how at $p, then DEL" || return 1
    done
  done
}
check cni-oracle-add-error-at-every-point add_errors
check cni-oracle-add-killed-at-every-point add_kills
check cni-oracle-del-failed-or-killed-at-every-point del_faults
# PF-side settings igb refuses (it has no ndo_set_vf_link_state, takes no min_tx_rate and
# only 802.1Q): ADD fails naming the setting, after the earlier groups (mac, vlan,
# spoofchk, trust) were applied on the real PF; the rollback leaves the node exactly.
refused_cleanly() { # refused_cleanly EXTRA WORD
  out=$(cni ADD pod4 "$(netconf "$PF_SETTINGS$1")" 2>&1) && { echo "ADD succeeded"; return 1; }
  echo "$out" | grep -q "$2" || { echo "error does not name $2: $out"; return 1; }
  settled_as "$WORK/clean.snap" "a refused $2"
}
check cni-pf-link-state-refused-by-igb-rolled-back refused_cleanly ', "link_state": "enable"' link_state
check cni-pf-min-tx-rate-refused-by-igb-rolled-back refused_cleanly ', "min_tx_rate": 10' rate
# A GUID on an Ethernet VF: refused before anything changes (the kernel would say
# EOPNOTSUPP), naming the reason.
check cni-guid-on-ethernet-vf-refused-unchanged refused_cleanly \
  ', "guid": "02:00:00:00:00:00:00:5a"' "only to InfiniBand VFs"
check cni-pf-vlan-proto-802.1ad-refused-by-igb-rolled-back refused_cleanly \
  ', "vlanProto": "802.1ad"' vlan
# CHECK on the real PF: the VF's vlan changed from the host is drift, named; restored, it
# passes again.
ORACLE_ADD=$(cni ADD pod4 "$ORACLE_CONF")
ORACLE_CHECK=$(netconf "$ORACLE_SETTINGS, \"prevResult\": $ORACLE_ADD")
check_drift() {
  cni CHECK pod4 "$ORACLE_CHECK" >/dev/null || { echo "CHECK failed before any drift"; return 1; }
  ip link set "$PF" vf 0 vlan 200
  out=$(cni CHECK pod4 "$ORACLE_CHECK") && { echo "CHECK passed with vlan 200"; return 1; }
  echo "$out" | grep -q "vlan of VF 0 on $PF" || { echo "drift not named: $out"; return 1; }
  ip link set "$PF" vf 0 vlan 100 qos 3
  cni CHECK pod4 "$ORACLE_CHECK" >/dev/null || { echo "CHECK failed after the restore"; return 1; }
}
check cni-check-detects-pf-vlan-drift check_drift
cni DEL pod4 "$ORACLE_CONF" >/dev/null
check cni-oracle-node-clean-at-the-end settled_as "$WORK/clean.snap" "the last DEL"
ip netns delete pod4
ip link delete e2epeer 2>/dev/null

# ---------------------------------------------------------------- 3c. the VF rebind
# The CNI's GUID rebind (cni/vf_rebind.h) on a real igbvf VF: the unbind really destroys the
# netdev and the bind makes a new one; a bind made to fail the kernel's way (driver_override
# naming another driver: igbvf's bind answers ENODEV) leaves the VF unbound, and ADD's undo
# or DEL binds it again once the cause is gone (tests/e2e/vm/e2e_rebind.cc).
say "3c. the VF rebind on a real VF: unbind, bind, a failed bind"
check cni-rebind-recreates-the-vf-netdev "$BIN/hcashare-e2e-rebind" rebind "$VF0_PCI"
check cni-rebind-failed-bind-recovered-by-undo "$BIN/hcashare-e2e-rebind" undo "$VF0_PCI"
check cni-rebind-failed-bind-recovered-by-del "$BIN/hcashare-e2e-rebind" del "$VF0_PCI"

# ---------------------------------------------------------------- 4. RDMA netns mode
say "4. RDMA netns mode exclusive"
for ns in $(ip netns list | cut -d' ' -f1); do ip netns delete "$ns"; done
# The mode can change only while no other network namespace exists; deleted ones are
# freed asynchronously, so retry for a while.
check rdma-set-exclusive wait_for 15 rdma system set netns exclusive
rdma system show
"$BIN/hcashare" doctor >"$WORK/doctor-excl.txt" 2>&1
grep rdma-netns "$WORK/doctor-excl.txt"
check doctor-reads-exclusive grep -q "^PASS  rdma-netns .*exclusive" "$WORK/doctor-excl.txt"
# The exclusive pool now takes every RoCE device: rxe0 (on VF1) and rxe2.
sed 's/"ifNames": \["veth0", "veth1"\]/"linkTypes": ["ether"]/' "$WORK/dp.json" >"$WORK/dp-excl.json"
DP_CONFIG=$WORK/dp-excl.json
start_dp "$WORK/dp-excl.log"
# Documented: shared pools advertise 0 devices in exclusive mode, exclusive pools work.
if wait_for 15 has_list rdma/rxe_shared "n=0 " &&
  wait_for 5 has_list rdma/rxe_excl "n=2 rxe0:Healthy,rxe2:Healthy"; then
  pass dp-exclusive-mode-behaviour
else
  fail dp-exclusive-mode-behaviour "$(latest rdma/rxe_shared) / $(latest rdma/rxe_excl)"
fi
check dp-logs-why-shared-is-empty grep -q "exclusive netns mode" "$WORK/dp-excl.log"
# rxe0 sits on VF1's netdev: "rdma": "move" cannot move a Soft-RoCE device. The CNI says
# so, and nothing changes: the VF netdev and rxe0 stay in the host, no state is left.
ip netns add pod2
VF1_MTU=$(cat "/sys/class/net/$VF1/mtu")
MOVE=$(cni ADD pod2 "$(netconf ', "rdma": "move"' | sed "s/$VF0_PCI/$VF1_PCI/")")
move_rc=$?
echo "$MOVE"
rxe_move_refused() {
  [ "$move_rc" != 0 ] || { echo "ADD succeeded"; return 1; }
  echo "$MOVE" | grep -q '"code": *1[0-9][0-9]' || { echo "not a plugin error code"; return 1; }
  echo "$MOVE" | grep -q "cannot move RDMA device rxe0" || { echo "error does not name rxe0"; return 1; }
  ip link show "$VF1" >/dev/null || { echo "$VF1 left the host"; return 1; }
  [ "$(cat "/sys/class/net/$VF1/mtu")" = "$VF1_MTU" ] || { echo "MTU changed"; return 1; }
  rdma dev show rxe0 >/dev/null || { echo "rxe0 is gone"; return 1; }
  [ -z "$(ip -n pod2 -o link show | grep -v ' lo:')" ] || { echo "something is in the pod"; return 1; }
  [ -z "$(ls /run/hcashare-cni/attachments 2>/dev/null)" ] || { echo "state left behind"; return 1; }
}
check cni-rdma-move-rxe-refused-cleanly rxe_move_refused

# sriov_numvfs=0 destroys VF1, its netdev, and with it rxe0 (the kernel unregisters an rxe
# whose netdev goes): the PCI and RDMA uevents reach ListAndWatch within 1 s.
within_1s dp-sriov-numvfs-within-1s rdma/rxe_excl "n=1 rxe2:" \
  sh -c "echo 0 >$PF_DIR/sriov_numvfs"
stop_dp

echo "guest tests done: $(grep -c '^PASS' "$RESULTS") passed, $(grep -c '^FAIL' "$RESULTS") failed"
echo "$FAILED" >/mnt/host/guest.rc
exit "$FAILED"
