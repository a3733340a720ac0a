#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""summarize.py: merge bench/run.sh's raw outputs into bench/results/engine.json.

  summarize.py WORKDIR ROOT END_EPOCH START_EPOCH COST_CALLS COST_ROUNDS DEMO_ROUNDS ATTACH_ROUNDS
      -> the JSON document on stdout
  summarize.py --summary engine.json
      -> a readable summary on stdout
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys


def objs(path):
    """Every JSON object in a file (the demo and record both print one)."""
    s = open(path).read()
    dec = json.JSONDecoder()
    i, out = 0, []
    while i < len(s):
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            break
        o, i = dec.raw_decode(s, i)
        out.append(o)
    return out


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine(root):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), None)
    commit = run(["git", "-C", root, "rev-parse", "HEAD"])
    dirty = run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"])
    return {
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "arch": platform.machine(),
        "cpu_model": cpu,
        "cores_online": os.cpu_count(),
        "mem_total_kib": next((int(l.split()[1]) for l in open("/proc/meminfo")
                               if l.startswith("MemTotal")), None),
        "libbpf_version": run(["pkg-config", "--modversion", "libbpf"]),
        "compiler": run(["cc", "--version"]).splitlines()[0] if run(["cc", "--version"]) else None,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": commit,
        "git_worktree_dirty": bool(dirty),
        "note": "shared, noisy VM: compare ratios measured in one run, not absolute times across runs",
    }


def build(w, root, t_end, t_start, cost_calls, cost_rounds, demo_rounds, attach_rounds):
    cost = json.load(open(f"{w}/cost.json"))
    attach = json.load(open(f"{w}/attach.json"))

    # demo throughput
    rps = {"none": [], "aggregate": [], "events": []}
    rec = {"aggregate": [], "events": []}
    for r in range(1, demo_rounds + 1):
        rps["none"].append(objs(f"{w}/demo_none_{r}.json")[0]["requests_per_s"])
        for mode, f in (("aggregate", "agg"), ("events", "ev")):
            os_ = objs(f"{w}/demo_{f}_{r}.json")
            demo = next(o for o in os_ if "requests_per_s" in o)
            summ = next((o for o in os_ if "records" in o and "drops" in o), {})
            rps[mode].append(demo["requests_per_s"])
            x = {k: summ.get(k) for k in ("events", "records", "drops", "duration_s", "bytes")}
            if demo.get("requests") and summ.get("events") is not None:
                x["events_per_request"] = round(summ["events"] / demo["requests"], 2)
            rec[mode].append(x)
    med = {k: statistics.median(v) for k, v in rps.items()}

    # report throughput
    reports = {}
    for t in ("demo", "loop"):
        times = [float(b) - float(a) for a, b in
                 (l.split() for l in open(f"{w}/report_{t}.times") if l.strip())]
        counts = json.load(open(f"{w}/report_{t}.json"))["counts"]
        m = statistics.median(times)
        reports[t] = {
            "trace_bytes": int(open(f"{w}/report_{t}.bytes").read()),
            "records": counts["records"],
            "resource_events": counts["resource_events"],
            "ringbuf_drops_in_trace": counts.get("ringbuf_drops"),
            "seconds_median": round(m, 4),
            "seconds_all": [round(x, 4) for x in times],
            "records_per_s": round(counts["records"] / m) if m > 0 else None,
        }
    loop_rec = next((o for o in objs(f"{w}/loop_rec.json") if "records" in o and "drops" in o), {})

    ratios = cost["ratio_to_empty_probe"]
    return {
        "benchmark": "engine",
        "machine": machine(root),
        "wall_s": int(t_end) - int(t_start),
        "engine_cost_per_event": {
            "what": ("ns per probed call (one engine event each) on four sites of bench/engine_bench.c, "
                     "'push' = first insn push %rbp (1 byte, emulated by the kernel), 'nop5' = first insn "
                     "a 5-byte nop (plan note: can be optimized); 'entry' = ACQUIRE/RELEASE at function entry "
                     "(instance arg0), 'return' = the same at return (instance retval); each measured call "
                     "alternates an ACQUIRE and a RELEASE of one instance, so every event opens or closes a "
                     "generation in the engine's instance map"),
            "method": (f"the binary probes itself (engine__new with pid = self, plan from "
                       f"bench/bench.manifest.yaml); modes none / empty uprobe_multi+uretprobe_multi program "
                       f"on the same offsets / engine aggregate / engine --events (a second thread drains the "
                       f"ring buffer with engine__poll(1 ms)), interleaved for {cost_rounds} rounds; per round "
                       f"and site {2 * cost_calls} probed calls ({20 * cost_calls} unprobed), timed with "
                       f"CLOCK_MONOTONIC; medians over rounds; attach/load time excluded"),
            "unit": "ns/call",
            "ns_per_call_median": cost["ns_per_call_median"],
            "ns_per_call_all_rounds": cost["ns_per_call_all_rounds"],
            "ratio_definition": "(engine - none) / (empty - none), medians; 1.0 = the engine costs no more than an empty uprobe",
            "ratio_to_empty_probe": ratios,
            "engine_ns_over_empty_ns": {
                mode: {site: round(cost["ns_per_call_median"][mode][site] - cost["ns_per_call_median"]["empty"][site], 1)
                       for site in ratios[mode]} for mode in ratios},
            "sites": cost["sites"],
            "setup_s_median": cost["setup_s_median"],
        },
        "demo_throughput": {
            "what": "probity-demo --duration 3 --clients 4 --json requests/s, alone vs under probity record (whole demo manifest attached)",
            "method": f"{demo_rounds} interleaved rounds of (alone, record aggregate, record --events); median requests_per_s from the demo's own --json summary",
            "unit": "requests/s",
            "requests_per_s_median": med,
            "requests_per_s_all_rounds": rps,
            "ratio_to_alone": {k: round(med[k] / med["none"], 3) for k in ("aggregate", "events")},
            "record_summaries": rec,
        },
        "attach_1000_sites": {
            "what": f"attach and detach an empty program at {attach['sites']} distinct functions of a generated binary (bench/gen_sites.sh)",
            "method": (f"one uprobe_multi link with {attach['sites']} offsets (median of {attach['rounds_multi']} rounds) vs "
                       f"{attach['sites']} bpf_program__attach_uprobe links ({attach['rounds_single']} round); pid -1; "
                       "no process had the binary mapped, so no breakpoint is written at attach time"),
            "unit": "ms",
            "uprobe_multi_one_link": attach["uprobe_multi_one_link"],
            "single_links": attach["single_links"],
            "ratio_single_over_multi": attach["ratio_single_over_multi"],
        },
        "ringbuf_drain": {
            "burst": dict(cost["drain_burst"], **{
                "unit": "records/s",
                "method": ("engine --events with a ring buffer of ringbuf_bytes and no reader; calls fill 3/4 of it, "
                           "then engine__poll(timeout 0) is called until empty and timed; 'bursts' times, "
                           "records_per_s = median of records_per_s_each")}),
            "concurrent": dict(cost["events_mode_concurrent_drain"], **{
                "unit": "records/s",
                "method": ("during the --events rounds of the cost bench: records the drainer thread consumed / "
                           "wall time of the calls (rate limited by the producer); drops from the engine's counter")}),
        },
        "report_throughput": {
            "what": "probity -j report TRACE > /dev/null wall time, 3 runs, median; records/s = trace records / median time",
            "unit": "records/s",
            "demo_events_trace": reports["demo"],
            "synthetic_events_trace": dict(reports["loop"], recording=loop_rec,
                                           source="probity record --events --ringbuf-kib 65536 -- engine_bench loop N"),
        },
    }


