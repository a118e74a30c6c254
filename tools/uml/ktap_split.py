#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Split a kernel log's KTAP (kunit.py's raw output) into one file per
suite, as KUnit's debugfs holds them: OUTDIR/SUITE.ktap, each "KTAP
version 1", "1..1", the suite's subtest lines, and its own "ok 1 SUITE".

    ktap_split.py LOG OUTDIR

Lines before the first "KTAP version" and the kernel's own messages
between results (lines that are not indented KTAP) are left out; a suite
whose closing result never came is written without it, so that
tools/uml/results.py sees its plan unmet.
"""
import os
import re
import sys

# kunit.py's raw output may carry a console prefix ("[  1.23] ").
PREFIX = re.compile(r'^(?:\[[ 0-9.]+\] )?')
SUBTEST = re.compile(r'^    # Subtest: (\S+)')
TOP_RESULT = re.compile(r'^(ok|not ok) \d+ (\S+)(.*)$')


def split(lines):
    """[(suite, [line])] in the order the suites ran."""
    suites, cur = [], None
    started = False
    for raw in lines:
        line = PREFIX.sub('', raw.rstrip('\n'))
        if not started:
            started = line.startswith('KTAP version') or line.startswith('TAP version')
            continue
        m = SUBTEST.match(line)
        if m:
            cur = (m.group(1), [])
            suites.append(cur)
        m = TOP_RESULT.match(line)
        if m and cur is not None:
            cur[1].append(f'{m.group(1)} 1 {m.group(2)}{m.group(3)}')
            cur = None
            continue
        if cur is not None and (line.startswith('    ') or line.startswith('# ')):
            cur[1].append(line)
    # The indented "KTAP version" of a suite comes before its "# Subtest".
    return [(name, ['KTAP version 1', '1..1', '    KTAP version 1'] + body)
            for name, body in suites]


def main(log, outdir):
    with open(log, errors='replace') as f:
        suites = split(f)
    os.makedirs(outdir, exist_ok=True)
    for name, body in suites:
        with open(os.path.join(outdir, name + '.ktap'), 'w') as f:
            f.write('\n'.join(body) + '\n')
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
