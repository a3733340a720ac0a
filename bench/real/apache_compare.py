#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# apache_compare.py: probity's counts (manifests/apache-2.4/worker.yaml)
# against Apache's own mod_status counters (/server-status?auto) and ab's
# count, read in the same run (bench/real/apache.sh, tests/cli/apache.sh).
# Prints one line per row, exits 1 when a row fails; with --json OUT also
# writes the rows as JSON.
#
#   apache_compare.py W/health.json W/status0 W/status1 AB_OUT WORKERS AB_CLIENTS [--json OUT]
#
# status0 is read before `record` starts, status1 after it stops. mod_status
# counts a request in ap_increment_counts when its EOR bucket is destroyed
# (eor_bucket.c:42), i.e. after its own page was generated: status0's own
# request is in the Total Accesses delta but happened before the
# recording, status1's is in neither. So the requests recorded are the
# delta minus 1.
import json
import re
import sys


def status(path):
    d = {}
    for line in open(path):
        if ':' in line:
            k, v = line.split(':', 1)
            d[k.strip()] = v.strip()
    return d


def ab_count(path):
    txt = open(path).read()
    done = re.search(r'Complete requests:\s+(\d+)', txt)
    return int(done.group(1)) if done else -1


def main(argv):
    health, s0p, s1p, abp, workers, clients = argv[:6]
    out = argv[7] if len(argv) > 7 and argv[6] == '--json' else None
    clients = int(clients)
    h = json.load(open(health))
    ev = {d['id']: d['events'] for d in h['descriptors']}
    s0, s1 = status(s0p), status(s1p)
    acc = int(s1['Total Accesses']) - int(s0['Total Accesses'])
    ab = ab_count(abp)
    workers = int(workers)
    rows = [
        # (descriptor, probity, counter, expected, exact, mapping)
        ('request_counted', ev['request_counted'], 'Total Accesses delta - 1', acc - 1, True,
         'ap_increment_counts: ws->access_count++ (scoreboard.c:401), which mod_status sums (mod_status.c:396); '
         'minus the first status read, counted after its own reply'),
        ('request_counted', ev['request_counted'], 'ab Complete requests', ab, True,
         'every request ab completed was counted once by the server'),
        ('conn_create', ev['conn_create'], 'ab Complete requests (+ up to clients - 1)', ab, (ab, ab + clients - 1),
         'KeepAlive Off: one connection per ab request, created once by process_socket (event.c:1020); ab also '
         'opens connections for requests it no longer sends once -n is reached (closed without a request, '
         'never counted as accesses); mod_status has no total (ConnsTotal is the current count)'),
        ('queue_pop', ev['queue_pop'], 'queue_push - 2 x workers .. queue_push', ev['queue_push'] - 2 * workers,
         (ev['queue_push'] - 2 * workers, ev['queue_push']),
         'every pushed socket is popped, but each worker was already blocked in ap_queue_pop_something when '
         'record attached: that first return has no entry, so no uretprobe (one pop per worker not seen, '
         'unless a socket pushed before the attach was what it popped); and at the stop, a socket pushed '
         'before it (a lingering close\'s second push arrives after ab ends) may be popped after it, at most '
         'one per worker (a worker holds one pending pop; the queue holds at most threads_per_child per '
         'child): seen 1843 of 1851 pushes with 6 workers in one CI run'),
        ('queue_push', ev['queue_push'], 'conn_create (at least)', ev['conn_create'], False,
         'each accepted socket is pushed once (event.c:2019); a connection is pushed again when the client\'s '
         'close arrives during lingering close (event.c:1946, CONN_STATE_LINGER_*)'),
        ('worker_done', ev['worker_done'], 'worker_busy', ev['worker_busy'], True,
         'every ap_run_process_connection call returns; none is open at the end'),
        ('worker_busy', ev['worker_busy'], 'conn_create (at least)', ev['conn_create'], False,
         'at least one process_connection call per connection; more when the request line was not there yet '
         '(the connection goes back to the listener and is resumed)'),
        ('BusyWorkers (end)', int(s1['BusyWorkers']), 'the status request itself', 1, True,
         'after the run only the worker serving status1 is busy: no worker stuck'),
        ('IdleWorkers (end)', int(s1['IdleWorkers']), 'workers - 1', workers - 1, True,
         'the pool is back to idle'),
    ]
    bad = 0
    res = []
    for d, got, ctr, want, exact, why in rows:
        if exact is True:
            ok, rel, shown = got == want, 'equal', '%d' % want
        elif exact is False:
            ok, rel, shown = got >= want, 'at least', '>= %d' % want
        else:
            ok, rel, shown = exact[0] <= got <= exact[1], 'between', '%d..%d' % exact
        ok = ok and want > 0
        bad += not ok
        print('%s %s %d, %s -> expected %s' % ('ok  ' if ok else 'FAIL', d, got, ctr, shown))
        res.append({'descriptor': d, 'probity': got, 'counter': ctr, 'expected': shown,
                    'relation': rel, 'holds': ok, 'mapping': why})
    if out:
        keys = ('Total Accesses', 'BusyWorkers', 'IdleWorkers', 'ConnsTotal', 'Processes', 'ServerVersion')
        json.dump({'rows': res, 'all_hold': not bad, 'events': ev, 'ab_complete': ab,
                   'status_before': {k: s0.get(k) for k in keys},
                   'status_after': {k: s1.get(k) for k in keys}},
                  open(out, 'w'), indent=1, sort_keys=True)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
