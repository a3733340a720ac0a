#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""postgres_summary.py: merge the raw outputs of bench/real/postgres.sh into
one JSON document (bench/results/postgres.json) with machine details.

usage: postgres_summary.py WORKDIR ROOT ALL ROUNDS CLIENTS TPS_S COUNT_S SCALE LOOKUPS
"""
import json
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from summarize import machine  # noqa: E402  (bench/summarize.py)

# (manifest, descriptors summed, USDT probe, expectation, why)
PAIRS = [
    ("lwlock", ["lwlock_acquire"], "lwlock__acquire", "equal",
     "LWLockAcquire returns once per acquisition; lwlock__acquire (lwlock.c:1347) fires once on that path"),
    ("lwlock", ["lwlock_wait"], "lwlock__acquire", "equal",
     "every LWLockAcquire call (the WAIT span) ends in exactly one acquisition"),
    ("lwlock", ["lwlock_cond_acquire"], "lwlock__condacquire", "equal",
     "LWLockConditionalAcquire returns true exactly where lwlock__condacquire fires (lwlock.c:1407)"),
    ("lwlock", ["lwlock_acquire_or_wait"], "lwlock__acquire__or__wait", "equal",
     "LWLockAcquireOrWait returns true exactly where lwlock__acquire__or__wait fires (lwlock.c:1538)"),
    ("lwlock", ["lwlock_release"], "lwlock__release", "equal",
     "LWLockRelease (lwlock.c:1807) fires lwlock__release once per call"),
    ("lwlock", ["lwlock_wait_start"], "lwlock__wait__start", "equal",
     "the same USDT probe, attached by probity (libbpf) and bpftrace: a check of the two attach paths"),
    ("buffer", ["pin_read", "pin_read_norelcache"], "buffer__read__done", "equal",
     "each ReadBufferExtended/ReadBufferWithoutRelcache return passes ReadBuffer_common's buffer__read__done (bufmgr.c:905/1095) once"),
    ("lock", ["lock_wait_start"], "lock__wait__start", "equal",
     "the same USDT probe (lock.c:1109)"),
    ("lock", ["lock_wait_relation", "lock_wait_transaction", "lock_wait_tuple", "lock_wait_advisory"],
     "lock__wait__start", "at_most",
     "ProcSleep spans of four lock types; lock__wait__start also counts the other types (page, object, extend, ...)"),
]


def maps(path):
    out = {}
    try:
        for line in open(path):
            if line.strip():
                m = json.loads(line)
                if m.get("type") == "map":
                    for k, v in m["data"].items():
                        out[k.lstrip("@")] = v
    except FileNotFoundError:
        pass
    return out


def objs(path):
    try:
        return [json.loads(l) for l in open(path) if l.startswith("{")]
    except FileNotFoundError:
        return []


def counts(w):
    rows, per_process = [], {}
    for m, descs, probe, expect, why in PAIRS:
        h = json.load(open(f"{w}/c_{m}.health"))
        ev = {d["id"]: d["events"] for d in h["descriptors"]}
        bt = maps(f"{w}/c_{m}.bt.json")
        p = sum(ev.get(d, 0) for d in descs)
        u = sum(bt.get(probe, {}).values())
        matched = min(p, u)
        ok = p == u if expect == "equal" else p <= u
        rows.append({
            "manifest": f"manifests/postgresql-15/{m}.yaml", "descriptors": descs, "usdt": probe,
            "probity": p, "usdt_hits": u, "expect": expect, "holds": ok,
            "precision": round(matched / p, 6) if p else None,
            "recall": round(matched / u, 6) if u else None,
            "why": why,
        })
        per_process.setdefault(m, {})
        for name, by_pid in bt.items():
            per_process[m][name] = {"processes": len(by_pid), "by_pid": by_pid}
        rec = (objs(f"{w}/c_{m}.rec") or [{}])[-1]
        if rec.get("processes") is not None:
            per_process[m]["probity_events"] = {str(p["pid"]): p["events"] for p in rec["processes"]}
    return rows, per_process


def healthy_findings(w):
    """the top findings of each count run (a healthy pgbench run)"""
    out = {}
    for m in ("lwlock", "buffer", "lock"):
        try:
            r = json.load(open(f"{w}/c_{m}.report"))
        except (FileNotFoundError, ValueError):
            out[m] = None
            continue
        out[m] = {"findings": len(r["findings"]),
                  "max_severity": max((f["severity"] for f in r["findings"]), default=0),
                  "top": [{"kind": f["kind"], "resource": f["resource"], "severity": round(f["severity"], 1),
                           "summary": f["summary"]} for f in r["findings"][:3]]}
    return out


def rate(w, name, all_mode):
    try:
        text = open(f"{w}/{name}.out").read()
    except FileNotFoundError:
        return None
    pat = r"tps = ([0-9.]+) \(without initial" if all_mode else r"rate ([0-9.]+)"
    m = re.search(pat, text)
    return float(m.group(1)) if m else None


def overhead(w, rounds, all_mode):
    per = {k: [rate(w, f"o_{k}_{r}", all_mode) for r in range(1, rounds + 1)]
           for k in ("none", "probity", "bpftrace")}
    med = {k: statistics.median([x for x in v if x is not None]) if any(x is not None for x in v) else None
           for k, v in per.items()}
    ratio = {k: round(med[k] / med["none"], 4) if med[k] and med["none"] else None
             for k in ("probity", "bpftrace")}
    recs = [(objs(f"{w}/o_probity_{r}.rec") or [{}])[-1] for r in range(1, rounds + 1)]
    return {
        "unit": "pgbench -S transactions/s" if all_mode else "index lookups/s of one backend",
        "all_rounds": per, "median": med, "ratio_to_none": ratio,
        "probity_events": [x.get("events") for x in recs],
        "probity_drops": [x.get("drops") for x in recs],
        "probity_lost": [x.get("lost") for x in recs],
    }


def main():
    w, root, all_mode = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    rounds, clients, tps_s, count_s, scale, lookups = (int(x) for x in sys.argv[4:10])
    rows, per_process = counts(w)
    ov = overhead(w, rounds, all_mode)
    held = sum(r["holds"] for r in rows)
    summary = "%d/%d count checks hold; throughput vs none: probity %s, bpftrace %s (%s)" % (
        held, len(rows), ov["ratio_to_none"]["probity"], ov["ratio_to_none"]["bpftrace"], ov["unit"])
    doc = {
        "bench": "postgres", "machine": machine(root),
        "server": {"binary": "/usr/lib/postgresql/15/bin/postgres", "package": "postgresql-15 15.18-0+deb12u1",
                   "build_id": "44c007cfee140e4c25e8a434008096828e70a92c", "pgbench_scale": scale,
                   "settings": "fsync=off, autovacuum=off, bgwriter_delay=10s, wal_writer_delay=10s (bench/real/lib.sh)"},
        "mode": "record --all, pgbench clients" if all_mode else
                "one backend (record --all not in this build): a psql session's DO loop of index lookups",
        "method": {
            "counts": "one run per manifest (pgbench -T %d, %d clients%s) with bpftrace counting the USDT probes per pid in the same run"
                      % (count_s, clients, "" if all_mode else "; single backend, %d lookups" % lookups),
            "precision_recall": "matched = min(probity, usdt); precision = matched/probity, recall = matched/usdt",
            "overhead": "%d interleaved rounds of none / record --all -m lwlock.yaml / bpftrace postgres-lwlock.bt, pgbench -S -T %d -c %d; medians"
                        % (rounds, tps_s, clients) if all_mode else
                        "%d interleaved rounds of none / record --pid / bpftrace (pid filter), %d lookups each; medians" % (rounds, lookups),
        },
        "counts": rows, "usdt_per_process": per_process, "healthy_run_findings": healthy_findings(w),
        "overhead": ov, "summary": summary,
    }
    json.dump(doc, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
