#!/usr/bin/env bash
# The fabric shape on the real agent and a simulated 8-port NDR InfiniBand node (issue 20):
#  1. --shape.print writes the live shape as YAML: one record per port with rate, width, lane
#     speed, firmware, PCIe link and nearest GPU;
#  2. that output is a valid --shape.file: --config.check accepts it; a broken manifest is
#     refused at start and by --config.check with file:line:column and the key;
#  3. with the printed shape pinned and fabricsim running ib_width_downgrade (4X -> 1X NDR on
#     mlx5_5), /metrics carries the critical link_degraded anomaly on mlx5_5 port 1 and the
#     expected width from the manifest, and /api/v1/anomalies names the evidence.
# Usage: bash tests/e2e/shape_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init shape_e2e_test "$1"
SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$SIM" ]] || fail "the simulator is not built ($SIM); it is part of the default build"

root="$E2E_TMP/node"
"$SIM" build --preset hgx-ib --root "$root" >/dev/null || fail "fabricsim build failed"
paths=(--path.sysfs="$root/sys" --path.ethtool="$root/ethtool")

# --- 1. --shape.print ---------------------------------------------------------------------------
shape="$E2E_TMP/shape.yaml"
"$FABRICWATCH_BIN" "${paths[@]}" --shape.print >"$shape" 2>"$E2E_TMP/print.err" ||
  fail "--shape.print failed: $(cat "$E2E_TMP/print.err")"
ports="$(grep -c '^  - pci_address:' "$shape" || true)"
[[ "$ports" == 8 ]] || fail "--shape.print listed $ports ports, not 8:
$(cat "$shape")"
for field in 'link_layer: "InfiniBand"' 'state: "ACTIVE"' 'rate_gbps: 400' 'width: 4' \
  'lane_speed: "NDR"' 'lane_gbps: 100' 'firmware: "28.39.1002"' 'pcie_width: 16' 'gpu_level: "PIX"'; do
  n="$(grep -cF "    $field" "$shape" || true)"
  [[ "$n" == 8 ]] || fail "--shape.print: \"$field\" on $n ports, not 8:
$(cat "$shape")"
done
ok "--shape.print lists 8 ports at 4X NDR with firmware, PCIe link and nearest GPU"

# --- 2. the printed shape is a manifest; a broken one is refused --------------------------------
"$FABRICWATCH_BIN" "${paths[@]}" --shape.file="$shape" --config.check >"$E2E_TMP/check.out" 2>&1 ||
  fail "--config.check refused the printed shape: $(cat "$E2E_TMP/check.out")"
ok "--config.check accepts the printed shape as --shape.file"
bad="$E2E_TMP/bad.yaml"
printf 'groups:\n  - link_layer: InfiniBand\n    count: 8\n    width: 3\n' >"$bad"
rc=0
"$FABRICWATCH_BIN" "${paths[@]}" --shape.file="$bad" --config.check >"$E2E_TMP/bad.out" 2>&1 || rc=$?
[[ "$rc" != 0 ]] || fail "--config.check accepted a manifest with width 3"
grep -qF "$bad:4:12: groups[0].width: must be 1, 2, 4, 8 or 12 lanes" "$E2E_TMP/bad.out" ||
  fail "the error does not name file:line:column and the key: $(cat "$E2E_TMP/bad.out")"
rc=0
"$FABRICWATCH_BIN" "${paths[@]}" --shape.file="$bad" --web.listen-address=127.0.0.1:0 \
  >"$E2E_TMP/bad-start.out" 2>&1 || rc=$?
[[ "$rc" != 0 ]] || fail "the agent started with a broken manifest"
grep -qF "groups[0].width" "$E2E_TMP/bad-start.out" || fail "start error: $(cat "$E2E_TMP/bad-start.out")"
ok "a broken manifest is refused at start and by --config.check, naming file:line:column"

# --- 3. a width loss against the pinned shape ---------------------------------------------------
# The fault starts 60 simulated seconds in; at 20x that is 3 s of wall time.
"$SIM" run --preset hgx-ib --root "$root" --speed 20 \
  --scenario "$FABRICWATCH_SOURCE_DIR/tools/fabricsim/scenarios/ib_width_downgrade.yaml" \
  >"$E2E_TMP/sim.log" 2>&1 &
register_pid $!
start_agent "${paths[@]}" --shape.file="$shape" --detector.link_degraded.degraded-for=3s
series='fabric_anomaly_active{detector="link_degraded",severity="critical",device="mlx5_5",port="1"}'
wait_for_metric /metrics "$series" 40 1 || fail "no critical link_degraded anomaly on mlx5_5 port 1; log:
$(tail -n 20 "$AGENT_LOG")"
body="$(scrape /metrics)"
expected="$(metric_value "$body" 'fabric_link_degraded_expected_lanes{device="mlx5_5",port="1",netdev="ibp154s0",source="manifest"}')"
[[ "$expected" == 4 ]] || fail "expected lanes from the manifest: '$expected'
$(grep fabric_link_degraded_expected_lanes <<<"$body" | head -3)"
lanes="$(metric_value "$body" 'fabric_link_degraded_lanes{device="mlx5_5",port="1",netdev="ibp154s0"}')"
[[ "$lanes" == 1 ]] || fail "actual lanes: '$lanes'"
ok "width loss 4X -> 1X on mlx5_5 port 1 raised critical, expected 4 lanes from the manifest"
api="$(curl -s --max-time 5 "$(url /api/v1/anomalies)")"
grep -q '"expected_width_lanes"' <<<"$api" || fail "the API has no expected_width_lanes evidence: $api"
grep -q 'from the manifest' <<<"$api" || fail "the API reason does not name the manifest: $api"
ok "/api/v1/anomalies carries the expected and actual width and where the expectation came from"
others="$(grep -c '^fabric_anomaly_active{detector="link_degraded"' <<<"$body" || true)"
[[ "$others" == 1 ]] || fail "$others link_degraded anomalies, not 1:
$(grep '^fabric_anomaly_active' <<<"$body")"
ok "one fault, one finding"
finish
