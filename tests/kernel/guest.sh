#!/usr/bin/env bash
# Boots Debian's own kernel under qemu and runs one test script inside it (docs/kernel-guest.md).
#
#   tests/kernel/guest.sh [--results DIR] SCRIPT [ARG...]
#
# The guest sees this machine's root read-only over virtio-9p, at the same paths, so it runs the
# host's binaries (the agent under test, iproute2, rdma-core's tools) on its own kernel. Only the
# kernel and its modules come from the package `linux-image-amd64` names, fetched with
# `apt-get download` (never installed) and cached, extracted, under $FABRICWATCH_KERNEL_CACHE
# (default: <build>/kernel-cache next to this run's agent, else ~/.cache/fabricwatch-kernel).
# The results folder is shared writable at its own path: SCRIPT writes one line per check to
# $GUEST_RESULTS/checks.tsv ("PASS|FAIL|SKIP<TAB>name<TAB>detail"), and this script prints them.
#
# Exit: 0 every check passed, 1 a check failed or the guest failed (which, is printed), 77 the
# guest cannot be had here (no qemu, no busybox-static, no kernel package), with one line why.
# Environment: FABRICWATCH_GUEST_ACCEL=tcg|kvm (default tcg),
# FABRICWATCH_GUEST_TIMEOUT seconds (default 280), FABRICWATCH_GUEST_KERNEL_DEB a .deb to use
# instead of fetching one, FABRICWATCH_GUEST_QEMU another qemu binary (guest_harness_test.sh).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
results=""
usage() { echo "usage: $0 [--results DIR] SCRIPT [ARG...]" >&2; exit 2; }
if [[ "${1:-}" == --results ]]; then [[ $# -ge 2 ]] || usage; results="$2"; shift 2; fi
[[ $# -ge 1 ]] || usage
[[ -f "$1" ]] || { echo "FAIL: kernel guest: no test script $1"; exit 1; }
script="$(realpath "$1")"; shift
# Paths go into the guest's init script and qemu's -fsdev option: no blank, quote or comma there.
for p in "$script" "${results:-/}" "$PWD"; do
  [[ "$p" != *[[:space:]\"\',]* ]] || { echo "FAIL: kernel guest: a path with a blank, quote or comma: $p"; exit 1; }
done

# Temporary files of this run (the initramfs, a download or extraction under way) go when it ends,
# however it ends.
work="$(mktemp -d)"
dl="" part=""
trap 'rm -rf "$work" ${dl:+"$dl"} ${part:+"$part"}' EXIT

skip() { echo "SKIP: kernel guest: $*"; exit 77; }
fail() { echo "FAIL: kernel guest: $*"; exit 1; }

qemu="${FABRICWATCH_GUEST_QEMU:-qemu-system-x86_64}"
command -v "$qemu" >/dev/null || skip "$qemu not found (Debian package qemu-system-x86)"
busybox=/bin/busybox
[[ -x $busybox ]] && ! ldd "$busybox" >/dev/null 2>&1 ||
  skip "no static /bin/busybox for the initramfs (Debian package busybox-static)"
command -v depmod >/dev/null || skip "depmod not found (Debian package kmod)"

# ------------------------------------------------------------------ the kernel package, cached
cache="${FABRICWATCH_KERNEL_CACHE:-${HOME:-/root}/.cache/fabricwatch-kernel}"
mkdir -p "$cache" || skip "cannot create the kernel cache $cache"

# One fetch and extraction at a time per cache (two test trees may share one).
exec 9>"$cache/lock" && flock -w 60 9 || skip "the kernel cache $cache stays locked by another run"
# What a killed run left behind (the lock is ours: no other run is using them).
rm -rf "$cache"/download.* "$cache"/extract.*
deb="${FABRICWATCH_GUEST_KERNEL_DEB:-}"
if [[ -z "$deb" ]]; then
  # linux-image-amd64 is a metapackage; its one dependency is the versioned image package.
  pkg="$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')"
  [[ -n "$pkg" ]] || skip "apt knows no linux-image-amd64 (run apt-get update)"
  kver="${pkg#linux-image-}"
  if [[ ! -f "$cache/$kver/ready" ]]; then
    dl="$(mktemp -d "$cache/download.XXXXXX")"
    # As root, apt's sandbox user cannot write to a private temp dir; download as the caller.
    if ! (cd "$dl" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg" >"$dl/apt.log" 2>&1); then
      reason="$(tail -1 "$dl/apt.log")"; rm -rf "$dl"
      skip "apt-get download $pkg failed: $reason"
    fi
    deb="$(ls "$dl"/*.deb)"
  fi
else
  [[ -f "$deb" ]] || fail "FABRICWATCH_GUEST_KERNEL_DEB=$deb: no such file"
  pkg="$(dpkg-deb -f "$deb" Package 2>/dev/null)"
  [[ "$pkg" == linux-image-[0-9]* ]] ||
    fail "FABRICWATCH_GUEST_KERNEL_DEB=$deb is not a versioned kernel image package (Package: ${pkg:-none})"
  kver="${pkg#linux-image-}"
fi

kdir="$cache/$kver"
if [[ ! -f "$kdir/ready" ]]; then
  # Extracted beside, renamed into place when complete: an interrupted run leaves no half tree
  # that a later one would take for ready.
  part="$(mktemp -d "$cache/extract.XXXXXX")"
  dpkg-deb -x "$deb" "$part" || { rm -rf "$part"; fail "dpkg-deb -x $deb failed"; }
  [[ -n "$dl" ]] && rm -rf "$dl" && dl=""
  depmod -b "$part" "$kver" || { rm -rf "$part"; fail "depmod for $kver failed"; }
  rm -rf "${kdir:?}" && mkdir -p "$kdir" && mv "$part" "$kdir/x" && touch "$kdir/ready"
  part=""
fi
exec 9>&-
vmlinuz="$kdir/x/boot/vmlinuz-$kver"
moddir="$kdir/x/lib/modules"
[[ -f "$vmlinuz" ]] || fail "$vmlinuz missing from the package"

# ------------------------------------------------------------------ the initramfs
if [[ -z "$results" ]]; then results="$work/results"; fi
mkdir -p "$results" && results="$(realpath "$results")"
rm -f "$results"/{checks.tsv,done,booted,script.log,serial.log,run.sh}

mkdir -p "$work/initrd/bin" "$work/initrd/modules" "$work/initrd/"{proc,sys,dev,newroot}
cp "$busybox" "$work/initrd/bin/busybox"
# What mounting 9p and an overlay on it needs, in load order (modprobe --show-depends against the package's own tree).
: >"$work/initrd/modules/order"
for m in virtio_pci 9pnet_virtio 9p overlay; do
  modprobe -d "$kdir/x" -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}' |
    while read -r ko; do
      base="$(basename "$ko")"
      # busybox insmod takes plain .ko files; newer Debian kernels compress theirs.
      case "$base" in
        *.ko.xz) base="${base%.xz}" unpack=(xz -dc) ;;
        *.ko.zst) base="${base%.zst}" unpack=(zstd -dcq) ;;
        *) unpack=(cat) ;;
      esac
      grep -qx "$base" "$work/initrd/modules/order" && continue
      "${unpack[@]}" "$ko" >"$work/initrd/modules/$base" && echo "$base" >>"$work/initrd/modules/order"
    done
done
[[ -s "$work/initrd/modules/order" ]] || fail "no virtio/9p modules found in the $kver package"

cat >"$work/initrd/init" <<EOF
#!/bin/busybox sh
B=/bin/busybox
\$B mount -t proc proc /proc && \$B mount -t sysfs sys /sys && \$B mount -t devtmpfs dev /dev
for m in \$(\$B cat /modules/order); do \$B insmod /modules/\$m || echo "guest: insmod \$m failed"; done
o=trans=virtio,version=9p2000.L,msize=512000
# The host root, read-only, under a tmpfs overlay: the guest may write anywhere (/tmp, /run,
# /lib/modules for the guest kernel's modules) and the host sees none of it.
\$B mkdir -p /lower /rw && \$B mount -t tmpfs tmpfs /rw && \$B mkdir -p /rw/upper /rw/work
\$B mount -t 9p -o \$o,ro hostroot /lower || { echo "guest: cannot mount the host root"; \$B poweroff -f; }
\$B mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
  { echo "guest: cannot put an overlay on the host root"; \$B poweroff -f; }
\$B mkdir -p /newroot/lib/modules /newroot$results
\$B mount -t 9p -o \$o,ro modules /newroot/lib/modules || echo "guest: cannot mount the modules"
\$B mount -t 9p -o \$o results /newroot$results || { echo "guest: cannot mount the results share"; \$B poweroff -f; }
\$B mount --move /proc /newroot/proc; \$B mount --move /sys /newroot/sys; \$B mount --move /dev /newroot/dev
\$B mkdir -p /newroot/dev/pts /newroot/dev/shm
\$B mount -t devpts devpts /newroot/dev/pts; \$B mount -t tmpfs tmpfs /newroot/dev/shm
\$B ln -sf /proc/self/fd /newroot/dev/fd
\$B ln -sf /proc/self/fd/0 /newroot/dev/stdin; \$B ln -sf /proc/self/fd/1 /newroot/dev/stdout
\$B ln -sf /proc/self/fd/2 /newroot/dev/stderr
\$B mount -t debugfs debugfs /newroot/sys/kernel/debug 2>/dev/null
\$B cat /newroot/proc/uptime > /newroot$results/booted
# switch_root, not chroot: the kernel's own helpers (modprobe for "crypto-crc32", which rdma_rxe
# asks for) run in the root of PID 1.
exec \$B switch_root /newroot /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  TERM=dumb GUEST_RESULTS=$results /bin/bash $results/run.sh
EOF
chmod +x "$work/initrd/init"
{
  printf 'cd %q || exit 1\n' "$PWD"
  printf 'exec > %q 2>&1\n' "$results/script.log"
  printf '/bin/bash %q' "$script"; printf ' %q' "$@"; printf '\n'
  printf 'echo $? > %q\n' "$results/done"
  printf 'sync; exec /bin/busybox poweroff -f\n'
} >"$results/run.sh"
(cd "$work/initrd" && find . | $busybox cpio -o -H newc >"$work/initrd.cpio" 2>/dev/null) ||
  fail "cannot build the initramfs"

# ------------------------------------------------------------------ boot
# TCG by default: on our machines /dev/kvm exists but is nested, and a guest under it hung before
# its first console line (docs/kernel-guest.md); TCG boots to user space in about 4 s there.
accel="${FABRICWATCH_GUEST_ACCEL:-tcg}"
timeout_s="${FABRICWATCH_GUEST_TIMEOUT:-280}"
fs() { echo "-fsdev local,id=$1,path=$2,security_model=none$3 -device virtio-9p-pci,fsdev=$1,mount_tag=$1"; }
boot() {
  # Under KVM the guest gets the host's CPU model, less IA32_ARCH_CAPABILITIES, which a nested
  # KVM may refuse to set ("failed to set MSR 0x10a"); TCG emulates its most capable model.
  local cpu=max
  [[ $1 == kvm ]] && cpu=host,-arch-capabilities
  # shellcheck disable=SC2046
  timeout -k 5 "$timeout_s" "$qemu" -accel "$1" -m 2048 -smp 2 -cpu "$cpu" \
    -display none -monitor none -serial "file:$results/serial.log" -nic none -no-reboot \
    -kernel "$vmlinuz" -initrd "$work/initrd.cpio" \
    -append "console=ttyS0 panic=-1 loglevel=${FABRICWATCH_GUEST_LOGLEVEL:-4} net.ifnames=0" \
    $(fs hostroot / ",readonly=on,multidevs=remap") $(fs modules "$moddir" ",readonly=on") \
    $(fs results "$results" "") >"$work/qemu.log" 2>&1
}
start=$(date +%s.%N)
boot "$accel"
rc=$?
if [[ $accel == kvm && $rc != 0 && $rc != 124 && $rc != 137 && ! -f "$results/booted" ]]; then
  echo "kernel guest: qemu with KVM exited $rc ($(grep -m1 error "$work/qemu.log")); emulating (tcg)"
  accel=tcg start=$(date +%s.%N)
  boot tcg
  rc=$?
fi
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')

if [[ $rc == 124 || $rc == 137 ]]; then
  echo "FAIL: kernel guest: no end within ${timeout_s} s (accel $accel); last console lines:"
  tail -15 "$results/serial.log" 2>/dev/null | sed 's/^/  | /'
  [[ -f "$results/booted" ]] && { echo "  last lines of the test script:"; tail -15 "$results/script.log" | sed 's/^/  | /'; }
  exit 1
fi
if [[ $rc != 0 ]]; then
  echo "FAIL: kernel guest: qemu exited $rc:"; sed 's/^/  | /' "$work/qemu.log" | tail -10; exit 1
fi
[[ -f "$results/booted" ]] || { echo "FAIL: kernel guest: the guest never reached its test script; console:"
  tail -20 "$results/serial.log" | sed 's/^/  | /'; exit 1; }
echo "kernel guest: Debian kernel $kver, accel $accel, userspace at $(cut -d' ' -f1 "$results/booted") s" \
  "of guest uptime, ${wall} s wall in all"
[[ -f "$results/checks.tsv" ]] && awk -F'\t' '{printf "%-4s %s%s\n", $1, $2, ($3 == "" ? "" : ": " $3)}' "$results/checks.tsv"
if [[ ! -f "$results/done" ]]; then
  echo "FAIL: kernel guest: the test script did not finish; its last lines:"
  tail -20 "$results/script.log" | sed 's/^/  | /'; exit 1
fi
passed=$(grep -c '^PASS' "$results/checks.tsv" 2>/dev/null); failed=$(grep -c '^FAIL' "$results/checks.tsv" 2>/dev/null)
echo "kernel guest: ${passed:-0} passed, ${failed:-0} failed, script exit $(cat "$results/done")"
[[ "$(cat "$results/done")" == 0 && "${failed:-0}" == 0 && "${passed:-0}" -gt 0 ]] || {
  echo "  last lines of the test script:"; tail -20 "$results/script.log" | sed 's/^/  | /'; exit 1; }
exit 0
