#!/usr/bin/env bash
# How tests/kernel/guest.sh fails (docs/kernel-guest.md §1): each broken part is named, with exit
# 77 where the guest cannot be had and 1 where it broke, and nothing hangs. qemu is replaced by
# small scripts (FABRICWATCH_GUEST_QEMU); the kernel package is the real one, from the cache the
# guest test fills (FABRICWATCH_KERNEL_CACHE), so this costs seconds.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/kernel/guest_harness_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
e2e_init guest_harness_test "$@"
GUEST="$FABRICWATCH_SOURCE_DIR/tests/kernel/guest.sh"
SCRIPT="$E2E_TMP/never-run.sh"
echo 'echo "PASS	ran" >>"$GUEST_RESULTS/checks.tsv"' >"$SCRIPT"

# run_guest EXPECTED_EXIT WORDS ENV...: runs guest.sh with ENV, wants that exit and WORDS in its output.
run_guest() {
  local want_rc="$1" words="$2" out rc=0 t0
  shift 2
  t0=$(now_ms)
  out="$(env "$@" timeout 60 bash "$GUEST" --results "$E2E_TMP/results" "$SCRIPT" 2>&1)" || rc=$?
  LAST_OUT="$out"
  [[ $rc == 124 ]] && fail "guest.sh hung (killed after 60 s) with $*: $out"
  [[ $rc == "$want_rc" && "$out" == *"$words"* ]] ||
    fail "with $*: want exit $want_rc and '$words', got exit $rc: $out"
  ok "$(head -1 <<<"$out" | cut -c1-150) (exit $rc, $(($(now_ms) - t0)) ms)"
}

run_guest 77 "not found" FABRICWATCH_GUEST_QEMU=/nonexistent/qemu-system-x86_64
run_guest 1 "no such file" FABRICWATCH_GUEST_KERNEL_DEB=/nonexistent/linux-image.deb
mkdir -p "$E2E_TMP/notkernel/DEBIAN"
printf 'Package: fabricwatch-not-a-kernel\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n' \
  >"$E2E_TMP/notkernel/DEBIAN/control"
dpkg-deb -b "$E2E_TMP/notkernel" "$E2E_TMP/notkernel.deb" >/dev/null
run_guest 1 "not a versioned kernel image package" FABRICWATCH_GUEST_KERNEL_DEB="$E2E_TMP/notkernel.deb"

# From here the real kernel package is needed (fetched once into the cache).
probe="$(FABRICWATCH_GUEST_QEMU=/bin/false timeout 120 bash "$GUEST" --results "$E2E_TMP/results" "$SCRIPT" 2>&1)" || true
[[ "$probe" == SKIP:* ]] && skip "no kernel package: $probe"

FAKE="$E2E_TMP/fake-qemu"
printf '#!/bin/sh\necho "qemu-system-x86_64: -fsdev local: cannot open / (a made-up failure)" >&2\nexit 1\n' >"$FAKE-fails"
printf '#!/bin/sh\nexec sleep 100\n' >"$FAKE-hangs"
printf '#!/bin/sh\nexit 0\n' >"$FAKE-no-boot"
chmod +x "$FAKE"-*
run_guest 1 "qemu exited 1" FABRICWATCH_GUEST_QEMU="$FAKE-fails"
[[ "$LAST_OUT" == *"a made-up failure"* ]] && ok "qemu's own error line is shown" ||
  fail "qemu's error line is not shown: $LAST_OUT"
run_guest 1 "no end within 3 s" FABRICWATCH_GUEST_QEMU="$FAKE-hangs" FABRICWATCH_GUEST_TIMEOUT=3
run_guest 1 "never reached its test script" FABRICWATCH_GUEST_QEMU="$FAKE-no-boot"
finish
