#!/usr/bin/env bash
# Runs the compile-fail cases of checked_labels.cc (ctest compile_fail.checked_labels): case 0
# must compile; each other case must fail to compile, with the message its `// expect:` names, so
# a case cannot pass by failing for another reason (a missing include).
# Usage: check_compile_fail.sh <c++ compiler> <source root>
set -euo pipefail
readonly compiler="$1" root="$2"
readonly source="$root/tests/compile_fail/checked_labels.cc"
compile() {
  # LC_ALL=C: the compiler quotes names with ' rather than typographic quotes.
  LC_ALL=C "$compiler" -std=c++20 -fsyntax-only -I"$root" -isystem /usr/include/libnl3 -DCASE="$1" \
    "$source" 2>&1
}
if ! out="$(compile 0)"; then
  echo "case 0 (the checked forms) does not compile:" >&2
  echo "$out" >&2
  exit 1
fi
failed=0
while IFS= read -r line; do
  [[ "$line" =~ ^#elif\ CASE\ ==\ ([0-9]+)\ +//\ expect:\ (.*)$ ]] || continue
  n="${BASH_REMATCH[1]}" expect="${BASH_REMATCH[2]}"
  if out="$(compile "$n")"; then
    echo "case $n compiles; it must not ($expect)" >&2
    failed=1
  elif ! grep -qF -- "$expect" <<<"$out"; then
    echo "case $n fails without \"$expect\":" >&2
    echo "$out" | head -20 >&2
    failed=1
  else
    echo "case $n: fails to compile, as it must ($expect)"
  fi
done <"$source"
exit "$failed"
