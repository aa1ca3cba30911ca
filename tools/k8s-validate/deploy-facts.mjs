// Checks the facts of deploy/kubernetes and deploy/prometheus that no schema can: that they
// agree with the agent, the README, the hooks and the alert rules.
//
//   node tools/k8s-validate/deploy-facts.mjs REPO_ROOT HELP_FILE
//
// HELP_FILE holds the output of `fabricwatch --help` (the default listen address comes from the
// binary itself). Prints one line per fact checked; exit 0 when all hold, 1 otherwise.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { basename, join } from "node:path";
import { parseAllDocuments, parse } from "yaml";

const [root, helpFile] = process.argv.slice(2);
if (!root || !helpFile) {
  console.error("usage: node deploy-facts.mjs REPO_ROOT HELP_FILE");
  process.exit(2);
}
let failures = 0;
function fact(ok, what) {
  console.log(`${ok ? "ok" : "not ok"} - ${what}`);
  if (!ok) failures++;
}
const read = (path) => readFileSync(join(root, path), "utf8");
const docs = (path) => parseAllDocuments(read(path)).map((d) => d.toJS()).filter(Boolean);
const find = (list, kind, name) => list.find((d) => d.kind === kind && d.metadata?.name === name);
const sorted = (list) => [...list].sort();

const k8s = "deploy/kubernetes";
const daemonset = find(docs(`${k8s}/30-daemonset.yaml`), "DaemonSet", "fabricwatch");
const pod = daemonset.spec.template.spec;
const container = pod.containers.find((c) => c.name === "fabricwatch");
const rbac = docs(`${k8s}/10-rbac.yaml`);
const configmap = find(docs(`${k8s}/20-configmap.yaml`), "ConfigMap", "fabricwatch");
const service = find(docs(`${k8s}/40-service.yaml`), "Service", "fabricwatch");
const podmonitor = find(docs(`${k8s}/prometheus-operator/podmonitor.yaml`), "PodMonitor",
                        "fabricwatch");

// --- Capabilities: the README "Privileges" table is the source. Rows marked `yes` are what the
// agent uses today; `no (optional)` ones are left to the operator and must be explained in the
// DaemonSet's comments; any other `no` must not be granted.
const readme = read("README.md");
const privileges = readme.slice(readme.indexOf("\n## Privileges"));
const rows = [...privileges.matchAll(/^\| `CAP_([A-Z_]+)` \| ([^|]+) \|/gm)]
    .map((m) => ({ cap: m[1], inUse: m[2].trim() }));
const inUse = rows.filter((r) => r.inUse === "yes").map((r) => r.cap);
const optional = rows.filter((r) => r.inUse === "no (optional)").map((r) => r.cap);
const granted = container.securityContext?.capabilities?.add ?? [];
fact(rows.length > 0 && inUse.length > 0, `README Privileges table read: in use ${inUse.join(", ")}; optional ${optional.join(", ")}`);
fact(isDeepStrictEqual(sorted(granted), sorted(inUse)),
     `DaemonSet capabilities add [${granted.join(", ")}] = README "in use" [${inUse.join(", ")}]`);
fact(isDeepStrictEqual(container.securityContext?.capabilities?.drop, ["ALL"]),
     "DaemonSet drops ALL capabilities");
const dsText = read(`${k8s}/30-daemonset.yaml`);
for (const cap of optional) {
  fact(dsText.includes(cap), `optional capability ${cap} is explained in the DaemonSet's comments`);
}
const sc = container.securityContext;
fact(sc.readOnlyRootFilesystem === true && sc.allowPrivilegeEscalation === false &&
     sc.privileged === false, "read-only root filesystem, no privilege escalation, not privileged");
fact(pod.hostNetwork === true && pod.hostPID === true, "hostNetwork and hostPID");

// --- Port: the agent's default --web.listen-address, from `fabricwatch --help`.
const help = readFileSync(helpFile, "utf8");
const defaultListen = help.match(/--web\.listen-address\b[^\n]*Default (\S+)/)?.[1];
const defaultPort = Number(defaultListen?.match(/:(\d+)$/)?.[1]);
fact(Number.isInteger(defaultPort), `default listen address from --help: ${defaultListen}`);
const args = [...(container.command ?? []), ...(container.args ?? [])];
const listenArg = args.find((a) => a.startsWith("--web.listen-address"));
fact(listenArg === undefined, "the DaemonSet keeps the default listen address (no --web.listen-address)");
const metricsPort = container.ports?.find((p) => p.name === "metrics");
fact(metricsPort?.containerPort === defaultPort,
     `container port "metrics" ${metricsPort?.containerPort} = default port ${defaultPort}`);
