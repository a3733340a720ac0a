#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# redis_compare.py: probity's counts (manifests/redis-7/clients.yaml) against
# Redis's own INFO counters read in the same run (bench/real/redis.sh,
# tests/cli/redis.sh). Prints one line per row, exits 1 when a row fails;
# with --json OUT also writes the rows (and EXTRA key=value pairs) as JSON.
#
#   redis_compare.py W/health.json W/info0 W/info_mid W/info1 BLPOPS [--json OUT k=v...]
#
# info0 is read before `record` starts, info1 after it stops, info_mid while
# BLPOPS clients are blocked. Each INFO comes from a new redis-cli
# connection, and Redis increments total_commands_processed after a
# command returns (server.c:3532) and total_connections_received when the
# connection is accepted (networking.c:1298). So the info0 INFO's own
# command, and the info1 connection, are in the counters' delta but
# outside the recording: probity's count is the delta minus 1 for both.
import json
import sys


def info(path):
    d = {}
    for line in open(path):
        line = line.strip()
        if ':' in line and not line.startswith('#'):
            k, v = line.split(':', 1)
            d[k] = v
    return d


def main(argv):
    health, i0, imid, i1, blpops = argv[:5]
    out, extra = None, {}
    rest = argv[5:]
    if rest and rest[0] == '--json':
        out = rest[1]
        for kv in rest[2:]:
            k, v = kv.split('=', 1)
            extra[k] = float(v) if v.replace('.', '', 1).isdigit() else v
    h = json.load(open(health))
    ev = {d['id']: d['events'] for d in h['descriptors']}
    a, m, b = info(i0), info(imid), info(i1)

    def delta(k):
        return int(b[k]) - int(a[k])

    blpops = int(blpops)
    rows = [
        # (descriptor(s), probity, counter, expected, mapping)
        ('client_create', ev['client_create'], 'total_connections_received',
         delta('total_connections_received') - 1,
         'createClient(conn != NULL) returns once per accepted connection; stat_numconnections++ in clientAcceptHandler (networking.c:1298); minus the final INFO connection'),
        ('command', ev['command'], 'total_commands_processed',
         delta('total_commands_processed') - 1,
         'one call() per command, stat_numcommands++ at its end (server.c:3532); minus the first INFO (counted after it replied)'),
        ('client_free', ev['client_free'], 'connected_clients',
         ev['client_create'] + int(a['connected_clients']) - 1 - (int(b['connected_clients']) - 1),
         'every client created in the run is freed by its end (connected_clients back to the INFO connection alone)'),
        ('block', ev['block'], 'blocked_clients (mid-run gauge)',
         int(m['blocked_clients']),
         'blockClient: blocked_clients++ (blocked.c:97); the gauge read while the BLPOP clients wait, and no other block in the run'),
        ('unblock', ev['unblock'], 'blocked_clients (end gauge)',
         ev['block'] - int(b['blocked_clients']),
         'unblockClient: blocked_clients-- (blocked.c:209); all served by LPUSH'),
        ('evict_async + evict_sync', ev['evict_async'] + ev['evict_sync'], 'evicted_keys',
         delta('evicted_keys'),
         'the two delete calls in performEvictions, each followed by stat_evictedkeys++ (evict.c:686)'),
    ]
    bad = 0
    res = []
    for d, got, ctr, want, why in rows:
        ok = got == want and (want > 0 or ctr.startswith('blocked_clients (end'))
        if d == 'block':
            ok = ok and got == blpops
        bad += not ok
        print('%s %s %d, Redis %s -> expected %d' % ('ok  ' if ok else 'FAIL', d, got, ctr, want))
        res.append({'descriptors': d, 'probity': got, 'counter': ctr, 'expected': want,
                    'equal': got == want, 'mapping': why})
    if out:
        doc = dict(extra)
        doc.update({'rows': res, 'all_equal': not bad,
                    'info_before': {k: a[k] for k in ('total_connections_received', 'total_commands_processed', 'evicted_keys', 'connected_clients', 'blocked_clients')},
                    'info_after': {k: b[k] for k in ('total_connections_received', 'total_commands_processed', 'evicted_keys', 'connected_clients', 'blocked_clients')},
                    'redis_version': b.get('redis_version')})
        json.dump(doc, open(out, 'w'), indent=1, sort_keys=True)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
