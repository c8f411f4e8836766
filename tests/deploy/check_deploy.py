#!/usr/bin/env python3
"""The deployment files against the code they deploy.

usage: check_deploy.py SOURCE_DIR BIN_DIR

- deploy/kubernetes/: the DaemonSet's structure (host access, capabilities,
  no privileged, no CAP_SYS_ADMIN, the seccomp profile wired in, resources),
  the ConfigMap's configuration file valid for `lowprof config check`, the
  kustomization listing every file;
- the seccomp profile is exactly what `lowprof-seccomp-tool oci union`
  prints, whose names are the union allowlist (`names union`);
- deploy/lowprof.service's SystemCallFilter= is the same union.
Exit 77 (skipped) without python3-yaml.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (apt-get install python3-yaml)")
    sys.exit(77)

SRC, BIN = sys.argv[1], sys.argv[2]
K8S = os.path.join(SRC, "deploy", "kubernetes")
failures = []

# The loader's capabilities, then the supervisor's (docs/SECURITY.md).
CAPS = {"BPF", "PERFMON", "SYS_PTRACE", "DAC_READ_SEARCH", "SYSLOG",
        "CHECKPOINT_RESTORE", "SETUID", "SETGID", "SETPCAP", "KILL", "CHOWN", "FOWNER"}
HOST_PATHS = {"/sys/fs/bpf", "/var/lib/lowprof", "/var/lib/kubelet/seccomp"}


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def load(name):
    with open(os.path.join(K8S, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def tool(*args):
    return subprocess.run([os.path.join(BIN, "lowprof-seccomp-tool")] + list(args),
                          check=True, capture_output=True, text=True).stdout


kust = load("kustomization.yaml")[0]
docs = {}
for res in kust["resources"]:
    for d in load(res):
        docs[(d["kind"], d["metadata"]["name"])] = d
gen = kust["configMapGenerator"][0]
check(gen["name"] == "lowprof-seccomp" and gen["files"] == ["lowprof-seccomp.json"],
      "kustomization: the seccomp ConfigMap is generated from lowprof-seccomp.json")
for f in os.listdir(K8S):
    if f.endswith(".yaml") and f != "kustomization.yaml":
        check(f in kust["resources"], "kustomization does not list " + f)

ds = docs.get(("DaemonSet", "lowprof"))
check(ds is not None and ds["apiVersion"] == "apps/v1", "a DaemonSet named lowprof (apps/v1)")
spec = ds["spec"]["template"]["spec"]
check(spec.get("hostPID") is True, "hostPID: a whole node's processes")
check(ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
      "the selector matches the pod's labels")
volumes = {v["name"]: v for v in spec["volumes"]}
host = {v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
check(host <= HOST_PATHS, "host paths beyond what profiling needs: %s" % sorted(host - HOST_PATHS))
check(not any("debug" in p for p in host), "/sys/kernel/debug mounted though lowprof uses no tracefs")
containers = spec["containers"] + spec.get("initContainers", [])
for c in containers:
    sc = c.get("securityContext", {})
    check(sc.get("privileged", False) is False, c["name"] + ": privileged")
    check(sc.get("allowPrivilegeEscalation") is False, c["name"] + ": allowPrivilegeEscalation")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], c["name"] + ": drops ALL capabilities")
    added = set(sc.get("capabilities", {}).get("add", []))
    check("SYS_ADMIN" not in added and "CAP_SYS_ADMIN" not in added, c["name"] + ": CAP_SYS_ADMIN")
    check(sc.get("readOnlyRootFilesystem") is True, c["name"] + ": read-only root")
    for m in c.get("volumeMounts", []):
        check(m["name"] in volumes, "%s mounts an undefined volume %s" % (c["name"], m["name"]))
main = [c for c in spec["containers"] if c["name"] == "lowprof"][0]
sc = main["securityContext"]
check(set(sc["capabilities"]["add"]) == CAPS,
      "capabilities: %s, want %s" % (sorted(sc["capabilities"]["add"]), sorted(CAPS)))
prof = sc.get("seccompProfile", {})
check(prof.get("type") == "Localhost" and prof.get("localhostProfile") == "profiles/lowprof.json",
      "lowprof's container runs under the Localhost profile profiles/lowprof.json")
init = spec["initContainers"][0]
check("/host-seccomp/profiles/lowprof.json" in " ".join(init["command"]),
      "the init container installs the profile where the container expects it")
check(volumes["seccomp-profile"]["configMap"]["name"] == gen["name"], "the profile's ConfigMap is mounted")
res = main.get("resources", {})
check("memory" in res.get("requests", {}) and "memory" in res.get("limits", {}),
      "memory requests and limits")
check("cpu" not in res.get("limits", {}), "no CPU limit (lowprof bounds its own CPU)")
mounts = {m["mountPath"]: m["name"] for m in main["volumeMounts"]}
check(mounts.get("/sys/fs/bpf") == "bpffs" and mounts.get("/var/lib/lowprof") == "state",
      "bpffs and the state directory mounted")
cmd = main["command"]
check(cmd[0] == "/usr/bin/lowprof" and "--config" in cmd and
      cmd[cmd.index("--output") + 1] == "/var/lib/lowprof", "the command: " + " ".join(cmd))

cm = docs.get(("ConfigMap", "lowprof-config"))
check(cm is not None and volumes["config"]["configMap"]["name"] == "lowprof-config",
      "the configuration ConfigMap is mounted")
conf = cm["data"]["lowprof.conf"]
check("otlp-endpoint = http://otel-collector." in conf, "the OTLP endpoint is an OpenTelemetry Collector service")
with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
    f.write(conf)
    f.flush()
    r = subprocess.run([os.path.join(BIN, "lowprof"), "config", "check", f.name],
                       capture_output=True, text=True)
    check(r.returncode == 0, "the ConfigMap's lowprof.conf: " + r.stderr.strip())

# The seccomp profile: generated, and the union of the components' allowlists.
with open(os.path.join(K8S, "lowprof-seccomp.json")) as f:
    committed = f.read()
printed = tool("oci", "union")
check(committed == printed, "deploy/kubernetes/lowprof-seccomp.json is not what "
      "`lowprof-seccomp-tool oci union` prints: regenerate it")
union = {}
for line in tool("names", "union").splitlines():
    name, action = line.split()
    union[name] = action
profile = json.loads(committed)
check(profile["defaultAction"] == "SCMP_ACT_KILL_PROCESS", "anything else kills, like the filters")
names = {}
for g in profile["syscalls"]:
    for n in g["names"]:
        names[n] = "allow" if g["action"] == "SCMP_ACT_ALLOW" else "errno:%s" % g.get("errnoRet")
check(set(names) == set(union), "profile names differ from the union: +%s -%s" %
      (sorted(set(names) - set(union)), sorted(set(union) - set(names))))
check(all((names[n] == "allow") == (union[n] == "allow") for n in names if n in union),
      "the profile allows what the union answers with an errno, or the reverse")

# The systemd unit's outer filter: the same union.
with open(os.path.join(SRC, "deploy", "lowprof.service")) as f:
    unit = [l for l in f if l.startswith("SystemCallFilter=") and not l.startswith("SystemCallFilter=~")]
check(len(unit) == 1 and set(unit[0].split("=", 1)[1].split()) == set(union),
      "deploy/lowprof.service's SystemCallFilter= is not the union: "
      "regenerate it with lowprof-seccomp-tool names union")

failures = [f for f in failures if f]
for f in failures:
    print("FAIL: " + f)
if failures:
    sys.exit(1)
print("ok: DaemonSet, ConfigMap, kustomization; seccomp profile = union of %d names; unit filter = union"
      % len(union))
