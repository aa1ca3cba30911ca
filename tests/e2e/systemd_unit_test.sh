#!/usr/bin/env bash
# deploy/fabricwatch.service: `systemd-analyze verify` accepts it (with ExecStart pointed at the
# built binary), its offline security exposure stays low, it runs as an unprivileged user with
# exactly the capabilities the README "Privileges" table names, writes only its StateDirectory
# (where --state.file lives), and reloads with SIGHUP.
#
# Needs systemd-analyze (Debian package systemd); otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/systemd_unit_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init systemd_unit_test "$@"

command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed (package systemd)"
UNIT_SRC="$FABRICWATCH_SOURCE_DIR/deploy/fabricwatch.service"
README="$FABRICWATCH_SOURCE_DIR/README.md"
[[ -f "$UNIT_SRC" ]] || fail "no $UNIT_SRC"

# The unit as shipped, with the binary where this build has it.
UNIT="$E2E_TMP/fabricwatch.service"
sed "s|/usr/bin/fabricwatch|$FABRICWATCH_BIN|" "$UNIT_SRC" >"$UNIT"
if ! out="$(systemd-analyze verify "$UNIT" 2>&1)"; then
  fail "systemd-analyze verify: $out"
fi
[[ -z "$out" ]] || fail "systemd-analyze verify warns: $out"
ok "systemd-analyze verify accepts the unit"

# Exposure 0 (locked down) .. 100 (unrestricted) on systemd's scale; the unit scores about 26.
if ! out="$(systemd-analyze security --offline=yes --threshold=30 "$UNIT" 2>&1)"; then
  fail "systemd-analyze security: exposure above 3.0:
$(tail -n 3 <<<"$out")"
fi
ok "offline security exposure: $(grep -o 'exposure level for [^:]*: .*' <<<"$out" | sed 's/.*: //')"

key() { sed -n "s/^$1=//p" "$UNIT_SRC"; }
[[ "$(key DynamicUser)" == yes || -n "$(key User)" ]] || fail "neither DynamicUser=yes nor User="
[[ "$(key NoNewPrivileges)" == yes ]] || fail "NoNewPrivileges is not yes"
[[ "$(key ProtectSystem)" == strict ]] || fail "ProtectSystem is not strict"
ok "unprivileged user, no new privileges, read-only system"

# Capabilities: ambient == bounding == the capabilities of the README "Privileges" table that
# the agent uses today.
ambient="$(key AmbientCapabilities | tr ' ' '\n' | sort -u | xargs)"
bounding="$(key CapabilityBoundingSet | tr ' ' '\n' | sort -u | xargs)"
documented="$(sed -n '/^## Privileges/,/^## /p' "$README" |
  awk -F'|' '/^\| `CAP_/ && $3 ~ /^ *yes *$/ { gsub(/[` ]/, "", $2); print $2 }' | sort -u | xargs)"
[[ -n "$documented" ]] || fail "README \"Privileges\" lists no capability in use"
[[ "$ambient" == "$documented" ]] ||
  fail "AmbientCapabilities=$ambient, README \"Privileges\" needs: $documented"
[[ "$bounding" == "$documented" ]] ||
  fail "CapabilityBoundingSet=$bounding, README \"Privileges\" needs: $documented"
ok "ambient and bounding capabilities are exactly the documented ones: $documented"

state_dir="$(key StateDirectory)"
[[ "$state_dir" == fabricwatch ]] || fail "StateDirectory=$state_dir, want fabricwatch"
grep -q -- "--state.file=/var/lib/$state_dir/" <<<"$(key ExecStart)" ||
  fail "ExecStart does not keep --state.file under /var/lib/$state_dir: $(key ExecStart)"
ok "--state.file lives in StateDirectory (/var/lib/$state_dir), the only writable path"

# The package's layout (deploy/CMakeLists.txt): the binary in /usr/bin, flags from the optional
# /etc/default/fabricwatch.
[[ "$(key ExecStart)" == /usr/bin/fabricwatch\ * ]] || fail "ExecStart is not /usr/bin/fabricwatch"
# shellcheck disable=SC2016  # $ARGS is systemd's, literally
[[ "$(key ExecStart)" == *' $ARGS' ]] || fail "ExecStart does not end in \$ARGS"
[[ "$(key EnvironmentFile)" == -/etc/default/fabricwatch ]] ||
  fail "EnvironmentFile is not -/etc/default/fabricwatch"
ok "ExecStart runs /usr/bin/fabricwatch with \$ARGS from /etc/default/fabricwatch"

# shellcheck disable=SC2016  # $MAINPID is systemd's, literally
[[ "$(key ExecReload)" == '/bin/kill -HUP $MAINPID' ]] || fail "ExecReload is not kill -HUP"
families="$(key RestrictAddressFamilies)"
for family in AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_PACKET; do
  grep -qw "$family" <<<"$families" || fail "RestrictAddressFamilies lacks $family"
done
grep -q '^SystemCallFilter=@system-service$' "$UNIT_SRC" || fail "no SystemCallFilter=@system-service"
ok "reload by SIGHUP, address families and system calls restricted"

finish
