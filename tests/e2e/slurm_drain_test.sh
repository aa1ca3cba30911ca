#!/usr/bin/env bash
# Real Slurm: the shipped slurm-drain hook against Debian's slurmctld, slurmd and munged,
# configured here as a one-node cluster on loopback (own ports, state, spool, munge key and
# socket in a temp dir; nothing of the host's Slurm or munge is used or changed).
#
#   1. hook phase (always): a raise drains the node with the owned "fabricwatch:" reason that
#      `sinfo -R` shows; a clear resumes it; dry run and an exhausted fleet budget change
#      nothing; a node drained by hand with another reason is neither re-labelled nor resumed.
#   2. agent phase (when the simulator and the pfc_storm detector are built): fabricsim's
#      pfc_storm_source scenario -> the agent's pfc_storm detector -> the hook runner drains the
#      node; when the storm clears and the hold-down passes, it is resumed.
#
# Usage: slurm_drain_test.sh /path/to/fabricwatch. Needs root (the daemons run as root here).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init slurm_drain_test "$@"

[[ "$(id -u)" == 0 ]] || skip "needs root to run slurmctld, slurmd and munged"
for tool in munged slurmctld slurmd scontrol sinfo; do
  command -v "$tool" >/dev/null ||
    skip "$tool is not installed (tools/install-deps.sh test installs munge slurmctld slurmd)"
done

HOOK="$FABRICWATCH_SOURCE_DIR/hooks/slurm-drain"
NODE=fwnode1
T="$E2E_TMP"
mkdir -p "$T/munge" "$T/state" "$T/spool"
chmod 700 "$T/munge"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- munge: our own key and socket -----------------------------------------------------------
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/munged.seed" >"$T/munge/munged.out" 2>&1 &
register_pid $!
for _ in $(seq 1 100); do [[ -S "$T/munge/munge.socket" ]] && break; sleep 0.05; done
[[ -S "$T/munge/munge.socket" ]] || fail "munged did not start: $(cat "$T/munge/munged.out" "$T/munge/munged.log" 2>/dev/null)"
ok "munged running with a test key"

# --- a one-node cluster on loopback ----------------------------------------------------------
CTLD_PORT="$(free_port)"
SLURMD_PORT="$(free_port)"
export SLURM_CONF="$T/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=fabricwatch-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$NODE NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=1 RealMemory=64 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
# No cgroup.conf: proctrack/linuxproc and task/none use no cgroup (22.05 has no
# CgroupPlugin=disabled; slurmd still autodetects the cgroup version at start).

slurmctld -D -c -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
register_pid $!
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
register_pid $!

daemon_logs() {
  local f
  for f in slurmctld.out slurmctld.log slurmd.out slurmd.log; do
    [[ -f "$T/$f" ]] && { echo "--- $f"; tail -n 20 "$T/$f"; }
  done
}

node_state() { sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -n1; }
node_reason() { sinfo -h -R -n "$NODE" -o '%E' 2>/dev/null | head -n1; }

wait_state() {  # wait_state REGEX TIMEOUT_S
  local deadline=$(($(now_ms) + $2 * 1000)) s
  while (($(now_ms) < deadline)); do
    s="$(node_state)"
    [[ "$s" =~ ^($1)$ ]] && return 0
    sleep 0.2
  done
  return 1
}

wait_state 'idle' 60 || fail "node $NODE did not become idle within 60 s (state \"$(node_state)\"):
$(daemon_logs)"
ok "one-node cluster up: $NODE idle ($(sinfo -V))"

# The event as the agent passes it (hook_runner.cc BuildHookEnvironment).
run_hook() {  # run_hook EVENT ACTION [ENV...]: sets out (stdout+stderr) and HOOK_RC
  local event="$1" action="$2"
  shift 2
  HOOK_RC=0
  out="$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF="$SLURM_CONF" \
    FABRICWATCH_HOOK=slurm FABRICWATCH_EVENT="$event" FABRICWATCH_ACTION="$action" \
    FABRICWATCH_DETECTOR=pfc_storm FABRICWATCH_SEVERITY=critical \
    FABRICWATCH_ENTITY="netdev=eth2 priority=3 role=source" \
    FABRICWATCH_LABEL_NETDEV=eth2 FABRICWATCH_LABEL_PRIORITY=3 FABRICWATCH_LABEL_ROLE=source \
    FABRICWATCH_REASON="eth2 priority 3 transmits pause 97% of the time" \
    FABRICWATCH_VALUE=0.97 FABRICWATCH_EVIDENCE='{"pause_ratio":0.97}' \
    FABRICWATCH_EVIDENCE_TEXT="pause_ratio=0.97" FABRICWATCH_NODE="$NODE" \
    FABRICWATCH_DRAIN_ELIGIBLE=1 FABRICWATCH_FLEET_BUDGET_FILE="$T/budget-exhausted" \
    FABRICWATCH_DRY_RUN=0 "$@" "$HOOK" 2>&1)" || HOOK_RC=$?
}

