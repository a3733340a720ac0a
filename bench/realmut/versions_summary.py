#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""versions_summary.py: helpers of bench/realmut/versions.sh.

  versions_summary.py subset MANIFEST PLAN_JSON OUT
      MANIFEST with the events `plan --rebind` refused cut out (their
      blocks of lines; nothing else changes): `record` refuses a manifest
      with any refused descriptor, so the rest is recorded from OUT.
  versions_summary.py summary RUNS ROOT T CLIENTS SCALE
      bench/results/realmut_versions.json from the raw outputs in RUNS.
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "real"))
from summarize import machine  # noqa: E402  (bench/summarize.py)

MANIFESTS = ("buffer", "lwlock", "lock", "buffer_seq")

# (manifest, descriptors summed, USDT probe, expectation, why): the same
# pairs as bench/real/postgres_summary.py, for every build
PAIRS = [
    ("lwlock", ["lwlock_acquire"], "lwlock__acquire", "equal",
     "LWLockAcquire returns once per acquisition; lwlock__acquire fires once on that path"),
    ("lwlock", ["lwlock_wait"], "lwlock__acquire", "equal",
     "every LWLockAcquire call (the WAIT span) ends in exactly one acquisition"),
    ("lwlock", ["lwlock_cond_acquire"], "lwlock__condacquire", "equal",
     "LWLockConditionalAcquire returns true exactly where lwlock__condacquire fires"),
    ("lwlock", ["lwlock_acquire_or_wait"], "lwlock__acquire__or__wait", "equal",
     "LWLockAcquireOrWait returns true exactly where lwlock__acquire__or__wait fires"),
    ("lwlock", ["lwlock_release"], "lwlock__release", "equal",
     "LWLockRelease fires lwlock__release once per call"),
    ("lwlock", ["lwlock_wait_start"], "lwlock__wait__start", "equal",
     "the same USDT probe, attached by probity (libbpf) and bpftrace"),
    ("buffer", ["pin_read", "pin_read_norelcache"], "buffer__read__done", "equal",
     "on 15.x each ReadBufferExtended/ReadBufferWithoutRelcache return passes ReadBuffer_common's buffer__read__done once"),
    ("buffer_seq", ["pin_read", "pin_read_norelcache"], "buffer__read__done", "equal",
     "the same identity under sequential scans (on 17+ they read through read streams)"),
    ("lock", ["lock_wait_start"], "lock__wait__start", "equal", "the same USDT probe"),
    ("lock", ["lock_wait_relation", "lock_wait_transaction", "lock_wait_tuple", "lock_wait_advisory"],
     "lock__wait__start", "at_most",
     "ProcSleep spans of four lock types; lock__wait__start also counts the other types"),
    ("lock", ["lock_wait_advisory"], "lock__wait__start", "equal",
     "the workload's only lock waits are on its two advisory locks"),
    ("lock", ["advisory_wait"], "lock__wait__start", "at_least",
     "every pg_advisory_lock call is a WAIT span; those that sleep fire lock__wait__start"),
]


def subset(manifest, plan_json, out):
    plan = json.load(open(plan_json))
    refused = {d["event"] for d in plan.get("descriptors", []) if d.get("status") != "ok"}
    ok = [d for d in plan.get("descriptors", []) if d.get("status") == "ok"]
    if not ok:
        print("subset: every descriptor refused; nothing to record", file=sys.stderr)
        return 1
    lines = open(manifest).read().split("\n")
    keep, skipping = [], False
    for ln in lines:
        m = re.match(r"^  - id: (\S+)\s*$", ln)
        if m:
            skipping = m.group(1) in refused
        elif skipping and (re.match(r"^\S", ln) or re.match(r"^  #", ln)):
            skipping = False
        if not skipping:
            keep.append(ln)
    with open(out, "w") as f:
        f.write("\n".join(keep))
    return 0


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, ValueError):
        return default


def text(path):
    try:
        return open(path).read().strip()
    except FileNotFoundError:
        return None


def bt_maps(path):
    """bpftrace -f json maps: probe -> {pid: count}"""
    out = {}
    try:
        for line in open(path):
            if line.startswith("{"):
                m = json.loads(line)
                if m.get("type") == "map":
                    for k, v in m["data"].items():
                        out[k.lstrip("@")] = v if isinstance(v, dict) else {"?": v}
    except FileNotFoundError:
        pass
    return out


