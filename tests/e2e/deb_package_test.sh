#!/usr/bin/env bash
# The Debian package (deploy/CMakeLists.txt, deploy/debian/): cpack packages the tree that is
# already built (no second build), and the package installs on this machine with dpkg, puts every
# file where the README "Install" section says, runs, keeps an edited conffile on reinstall,
# removes (configuration and state stay) and purges (nothing stays). lintian's findings are
# counted and listed, not judged: the project has no licence yet for debian/copyright.
#
# Needs root, dpkg and cpack, and a machine where no fabricwatch package or /etc/fabricwatch
# exists (it would be replaced, then purged); otherwise exits 77 (skipped). A trap purges the
# package whatever way the test ends.
# Usage: FABRICWATCH_BUILD_DIR=<build tree> bash tests/e2e/deb_package_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init deb_package_test "$@"

[[ "$(id -u)" == 0 ]] || skip "needs root (dpkg -i)"
for tool in dpkg dpkg-deb cpack readelf; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
BUILD_DIR="${FABRICWATCH_BUILD_DIR:-$(dirname "$(dirname "$FABRICWATCH_BIN")")}"
[[ -f "$BUILD_DIR/CPackConfig.cmake" ]] || fail "no $BUILD_DIR/CPackConfig.cmake (configure first)"
if [[ "$(dpkg-query -W -f='${db:Status-Status}' fabricwatch 2>/dev/null || true)" != "" &&
  "$(dpkg-query -W -f='${db:Status-Status}' fabricwatch)" != not-installed ]]; then
  skip "a fabricwatch package is installed here; this test would replace and purge it"
fi
for path in /etc/fabricwatch /etc/default/fabricwatch /var/lib/fabricwatch; do
  [[ ! -e "$path" && ! -L "$path" ]] || skip "$path exists; the purge would delete it"
done
private_existed=no
[[ -d /var/lib/private ]] && private_existed=yes
export DEBIAN_FRONTEND=noninteractive

# 1. Package the existing tree. cpack runs the install rules into its own staging directory.
start="$(now_ms)"
if ! out="$(cpack --config "$BUILD_DIR/CPackConfig.cmake" -B "$E2E_TMP/pkg" 2>&1)"; then
  fail "cpack: $out"
fi
deb="$(find "$E2E_TMP/pkg" -maxdepth 1 -name 'fabricwatch_*.deb')"
[[ -f "$deb" ]] || fail "cpack made no fabricwatch_*.deb: $out"
ok "cpack packaged the built tree in $(($(now_ms) - start)) ms: $(basename "$deb")"

depends="$(dpkg-deb -f "$deb" Depends)"
for lib in libc6 libibverbs1 libssl3; do
  grep -qw "$lib" <<<"$depends" || fail "Depends lacks $lib (dpkg-shlibdeps): $depends"
done
# Loaded on first use, not linked (docs/libraries.md): not in Depends, named as a weaker relation.
for lib in libcurl4 libibmad5 lldpd; do
  ! grep -qw "$lib" <<<"$depends" || fail "Depends names $lib, which is loaded on demand: $depends"
done
# Recommends, which apt installs by default: a plain `apt install` still gets lldpd's
# neighbours and the kubelet client.
recommends="$(dpkg-deb -f "$deb" Recommends)"
for lib in libcurl4 libibmad5 lldpd; do
  grep -qw "$lib" <<<"$recommends" || fail "Recommends lacks $lib: $recommends"
done
ok "Depends comes from the linked libraries: $depends; Recommends: $recommends"

contents="$(dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|')"
if grep -E '(^|/)tests?(/|$)|_test|fabricsim|fabricbench|\.test\.yml' <<<"$contents"; then
  fail "test files are in the package (above)"
fi
dpkg-deb --ctrl-tarfile "$deb" | tar -x -O ./conffiles >"$E2E_TMP/conffiles"
[[ "$(sort "$E2E_TMP/conffiles" | xargs)" == "/etc/default/fabricwatch /etc/fabricwatch/fabricwatch.yml" ]] ||
  fail "conffiles: $(xargs <"$E2E_TMP/conffiles")"
ok "no test file packaged; conffiles: $(xargs <"$E2E_TMP/conffiles")"

