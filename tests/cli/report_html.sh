#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# report_html.sh: what `probity report` draws, on the demo's planted leak
# (real BPF, needs root): the text report's log2 histogram bars and the
# sparkline of ACQUIRE - RELEASE (the leak verdict's series) rising;
# --fail-on around the top score (1 at it, 0 just above it); and
# --html rendered in a real browser (Debian chromium, headless): the
# screenshot is not blank and the DOM holds the top finding and the SVG
# pictures, the flame graph of WAIT time by stack among them. Chromium
# that cannot start skips (fails under CI=true).
set -u
. tests/cli/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
need_root

"$P" record -m "$DEMO_M" -o "$T/leak.trace" --events -- \
	"$DEMO" -q --pathology leak --duration 2 --clients 4 >"$T/rec.out" 2>"$T/rec.err" ||
	{ echo "FAIL: record: $(tail -3 "$T/rec.err")"; exit 1; }
"$P" -j report "$T/leak.trace" >"$T/r.json" || err "report -j failed"
"$P" report "$T/leak.trace" >"$T/r.txt" || err "report failed"

# text pictures: bars under a "wait"/"hold" heading, and the leak's series
grep -q '^hold page_put (demo.pool.page): [0-9]* holds' "$T/r.txt" || err "no hold histogram of page_put"
grep -Eq '^  \[[0-9.]+[num]?s, [0-9.]+[num]?s\) +[0-9]+ \|@+ *\|$' "$T/r.txt" || err "no histogram bar line"
line=$(grep 'demo.pool.page   ACQUIRE - RELEASE' "$T/r.txt")
[ -n "$line" ] || err "no ACQUIRE - RELEASE sparkline for demo.pool.page"
python3 - "$line" "$T/r.json" <<'PY' || fail=1
import json, sys
line, r = sys.argv[1], json.load(open(sys.argv[2]))
spark = line.split('RELEASE', 1)[1].split()[0]
blocks = '\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588'
lv = [blocks.index(c) for c in spark]
s = [x for x in r['pictures']['series'] if x['resource'] == 'demo.pool.page'][0]['imbalance']
if not (len(lv) >= 3 and lv[-1] == 7 and lv[0] < 7 and s[-1] > s[0]):
    print('FAIL: sparkline %s does not rise to its max (series %s)' % (spark, s)); sys.exit(1)
h = [x for x in r['pictures']['histograms'] if x['id'] == 'page_put']
if not h or sum(b['count'] for b in h[0]['buckets']) != h[0]['count']:
    print('FAIL: -j histogram of page_put missing or its buckets do not add up'); sys.exit(1)
print('ok   sparkline %s over %d snapshots' % (spark, len(s)))
PY

# --fail-on: the top finding's score is the line
top=$(py "$T/r.json" "print(d['findings'][0]['score'] if d['findings'] else 0)")
"$P" report "$T/leak.trace" --fail-on "$top" >/dev/null; rc=$?
[ $rc -eq 1 ] || err "--fail-on $top (the top score) exited $rc, not 1"
above=$(python3 -c "print(min(100, $top + 0.01))")
if python3 -c "import sys; sys.exit(not $top + 0.01 <= 100)"; then
	"$P" report "$T/leak.trace" --fail-on "$above" >/dev/null; rc=$?
	[ $rc -eq 0 ] || err "--fail-on $above (above the top score $top) exited $rc, not 0"
fi
"$P" report "$T/leak.trace" --fail-on 101 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || err "--fail-on 101 exited $rc, not 2 (usage)"

# the HTML page in a real browser
"$P" report "$T/leak.trace" --html "$T/r.html" >/dev/null 2>&1 || err "report --html failed"
grep -q '<svg' "$T/r.html" || err "no inline SVG in the HTML"
! grep -Eq '(src|href)="(https?:)?//' "$T/r.html" || err "the HTML loads something from the network"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: chromium missing under CI=true"; exit 1; }
	echo "skip: chromium not installed (scripts/install-deps.sh installs it)"; exit 77
fi
export HOME="$T" XDG_CONFIG_HOME="$T" XDG_CACHE_HOME="$T"
cflags="--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=$T/chrome"
timeout 120 "$CHROME" $cflags --screenshot="$T/r.png" --window-size=1024,1400 "file://$T/r.html" \
	>"$T/shot.log" 2>&1
if [ ! -s "$T/r.png" ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: chromium could not start: $(tail -2 "$T/shot.log")"; exit 1; }
	echo "skip: chromium could not start: $(tail -1 "$T/shot.log")"; exit 77
fi
timeout 120 "$CHROME" $cflags --dump-dom "file://$T/r.html" >"$T/dom.html" 2>"$T/dom.log" ||
	err "chromium --dump-dom failed: $(tail -2 "$T/dom.log")"
ink=$(python3 tests/cli/report_tools.py ink "$T/r.png") || err "cannot decode the screenshot"
python3 -c "import sys; sys.exit(not float('$ink') > 0.01)" || err "screenshot is blank ($ink of pixels inked)"
python3 - "$T/r.json" "$T/dom.html" <<'PY' || fail=1
import json, sys, html
r, dom = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
f = r['findings'][0]
head = '#1 %s %s' % (f['kind'], f['resource'])
bad = []
if 'id="finding-1"' not in dom or head not in html.unescape(dom):
    bad.append('the DOM does not hold the top finding %r' % head)
if html.escape(f['summary'], quote=False) not in dom:
    bad.append('the DOM lacks the top finding summary')
if dom.count('<rect') < 5 or '<polyline' not in dom:
    bad.append('the DOM lacks the histogram bars or the series line')
# the flame graph of WAIT time by stack (record --stacks is on by default)
fg = dom.split('class="flamegraph"', 1)
if len(fg) < 2:
    bad.append('the DOM has no flame graph SVG')
elif fg[1].split('</svg>', 1)[0].count('class="frame"') < 3 or \
        '[wait:' not in fg[1].split('</svg>', 1)[0] or 'client_main' not in fg[1]:
    bad.append('the flame graph lacks the demo frames (client_main, a [wait:EVENT] leaf)')
for b in bad:
    print('FAIL: %s' % b)
sys.exit(1 if bad else 0)
PY
echo "html: screenshot inked $ink"
exit $fail
