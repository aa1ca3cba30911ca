#!/usr/bin/env bash
# deploy/kubernetes and deploy/prometheus, checked offline (issue 25 items 3 and 4):
#  - the ConfigMap's agent configuration passes `fabricwatch --config.check`, and an agent
#    started with it serves /healthz, the path of the DaemonSet's probes;
#  - every Prometheus configuration passes `promtool check config`, which also loads the shipped
#    alerts/*.rules.yml through the configurations' relative rule_files and the file_sd targets;
#  - every manifest validates against the Kubernetes v1.36 and prometheus-operator API schemas of
#    pinned npm packages (tools/k8s-validate: package.json, package-lock.json), with unknown
#    fields as errors, and mutated copies are rejected;
#  - the facts no schema knows hold (tools/k8s-validate/deploy-facts.mjs): capabilities = the
#    README "Privileges" table, port = the agent's default listen address, probes on /healthz,
#    drain RBAC = hooks/kubernetes/rbac.yaml, target labels the rules use.
# Nothing is applied to a cluster. Needs promtool (package prometheus), node and npm; the npm
# packages come from the registry with `npm ci` into a temp dir (npm's cache makes a rerun
# offline). Exit 77 (skipped) when npm is missing or cannot reach the registry.
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/deploy_manifests_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init deploy_manifests_test "$@"

SRC="$FABRICWATCH_SOURCE_DIR"
K8S="$SRC/deploy/kubernetes"
PROM="$SRC/deploy/prometheus"
command -v promtool >/dev/null || skip "promtool is not installed (package prometheus)"

# --- The agent configuration of 20-configmap.yaml, with the DaemonSet's flags. The hook path
# is the package's; here the repository's copy of the same script stands in for it.
CONFIG="$E2E_TMP/fabricwatch.yml"
sed -n '/^  fabricwatch.yml: |$/,$p' "$K8S/20-configmap.yaml" | tail -n +2 | sed 's/^    //' |
  sed "s#/usr/lib/fabricwatch/hooks/#$SRC/hooks/#" >"$CONFIG"
grep -q '^hooks:' "$CONFIG" || fail "no agent configuration extracted from 20-configmap.yaml"
FIXTURE="$SRC/tests/fixtures/sysfs/roce-node"
if ! out="$("$FABRICWATCH_BIN" --config.check --config.file="$CONFIG" \
  --state.file="$E2E_TMP/state.json" --path.sysfs="$FIXTURE" 2>&1)"; then
  fail "fabricwatch --config.check rejects the ConfigMap's configuration:
$out"
fi
grep -q 'configuration is valid' <<<"$out" || fail "--config.check did not validate: $out"
grep -Eq '^hook kubernetes +ok' <<<"$out" || fail "--config.check did not check the hook: $out"
ok "the ConfigMap's configuration passes --config.check (hook kubernetes ok)"

start_agent --config.file="$CONFIG" --state.file="$E2E_TMP/state.json" --path.sysfs="$FIXTURE"
[[ "$(scrape /healthz)" == ok* ]] || fail "/healthz did not answer ok"
ok "an agent with that configuration answers the probes' GET /healthz"
stop_agent
"$FABRICWATCH_BIN" --help >"$E2E_TMP/help.txt" 2>&1 || fail "fabricwatch --help failed"

# --- Prometheus configurations. rule_files are relative to each file (../../alerts/), so
# promtool loads the repository's rules: every one of them must be found.
rule_count="$(find "$SRC/alerts" -maxdepth 1 -name '*.rules.yml' | wc -l)"
promtool_check() {  # promtool_check FILE LABEL
  local out
  if ! out="$(cd "$(dirname "$1")" && promtool check config "$(basename "$1")" 2>&1)"; then
    fail "promtool check config $2:
$out"
  fi
  grep -q "SUCCESS: $rule_count rule files found" <<<"$out" ||
    fail "$2: not all $rule_count alerts/*.rules.yml were loaded: $out"
}
promtool_check "$PROM/static.yml" static.yml
ok "promtool check config static.yml ($rule_count rule files)"
promtool_check "$PROM/file-sd.yml" file-sd.yml
ok "promtool check config file-sd.yml (with targets/fabricwatch.yml)"

# Debian's promtool is built without Kubernetes discovery ("field kubernetes_sd_configs not
# found"). Then the rest of the file (global, rule files, alerting, relabelling) is checked on a
# copy whose kubernetes_sd_configs block is an empty static_configs, and the block itself by
# deploy-facts.mjs below.
k8s_out="$(cd "$PROM" && promtool check config kubernetes-sd.yml 2>&1)" && k8s_rc=0 || k8s_rc=$?
if ((k8s_rc == 0)); then
  ok "promtool check config kubernetes-sd.yml"
elif grep -q 'field kubernetes_sd_configs not found' <<<"$k8s_out"; then
  # The copy sits at the same depth under the temp dir, beside a link to alerts/, so its
  # rule_files path resolves as the original's does.
  mkdir -p "$E2E_TMP/deploy/prometheus"
  ln -s "$SRC/alerts" "$E2E_TMP/alerts"
  cut_copy="$E2E_TMP/deploy/prometheus/kubernetes-sd.yml"
  awk '/^    kubernetes_sd_configs:/ { print "    static_configs: []"; skip = 1; next }
       skip && /^      / { next } { skip = 0; print }' "$PROM/kubernetes-sd.yml" >"$cut_copy"
  ! grep -q "^ *kubernetes_sd_configs:" "$cut_copy" || fail "the discovery block was not cut"
  grep -q '__meta_kubernetes_node_label_fabricwatch_io_leaf' "$cut_copy" ||
    fail "the relabelling was cut with the discovery block"
  promtool_check "$cut_copy" kubernetes-sd.yml
  ok "promtool check config kubernetes-sd.yml without its discovery block (this promtool has no Kubernetes SD)"
