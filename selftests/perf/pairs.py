#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# pairs.py TRACE EVENT_RE PRINT_RE [MIN]
#
# For every line of TRACE (trace_pipe text) that matches EVENT_RE, find the
# line a filter printed just before it for the same event: the closest
# earlier line of the same task and CPU matching PRINT_RE.  Exit 0 when
# there are at least MIN (default 1) events, each with its print, and the
# groups of both regular expressions are equal as numbers (hex groups as
# written "0x..", or both sides hex when a group of PRINT_RE is named h<N>).
import re
import sys

path, event_re, print_re = sys.argv[1:4]
need = int(sys.argv[4]) if len(sys.argv) > 4 else 1
HEAD = re.compile(r'^\s*(.*?)-(\d+)\s+(?:\(.*?\)\s+)?\[(\d+)\]')


def number(s, hex_):
    if hex_ or s.startswith('0x'):
        return int(s, 16) & (2**64 - 1)
    return int(s) & (2**64 - 1)


lines = open(path).read().splitlines()
ev_re, pr_re = re.compile(event_re), re.compile(print_re)
names = {v: k for k, v in pr_re.groupindex.items()}
hexes = [names.get(i, '').startswith('h') for i in range(1, pr_re.groups + 1)]
pairs = 0
for i, line in enumerate(lines):
    ev = ev_re.search(line)
    if not ev:
        continue
    who = HEAD.match(line)
    pr = None
    for j in range(i - 1, -1, -1):
        other = HEAD.match(lines[j])
        if other and who and other.group(2, 3) == who.group(2, 3):
            pr = pr_re.search(lines[j])
            break
    if not pr:
        sys.exit(f'no print before: {line}')
    for k, (a, b) in enumerate(zip(ev.groups(), pr.groups())):
        h = hexes[k] if k < len(hexes) else False
        if number(a, h) != number(b, h):
            sys.exit(f'differ: {lines[j]!r} / {line!r}')
    pairs += 1
if pairs < need:
    sys.exit(f'{pairs} events, expected at least {need}')
print(f'{pairs} events, each with the same values in its filter\'s print')
