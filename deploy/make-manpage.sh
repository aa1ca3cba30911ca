#!/bin/sh
# Makes the manual page fabricwatch.1.gz from the built binary (deploy/CMakeLists.txt, target
# fabricwatch_man): help2man reads its --help and --version and adds the sections of
# fabricwatch.h2m; gzip -9n as Debian Policy §12.1 asks (no name or time stamp).
# Usage: make-manpage.sh HELP2MAN BINARY INCLUDE OUTPUT.gz
set -eu
help2man="$1" binary="$2" include="$3" out="$4"
page="${out%.gz}"
"$help2man" --no-info --section=1 --include="$include" --output="$page" "$binary"
# help2man bolds a long option only up to its first dot (\fB\-\-web\fR.listen\-address):
# bold the whole dotted name, as the reader types it.
sed -i 's/\\fB\\-\\-\([a-z]*\)\\fR\.\([a-zA-Z0-9_.\\-]*\)/\\fB\\-\\-\1.\2\\fR/g' "$page"
gzip -9nf "$page"
