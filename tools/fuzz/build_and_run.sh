#!/usr/bin/env bash
# Builds and runs the libFuzzer targets over the module EEPROM decoders (issue 5), the
# --web.config.file parser and the HTTP request-head parser (issue 19), and the `ethtool <netdev>`
# text parser of the link replay file and the --shape.file manifest parser (issue 20), the
# `mlnx_qos -i` text parser of the qos replay file and the PCI config-space parser of the topology
# collector (issue 21), the /dev/kmsg record parser and splitter (issue 23), and the LLDP frame and
# `lldpctl -f keyvalue` parsers and the kubelet's /pods parser (issue 24), and the RDMA netlink
# reply parsers (issue 34).
#
#   build_and_run.sh smoke [TARGET..]        each target (default: all) for FUZZ_SMOKE_SECONDS
#                                            (default 5) s; non-zero exit on any finding (ctest
#                                            fuzz.optics_smoke, fuzz.web_config_smoke,
#                                            fuzz.http_head_smoke, fuzz.ethtool_link_smoke,
#                                            fuzz.shape_manifest_smoke, fuzz.mlnx_qos_smoke,
#                                            fuzz.pci_config_smoke, fuzz.kmsg_smoke,
#                                            fuzz.lldp_smoke, fuzz.kubelet_pods_smoke,
#                                            fuzz.rdma_netlink_smoke)
#   build_and_run.sh long SECONDS [TARGET..] each target (default: all) for SECONDS, keeping its
#                                            corpus in $BUILD/corpus/TARGET; prints executions,
#                                            exec/s, corpus size and crashes per target
#   build_and_run.sh build                   build only
#
# Targets: sff8472 sff8636 cmis image (tools/fuzz/optics_fuzz.cc), web_config
# (tools/fuzz/web_config_fuzz.cc, seeds in tools/fuzz/seeds/web_config/, links Debian's yaml-cpp),
# http_head (tools/fuzz/http_head_fuzz.cc), ethtool_link (tools/fuzz/ethtool_link_fuzz.cc, seeds:
# tests/fixtures/ethtool/*/*/link), shape_manifest (tools/fuzz/shape_manifest_fuzz.cc, seeds in
# tools/fuzz/seeds/shape_manifest/, links yaml-cpp), mlnx_qos (tools/fuzz/mlnx_qos_fuzz.cc, seeds
# in tools/fuzz/seeds/mlnx_qos/), pci_config (tools/fuzz/pci_config_fuzz.cc, seeds: the images of
# tests/testing/pci_config_images.cc written by make_seeds), kmsg (tools/fuzz/kmsg_fuzz.cc, seeds in
# tools/fuzz/seeds/kmsg/), lldp (tools/fuzz/lldp_fuzz.cc, seeds in tools/fuzz/seeds/lldp/),
# kubelet_pods (tools/fuzz/kubelet_pods_fuzz.cc, seeds in tools/fuzz/seeds/kubelet_pods/),
# rdma_netlink (tools/fuzz/rdma_netlink_fuzz.cc, seeds in tools/fuzz/seeds/rdma_netlink/). Exit 77 (skip) when clang++
# with libFuzzer + ASan + UBSan is not available (Debian 12: clang-14, libclang-rt-14-dev;
# tools/install-deps.sh test). Build output goes to $FUZZ_BUILD_DIR (default <repo>/build/fuzz,
# git-ignored). Seeds: the hand-built images of tests/testing/module_images.cc, the ethtool -m hex
# dumps in ../shared/fixtures/external/ethtool-m/raw-eeprom/ when present (converted at build
# time, never copied into the repo), and tools/fuzz/regressions/TARGET/ (past findings).
# Crash inputs land in $BUILD/artifacts/.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${FUZZ_BUILD_DIR:-$REPO/build/fuzz}"
OPTICS_TARGETS=(sff8472 sff8636 cmis image)
ALL_TARGETS=("${OPTICS_TARGETS[@]}" web_config http_head ethtool_link shape_manifest mlnx_qos
  pci_config kmsg lldp kubelet_pods rdma_netlink)