if command -v lintian >/dev/null; then
  # Informational (see the header): the count and the tags, one per line.
  findings="$(lintian --no-cfg "$deb" 2>/dev/null | grep -E '^[EW]: ' || true)"
  log "lintian: $(grep -c '^E: ' <<<"$findings" || true) errors, $(grep -c '^W: ' <<<"$findings" || true) warnings"
  [[ -z "$findings" ]] || log "$findings"
  # The manual page is ours to keep right (deploy/make-manpage.sh), unlike the licence.
  if grep -E 'no-manual-page|manpage|groff' <<<"$findings"; then
    fail "lintian finds fault with the manual page (above)"
  fi
else
  log "lintian is not installed (tools/install-deps.sh test): not run"
fi

# 2. Install. From here on the trap purges.
on_cleanup 'dpkg --purge fabricwatch >/dev/null 2>&1'
if ! out="$(dpkg -i "$deb" </dev/null 2>&1)"; then
  fail "dpkg -i: $out"
fi
ok "dpkg -i installed it"

want_version="$("$FABRICWATCH_BIN" --version)"
[[ "$(/usr/bin/fabricwatch --version)" == "$want_version" ]] ||
  fail "/usr/bin/fabricwatch --version: $(/usr/bin/fabricwatch --version), built: $want_version"
grep -q '\.debug_info' <<<"$(readelf -S /usr/bin/fabricwatch)" && fail "/usr/bin/fabricwatch is not stripped"
ok "/usr/bin/fabricwatch runs ($want_version) and is stripped"

for path in /usr/lib/systemd/system/fabricwatch.service /usr/lib/tmpfiles.d/fabricwatch.conf \
  /etc/fabricwatch/fabricwatch.yml \
  /etc/default/fabricwatch /usr/share/doc/fabricwatch/README.md /usr/share/doc/fabricwatch/changelog.gz \
  /usr/share/fabricwatch/alerts/fabricwatch-anomaly.rules.yml \
  /usr/share/fabricwatch/alerts/alertmanager.example.yml \
  /usr/share/fabricwatch/dashboards/node-fabric-detail.json \
  /usr/share/fabricwatch/runbooks/README.md /usr/share/fabricwatch/kubernetes/rbac.yaml; do
  [[ -f "$path" ]] || fail "$path is not installed"
done
for hook in slurm-drain kubernetes-drain webhook; do
  [[ -x "/usr/lib/fabricwatch/hooks/$hook" ]] || fail "/usr/lib/fabricwatch/hooks/$hook is not executable"
done
ok "unit, configuration, hooks, alerts, dashboards, runbooks and README are where README says"

# The probe's lock (docs/probe.md §3): postinst made it from the tmpfiles.d entry, root's, 0644.
if command -v systemd-tmpfiles >/dev/null; then
  [[ "$(stat -c '%U %a %F' /run/fabricwatch-probe.lock 2>&1)" == "root 644 regular empty file" ]] ||
    fail "/run/fabricwatch-probe.lock: $(stat -c '%U %a %F' /run/fabricwatch-probe.lock 2>&1)"
  ok "postinst made the probe's lock /run/fabricwatch-probe.lock, root's, 0644"
fi

# The manual page, made from this binary's --help (deploy/make-manpage.sh). Read from the
# package: a minimal Debian image may keep dpkg from installing /usr/share/man (path-exclude).
man_page=/usr/share/man/man1/fabricwatch.1.gz
grep -qx "$man_page" <<<"$contents" || fail "$man_page is not in the package"
man_text="$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ".$man_page" | gzip -dc)"
for want in '^\.TH FABRICWATCH "1"' 'web\.listen\\-address' '^\.SH FILES' '/etc/default/fabricwatch'; do
  grep -q -- "$want" <<<"$man_text" || fail "$man_page lacks $want"
done
ok "the package has $man_page: the options of --help and the files"

# The state directory in systemd's DynamicUser= layout, root's until systemd hands it over
# (deploy/debian/postinst says why).
[[ "$(readlink /var/lib/fabricwatch)" == private/fabricwatch ]] ||
  fail "/var/lib/fabricwatch is not a link to private/fabricwatch"
