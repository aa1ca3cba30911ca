#!/usr/bin/env bash
# Installs the Debian packages fabricwatch needs, and nothing else.
#   tools/install-deps.sh build   -- what `make run` needs (compiler, libraries)
#   tools/install-deps.sh test    -- plus what `make test` needs (gtest, prometheus/promtool, iproute2, curl,
#                                    clang-format and universal-ctags for tools/lint.sh)
# Idempotent and quiet when everything is present. When something is missing and we are not root,
# prints the apt-get command and exits 1 instead of guessing at sudo.
set -euo pipefail

build_pkgs=(
  build-essential cmake pkg-config
  prometheus-cpp-dev zlib1g-dev
  libspdlog-dev libfmt-dev
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
  libibverbs-dev
  libibmad-dev libibumad-dev  # InfiniBand neighbours by directed-route SMP (collectors/peer/smp_query.h)
  liblldpctl-dev  # neighbours from a running lldpd (collectors/peer/lldpd_client.h)
  libcurl4-openssl-dev  # pod names from the kubelet's HTTPS API (collectors/jobs/kubelet_client.h)
  libyaml-cpp-dev libexpected-dev libcli11-dev nlohmann-json3-dev
  libssl-dev libcrypt-dev  # TLS and bcrypt of --web.config.file (exporter/http/web_security.h)
  dpkg-dev file  # make deb: cpack's Depends scan runs dpkg-shlibdeps on what `file` calls ELF
  help2man  # the manual page fabricwatch.1, from the built binary's --help (deploy/CMakeLists.txt)
)
test_pkgs=(
  libgtest-dev libgmock-dev
  python3             # test scripts parse JSON and run small loopback receivers
  prometheus          # provides promtool and the real server used by the e2e test
  iproute2 curl procps ethtool iputils-ping openssl  # openssl: test certificates (TLS e2e)
  prometheus-node-exporter  # the peer exporter rdma_external_test cross-checks the rdma collector against
  prometheus-alertmanager jq socat  # alerts/: amtool, the alerting e2e (Alertmanager, webhook receiver), dashboard checks
  wrk strace               # tools/bench: concurrent scrapers, syscall counts
  clang libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes for tools/fuzz (ctest fuzz.optics_smoke)
  clang-format universal-ctags  # tools/lint.sh (ctest lint.format_and_size): formatting, function sizes
  # A one-node Slurm cluster for e2e.slurm_drain_test (it runs its own daemons, key and config in
  # a temp dir; Debian's postinst may start the packaged services, which stay idle unconfigured).
  munge slurmctld slurmd slurm-client
  util-linux mount  # setpriv, unshare, mount: e2e.privileges_e2e_test (an unprivileged agent, a read-only root)
  systemd           # systemd-analyze verify and security --offline: e2e.systemd_unit_test
  lldpd             # two lldpd in network namespaces: lldp_lldpd_test (collectors/peer/lldpd_client.h)
  chromium          # headless browser: e2e.status_page_browser_test loads the status page at /
  faketime          # libfaketime: e2e.clock_step_test steps the agent's wall clock while it runs
  lintian           # e2e.deb_package_test reports what lintian finds in the package
  npm               # e2e.deploy_manifests_test: npm ci of tools/k8s-validate (Kubernetes API schemas)
  # kernel.rdma_rxe_guest (docs/kernel-guest.md): Debian's kernel under qemu with soft-RoCE devices;
  # the kernel package itself is fetched by the test with `apt-get download`, never installed.
  qemu-system-x86 busybox-static kmod
  ibverbs-providers ibverbs-utils perftest  # the rxe provider, ibv_devinfo, ib_write_bw
)

mode="${1:-build}"
wanted=("${build_pkgs[@]}")
[[ "$mode" == test ]] && wanted+=("${test_pkgs[@]}")

missing=()
for p in "${wanted[@]}"; do
  # A Node.js from outside Debian (NodeSource's nodejs) bundles npm and conflicts with Debian's
  # npm package: an npm already on PATH is enough.
  [[ "$p" == npm ]] && command -v npm >/dev/null && continue
  status="$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)"
  [[ "$status" == installed ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ "$(id -u)" != 0 ]]; then
  echo "fabricwatch: missing Debian packages: ${missing[*]}" >&2
  echo "fabricwatch: run as root:  apt-get update && $cmd" >&2
  exit 1
fi
echo "fabricwatch: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# A fresh machine has empty package lists; refresh them once before installing. apt's chatter
# goes to a log that is shown only if something fails.
# shellcheck disable=SC2086
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends ${missing[*]}; } \
    >"$log" 2>&1; then
  cat "$log" >&2
  echo "fabricwatch: installing ${missing[*]} failed" >&2
  exit 1
fi