SMOKE_SECONDS="${FUZZ_SMOKE_SECONDS:-5}"
EXTERNAL_HEX_DIR="${FUZZ_EXTERNAL_HEX_DIR:-$REPO/../shared/fixtures/external/ethtool-m/raw-eeprom}"

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

mode="${1:-}"
case "$mode" in
  smoke|build) ;;
  long) [[ "${2:-}" =~ ^[0-9]+$ ]] || usage ;;
  *) usage ;;
esac

skip() {
  echo "SKIP: $*" >&2
  echo "SKIP: install clang and libclang-rt-14-dev (tools/install-deps.sh test) to run the fuzzers" >&2
  exit 77
}

CXX="${FUZZ_CXX:-}"
if [[ -z "$CXX" ]]; then
  for c in clang++ clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null 2>&1; then CXX="$c"; break; fi
  done
fi
[[ -n "$CXX" ]] || skip "clang++ not found"

mkdir -p "$BUILD/obj" "$BUILD/bin" "$BUILD/artifacts"

SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
CXXFLAGS=(-std=c++20 -g -O1 -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS -I"$REPO" "${SAN[@]}")

# Probe: can this compiler build and link a libFuzzer + ASan + UBSan binary?
probe() {
  local dir="$BUILD/probe"
  mkdir -p "$dir"
  printf '%s\n' '#include <cstdint>' '#include <cstddef>' \
    'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }' >"$dir/p.cc"
  "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "$dir/p.cc" -o "$dir/p" >"$dir/log" 2>&1 \
    || { cat "$dir/log" >&2; skip "$CXX cannot link -fsanitize=fuzzer,address,undefined"; }
}