OWNED="fabricwatch: pfc_storm netdev=eth2 priority=3 role=source pause_ratio=0.97"

# --- 1. the hook against real Slurm ----------------------------------------------------------
run_hook raise drain FABRICWATCH_DRY_RUN=1
[[ "$HOOK_RC" == 0 && "$out" == *"dry run: would run:"*"State=DRAIN"* ]] ||
  fail "dry-run drain: rc $HOOK_RC, output: $out"
sleep 1
[[ "$(node_state)" == idle ]] || fail "dry run changed the node: $(node_state)"
ok "dry run prints the scontrol command and leaves $NODE idle"

touch "$T/budget-exhausted"
run_hook raise drain
[[ "$HOOK_RC" == 75 && "$out" == *"fleet drain budget is exhausted"* ]] ||
  fail "fleet budget file: rc $HOOK_RC, output: $out"
rm -f "$T/budget-exhausted"
run_hook raise drain FABRICWATCH_FLEET_BUDGET_EXHAUSTED=1
[[ "$HOOK_RC" == 75 ]] || fail "fleet budget variable: rc $HOOK_RC, output: $out"
[[ "$(node_state)" == idle ]] || fail "a refused drain changed the node: $(node_state)"
ok "an exhausted fleet budget (file or variable) refuses the drain (exit 75)"

run_hook raise drain
[[ "$HOOK_RC" == 0 ]] || fail "drain failed: rc $HOOK_RC, output: $out"
wait_state 'drained|draining' 10 || fail "not drained after the hook: $(node_state); $out"
reason="$(node_reason)"
[[ "$reason" == "$OWNED" ]] || fail "sinfo -R reason \"$reason\", want \"$OWNED\""
# Plain `sinfo -R` cuts the reason at 20 characters; the prefix that says who owns it survives.
sinfo_r="$(sinfo -R)"
[[ "$sinfo_r" == *"fabricwatch: pfc_sto"*"$NODE"* ]] || fail "sinfo -R: $sinfo_r"
ok "raise drained $NODE; sinfo -R shows \"$reason\""

run_hook raise drain
[[ "$HOOK_RC" == 0 && "$(node_reason)" == "$OWNED" ]] || fail "repeated drain: rc $HOOK_RC, $out"
ok "a repeated drain of our own drain is idempotent"

run_hook clear resume
[[ "$HOOK_RC" == 0 ]] || fail "resume failed: rc $HOOK_RC, output: $out"
wait_state 'idle' 10 || fail "not resumed: $(node_state); $out"
ok "clear resumed $NODE (state $(node_state))"

scontrol update NodeName="$NODE" State=DRAIN Reason="admin: replacing DIMM B3"
wait_state 'drained|draining' 10 || fail "manual drain did not take: $(node_state)"
run_hook raise drain
[[ "$HOOK_RC" == 0 && "$out" == *"another reason"* ]] || fail "drain over admin: rc $HOOK_RC, $out"
[[ "$(node_reason)" == "admin: replacing DIMM B3" ]] || fail "admin reason overwritten: $(node_reason)"
run_hook clear resume
[[ "$HOOK_RC" == 0 && "$out" == *"not resuming"* ]] || fail "resume over admin: rc $HOOK_RC, $out"
sleep 1
[[ "$(node_state)" =~ ^(drained|draining)$ && "$(node_reason)" == "admin: replacing DIMM B3" ]] ||
  fail "a node drained by hand was changed: $(node_state) \"$(node_reason)\""
ok "a node drained by hand (\"admin: replacing DIMM B3\") is neither re-labelled nor resumed"
scontrol update NodeName="$NODE" State=RESUME
wait_state 'idle' 10 || fail "could not resume the node by hand: $(node_state)"

# --- 2. the whole path: simulator -> agent -> detector -> hook runner -> Slurm -----------------
FABRICSIM="${FABRICSIM_BIN:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
agent_phase_missing=""
if [[ ! -x "$FABRICSIM" ]]; then
  agent_phase_missing="the simulator is not built ($FABRICSIM)"
elif ! grep -q -- '--detector.pfc_storm' <<<"$("$FABRICWATCH_BIN" --help 2>&1)"; then
  agent_phase_missing="the agent has no pfc_storm detector (--detector.pfc_storm not in --help)"
fi
if [[ -n "$agent_phase_missing" ]]; then
  echo "SKIP (agent phase): $agent_phase_missing; the hook phase above ran against real Slurm"
  finish
