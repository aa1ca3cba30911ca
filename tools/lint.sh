#!/usr/bin/env bash
# Repository lint: `make lint`, and ctest lint.format_and_size (so `make test` and CI run it).
#
#  1. Format: the lines of *.cc/*.h that differ from a base commit must be as clang-format
#     (.clang-format) writes them. Only changed lines are checked, so old code is reformatted when
#     it is touched, not all at once. The diff detects renames (-M): a moved file is not "changed";
#     a new file not yet committed is changed all through.
#     Includes are not re-sorted: .clang-format (Google) would regroup <third_party/x.h> with the
#     C headers, against this tree's order (C system, C++ standard, third party, project).
#     `tools/lint.sh --fix` formats the changed lines in place.
#  2. Size: no *.cc/*.h outside tests/ over 600 lines, and no function in one over 120 lines
#     (end lines from universal-ctags), except what tools/lint-allow.txt lists.
#
# The base, first that applies:
#  - $LINT_BASE;
#  - the merge-base of HEAD with origin/main (or origin/HEAD), when HEAD has commits of its own;
#  - the commit lint came in with, recorded in tools/lint-base.txt (on main, and in a fresh
#    clone of it, every line changed since then is checked); if that commit is not in this
#    history (the branch was rebased), the first commit that added this script.
# Needs git, clang-format, universal-ctags and jq: tools/install-deps.sh test.
set -euo pipefail

fix=0
[[ "${1:-}" == --fix ]] && fix=1
cd "$(dirname "$0")/.."
readonly kMaxFileLines=600
readonly kMaxFunctionLines=120
readonly kAllowFile=tools/lint-allow.txt
readonly kBaseFile=tools/lint-base.txt
failed=0

die() {
  echo "lint: $*" >&2
  exit 2
}

for tool in git clang-format jq; do
  command -v "$tool" >/dev/null || die "$tool not found (tools/install-deps.sh test installs it)"
done
ctags="ctags-universal"
command -v "$ctags" >/dev/null || ctags="ctags"
[[ "$("$ctags" --version 2>/dev/null)" == *"Universal Ctags"* ]] ||
  die "universal-ctags not found (Debian package universal-ctags)"
git rev-parse --git-dir >/dev/null 2>&1 || die "not a git checkout: the format check needs a base"

is_ancestor() { git merge-base --is-ancestor "$1" HEAD 2>/dev/null; }

# Prints "<commit> <why>".
choose_base() {
  if [[ -n "${LINT_BASE:-}" ]]; then
    git rev-parse --verify -q "${LINT_BASE}^{commit}" >/dev/null || die "LINT_BASE=$LINT_BASE is no commit"
    echo "$LINT_BASE \$LINT_BASE"
    return
  fi
  local upstream fork head
  head="$(git rev-parse HEAD)"
  for upstream in origin/main origin/HEAD; do
    git rev-parse --verify -q "$upstream^{commit}" >/dev/null || continue
    fork="$(git merge-base HEAD "$upstream" 2>/dev/null)" || continue
    if [[ "$fork" != "$head" ]]; then
      echo "$fork merge-base with $upstream"
      return
    fi
    break
  done
  local recorded
  recorded="$(grep -Eo '^[0-9a-f]{7,40}' "$kBaseFile" 2>/dev/null | head -1 || true)"
  if [[ -n "$recorded" ]] && is_ancestor "$recorded"; then
    echo "$recorded the commit lint came in with ($kBaseFile)"
    return
  fi
  local added
  added="$(git log --diff-filter=A --format=%H -- tools/lint.sh | tail -1)"
  if [[ -n "$added" ]]; then
    echo "$added the commit that added tools/lint.sh"
    return
  fi
  die "no base: set LINT_BASE=<commit> (a shallow clone lacks the history)"
}

chosen="$(choose_base)" || exit 2
read -r base why <<<"$chosen"
echo "lint: base $(git rev-parse --short "$base") ($why)"

