#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""jcs_audit.py: an auditor's recomputation of receipt digests with an
independent RFC 8785 (JCS) encoder written from the RFC, sharing no code
with probity: every JSON object in a receipt store must be named by the
SHA-256 of its JCS bytes, and every receipt's generation_id must be the
SHA-256 of the JCS bytes of its predicate.generation.

  jcs_audit.py STORE_DIR [MIN_RECEIPTS]   prints "N receipts, M objects ok"
  jcs_audit.py --vectors                  the RFC's examples (self-check)
"""
import hashlib
import json
import os
import sys

SAFE = 2 ** 53


def jcs_number(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, int):
        return str(v)
    # ECMAScript Number.prototype.toString (receipts hold no reals; the
    # vectors below check this path)
    if v != v or v in (float('inf'), float('-inf')):
        raise ValueError('NaN/Infinity not allowed')
    if v == 0:
        return '0'
    sign = '-' if v < 0 else ''
    r = repr(abs(v))
    mant, _, exp = r.partition('e')
    ip, _, fp = mant.partition('.')
    digits = (ip + fp).lstrip('0')
    lead = len(ip) - (len(ip + fp) - len((ip + fp).lstrip('0')))
    n = lead + (int(exp) if exp else 0)
    digits = digits.rstrip('0') or '0'
    k = len(digits)
    if k <= n <= 21:
        s = digits + '0' * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + '.' + digits[n:]
    elif -6 < n <= 0:
        s = '0.' + '0' * (-n) + digits
    else:
        e = n - 1
        s = digits[0] + ('.' + digits[1:] if k > 1 else '') + 'e' + ('+' if e >= 0 else '-') + str(abs(e))
    return sign + s


def jcs_string(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == '\\':
            out.append('\\\\')
        elif c < 0x20:
            out.append({8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r'}.get(c, '\\u%04x' % c))
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def jcs(v):
    if v is None:
        return 'null'
    if isinstance(v, (bool, int, float)):
        return jcs_number(v)
    if isinstance(v, str):
        return jcs_string(v)
    if isinstance(v, list):
        return '[' + ','.join(jcs(x) for x in v) + ']'
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode('utf-16-be'))
        return '{' + ','.join(jcs_string(k) + ':' + jcs(v[k]) for k in keys) + '}'
    raise TypeError(type(v))


def sha(b):
    return hashlib.sha256(b).hexdigest()


def vectors():
    ex = json.loads('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
                    '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
                    '"literals": [null, true, false]}')
    want = ('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
            '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
    assert jcs(ex) == want, jcs(ex)
    srt = json.loads('{"\\u20ac":1,"\\r":2,"\\ufb33":3,"1":4,"\\ud83d\\ude00":5,"\\u0080":6,"\\u00f6":7}')
    assert [k for k in json.loads(jcs(srt))] == ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\U0001f600', '\ufb33']
    assert jcs(1e21) == '1e+21' and jcs(1e20) == '100000000000000000000' and jcs(1e-7) == '1e-7'
    print('vectors ok')


def audit(store, min_receipts):
    objs = receipts = 0
    root = os.path.join(store, 'objects')
    for sub in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, sub))):
            raw = open(os.path.join(root, sub, name), 'rb').read()
            try:
                doc = json.loads(raw.decode('utf-8'))
            except ValueError:
                continue          # a binary artifact: named by its raw bytes
            if not isinstance(doc, (dict, list)):
                continue
            mine = jcs(doc).encode('utf-8')
            if mine != raw:
                sys.exit('%s/%s: JCS re-encoding differs from the stored bytes' % (sub, name))
            if sha(mine) != sub + name:
                sys.exit('%s/%s: SHA-256 of its JCS bytes is %s' % (sub, name, sha(mine)))
            objs += 1
            pred = doc.get('predicate') if isinstance(doc, dict) else None
            if isinstance(pred, dict) and 'generation' in pred:
                gid = sha(jcs(pred['generation']).encode('utf-8'))
                if gid != pred.get('generation_id'):
                    sys.exit('%s%s: generation_id %s, recomputed %s' % (sub, name, pred.get('generation_id'), gid))
                receipts += 1
    if receipts < min_receipts:
        sys.exit('only %d receipts in %s (want >= %d)' % (receipts, store, min_receipts))
    print('%d receipts, %d objects ok' % (receipts, objs))


if __name__ == '__main__':
    if sys.argv[1:] == ['--vectors']:
        vectors()
    else:
        audit(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