else
  fail "promtool check config kubernetes-sd.yml:
$k8s_out"
fi

# --- The npm packages, pinned by the lock file, installed into a temp copy of the tool.
command -v node >/dev/null || skip "node is not installed (packages nodejs, npm)"
command -v npm >/dev/null || skip "npm is not installed (package npm)"
TOOL="$E2E_TMP/k8s-validate"
mkdir -p "$TOOL"
cp "$SRC/tools/k8s-validate/"{package.json,package-lock.json,validate.mjs,deploy-facts.mjs} "$TOOL/"
if ! npm_out="$(cd "$TOOL" && timeout 300 npm ci --prefer-offline --no-audit --no-fund \
  --fetch-timeout=30000 --fetch-retries=1 2>&1)"; then
  if grep -Eq 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network' \
    <<<"$npm_out"; then
    skip "npm cannot reach the registry to install tools/k8s-validate (the checks above passed): $(grep -m1 -E 'ENOTFOUND|EAI_AGAIN|ECONN|ETIMEDOUT|ENETUNREACH|network' <<<"$npm_out")"
  fi
  fail "npm ci in tools/k8s-validate failed:
$npm_out"
fi
ok "npm ci: $(cd "$TOOL" && node -e 'const l=require("./package-lock.json");console.log(Object.keys(l.packages).length-1)') packages from package-lock.json"

mapfile -t manifests < <(find "$K8S" -name '*.yaml' | sort)
manifests+=("$SRC/hooks/kubernetes/rbac.yaml")
if ! out="$(node "$TOOL/validate.mjs" "${manifests[@]}" 2>&1)"; then
  fail "manifests do not validate:
$out"
fi
printf '%s\n' "$out" | sed 's/^/  /'
ok "${#manifests[@]} manifest files validate against the API schemas, unknown fields rejected"

# The validator must reject what a server would: an unknown container field, an unknown
# PodMonitor field, a wrong type, a kind no package models.
BAD="$E2E_TMP/bad"
mkdir -p "$BAD"
sed 's/^\(          imagePullPolicy: IfNotPresent\)$/\1\n          imagePulPolicy: Always/' \
  "$K8S/30-daemonset.yaml" >"$BAD/daemonset.yaml"
sed 's/^\(      scrapeTimeout: 10s\)$/\1\n      honourLabels: true/' \
  "$K8S/prometheus-operator/podmonitor.yaml" >"$BAD/podmonitor.yaml"
sed 's/^\(      port: 9868\)$/      port: "9868"/' "$K8S/40-service.yaml" >"$BAD/service.yaml"
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n' >"$BAD/widget.yaml"
grep -q imagePulPolicy "$BAD/daemonset.yaml" && grep -q honourLabels "$BAD/podmonitor.yaml" &&
  grep -q 'port: "9868"' "$BAD/service.yaml" || fail "a mutation did not apply"
if out="$(node "$TOOL/validate.mjs" "$BAD"/*.yaml 2>&1)"; then
  fail "mutated manifests passed: $out"
fi
for expect in "'\"imagePulPolicy\"' does not exist in type 'IContainer'" \
  "'\"honourLabels\"' does not exist in type 'IPodMetricsEndpoint'" \
  "/spec/ports/0/port must be integer" "no schema for apiVersion example.com/v1 kind Widget"; do
  grep -qF "$expect" <<<"$out" || fail "mutated manifests: no error \"$expect\" in:
$out"
done
ok "mutated manifests are rejected (unknown fields, a string port, an unknown kind)"

# --- Facts no schema can check.
if ! out="$(node "$TOOL/deploy-facts.mjs" "$SRC" "$E2E_TMP/help.txt" 2>&1)"; then
  fail "deploy facts:
$out"
fi
printf '%s\n' "$out" | sed 's/^/  /'
ok "deploy facts hold ($(grep -c '^ok - ' <<<"$out") checked)"

# And they bite: a README that marks CAP_SYS_PTRACE in use no longer matches the DaemonSet.
ROOT="$E2E_TMP/root"
mkdir -p "$ROOT"
cp -r "$SRC/deploy" "$SRC/hooks" "$SRC/alerts" "$ROOT/"
sed 's/^| `CAP_SYS_PTRACE` | no (optional) |/| `CAP_SYS_PTRACE` | yes |/' "$SRC/README.md" >"$ROOT/README.md"
cmp -s "$ROOT/README.md" "$SRC/README.md" && fail "the README mutation did not apply"
if out="$(node "$TOOL/deploy-facts.mjs" "$ROOT" "$E2E_TMP/help.txt" 2>&1)"; then
  fail "deploy facts passed against a README that requires CAP_SYS_PTRACE"
fi
grep -q '^not ok - DaemonSet capabilities add' <<<"$out" || fail "no capability mismatch in: $out"
ok "a capability the README requires and the DaemonSet lacks fails the facts"

finish