# ------------------------------------------------------------------------------------ format
# "<file> <first>:<last>" for each range of added or changed lines (the new side of each hunk).
changed_ranges() {
  git diff -U0 -M --diff-filter=d --no-color --no-ext-diff "$base" -- '*.cc' '*.h' |
    awk '/^\+\+\+ / { file = substr($2, 3) }
         /^@@ / { split(substr($3, 2), r, ","); n = (r[2] == "" ? 1 : r[2]);
                  if (n > 0) print file, r[1] ":" (r[1] + n - 1) }'
}

declare -A ranges=()
while read -r file range; do
  [[ -n "$file" ]] && ranges["$file"]+=" --lines=$range"
done < <(changed_ranges)
# A new file that is not committed yet is all changed lines.
while read -r file; do
  [[ -n "$file" ]] && ranges["$file"]=" "
done < <(git ls-files --others --exclude-standard -- '*.cc' '*.h')

unformatted=()
for file in $(printf '%s\n' "${!ranges[@]}" | sort); do
  # shellcheck disable=SC2086  # the --lines arguments split on purpose
  if ((fix)); then
    clang-format --sort-includes=false -i ${ranges[$file]} "$file"
  elif ! clang-format --sort-includes=false --dry-run -Werror ${ranges[$file]} "$file" \
      >/dev/null 2>&1; then
    unformatted+=("$file")
  fi
done
if ((${#unformatted[@]})); then
  failed=1
  echo "lint: FAIL format: changed lines that clang-format would write differently, in:"
  printf '  %s\n' "${unformatted[@]}"
  echo "  fix: LINT_BASE=$(git rev-parse --short "$base") tools/lint.sh --fix"
else
  echo "lint: ok   format: the changed lines of ${#ranges[@]} file(s) are clang-formatted"
fi

# ------------------------------------------------------------------------------------ size
# tools/lint-allow.txt: "<path> <reason>" or "<path>:<function> <reason>"; # starts a comment.
declare -A allowed=()
declare -A allowed_seen=()
while read -r entry reason; do
  [[ -z "$entry" || "$entry" == \#* ]] && continue
  [[ -n "$reason" ]] || die "$kAllowFile: '$entry' has no reason"
  allowed["$entry"]="$reason"
done <"$kAllowFile"

# Reports one offender ("<lines> <key>"), allowed or not.
report() {
  local lines="$1" key="$2"
  if [[ -n "${allowed[$key]+x}" ]]; then
    allowed_seen["$key"]=1
    printf '  %5d %s  (allowed: %s)\n' "$lines" "$key" "${allowed[$key]}"
  else
    failed=1
    printf '  %5d %s  NOT ALLOWED\n' "$lines" "$key"
  fi
}

mapfile -t sources < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' |
  grep -v '^tests/' | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)

big_files="$(wc -l "${sources[@]}" | awk -v max="$kMaxFileLines" '$2 != "total" && $1 > max' |
  sort -rn)"
echo "lint: size: files outside tests/ over $kMaxFileLines lines: $(grep -c . <<<"$big_files" || true)"
while read -r lines path; do
  [[ -n "$path" ]] && report "$lines" "$path"
done <<<"$big_files"

# A function's name: Class::Method for members, else the bare name (anonymous namespaces have
# no stable name).
long_functions="$(printf '%s\n' "${sources[@]}" |
  "$ctags" --output-format=json --fields=+ne --kinds-C++=f --language-force=C++ -L - -o - |
  jq -r --argjson max "$kMaxFunctionLines" '
    select(._type == "tag" and .end != null and (.end - .line + 1) > $max)
    | (if (.scopeKind // "") | test("^(class|struct|union)$")
       then (.scope | split("::") | last) + "::" + .name else .name end) as $fn
    | "\(.end - .line + 1) \(.path):\($fn)"' | sort -rn | uniq)"
echo "lint: size: functions over $kMaxFunctionLines lines: $(grep -c . <<<"$long_functions" || true)"
while read -r lines key; do
  [[ -n "$key" ]] && report "$lines" "$key"
done <<<"$long_functions"

for key in "${!allowed[@]}"; do
  [[ -n "${allowed_seen[$key]+x}" ]] ||
    echo "lint: note: $kAllowFile lists '$key', which is within the limits now: remove the line"
done

if ((failed)); then
  echo "lint: FAILED"
  exit 1
fi
echo "lint: ok"