def last_obj(path):
    objs = []
    try:
        objs = [json.loads(ln) for ln in open(path) if ln.startswith("{")]
    except (FileNotFoundError, ValueError):
        pass
    return objs[-1] if objs else None


def strict_refusal(d):
    """the build-id refusal without --rebind: exit status, descriptors
    refused and the first error note"""
    plan = load(f"{d}.plan_strict", {})
    err = next((n["message"] for n in plan.get("notes", []) if n.get("severity") == "error"), None)
    return {"exit": int(text(f"{d}.plan_strict.rc") or -1), "refused": plan.get("refused"),
            "descriptors": len(plan.get("descriptors", [])), "error": err}


def descriptors(run, m):
    """per descriptor: plan status (resolved / refused + why), then the run's
    initial and final confidence, events, violations and changes"""
    plan = load(f"{run}/{m}.plan", {})
    health = load(f"{run}/{m}.health", {})
    hd = {x["id"]: x for x in health.get("descriptors", [])}
    changes = {}
    for c in health.get("changes", []):
        changes.setdefault(c.get("id") or c.get("descriptor"), []).append(c)
    out = []
    for p in plan.get("descriptors", []):
        e = p["event"]
        row = {"id": e, "kind": p["kind"], "plan": "resolved" if p["status"] == "ok" else "refused",
               "refusal": p.get("reason"), "sites": p.get("sites")}
        h = hd.get(e)
        if h:
            row.update({"initial": h["initial"], "final": h["state"], "events": h["events"],
                        "violations": {k: v for k, v in h["violations"].items() if v},
                        "reason": h.get("reason"), "changes": changes.get(e, [])})
        elif p["status"] == "ok":
            row["final"] = None
        out.append(row)
    return out


def cross_checks(run, m):
    health = load(f"{run}/{m}.health", {})
    ev = {d["id"]: d["events"] for d in health.get("descriptors", [])}
    bt = bt_maps(f"{run}/{m}.usdt.json")
    probes = set((text(f"{run}/usdt_probes") or "").split())
    backends = set((text(f"{run}/{m}.backends") or "").split())
    rows = []
    for mm, descs, probe, expect, why in PAIRS:
        if mm != m or not health:
            continue
        present = [x for x in descs if x in ev]
        if not present:
            rows.append({"descriptors": descs, "usdt": probe, "checked": False,
                         "why_not": "descriptor(s) refused or not recorded"})
            continue
        if probe not in probes:
            rows.append({"descriptors": descs, "usdt": probe, "checked": False,
                         "why_not": "this build has no such USDT probe"})
            continue
        p = sum(ev[x] for x in present)
        by_pid = bt.get(probe, {})
        u = sum(by_pid.values())
        ub = sum(v for k, v in by_pid.items() if k in backends)
        # the tracers attach and detach a moment apart: the clients'
        # backends live inside both windows, background processes do not
        # (bpftrace is attached first and detached last)
        holds = {"equal": ub <= p <= u, "at_most": p <= u, "at_least": p >= ub}[expect]
        rows.append({"descriptors": present, "usdt": probe, "probity": p, "usdt_hits": u,
                     "usdt_hits_client_backends": ub, "client_backends": len(backends),
                     "expect": expect, "holds": holds, "exact": p == u, "why": why,
                     "missing": [x for x in descs if x not in present]})
    return rows


def recorded(run, m, rec, why_not):
    if why_not:
        return "not recorded (the build does not run here)"
    if not rec:
        return "not recorded"
    if text(f"{run}/{m}.plan.rc") != "0":
        return "subset (refused events cut out)"
    return "manifest as shipped"