const servicePort = service.spec.ports.find((p) => p.name === "metrics");
fact(service.spec.clusterIP === "None" && servicePort?.port === defaultPort &&
     servicePort?.targetPort === "metrics", `headless Service port "metrics" ${servicePort?.port}`);
fact(podmonitor.spec.podMetricsEndpoints.every((e) => e.port === "metrics"),
     'PodMonitor scrapes the port named "metrics"');

// --- Probes: both on /healthz (the agent's health endpoint, README "HTTP endpoints").
for (const probe of ["livenessProbe", "readinessProbe"]) {
  const get = container[probe]?.httpGet;
  fact(get?.path === "/healthz" && (get.port === "metrics" || get.port === defaultPort),
       `${probe} GET ${get?.path} on port ${get?.port}`);
}
fact(/^\| `\/healthz` \|/m.test(readme), "README HTTP endpoints lists /healthz");

// --- Files: the flags name the mounted ConfigMap key and the state directory.
const mountOf = (volume) => container.volumeMounts.find((m) => m.name === volume);
const volumeOf = (name) => pod.volumes.find((v) => v.name === name);
const configArg = args.find((a) => a.startsWith("--config.file="))?.split("=")[1];
const configVolume = pod.volumes.find((v) => v.configMap?.name === configmap.metadata.name);
fact(configVolume && configArg === `${mountOf(configVolume.name)?.mountPath}/fabricwatch.yml` &&
     "fabricwatch.yml" in configmap.data, `--config.file=${configArg} is the ConfigMap's key`);
const stateArg = args.find((a) => a.startsWith("--state.file="))?.split("=")[1];
const stateMount = container.volumeMounts.find((m) => stateArg?.startsWith(`${m.mountPath}/`));
fact(stateMount && !stateMount.readOnly && volumeOf(stateMount.name)?.hostPath?.path ===
     "/var/lib/fabricwatch", `--state.file=${stateArg} on the writable hostPath /var/lib/fabricwatch`);
for (const [path, readOnly] of [["/sys", true], ["/dev/kmsg", true], ["/dev/infiniband", false]]) {
  const mount = container.volumeMounts.find((m) => m.mountPath === path);
  fact(mount && volumeOf(mount.name)?.hostPath?.path === path && !!mount.readOnly === readOnly,
       `host ${path} mounted at ${path}${readOnly ? " read-only" : " read-write"}`);
}
const res = container.resources;
fact(res?.requests?.cpu && res?.requests?.memory && res?.limits?.cpu && res?.limits?.memory,
     "resource requests and limits set");

// --- The drain hook: command, node name, taint toleration, RBAC.
const agentConfig = parse(configmap.data["fabricwatch.yml"]);
const hook = agentConfig.hooks.run.find((h) => h.name === "kubernetes");
const hookScript = join(root, "hooks", basename(hook.command[0]));
fact(hook.command[0] === `/usr/lib/fabricwatch/hooks/${basename(hookScript)}` &&
     existsSync(hookScript) && (statSync(hookScript).mode & 0o111) !== 0,
     `hook command ${hook.command[0]} is the package's copy of hooks/${basename(hookScript)}`);
fact(agentConfig.hooks.dry_run === true, "the ConfigMap keeps hooks in dry run");
const nodeName = container.env?.find((e) => e.name === "NODE_NAME");
fact(nodeName?.valueFrom?.fieldRef?.fieldPath === "spec.nodeName" &&
     hook.pass_env.includes("NODE_NAME"), "NODE_NAME from the downward API reaches the hook");
const hookText = readFileSync(hookScript, "utf8");
const taintKey = hookText.match(/^readonly TAINT_KEY="([^"]+)"/m)?.[1];
fact(taintKey && pod.tolerations.some((t) => t.key === taintKey && t.operator === "Exists"),
     `the DaemonSet tolerates the hook's own taint ${taintKey}`);
const shipped = find(docs("hooks/kubernetes/rbac.yaml"), "ClusterRole", "fabricwatch-node-drain");
const deployed = find(rbac, "ClusterRole", "fabricwatch-node-drain");
fact(isDeepStrictEqual(deployed?.rules, shipped?.rules),
     "drain ClusterRole rules = hooks/kubernetes/rbac.yaml's");
const verbs = rbac.filter((d) => d.kind === "ClusterRole").flatMap((d) => d.rules)
    .flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${res}:${v}`)));
fact(isDeepStrictEqual(sorted(verbs), ["nodes/pods:get", "nodes/status:patch", "nodes:get", "nodes:patch"]),
     `granted: ${sorted(verbs).join(" ")} (no eviction, delete, list or nodes/proxy)`);
const account = find(rbac, "ServiceAccount", pod.serviceAccountName);
fact(account?.metadata.namespace === daemonset.metadata.namespace &&
     rbac.filter((d) => d.kind === "ClusterRoleBinding").every((b) => b.subjects.every(
         (s) => s.name === account.metadata.name && s.namespace === account.metadata.namespace)),
     `bindings name the DaemonSet's ServiceAccount ${pod.serviceAccountName}`);

