#!/usr/bin/env bash
# Check bookkeeping shared by the scripts tests/kernel/guest.sh runs in the guest
# (rdma_rxe_test.sh, rdma_probe_test.sh): each check is one line of $GUEST_RESULTS/checks.tsv
# when GUEST_RESULTS is set, which the harness reads back on the host (docs/kernel-guest.md §1).
# Sourced after tests/e2e/lib.sh's e2e_init, whose counters and now_ms it uses.

record() { [[ -z "${GUEST_RESULTS:-}" ]] || printf '%s\t%s\t%s\n' "$1" "$2" "${3//$'\n'/ }" >>"$GUEST_RESULTS/checks.tsv"; }
CHECK=setup
check() { CHECK="$1"; }
ok() { E2E_PASSED=$((E2E_PASSED + 1)); printf 'ok - %s: %s (at %s s)\n' "$CHECK" "$*" "$(cut -d' ' -f1 /proc/uptime)"; record PASS "$CHECK" "$*"; }
fail_later() {
  E2E_FAILED=$((E2E_FAILED + 1)); E2E_FAILURES+=("$CHECK: $*")
  printf 'not ok - %s: %s\n' "$CHECK" "$*"; record FAIL "$CHECK" "${*:0:400}"
}
fail() {
  printf 'not ok - %s: %s\n' "$CHECK" "$*" >&2; record FAIL "$CHECK" "${*:0:400}"
  printf 'FAIL: %s: stopped at the first fatal failure (%d checks passed before it)\n' \
    "$E2E_NAME" "$E2E_PASSED" >&2
  exit 1
}
save() { [[ -z "${GUEST_RESULTS:-}" ]] || printf '%s\n' "$2" >"$GUEST_RESULTS/$1"; }
skip() { printf 'SKIP: %s\n' "$*"; record SKIP "$CHECK" "$*"; exit 77; }
wait_until() { # TIMEOUT_S COMMAND...: polls COMMAND every 0.1 s
  local deadline=$(($(now_ms) + $1 * 1000)); shift
  until "$@"; do (($(now_ms) < deadline)) || return 1; sleep 0.1; done
}
