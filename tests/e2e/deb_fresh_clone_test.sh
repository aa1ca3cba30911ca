#!/usr/bin/env bash
# `make deb` as the README "Install" section tells a new user to run it: in a fresh clone of
# the committed tree, with nothing built before (issue 39 item 10: it built only the agent, so
# cpack could not find deploy/fabricwatch.1.gz and the README's install path failed; the package
# test passed because it packaged the tree `make test` had built). The .deb must come out with
# the binary and the manual page in it; deb_package_test then checks what installing does.
#
# A Release build of the agent (about 5-10 minutes on 2 cores). Needs git and a source tree that
# is a git repository; exits 77 otherwise. Clones HEAD: uncommitted changes are not in it.
# Usage: bash tests/e2e/deb_fresh_clone_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init deb_fresh_clone_test "$@"

for tool in git make cmake cpack dpkg-deb; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
# safe.directory: CI's checkout may belong to another user than the root running the tests, and
# git would refuse it ("dubious ownership"), which must not turn into a silent skip.
git_src() { git -c safe.directory='*' "$@"; }
git_src -C "$FABRICWATCH_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1 ||
  skip "$FABRICWATCH_SOURCE_DIR is not a git repository (nothing to clone)"

clone="$E2E_TMP/fabricwatch"
git_src clone --quiet --no-hardlinks "$FABRICWATCH_SOURCE_DIR" "$clone" || fail "git clone failed"
revision="$(git -C "$clone" rev-parse --short HEAD)"
[[ ! -e "$clone/build-deb" ]] || fail "the fresh clone already has build-deb/"
ok "fresh clone of $revision"

start="$(now_ms)"
if ! make -C "$clone" deb >"$E2E_TMP/make-deb.log" 2>&1; then
  fail "make deb failed in a fresh clone: $(tail -n 15 "$E2E_TMP/make-deb.log")"
fi
elapsed=$((($(now_ms) - start) / 1000))
deb="$(find "$clone/build-deb" -maxdepth 1 -name 'fabricwatch_*.deb')"
[[ -n "$deb" && -f "$deb" ]] || fail "make deb made no build-deb/fabricwatch_*.deb: $(tail -n 5 "$E2E_TMP/make-deb.log")"
ok "make deb in a fresh clone: $(basename "$deb") in ${elapsed} s"

contents="$(dpkg-deb -c "$deb")"
for path in ./usr/bin/fabricwatch ./usr/share/man/man1/fabricwatch.1.gz \
  ./etc/fabricwatch/fabricwatch.yml; do
  grep -qF -- " $path" <<<"$contents" || fail "the package has no $path"
done
ok "the package holds the binary, the manual page and the configuration"
dpkg-deb -x "$deb" "$E2E_TMP/root"
version_out="$("$E2E_TMP/root/usr/bin/fabricwatch" --version 2>&1)" ||
  fail "the packaged binary does not run: $version_out"
grep -q "$revision" <<<"$version_out" || fail "--version does not name $revision: $version_out"
ok "the packaged binary runs and names the clone's revision"
finish