DECODER_SRCS=(
  collectors/optics/module_eeprom.cc
  collectors/optics/sff8472.cc
  collectors/optics/sff8636.cc
  collectors/optics/cmis.cc
  base/status.cc
)
HEADERS=(collectors/optics/*.h base/status.h)
# + status.o from DECODER_SRCS, yaml_reader.o and duration.o from MANIFEST_SRCS.
WEB_SRCS=(exporter/http/web_config.cc collectors/sys/bounded_file.cc)
WEB_HEADERS=(exporter/http/web_config.h base/status.h base/yaml_reader.h
  collectors/sys/bounded_file.h)
# The link text parser and what it uses (+ status.o from DECODER_SRCS).
LINK_SRCS=(collectors/ethtool_source/ethtool_replay_parse.cc collectors/ethtool_source/link_modes.cc
  collectors/ethtool_source/pause_text_parse.cc base/value_parse.cc)
LINK_HEADERS=(collectors/ethtool_source/ethtool_replay_parse.h collectors/ethtool_source/link_modes.h
  collectors/ethtool_source/pause_text_parse.h
  collectors/ethtool_source/ethtool.h base/value_parse.h base/status.h)
# The shape manifest parser and what it uses (+ status.o from DECODER_SRCS, bounded_file.o from
# WEB_SRCS).
MANIFEST_SRCS=(detectors/link_degraded/manifest.cc detectors/link_degraded/port_state.cc
  base/yaml_reader.cc base/duration.cc)
MANIFEST_HEADERS=(detectors/link_degraded/*.h base/yaml_reader.h
  collectors/sys/bounded_file.h
  collectors/rdma/rdma_metrics.h base/status.h)
# The mlnx_qos text parser (+ status.o from DECODER_SRCS; value_parse.o from LINK_SRCS).
QOS_SRCS=(collectors/ethtool_source/qos_parse.cc)
QOS_HEADERS=(collectors/ethtool_source/qos_parse.h base/value_parse.h base/status.h)
# The PCI config-space parser (+ status.o from DECODER_SRCS).
PCI_SRCS=(collectors/topology/pci_config.cc)
PCI_HEADERS=(collectors/topology/pci_config.h base/status.h)
# The /dev/kmsg record parser and the UTF-8 check (+ status.o from DECODER_SRCS, value_parse.o
# from LINK_SRCS: the pattern table reads a PCI address).
KMSG_SRCS=(base/utf8.cc collectors/kmsg/kmsg_parse.cc collectors/kmsg/kmsg_patterns.cc
  collectors/kmsg/kmsg_subject.cc)
KMSG_HEADERS=(base/utf8.h collectors/kmsg/kmsg_parse.h collectors/kmsg/kmsg_patterns.h
  collectors/kmsg/kmsg_subject.h base/status.h base/value_parse.h)
# The LLDP frame and lldpctl keyvalue parsers (+ status.o from DECODER_SRCS, utf8.o from
# KMSG_SRCS).
LLDP_SRCS=(collectors/peer/lldp_frame.cc collectors/peer/lldp_keyvalue.cc)
LLDP_HEADERS=(base/utf8.h collectors/peer/lldp_frame.h collectors/peer/lldp_keyvalue.h base/status.h)
# The kubelet's /pods parser (+ status.o from DECODER_SRCS, value_parse.o from LINK_SRCS;
# nlohmann-json is header-only).
PODS_SRCS=(collectors/jobs/kubelet_pods_parse.cc)
PODS_HEADERS=(collectors/jobs/kubelet_pods_parse.h base/value_parse.h base/status.h)
# The RDMA netlink reply parsers (+ status.o from DECODER_SRCS; no libnl: the parser walks the
# attributes itself).
RDMA_NL_SRCS=(collectors/sys/rdma_netlink_parse.cc)
RDMA_NL_HEADERS=(collectors/sys/rdma_netlink_parse.h base/status.h)

# The binary of a target.
bin_of() {
  case "$1" in
    web_config | http_head | ethtool_link | shape_manifest | mlnx_qos | pci_config | kmsg | lldp | \
      kubelet_pods | rdma_netlink)
      echo "$BUILD/bin/$1_fuzz" ;;
    *) echo "$BUILD/bin/optics_fuzz_$1" ;;
  esac
}

# True when $1 is missing or older than any of the remaining files.
stale() {
  local out="$1"; shift
  [[ -e "$out" ]] || return 0
  local f
  for f in "$@"; do [[ "$f" -nt "$out" ]] && return 0; done
  return 1
}

build() {
  cd "$REPO"
  local flags_file="$BUILD/flags" flags="$CXX ${CXXFLAGS[*]}"
  if [[ ! -e "$flags_file" || "$(cat "$flags_file")" != "$flags" ]]; then
    rm -f "$BUILD"/obj/*.o "$BUILD"/bin/*
    echo "$flags" >"$flags_file"
  fi
  local pids=() src obj t
  for src in "${DECODER_SRCS[@]}"; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in exporter/http/request_head.cc tools/fuzz/http_head_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" exporter/http/request_head.h "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${WEB_SRCS[@]}" tools/fuzz/web_config_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${WEB_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${LINK_SRCS[@]}" tools/fuzz/ethtool_link_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${LINK_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${MANIFEST_SRCS[@]}" tools/fuzz/shape_manifest_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${MANIFEST_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${QOS_SRCS[@]}" tools/fuzz/mlnx_qos_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${QOS_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${PCI_SRCS[@]}" tools/fuzz/pci_config_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${PCI_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${KMSG_SRCS[@]}" tools/fuzz/kmsg_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${KMSG_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${LLDP_SRCS[@]}" tools/fuzz/lldp_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${LLDP_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${PODS_SRCS[@]}" tools/fuzz/kubelet_pods_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${PODS_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for src in "${RDMA_NL_SRCS[@]}" tools/fuzz/rdma_netlink_fuzz.cc; do
    obj="$BUILD/obj/$(basename "${src%.cc}").o"
    if stale "$obj" "$src" "${RDMA_NL_HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
      pids+=($!)
    fi
  done
  for t in "${OPTICS_TARGETS[@]}"; do
    obj="$BUILD/obj/optics_fuzz_$t.o"
    if stale "$obj" tools/fuzz/optics_fuzz.cc "${HEADERS[@]}" "$flags_file"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer-no-link -DFUZZ_TARGET_"${t^^}" \
        -c tools/fuzz/optics_fuzz.cc -o "$obj" &
      pids+=($!)
    fi
  done
  if stale "$BUILD/bin/make_seeds" tools/fuzz/make_seeds.cc tests/testing/module_images.cc \
      tests/testing/module_images.h tests/testing/pci_config_images.cc \
      tests/testing/pci_config_images.h; then
    "$CXX" -std=c++20 -O1 -I"$REPO" tools/fuzz/make_seeds.cc tests/testing/module_images.cc \
      tests/testing/pci_config_images.cc -o "$BUILD/bin/make_seeds" &
    pids+=($!)
  fi
  local fail=0 p
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  [[ $fail == 0 ]] || { echo "fuzz build failed" >&2; exit 1; }
  local objs=()
  for src in "${DECODER_SRCS[@]}"; do objs+=("$BUILD/obj/$(basename "${src%.cc}").o"); done
  for t in "${OPTICS_TARGETS[@]}"; do
    if stale "$BUILD/bin/optics_fuzz_$t" "$BUILD/obj/optics_fuzz_$t.o" "${objs[@]}"; then
      "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "$BUILD/obj/optics_fuzz_$t.o" "${objs[@]}" \
        -o "$BUILD/bin/optics_fuzz_$t"
    fi
  done
  if stale "$BUILD/bin/http_head_fuzz" "$BUILD/obj/http_head_fuzz.o" "$BUILD/obj/request_head.o"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "$BUILD/obj/http_head_fuzz.o" \
      "$BUILD/obj/request_head.o" -o "$BUILD/bin/http_head_fuzz"
  fi
  local web_objs=("$BUILD/obj/web_config_fuzz.o" "$BUILD/obj/web_config.o" "$BUILD/obj/status.o"
    "$BUILD/obj/bounded_file.o" "$BUILD/obj/yaml_reader.o" "$BUILD/obj/duration.o")
  if stale "$BUILD/bin/web_config_fuzz" "${web_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${web_objs[@]}" -lyaml-cpp \
      -o "$BUILD/bin/web_config_fuzz"
  fi

  local link_objs=("$BUILD/obj/ethtool_link_fuzz.o" "$BUILD/obj/status.o")
  for src in "${LINK_SRCS[@]}"; do link_objs+=("$BUILD/obj/$(basename "${src%.cc}").o"); done
  if stale "$BUILD/bin/ethtool_link_fuzz" "${link_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${link_objs[@]}" -o "$BUILD/bin/ethtool_link_fuzz"
  fi

  local manifest_objs=("$BUILD/obj/shape_manifest_fuzz.o" "$BUILD/obj/status.o"
    "$BUILD/obj/bounded_file.o")
  for src in "${MANIFEST_SRCS[@]}"; do manifest_objs+=("$BUILD/obj/$(basename "${src%.cc}").o"); done
  if stale "$BUILD/bin/shape_manifest_fuzz" "${manifest_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${manifest_objs[@]}" -lyaml-cpp \
      -o "$BUILD/bin/shape_manifest_fuzz"
  fi

  local qos_objs=("$BUILD/obj/mlnx_qos_fuzz.o" "$BUILD/obj/qos_parse.o" "$BUILD/obj/value_parse.o"
    "$BUILD/obj/status.o")
  if stale "$BUILD/bin/mlnx_qos_fuzz" "${qos_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${qos_objs[@]}" -o "$BUILD/bin/mlnx_qos_fuzz"
  fi

  local pci_objs=("$BUILD/obj/pci_config_fuzz.o" "$BUILD/obj/status.o")
  for src in "${PCI_SRCS[@]}"; do pci_objs+=("$BUILD/obj/$(basename "${src%.cc}").o"); done
  if stale "$BUILD/bin/pci_config_fuzz" "${pci_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${pci_objs[@]}" -o "$BUILD/bin/pci_config_fuzz"
  fi

  local kmsg_objs=("$BUILD/obj/kmsg_fuzz.o" "$BUILD/obj/status.o" "$BUILD/obj/value_parse.o")
  for src in "${KMSG_SRCS[@]}"; do kmsg_objs+=("$BUILD/obj/$(basename "${src%.cc}").o"); done
  if stale "$BUILD/bin/kmsg_fuzz" "${kmsg_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${kmsg_objs[@]}" -o "$BUILD/bin/kmsg_fuzz"
  fi

  local lldp_objs=("$BUILD/obj/lldp_fuzz.o" "$BUILD/obj/status.o" "$BUILD/obj/utf8.o")
  for src in "${LLDP_SRCS[@]}"; do lldp_objs+=("$BUILD/obj/$(basename "${src%.cc}").o"); done
  if stale "$BUILD/bin/lldp_fuzz" "${lldp_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${lldp_objs[@]}" -o "$BUILD/bin/lldp_fuzz"
  fi

  local pods_objs=("$BUILD/obj/kubelet_pods_fuzz.o" "$BUILD/obj/kubelet_pods_parse.o"
    "$BUILD/obj/value_parse.o" "$BUILD/obj/status.o")
  if stale "$BUILD/bin/kubelet_pods_fuzz" "${pods_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${pods_objs[@]}" -o "$BUILD/bin/kubelet_pods_fuzz"
  fi

  local rdma_nl_objs=("$BUILD/obj/rdma_netlink_fuzz.o" "$BUILD/obj/rdma_netlink_parse.o"
    "$BUILD/obj/status.o")
  if stale "$BUILD/bin/rdma_netlink_fuzz" "${rdma_nl_objs[@]}"; then
    "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "${rdma_nl_objs[@]}" -o "$BUILD/bin/rdma_netlink_fuzz"
  fi

  # Seeds are regenerated each time (cheap); the external dumps are read in place.
  local hex=()
  if [[ -d "$EXTERNAL_HEX_DIR" ]]; then
    shopt -s nullglob
    hex=("$EXTERNAL_HEX_DIR"/*.hex)
    shopt -u nullglob
  fi
  # Into a fresh directory, then swapped in: a fuzzer of a concurrent run may be reading them.
  rm -rf "$BUILD/seeds.new"
  "$BUILD/bin/make_seeds" "$BUILD/seeds.new" ${hex[@]+"${hex[@]}"} >/dev/null
  cp -r "$REPO/tools/fuzz/seeds/web_config" "$BUILD/seeds.new/web_config"
  cp -r "$REPO/tools/fuzz/seeds/shape_manifest" "$BUILD/seeds.new/shape_manifest"
  cp -r "$REPO/tools/fuzz/seeds/mlnx_qos" "$BUILD/seeds.new/mlnx_qos"
  cp -r "$REPO/tools/fuzz/seeds/kmsg" "$BUILD/seeds.new/kmsg"
  cp -r "$REPO/tools/fuzz/seeds/lldp" "$BUILD/seeds.new/lldp"
  cp -r "$REPO/tools/fuzz/seeds/kubelet_pods" "$BUILD/seeds.new/kubelet_pods"
  cp -r "$REPO/tools/fuzz/seeds/rdma_netlink" "$BUILD/seeds.new/rdma_netlink"
  rm -rf "$BUILD/seeds.old"
  [[ -d "$BUILD/seeds" ]] && mv "$BUILD/seeds" "$BUILD/seeds.old"
  # HTTP heads: well-formed, pipelined, and each kind of refusal, as a client sends them (byte 0
  # selects the limits, see http_head_fuzz.cc).
  mkdir -p "$BUILD/seeds.new/http_head"
  local i=0 seed
  for seed in 'GET /metrics HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n' \
      'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n' 'GET / HTTP/1.0\nConnection: keep-alive\n\n' \
      'GET http://h/x?y HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\n' \
      'GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n folded\r\n\r\n' '\x16\x03\x01\x02\x00\x01'; do
    printf "\\x0f$seed" >"$BUILD/seeds.new/http_head/$i"
    printf "\\x83$seed" >"$BUILD/seeds.new/http_head/$((i + 100))"
    i=$((i + 1))
  done
  # `ethtool <netdev>` texts: the link files of the replay fixtures.
  mkdir -p "$BUILD/seeds.new/ethtool_link"
  i=0
  for seed in "$REPO"/tests/fixtures/ethtool/*/*/{link,pause,tunables}; do
    [[ -f "$seed" ]] || continue
    cp "$seed" "$BUILD/seeds.new/ethtool_link/$i"
    i=$((i + 1))
  done
  mv "$BUILD/seeds.new" "$BUILD/seeds"
  rm -rf "$BUILD/seeds.old"
  echo "fuzz: built ${ALL_TARGETS[*]} in $BUILD/bin; seeds from $((6 + ${#hex[@]})) images"
}

