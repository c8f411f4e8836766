#!/usr/bin/env python3
"""Reads `protoc --decode ...ExportProfilesServiceRequest` text on stdin and
checks what the schema's prose requires but protoc cannot: every dictionary
table starts with its zero element, every index is in range, tables hold no
duplicates, attribute keys are unique per reference list. Prints a summary
the C tests match on:
    samples N stacks M
    <unit> <leaf function> <sum of values>     (per profile)
    total <unit> <sum>
Exits 1 with a message on the first violation."""
import codecs
import re
import sys

TOKEN = re.compile(r'\s*(?:(\w+)\s*\{|(\})|(\w+):\s*("(?:[^"\\]|\\.)*"|[^\s]+))')


def parse(text):
    root = {}
    stack = [root]
    pos = 0
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                fail("unparsed text at %d: %r" % (pos, text[pos:pos + 40]))
            break
        pos = m.end()
        if m.group(1):
            child = {}
            stack[-1].setdefault(m.group(1), []).append(child)
            stack.append(child)
        elif m.group(2):
            stack.pop()
        else:
            val = m.group(4)
            if val.startswith('"'):
                val = codecs.escape_decode(val[1:-1].encode())[0].decode('utf-8', 'surrogateescape')
            else:
                val = int(val) if re.fullmatch(r'-?\d+', val) else val
            stack[-1].setdefault(m.group(3), []).append(val)
    return root


def fail(msg):
    print("check_request: " + msg)
    sys.exit(1)


def one(msg, field, default=0):
    return msg.get(field, [default])[0]


def key(msg):
    return repr(sorted((k, repr(v)) for k, v in msg.items()))


def main():
    req = parse(sys.stdin.read())
    d = one(req, 'dictionary', {})
    tables = {t: d.get(t, []) for t in ('mapping_table', 'location_table', 'function_table',
                                        'link_table', 'string_table', 'attribute_table',
                                        'stack_table')}
    for t, rows in tables.items():
        if not rows:
            fail(t + " is empty: the zero element must be present")
    strings = tables['string_table']
    if strings[0] != "":
        fail("string_table[0] is not empty")
    for t in ('mapping_table', 'location_table', 'function_table', 'attribute_table', 'stack_table'):
        if tables[t][0] != {}:
            fail(t + "[0] is not the zero value: %r" % tables[t][0])
        seen = set()
        for row in tables[t]:
            k = key(row)
            if k in seen:
                fail(t + " has a duplicate: %r" % row)
            seen.add(k)
    for s in strings:
        try:
            s.encode('utf-8')
        except UnicodeEncodeError:
            fail("string_table entry is not valid UTF-8: %r" % s)
    if len(set(strings)) != len(strings):
        fail("string_table has duplicates")
    link0 = tables['link_table'][0]
    if set(one(link0, 'trace_id', '')) - {'\0'} or set(one(link0, 'span_id', '')) - {'\0'}:
        fail("link_table[0] is not zero")

    def strindex(i, what):
        if not 0 <= i < len(strings):
            fail("%s strindex %d out of range" % (what, i))
        return strings[i]

    def attrs(indices, what):
        keys = set()
        for i in indices:
            if not 0 < i < len(tables['attribute_table']):
                fail("%s attribute index %d out of range" % (what, i))
            k = strindex(one(tables['attribute_table'][i], 'key_strindex'), 'attribute key')
            if k in keys:
                fail("%s has attribute key %s twice" % (what, k))
            keys.add(k)

    for a in tables['attribute_table'][1:]:
        strindex(one(a, 'key_strindex'), 'attribute key')
        strindex(one(a, 'unit_strindex'), 'attribute unit')
    for m in tables['mapping_table']:
        strindex(one(m, 'filename_strindex'), 'mapping filename')
        attrs(m.get('attribute_indices', []), 'mapping')
    for f in tables['function_table']:
        for fld in ('name_strindex', 'system_name_strindex', 'filename_strindex'):
            strindex(one(f, fld), 'function')
    for loc in tables['location_table']:
        if not 0 <= one(loc, 'mapping_index') < len(tables['mapping_table']):
            fail("location mapping_index out of range")
        attrs(loc.get('attribute_indices', []), 'location')
        for line in loc.get('lines', []):
            if not 0 < one(line, 'function_index') < len(tables['function_table']):
                fail("line function_index out of range")
    for st in tables['stack_table']:
        for i in st.get('location_indices', []):
            if not 0 < i < len(tables['location_table']):
                fail("stack location index %d out of range" % i)

    rps = req.get('resource_profiles', [])
    if len(rps) != 1:
        fail("expected one ResourceProfiles")
    nsamples = None
    for sp in rps[0].get('scope_profiles', []):
        for prof in sp.get('profiles', []):
            st = one(prof, 'sample_type', {})
            unit = strindex(one(st, 'unit_strindex'), 'sample_type')
            attrs(prof.get('attribute_indices', []), 'profile')
            samples = prof.get('samples', [])
            if nsamples is None:
                nsamples = len(samples)
            elif nsamples != len(samples):
                fail("profiles disagree on the number of samples")
            totals = {}
            for s in samples:
                si = one(s, 'stack_index')
                if not 0 < si < len(tables['stack_table']):
                    fail("sample stack_index %d out of range" % si)
                attrs(s.get('attribute_indices', []), 'sample')
                vals = s.get('values', [])
                if len(vals) != 1:
                    fail("sample with %d values" % len(vals))
                leaf_loc = tables['location_table'][tables['stack_table'][si]['location_indices'][0]]
                fn = tables['function_table'][one(one(leaf_loc, 'lines', {}), 'function_index')]
                name = strindex(one(fn, 'name_strindex'), 'function name')
                totals[name] = totals.get(name, 0) + vals[0]
            for name in sorted(totals):
                print("%s %s %d" % (unit, name, totals[name]))
            print("total %s %d" % (unit, sum(totals.values())))
    print("samples %d stacks %d" % (nsamples or 0, len(tables['stack_table'])))


main()
