#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# realmut_smoke.sh: the scorer of the real-code mutation benchmark
# (bench/realmut.sh, issue 15) on a committed fixture. CI cannot run the
# benchmark itself (it builds PostgreSQL from source: 10-30 min on 2
# cores, and CI machines start without the build cache), so this checks
# what turns its runs into bench/results/realmut.json:
#   tests/fixtures/realmut/cells/  cut from a real run of bench/realmut.sh
#     clean.usdt/            the USDT arm on the clean build + the
#                            compiled-in recorder's log of the same run
#     move_release.manifest_sym/  the shipped buffer.yaml without its
#                            offset sites (--rebind) on the move_release
#                            mutant + its compiled-in log
#     flush_handoff.usdt/    the USDT arm on the flush_handoff mutant
#                            (tpcb load, cold page cache: real block I/O)
#                            + its compiled-in log
#   (each cut to its first 800 events, flush_handoff 3000, by
#   bench/realmut/cut_fixture.py)
# - the clean USDT arm matches the ground truth per buffer (precision and
#   recall of pin/unpin/lock/unlock >= 0.9) and its diagnosis is right;
# - the symbol-only manifest on move_release is measured broken (unpin
#   recall < 0.9);
# - cross-layer attribution on flush_handoff: the truth ties block I/O to
#   buffer pins and the USDT arm ties it to the same buffers (precision 1,
#   recall > 0);
# - the scorer can fail: with the unpin events removed from the clean
#   USDT trace it must call that arm's model broken and its "valid"
#   verdict wrong; with flush_handoff's pin instances moved past every buffer it
#   must find no I/O tied to the right buffer.
set -u
. tests/cli/lib.sh
F=tests/fixtures/realmut
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
score() { # CELLS OUT
	python3 bench/realmut/score.py --cells "$1" --mutations bench/realmut/mutations.json \
		--variants "clean move_release flush_handoff" -o "$2" >"$2.err" 2>&1 ||
		{ err "score.py failed: $(tail -3 "$2.err")"; return 1; }
}

cp -r "$F/cells" "$T/cells"
score "$T/cells" "$T/out.json" &&
py "$T/out.json" '
cells = {(c["variant"], c["arm"]): c for c in d["cells"]}
u = cells[("clean", "usdt")]
for k in ("pin", "unpin", "lock", "unlock"):
    s = u["sites"][k]
    if not s["truth"] or s["precision"] < 0.9 or s["recall"] < 0.9:
        print("FAIL: clean usdt", k, s); sys.exit(1)
if u["model_truly_broken"] is not False or u["diagnosis"] != "right":
    print("FAIL: clean usdt not judged sound:", u["model_truly_broken"], u["diagnosis"]); sys.exit(1)
if u["lifetime_identity"] is None or u["lifetime_identity"] < 0.9:
    print("FAIL: clean usdt lifetime identity", u["lifetime_identity"]); sys.exit(1)
m = cells[("move_release", "manifest_sym")]
if m["model_truly_broken"] is not True or m["sites"]["unpin"]["recall"] >= 0.9:
    print("FAIL: move_release manifest not measured broken:", m["sites"]["unpin"]); sys.exit(1)
if "usdt" not in d["confusion"] or "manifest_sym" not in d["confusion"]:
    print("FAIL: confusion matrices missing"); sys.exit(1)
x = cells[("flush_handoff", "usdt")]["cross_layer"]
io = x["block_io"]
if not io["issued"] or not io["truth_tied"] or x["io_precision"] != 1.0 or not x["io_recall"]:
    print("FAIL: flush_handoff usdt cross-layer attribution:", x); sys.exit(1)
' || err "scores of the fixture"

# the cross-layer join can fail: the USDT arm names the wrong buffers
rm -rf "$T/cells"; cp -r "$F/cells" "$T/cells"
python3 -c 'import json, sys
p = sys.argv[1]
out = []
for line in open(p):
    it = json.loads(line)
    if it.get("type") == "resource" and it.get("resource") == "pg.buffer.pin":
        it["instance"] = hex(int(it["instance"], 16) + 100000)
        line = json.dumps(it, separators=(",", ":")) + "\n"
    out.append(line)
open(p, "w").writelines(out)' "$T/cells/flush_handoff.usdt/script.jsonl"
score "$T/cells" "$T/shift.json" &&
py "$T/shift.json" '
x = [c for c in d["cells"] if c["variant"] == "flush_handoff" and c["arm"] == "usdt"][0]["cross_layer"]
if x["block_io"]["arm_right"] != 0 or x["io_recall"] != 0:
    print("FAIL: planted wrong buffers not seen:", x["block_io"]); sys.exit(1)
' || err "the cross-layer join did not fail on the planted fault"

# the scorer can fail: drop the USDT arm's unpin events
rm -rf "$T/cells"; cp -r "$F/cells" "$T/cells"
python3 -c 'import json, sys
p = sys.argv[1]
keep = []
for line in open(p):
    it = json.loads(line)
    if it.get("type") == "resource" and it.get("kind") == "RELEASE" and it.get("resource") == "pg.buffer.pin":
        continue
    keep.append(line)
open(p, "w").writelines(keep)' "$T/cells/clean.usdt/script.jsonl"
score "$T/cells" "$T/bad.json" &&
py "$T/bad.json" '
u = [c for c in d["cells"] if c["variant"] == "clean" and c["arm"] == "usdt"][0]
if u["model_truly_broken"] is not True or u["sites"]["unpin"]["recall"] != 0:
    print("FAIL: planted loss of unpins not seen:", u["sites"]["unpin"]); sys.exit(1)
' || err "the scorer did not fail on the planted fault"
exit $fail