def summary(path):
    d = json.load(open(path))
    m = d["machine"]
    print(f"engine bench ({m['date_utc']}, commit {str(m['git_commit'])[:12]}{' dirty' if m['git_worktree_dirty'] else ''})")
    print(f"  {m['cpu_model']}, {m['cores_online']} cores, kernel {m['kernel']}, libbpf {m['libbpf_version']}")
    c = d["engine_cost_per_event"]
    sites = list(c["ns_per_call_median"]["none"].keys())
    print("\n1. engine cost per event, ns/call (median), ratio = (engine-none)/(empty-none)")
    print(f"  {'site':<12} {'none':>7} {'empty':>9} {'aggregate':>10} {'events':>9} {'ratio agg':>10} {'ratio ev':>9}")
    for s in sites:
        n = c["ns_per_call_median"]
        r = c["ratio_to_empty_probe"]
        print(f"  {s:<12} {n['none'][s]:7.1f} {n['empty'][s]:9.1f} {n['engine_aggregate'][s]:10.1f} "
              f"{n['engine_events'][s]:9.1f} {r['engine_aggregate'][s]:10.2f} {r['engine_events'][s]:9.2f}")
    t = d["demo_throughput"]
    print("\n2. demo throughput, requests/s (median)")
    for k, v in t["requests_per_s_median"].items():
        ratio = "" if k == "none" else f"  ratio {t['ratio_to_alone'][k]:.3f}"
        epr = "" if k == "none" else f"  ({t['record_summaries'][k][0].get('events_per_request')} engine events/request)"
        print(f"  {k:<10} {v:10.1f}{ratio}{epr}")
    a = d["attach_1000_sites"]
    print("\n3. attach 1000 sites, ms")
    print(f"  uprobe_multi (1 link): attach {a['uprobe_multi_one_link']['attach_ms']:.2f}  detach {a['uprobe_multi_one_link']['detach_ms']:.2f}")
    print(f"  1000 single links:     attach {a['single_links']['attach_ms']:.2f}  detach {a['single_links']['detach_ms']:.2f}")
    print(f"  single/multi: attach x{a['ratio_single_over_multi']['attach']:.0f}, detach x{a['ratio_single_over_multi']['detach']:.0f}")
    r = d["ringbuf_drain"]
    print("\n4. ring buffer drain and report throughput")
    print(f"  drain burst: {r['burst']['bursts']} x {r['burst']['records_drained_total'] // r['burst']['bursts']} records, "
          f"median {r['burst']['records_per_s']:.0f} records/s, drops {r['burst']['drops_total']}")
    print(f"  concurrent drain: {r['concurrent']['records_drained']} records, {r['concurrent']['records_per_s_wall']:.0f} records/s "
          f"(producer-bound), drops {r['concurrent']['drops']}")
    for k in ("demo_events_trace", "synthetic_events_trace"):
        x = d["report_throughput"][k]
        print(f"  report {k}: {x['records']} records, {x['trace_bytes']} bytes in {x['seconds_median']:.3f} s = {x['records_per_s']} records/s")
    print(f"\nbench wall time {d['wall_s']} s; written to bench/results/engine.json")


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
    else:
        w, root, t_end, t_start = sys.argv[1:5]
        cc, cr, dr, ar = (int(x) for x in sys.argv[5:9])
        print(json.dumps(build(w, root, t_end, t_start, cc, cr, dr, ar), indent=2))