# run_target TARGET SECONDS CORPUS_DIR -> prints one summary line, returns 1 on a finding
run_target() {
  local t="$1" secs="$2" corpus="$3" log="$BUILD/log_${mode}_$1.txt"
  mkdir -p "$corpus"
  local dirs=("$corpus" "$BUILD/seeds/$t")
  [[ -d "$REPO/tools/fuzz/regressions/$t" ]] && dirs+=("$REPO/tools/fuzz/regressions/$t")
  local before rc=0 start end max_len
  # Longest meaningful input: header + pages (paged targets), selector + CMIS image + slack.
  case "$t" in
    sff8472) max_len=520 ;; sff8636) max_len=400 ;; cmis) max_len=800 ;;
    web_config | shape_manifest) max_len=4096 ;;
    pci_config) max_len=4200 ;;  # up to PCI_CFG_SPACE_EXP_SIZE, and a little past it
    http_head) max_len=20000 ;;
    lldp) max_len=1600 ;;  # a 1500-byte LLDPDU with its Ethernet header and tags
    kubelet_pods) max_len=4096 ;;  # a few pods; the 16 MB bound is a unit test
    *) max_len=1024 ;;
  esac
  before=$(find "$BUILD/artifacts" -name "$t-*" | wc -l)
  start=$(date +%s)
  "$(bin_of "$t")" -max_total_time="$secs" -max_len="$max_len" -timeout=10 \
    -rss_limit_mb=2048 -error_exitcode=1 -print_final_stats=1 \
    -artifact_prefix="$BUILD/artifacts/$t-" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  end=$(date +%s)
  local execs rate crashes size
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  size=$(find "$corpus" -type f | wc -l)
  crashes=$(( $(find "$BUILD/artifacts" -name "$t-*" | wc -l) - before ))
  printf 'fuzz %-8s seconds=%-5s executions=%-10s exec/s=%-7s corpus=%-5s crashes=%s rc=%s\n' \
    "$t" "$((end - start))" "${execs:-?}" "${rate:-?}" "$size" "$crashes" "$rc"
  if [[ $rc != 0 || $crashes != 0 ]]; then
    echo "---- $t: finding (log $log) ----" >&2
    # The report (sanitizer error or broken invariant) with its first frames, then the input.
    awk '/ERROR: |runtime error|invariant violated|deadly signal/ && !shown { shown = 1; n = 0 }
         shown && n < 30 { print; n++ }
         /Test unit written|^Base64/ { print }' "$log" >&2 || true
    return 1
  fi
}

build_locked() {
  exec 9>"$BUILD/.lock"
  flock 9
  probe
  build
  flock -u 9
}

build_locked
[[ "$mode" == build ]] && exit 0

status=0
if [[ "$mode" == smoke ]]; then
  shift
  targets=("$@")
  [[ ${#targets[@]} -gt 0 ]] || targets=("${ALL_TARGETS[@]}")
  for t in "${targets[@]}"; do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "unknown target $t" >&2; exit 2; }
    rm -rf "$BUILD/smoke-corpus/$t"
    run_target "$t" "$SMOKE_SECONDS" "$BUILD/smoke-corpus/$t" || status=1
  done
else
  secs="$2"; shift 2
  targets=("$@")
  [[ ${#targets[@]} -gt 0 ]] || targets=("${ALL_TARGETS[@]}")
  for t in "${targets[@]}"; do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "unknown target $t" >&2; exit 2; }
    run_target "$t" "$secs" "$BUILD/corpus/$t" || status=1
  done
fi
exit $status