[[ "$(stat -c '%U:%G %a' /var/lib/private/fabricwatch)" == "root:root 750" ]] ||
  fail "/var/lib/private/fabricwatch: $(stat -c '%U:%G %a' /var/lib/private/fabricwatch)"
ok "postinst made the state directory /var/lib/fabricwatch -> private/fabricwatch (root 0750)"

# The configuration as shipped, with the unit's flags and ARGS from /etc/default/fabricwatch.
if ! out="$(
  # shellcheck disable=SC1091  # the installed file
  . /etc/default/fabricwatch
  # shellcheck disable=SC2086  # ARGS is split at spaces, as systemd's $ARGS is
  /usr/bin/fabricwatch --state.file=/var/lib/fabricwatch/state.json $ARGS --config.check 2>&1
)"; then
  fail "--config.check with ARGS of /etc/default/fabricwatch: $out"
fi
grep -q 'file /etc/fabricwatch/fabricwatch.yml' <<<"$out" || fail "ARGS does not name the config: $out"
grep -q '^hook ' <<<"$out" && fail "the shipped configuration runs a hook: $out"
ok "the unit's command line with /etc/default/fabricwatch passes --config.check, no hook"

# Every commented-out setting (a line "#key..." or "#  key...") is a valid configuration when
# uncommented, so the defaults the file documents are real keys (the example hook included).
grep -E '^#([^ #!]|  )' /etc/fabricwatch/fabricwatch.yml | sed 's/^#//' >"$E2E_TMP/uncommented.yml"
[[ -s "$E2E_TMP/uncommented.yml" ]] || fail "no commented setting in fabricwatch.yml"
if ! out="$(/usr/bin/fabricwatch --config.check --config.file="$E2E_TMP/uncommented.yml" 2>&1)"; then
  fail "the uncommented fabricwatch.yml fails --config.check: $out"
fi
ok "every commented setting of fabricwatch.yml is valid when uncommented"

# 3. Reinstall over an edited conffile: dpkg keeps the edit, postinst runs again.
echo '# edited by deb_package_test' >>/etc/default/fabricwatch
if ! out="$(dpkg -i "$deb" </dev/null 2>&1)"; then
  fail "dpkg -i over the installed package: $out"
fi
grep -q 'edited by deb_package_test' /etc/default/fabricwatch || fail "reinstall lost the edit"
ok "a reinstall keeps an edited conffile"

# 4. Remove: the program goes, configuration and state stay.
touch /var/lib/fabricwatch/state.json
if ! out="$(dpkg -r fabricwatch </dev/null 2>&1)"; then
  fail "dpkg -r: $out"
fi
[[ ! -e /usr/bin/fabricwatch && ! -e /usr/lib/systemd/system/fabricwatch.service ]] ||
  fail "dpkg -r left the binary or the unit"
[[ -f /etc/fabricwatch/fabricwatch.yml && -f /var/lib/fabricwatch/state.json ]] ||
  fail "dpkg -r removed the configuration or the state"
ok "dpkg -r removed the program and kept configuration and state"

# 5. Purge: nothing stays.
if ! out="$(dpkg --purge fabricwatch </dev/null 2>&1)"; then
  fail "dpkg --purge: $out"
fi
left=()
for path in /etc/fabricwatch /etc/default/fabricwatch /var/lib/fabricwatch \
  /var/lib/private/fabricwatch /usr/lib/fabricwatch /usr/share/fabricwatch \
  /usr/share/doc/fabricwatch /usr/bin/fabricwatch /usr/lib/systemd/system/fabricwatch.service \
  /usr/lib/tmpfiles.d/fabricwatch.conf /run/fabricwatch-probe.lock \
  /etc/systemd/system/fabricwatch.service; do
  [[ -e "$path" || -L "$path" ]] && left+=("$path")
done
[[ "$private_existed" == yes || ! -e /var/lib/private ]] || left+=(/var/lib/private)
((${#left[@]} == 0)) || fail "dpkg --purge left: ${left[*]}"
[[ "$(dpkg-query -W -f='${db:Status-Status}' fabricwatch 2>/dev/null || true)" =~ ^(not-installed)?$ ]] ||
  fail "dpkg still knows fabricwatch: $(dpkg-query -W -f='${db:Status-Status}' fabricwatch)"
ok "dpkg --purge removed configuration, state and every file"

finish