def summary(runs, root, t, clients, scale):
    builds = []
    for ln in open(f"{runs}/builds"):
        name, bindir = ln.split()
        run = f"{runs}/{name}"
        if not os.path.isdir(run):
            continue
        why_not = text(f"{run}/version.err")
        b = {"name": name, "binary": f"{bindir}/postgres", "version": text(f"{run}/version"),
             "runs_here": not why_not,
             "loadavg_start_end": (text(f"{run}/loadavg") or "").split("\n"),
             "why_not_run": why_not.split("\n")[0] if why_not else None,
             "build_id": text(f"{run}/build_id"), "usdt_probes": len((text(f"{run}/usdt_probes") or "").split()),
             "pgbench_init": "ok" if "done" in (text(f"{run}/init.log") or "") else text(f"{run}/init.log"),
             "manifests": {}}
        for m in MANIFESTS:
            if not os.path.exists(f"{run}/{m}.plan"):
                continue
            rec = last_obj(f"{run}/{m}.rec")
            tps = re.search(r"tps = ([0-9.]+) \(without", text(f"{run}/{m}.pgbench") or "")
            b["manifests"][m] = {
                "without_rebind": strict_refusal(f"{run}/{m}"),
                "plan_rebind_exit": int(text(f"{run}/{m}.plan.rc") or -1),
                "recorded": recorded(run, m, rec, why_not),
                "record_exit": int(text(f"{run}/{m}.rc") or -1) if not why_not else None,
                "record_error": None if rec or why_not else (text(f"{run}/{m}.rerr") or "")[-600:],
                "events": rec.get("events") if rec else None,
                "drops": rec.get("drops") if rec else None,
                "lost": {k: v for k, v in (rec or {}).get("lost", {}).items() if v},
                "processes": len(rec.get("processes") or []) if rec else None,
                "pgbench_tps": float(tps.group(1)) if tps else None,
                "descriptors": descriptors(run, m),
                "usdt_cross_check": cross_checks(run, m),
            }
        builds.append(b)
    tally = {}
    for b in builds:
        for m, r in b["manifests"].items():
            for d in r["descriptors"]:
                k = "refused" if d["plan"] == "refused" else (d.get("final") or "not recorded")
                tally.setdefault(b["name"], {}).setdefault(k, 0)
                tally[b["name"]][k] += 1
    checks = [(b["name"], c) for b in builds for r in b["manifests"].values() for c in r["usdt_cross_check"]
              if c.get("checked", True)]
    doc = {
        "bench": "realmut_versions", "machine": machine(root),
        "manifests": {m: f"manifests/postgresql-15/{m.replace('_seq', '')}.yaml" for m in MANIFESTS},
        "manifest_build": {"package": "postgresql-15 15.18-0+deb12u1",
                           "build_id": "44c007cfee140e4c25e8a434008096828e70a92c"},
        "method": {
            "plans": "probity plan MANIFEST --binary POSTGRES without --rebind (the build-id refusal) and with it",
            "record": "throwaway cluster of the build (bench/real/lib.sh), pgbench -i -s %d; per manifest one run of "
                      "probity record --cgroup CLUSTER_CG --rebind --binary POSTGRES -m MANIFEST during pgbench -S -T %d -c %d "
                      "(lock.yaml: a pgbench script of pg_advisory_lock/unlock on 2 keys, -T %d -c %d, so that there are lock waits) "
                      "with bpftrace counting the build's own USDT probes in the same cgroup and run" % (scale, t, clients, t, clients),
            "subset": "record refuses a manifest with a refused descriptor; then the refused events are cut out "
                      "(bench/realmut/versions_summary.py subset) and the rest recorded",
            "equal": "'equal' pairs hold when USDT(client backends) <= probity <= USDT(all processes of the cluster): "
                     "bpftrace attaches before and detaches after record, so background processes (checkpointer, "
                     "walwriter, ...) add USDT hits outside record's window; the clients' backends live inside both. "
                     "'exact' says whether the totals are equal",
            "confidence": "initial/final per descriptor from probity health on the trace (degraded -> validated needs 3 clean "
                          "windows of >= 50 events each)",
        },
        "next_major": {"chosen": text(f"{runs}/../src/.which"), "unavailable": text(f"{runs}/../src/.unavailable"),
                       "source_build_finished": os.path.exists(f"{runs}/../src/.built")},
        "loadavg_at_summary": text("/proc/loadavg"),
        "builds": builds, "tally": tally,
        "summary": "%d/%d USDT cross-checks hold; %s" % (
            sum(1 for _, c in checks if c["holds"]), len(checks),
            "; ".join("%s: %s" % (n, ", ".join("%s %d" % kv for kv in sorted(v.items())))
                      for n, v in tally.items())),
    }
    json.dump(doc, sys.stdout, indent=1)
    print()
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "subset":
        return subset(*sys.argv[2:5])
    if len(sys.argv) == 7 and sys.argv[1] == "summary":
        return summary(sys.argv[2], sys.argv[3], *(int(x) for x in sys.argv[4:7]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