// --- Target labels: the rules select job="fabricwatch" and use fabric, leaf and partition.
const rules = readdirSync(join(root, "alerts")).filter((f) => f.endsWith(".rules.yml"))
    .map((f) => read(`alerts/${f}`)).join("\n");
fact(rules.includes('job="fabricwatch"'), 'alert rules select job="fabricwatch"');
for (const label of ["fabric", "leaf", "partition"]) {
  fact(new RegExp(`\\b${label}\\b`).test(rules), `alert rules use the target label ${label}`);
}
const targetLabels = (relabels, keys) => relabels.map((r) => r[keys.target]).filter(Boolean);
const jobLabel = podmonitor.spec.jobLabel;
fact(daemonset.spec.template.metadata.labels[jobLabel] === "fabricwatch",
     `PodMonitor job = pod label ${jobLabel} = fabricwatch`);
fact(["instance", "fabric", "leaf", "partition"].every((l) => targetLabels(
         podmonitor.spec.podMetricsEndpoints[0].relabelings, { target: "targetLabel" }).includes(l)) &&
     podmonitor.spec.attachMetadata?.node === true,
     "PodMonitor sets instance, fabric, leaf, partition from the node");

const prom = "deploy/prometheus";
for (const file of ["static.yml", "file-sd.yml", "kubernetes-sd.yml"]) {
  const config = parse(read(`${prom}/${file}`));
  const job = config.scrape_configs.find((s) => s.job_name === "fabricwatch");
  fact(job && config.rule_files?.includes("../../alerts/*.rules.yml") &&
       config.alerting?.alertmanagers?.length > 0,
       `${file}: job fabricwatch, the shipped rule files, an Alertmanager`);
  let groups = job.static_configs ?? [];
  if (job.file_sd_configs) {
    groups = parse(read(`${prom}/targets/fabricwatch.yml`));
  }
  if (groups.length > 0) {
    fact(groups.every((g) => ["fabric", "leaf", "partition"].every((l) => g.labels?.[l]) &&
                             g.targets.every((t) => t.endsWith(`:${defaultPort}`))),
         `${file}: every target group has fabric, leaf, partition and port ${defaultPort}`);
  }
  if (job.kubernetes_sd_configs) {
    checkKubernetesSd(file, job);
  }
}

// promtool from Debian is built without Kubernetes discovery, so the block is checked here
// against the fields of Prometheus's kubernetes_sd_config (docs "Configuration",
// <kubernetes_sd_config>) and what this job needs from it.
function checkKubernetesSd(file, job) {
  const known = new Set(["api_server", "role", "kubeconfig_file", "namespaces", "selectors",
    "attach_metadata", "basic_auth", "authorization", "oauth2", "proxy_url", "no_proxy",
    "proxy_from_environment", "proxy_connect_header", "follow_redirects", "enable_http2",
    "tls_config", "http_headers"]);
  const roles = new Set(["node", "service", "pod", "endpoints", "endpointslice", "ingress"]);
  for (const sd of job.kubernetes_sd_configs) {
    const unknown = Object.keys(sd).filter((k) => !known.has(k));
    fact(unknown.length === 0 && roles.has(sd.role) &&
         Object.keys(sd.namespaces ?? {}).every((k) => ["names", "own_namespace"].includes(k)) &&
         Object.keys(sd.attach_metadata ?? {}).every((k) => k === "node"),
         `${file}: kubernetes_sd_configs role ${sd.role}, known fields only${
           unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`);
    fact(sd.namespaces?.names?.includes(daemonset.metadata.namespace) &&
         sd.attach_metadata?.node === true,
         `${file}: discovers namespace ${daemonset.metadata.namespace} with node metadata`);
  }
  const relabels = job.relabel_configs ?? [];
  const keep = relabels.find((r) => r.action === "keep");
  fact(keep?.regex === "fabricwatch;metrics", `${file}: keeps the pods' port "metrics" only`);
  fact(["instance", "fabric", "leaf", "partition"].every((l) =>
           targetLabels(relabels, { target: "target_label" }).includes(l)),
       `${file}: sets instance, fabric, leaf, partition`);
}

console.log(failures === 0 ? "deploy facts: all hold" : `deploy facts: ${failures} failed`);
process.exitCode = failures === 0 ? 0 : 1;