fi

cat >"$T/storm.yml" <<'EOF'
preset: roce-small
duration: 150s
events:
  - at: 10s
    fault: pfc_storm_source
    device: mlx5_0
    priority: 3
    duration: 40s
EOF
cat >"$T/fabricwatch.yml" <<EOF
hooks:
  dry_run: false
  node_name: $NODE
  cooldown: 0s
  max_drains_per_hour: 5
  clear_hold_down: 5s
  timeout: 20s
  fleet_budget_file: $T/budget-exhausted
  run:
    - name: slurm
      command: [$HOOK]
      detectors: [pfc_storm]
      env: {SLURM_CONF: $SLURM_CONF}
EOF
"$FABRICWATCH_BIN" --config.file="$T/fabricwatch.yml" --config.check >/dev/null 2>&1 || {
  echo "SKIP (agent phase): the agent does not accept a hooks: section yet (not wired into config.cc)"
  finish
}
"$FABRICSIM" build --preset roce-small --root "$T/sim" >/dev/null 2>&1 ||
  fail "fabricsim build failed"
"$FABRICSIM" run --root "$T/sim" --scenario "$T/storm.yml" >"$T/fabricsim.out" 2>&1 &
register_pid $!
# A job holding the RDMA device open (issue 24): it opens the replay node of mlx5_0's verbs
# device (the simulator's class/infiniband_verbs/uverbs0) and sleeps. The cluster runs without
# job cgroups (proctrack/linuxproc), so the agent learns the job from `scontrol listpids`.
mkdir -p "$T/dev/infiniband"
: >"$T/dev/infiniband/uverbs0"
JOB="$(sbatch --parsable -N1 -w "$NODE" -o /dev/null --wrap "exec 3<$T/dev/infiniband/uverbs0; sleep 600")" ||
  fail "sbatch failed: $(daemon_logs)"
on_cleanup "scancel $JOB"
for _ in $(seq 1 100); do
  [[ "$(squeue -h -j "$JOB" -o %T 2>/dev/null)" == RUNNING ]] && break
  sleep 0.2
done
[[ "$(squeue -h -j "$JOB" -o %T 2>/dev/null)" == RUNNING ]] ||
  fail "job $JOB did not start: $(squeue -j "$JOB" 2>&1) $(daemon_logs)"
start_agent --path.sysfs="$T/sim/sys" --path.ethtool="$T/sim/ethtool" \
  --config.file="$T/fabricwatch.yml" --detector.pfc_storm \
  --path.procfs=/proc --collector.jobs.uverbs-dir="$T/dev/infiniband" --collector.jobs.interval=2s
wait_for_metric /metrics "fabric_device_job_info{device=\"mlx5_0\",scheduler=\"slurm\",job_id=\"$JOB\",pod_namespace=\"\",pod_name=\"\"}" 30 ||
  fail "the agent did not attribute mlx5_0 to job $JOB:
$(scrape /metrics | grep -E 'fabric_device|fabric_jobs|collector="jobs"'); $(grep -i jobs "$AGENT_LOG" | tail -n 5)"
ok "job $JOB, holding mlx5_0's verbs node open, is attributed to mlx5_0 (scontrol listpids)"
wait_state 'drained|draining' 120 || fail "the agent did not drain $NODE within 120 s:
$(grep -i hook "$AGENT_LOG" | tail -n 20)"
reason="$(node_reason)"
[[ "$reason" == "fabricwatch: pfc_storm "*"role=source"*"jobs $JOB"* ]] ||
  fail "agent drain reason: $reason (want the storm and jobs $JOB)"
ok "the simulated PFC storm source drained $NODE through the agent: \"$reason\""
anomalies="$(scrape /api/v1/anomalies)"
[[ "$anomalies" == *"\"jobs\":[\"slurm:$JOB\"]"* ]] || fail "/api/v1/anomalies has no jobs: $anomalies"
ok "/api/v1/anomalies carries the job (\"slurm:$JOB\")"
scancel "$JOB"
wait_state 'idle' 150 || fail "the agent did not resume $NODE after the storm cleared:
$(grep -i hook "$AGENT_LOG" | tail -n 20)"
ok "after the storm cleared and the hold-down passed, the agent resumed $NODE"
body="$(scrape /metrics)"
[[ "$(metric_value "$body" 'fabricwatch_hook_runs_total{hook="slurm",result="success"}')" == 2 ]] ||
  fail "hook run metrics: $(grep fabricwatch_hook_runs_total <<<"$body")"
ok "fabricwatch_hook_runs_total{hook=\"slurm\",result=\"success\"} 2"
finish
