#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the output of htwheel's UML boots into one verdict.

    results.py RUNDIR...

Each RUNDIR is one boot (tools/uml/boot.sh).  Read there: kunit/*.ktap
(KUnit debugfs results), selftests/*.tap and *.rc (kselftest harness TAP),
console.log (kernel splats), kmemleak.txt, errors, uml.rc and stage.rc.
Prints every failure by name, a line per suite, and last exactly one line
"N passed, N failed" (", N skipped" when any were).  Exits 1 on any failure.
"""
import os
import re
import sys

RESULT = re.compile(r'^(\s*)(ok|not ok) (\d+)(?: - )? ?(.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$')
SUBTEST = re.compile(r'^(\s*)# Subtest: (.*)$')
PLAN = re.compile(r'^(\s*)1\.\.(\d+)')

# What a kernel prints when something went wrong; any of these fails the run.
SPLATS = re.compile(
    r'BUG:|WARNING:|Oops|Kernel panic|general protection fault|'
    r'KASAN:|UBSAN:|kmemleak: [0-9]+ new suspected|ODEBUG:|'
    r'possible circular locking|possible recursive locking|'
    r'inconsistent lock state|lock held when returning|'
    r'INFO: task .* blocked|INFO: trying to register non-static key|'
    r'sleeping function called from invalid context|'
    r'list_add corruption|list_del corruption|refcount_t:')


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def add(self, status, name):
        if status == 'pass':
            self.passed += 1
        elif status == 'skip':
            self.skipped += 1
        else:
            self.failed += 1
            self.failures.append(name)


def indent_of(spaces):
    return len(spaces.expandtabs(8))


def parse_tap(lines):
    """Yield (full name, status) for every leaf result of (nested) TAP/KTAP."""
    results = []
    subtests = {}
    plan_top = None
    for line in lines:
        m = SUBTEST.match(line)
        if m:
            depth = indent_of(m.group(1))
            subtests = {d: n for d, n in subtests.items() if d < depth}
            subtests[depth] = m.group(2).strip()
            continue
        m = PLAN.match(line)
        if m and indent_of(m.group(1)) == 0 and plan_top is None:
            plan_top = int(m.group(2))
            continue
        m = RESULT.match(line)
        if not m:
            continue
        depth = indent_of(m.group(1))
        path = [n for d, n in sorted(subtests.items()) if d <= depth]
        name = m.group(4).strip()
        if path and path[-1] == name:
            path = path[:-1]
        status = 'fail' if m.group(2) == 'not ok' else 'pass'
        if m.group(5) == 'SKIP':
            status = 'skip'
        results.append((depth, '.'.join(path + [name]), status))
    leaves = []
    for i, (depth, name, status) in enumerate(results):
        # A parent's result comes right after its children's, which are deeper.
        if i > 0 and results[i - 1][0] > depth:
            continue
        leaves.append((name, status))
    top_count = sum(1 for d, _, _ in results if d == 0)
    return leaves, plan_top, top_count


def read_lines(path):
    with open(path, errors='replace') as f:
        return f.read().splitlines()


def read_int(path):
    try:
        return int(open(path).read().strip())
    except (OSError, ValueError):
        return None


def check_boot(run, tally):
    boot = os.path.basename(run.rstrip('/'))
    uml_rc = read_int(os.path.join(run, 'uml.rc'))
    if uml_rc in (124, 137):
        tally.add('fail', f'{boot}: the kernel did not power off in time and was killed')
    elif uml_rc != 0:
        tally.add('fail', f'{boot}: the kernel (UML or qemu) exited with status {uml_rc}')
    stage_rc = read_int(os.path.join(run, 'stage.rc'))
    if stage_rc is None:
        tally.add('fail', f'{boot}: the test stage did not finish')
    elif stage_rc != 0:
        tally.add('fail', f'{boot}: the test stage failed with status {stage_rc}')
    errors = os.path.join(run, 'errors')
    if os.path.exists(errors):
        for line in read_lines(errors):
            tally.add('fail', f'{boot}: {line}')
    console = os.path.join(run, 'console.log')
    if os.path.exists(console):
        for line in read_lines(console):
            if SPLATS.search(line):
                tally.add('fail', f'{boot}: kernel: {line.strip()}')
    leaks = os.path.join(run, 'kmemleak.txt')
    if os.path.exists(leaks) and os.path.getsize(leaks):
        first = read_lines(leaks)[0]
        tally.add('fail', f'{boot}: kmemleak: {first.strip()}')


def check_suites(run, kind, pattern, tally):
    d = os.path.join(run, kind)
    if not os.path.isdir(d):
        return
    for fn in sorted(os.listdir(d)):
        m = re.match(pattern, fn)
        if not m:
            continue
        suite = m.group(1)
        before = (tally.passed, tally.failed, tally.skipped)
        leaves, plan, seen = parse_tap(read_lines(os.path.join(d, fn)))
        for name, status in leaves:
            tally.add(status, f'{kind} {suite}: {name}' if kind == 'selftests'
                      else f'kunit {name}')
        if plan is not None and seen < plan and kind == 'selftests':
            tally.add('fail', f'{kind} {suite}: {plan - seen} of {plan} tests never reported')
        if kind == 'selftests':
            rc = read_int(os.path.join(d, suite + '.rc'))
            if rc != 0 and tally.failed == before[1]:
                tally.add('fail', f'{kind} {suite}: exited with status {rc}')
        if not leaves:
            tally.add('fail', f'{kind} {suite}: no results')
        p, f, s = (tally.passed - before[0], tally.failed - before[1],
                   tally.skipped - before[2])
        print(f'  {kind:9} {suite:40} {p:4} passed {f:3} failed {s:3} skipped')


def main(runs):
    tally = Tally()
    for run in runs:
        boot = os.path.basename(run.rstrip('/'))
        print(f'{boot}:')
        seen = tally.passed + tally.failed + tally.skipped
        check_suites(run, 'kunit', r'(.+)\.ktap$', tally)
        check_suites(run, 'selftests', r'(.+)\.tap$', tally)
        if tally.passed + tally.failed + tally.skipped == seen:
            tally.add('fail', f'{boot}: no test results at all')
        check_boot(run, tally)
    for name in tally.failures:
        print(f'FAIL: {name}')
    line = f'{tally.passed} passed, {tally.failed} failed'
    if tally.skipped:
        line += f', {tally.skipped} skipped'
    print(line)
    return 1 if tally.failed or not tally.passed else 0


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
