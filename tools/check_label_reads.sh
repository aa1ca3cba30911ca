#!/usr/bin/env bash
# Checked labels (issue 36): a sample's label is read with the templated forms of
# collectors/core/family_label.h and detectors/core/snapshot_lookup.h
# (Label<rdma::kPortInfo>(m, "netdev"), FindValue<Family>, LabelsMatch<Family>), which do not
# compile for a label the family's descriptor does not declare. The string forms (LabelOr,
# LabelValue and the non-template FindValue and LabelsMatch), which read "" or nullopt for a typo,
# were deleted once every file was converted; this check keeps a local twin of them from coming
# back.
#
# It fails when a C++ file calls one of those names outside tools/label-reads-allow.txt (now
# empty), and when a file of that list no longer does (remove its line): the list only shrinks.
# ctest lint.label_reads runs it. `--count` prints the reads per file and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly kAllowFile=tools/label-reads-allow.txt
# A call of a string form; the templated forms are FindValue<...>( and LabelsMatch<...>(, and
# BoundLabelValue( is no read (\b does not match inside a word).
readonly kPattern='\b(LabelOr|LabelValue|FindValue|LabelsMatch)\('
# Where the string forms are defined (and call each other), until they are deleted.
readonly kDefinitions='^detectors/core/snapshot_lookup\.(h|cc)$'

declare -A reads=()
while IFS=: read -r file count; do
  [[ "$file" =~ $kDefinitions ]] && continue
  reads["$file"]=$count
done < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' |
  xargs -r grep -EcH "$kPattern" 2>/dev/null | grep -v ':0$' || true)

if [[ "${1:-}" == --count ]]; then
  for file in "${!reads[@]}"; do echo "${reads[$file]} $file"; done | sort -k2
  exit 0
fi

declare -A allowed=()
while read -r path _; do
  [[ -z "$path" || "$path" == \#* ]] && continue
  allowed["$path"]=1
done <"$kAllowFile"

failed=0
for file in "${!reads[@]}"; do
  if [[ -z "${allowed[$file]:-}" ]]; then
    echo "label_reads: $file reads ${reads[$file]} label(s) by a string; use Label<Family>," \
      "FindValue<Family> or LabelsMatch<Family> (collectors/core/family_label.h)" >&2
    failed=1
  fi
done
for path in "${!allowed[@]}"; do
  if [[ -z "${reads[$path]:-}" ]]; then
    echo "label_reads: $path reads no label by a string any more: remove it from $kAllowFile" >&2
    failed=1
  fi
done
total=0
for file in "${!reads[@]}"; do total=$((total + reads[$file])); done
echo "label_reads: $total string label read(s) in ${#reads[@]} file(s), ${#allowed[@]} allowed"
exit "$failed"
