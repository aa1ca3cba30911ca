#!/usr/bin/env bash
# Checks that every documentation citation in the tree resolves to docs/.
#
#   docs/check_citations.sh [--quiet] [ROOT]
#
# ROOT defaults to the repository that holds this script. Citations found:
#   - `design.md §5`, `docs/detection.md §0.2`, `reference.md §4.1–4.3`, `design.md section 5`,
#     `detection.md 6.4`, `reference.md §3, §5` (the later numbers belong to the same page);
#     a page named without a section only has to exist;
#   - source tags `[S21]`, `[S35b]`, which must be defined in docs/detection.md (a list item
#     that starts with the tag, or a further tag on that line after ". ");
#   - bare `§N` in detectors/ and tests/unit/detectors/ and in the "## Detectors" section of the
#     top-level README, which cite docs/detection.md.
# A section `§N` resolves when docs/<page> has a Markdown heading whose text starts with N
# (`## 5. Contracts`, `### 4.2 The detectors`). A range `§A–B` needs both ends.
# Files searched: *.cc *.h *.sh *.yml *.md *.json *.txt, outside docs/, build*/ and .git/.
# Prints every citation with its status (only problems with --quiet) and exits 1 when any
# citation does not resolve.

set -uo pipefail
export LC_ALL=C

quiet=0
if [[ "${1:-}" == "--quiet" ]]; then
  quiet=1
  shift
fi
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$root" || { echo "check_citations: cannot enter $root" >&2; exit 2; }

pages=(design detection reference)
for page in "${pages[@]}"; do
  if [[ ! -f "docs/$page.md" ]]; then
    echo "check_citations: docs/$page.md is missing" >&2
    exit 1
  fi
done

sec='§'
num='[0-9]+(\.[0-9]+)*'
range="${num}((-|–)${num})?"
# A page name, then optionally its sections: "§N", "section N" or a bare "N", ranges "N–M", and
# further sections after ", ", "/" or " and " (each with its own §).
cite_re="(^|[^A-Za-z0-9_.-])(docs/)?(design|detection|reference)\\.md\`?( ?(${sec}|section )?${range}(( ?, ?| ?/ ?| and )${sec}${range})*)?"

# ---- what the pages define
declare -A heading  # "page:number" -> 1
for page in "${pages[@]}"; do
  in_fence=0
  while IFS= read -r line; do
    if [[ "$line" == '```'* ]]; then
      in_fence=$((1 - in_fence))
      continue
    fi
    ((in_fence)) && continue
    if [[ "$line" =~ ^#{1,6}[[:space:]]+([0-9]+(\.[0-9]+)*)[.\)]?([[:space:]]|$) ]]; then
      heading["$page:${BASH_REMATCH[1]}"]=1
    fi
  done <"docs/$page.md"
done
declare -A source_key  # "S21" -> 1
while IFS= read -r line; do
  if [[ "$line" =~ ^[[:space:]]*[-*][[:space:]]*\[(S[0-9]+[a-z]?)\] ]]; then
    source_key["${BASH_REMATCH[1]}"]=1
    rest="$line"
    while [[ "$rest" =~ \.\ \[(S[0-9]+[a-z]?)\](.*)$ ]]; do
      source_key["${BASH_REMATCH[1]}"]=1
      rest="${BASH_REMATCH[2]}"
    done
  fi
done <docs/detection.md

# ---- the files to search
files=()
while IFS= read -r -d '' f; do
  files+=("${f#./}")
done < <(find . \( -path ./.git -o -path ./docs -o -path './build*' \) -prune -o -type f \
           \( -name '*.cc' -o -name '*.h' -o -name '*.sh' -o -name '*.yml' -o -name '*.md' \
              -o -name '*.json' -o -name '*.txt' \) -print0 | sort -z)
if ((${#files[@]} == 0)); then
  echo "check_citations: no files to check under $root" >&2
  exit 2
fi

# ---- checking
failures=0
total=0

report() {  # status location text
  total=$((total + 1))
  if [[ "$1" != ok ]]; then
    failures=$((failures + 1))
    echo "FAIL $2: $3"
  elif ((quiet == 0)); then
    echo "ok   $2: $3"
  fi
}

check_section() {  # location page number
  if [[ -n "${heading[$2:$3]:-}" ]]; then
    report ok "$1" "$2.md §$3"
  else
    report fail "$1" "$2.md §$3: no heading \"$3\" in docs/$2.md"
  fi
}

check_numbers() {  # location page text: every number or range in the text
  local location="$1" page="$2" rest="$3"
  local item_re="([0-9]+(\.[0-9]+)*)((-|–)([0-9]+(\.[0-9]+)*))?(.*)$"
  while [[ "$rest" =~ $item_re ]]; do
    local first="${BASH_REMATCH[1]}" last="${BASH_REMATCH[5]}"
    rest="${BASH_REMATCH[7]}"
    check_section "$location" "$page" "$first"
    [[ -n "$last" ]] && check_section "$location" "$page" "$last"
  done
}

# Explicit citations of a page: "file:line:match".
page_re="(design|detection|reference)\\.md\`?(.*)$"
while IFS= read -r hit; do
  f="${hit%%:*}"
  rest="${hit#*:}"
  line="${rest%%:*}"
  text="${rest#*:}"
  [[ "$text" =~ $page_re ]] || continue
  page="${BASH_REMATCH[1]}"
  after="${BASH_REMATCH[2]}"
  if [[ "$after" =~ [0-9] ]]; then
    check_numbers "$f:$line" "$page" "$after"
  else
    report ok "$f:$line" "$page.md"
  fi
done < <(grep -HnoE "$cite_re" "${files[@]}")

# Source tags.
while IFS= read -r hit; do
  f="${hit%%:*}"
  rest="${hit#*:}"
  line="${rest%%:*}"
  key="${rest#*:[}"
  key="${key%]}"
  if [[ -n "${source_key[$key]:-}" ]]; then
    report ok "$f:$line" "[$key]"
  else
    report fail "$f:$line" "[$key]: not defined in docs/detection.md §10"
  fi
done < <(grep -HnoE '\[S[0-9]+[a-z]?\]' "${files[@]}")

# Bare "§N" that cite detection.md: detector code and tests, and the README's Detectors section.
# The explicit citations (checked above) and spec or RFC section numbers are removed first.
bare_lines() {
  local scoped=()
  for f in "${files[@]}"; do
    case "$f" in
      detectors/* | tests/unit/detectors/*) scoped+=("$f") ;;
    esac
  done
  ((${#scoped[@]})) && grep -HnF "$sec" "${scoped[@]}"
  if [[ -f README.md ]]; then
    awk -v s="$sec" '/^## /{inside = ($0 == "## Detectors")}
                     inside && index($0, s) { print "README.md:" NR ":" $0 }' README.md
  fi
  return 0
}
bare_re="${sec}(${range})(.*)$"
while IFS= read -r hit; do
  f="${hit%%:*}"
  rest="${hit#*:}"
  line="${rest%%:*}"
  text="${rest#*:}"
  while [[ "$text" =~ $bare_re ]]; do
    cited="${BASH_REMATCH[1]}"
    text="${BASH_REMATCH[6]}"
    check_numbers "$f:$line" detection "$cited"
  done
done < <(bare_lines | sed -E "s#${cite_re}#\\1#g; s#(RFC|IBA|SFF-?[0-9]+|CMIS)[^${sec}]{0,20}${sec}${num}##g")

echo "check_citations: $total citations, $failures unresolved"
((failures == 0))
