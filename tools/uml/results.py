#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the output of htwheel's boots into one verdict.

    results.py [--manifest FILE] [--plan FILE [--selection TEXT]] RUNDIR...
    results.py [--manifest FILE] --write-manifest RUNDIR...

Each RUNDIR is one boot (tools/uml/boot.sh, tools/qemu/boot.sh, or the
host's own tests), named like the boots of the manifest (default
tests/manifest.txt).  Read there: kunit/*.ktap (KUnit debugfs results),
selftests/*.tap and *.rc (TAP of the test programs), console.log and
dmesg.txt (kernel reports, the checkers' boot messages), checkers.txt (the
checkers the stage found on), kmemleak.txt, errors, kernel.rc and stage.rc.

Every result is held against the manifest: a suite, program or single test
of the manifest that did not report, a result the manifest does not know, a
result given twice, more or fewer results than a TAP plan says, a skip the
manifest does not allow on that boot, "not ok ... # SKIP", a suite that says
"not ok" over passing tests, and a checker (kmemleak, KASAN, lockdep) the
manifest expects but the boot did not have, all fail the run.

Prints every failure by name, a line per suite, and last exactly one line
"N passed, N failed" (", N skipped" when any were).  Exits 1 on any failure.

--plan FILE judges a partial run (`make check T=... K=...`): only the
suites, programs and KUnit tests the plan of tools/uml/selection.py
selected, on its boots; a selected one that did not report still fails,
and the others are not counted.  The closing line then starts "partial:",
after a line naming the selection (--selection TEXT).

--write-manifest rewrites the manifest from the given runs instead (see the
top of tests/manifest.txt): suites, tests and skips are taken from the runs
for the boots given and kept as they were for the others; the reasons of
skips and absences already in the manifest are kept.
"""
import os
import re
import sys

from selection import read_plan, selects

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = os.path.join(TOP, 'tests', 'manifest.txt')

RESULT = re.compile(r'^(\s*)(ok|not ok) (\d+)(?: - )? ?(.*?)(?:\s+#\s*(SKIP|TODO)\b\s*(.*))?$')
SUBTEST = re.compile(r'^(\s*)# Subtest: (.*)$')
PLAN = re.compile(r'^(\s*)1\.\.(\d+)')
# Parts of a test's name that change from run to run.
NAME_NOISE = re.compile(r' \(seed \d+\)$')

# What a kernel prints when something went wrong; any of these fails the run.
SPLATS = re.compile(
    r'BUG:|WARNING:|Oops|Kernel panic|general protection fault|'
    r'KASAN:|UBSAN:|kmemleak: [0-9]+ new suspected|ODEBUG:|'
    r'possible circular locking|possible recursive locking|'
    r'inconsistent lock state|lock held when returning|'
    r'turning off the locking correctness validator|'
    r'INFO: task .* blocked|INFO: trying to register non-static key|'
    r'sleeping function called from invalid context|'
    r'list_add corruption|list_del corruption|refcount_t:|'
    r'rcu: INFO: .*detected stall|self-detected stall|detected stalls on CPUs|'
    r'soft lockup|hard LOCKUP|hung_task: blocked tasks|'
    r'invoked oom-killer|Out of memory|oom-kill:|oom_reaper:')

# Evidence that a checker the manifest expects was on in a boot: a boot
# message in the console or dmesg, or a word in checkers.txt (written by
# tools/uml/stage-tests.sh: UML's KASAN prints nothing at boot, and lockdep
# turns itself off after its first report).
CHECKERS = {
    'kmemleak': (re.compile(r'kmemleak: Kernel memory leak detector initialized'), None),
    'kasan': (None, 'kasan'),
    'lockdep': (re.compile(r'Lock dependency validator'), 'lockdep'),
}
KMEMLEAK_OFF = re.compile(r'kmemleak: .*disabled', re.I)


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

    def counts(self):
        return self.passed, self.failed, self.skipped


# ---------------------------------------------------------------- manifest

class Suite:
    def __init__(self, kind, name, boots, count):
        self.kind, self.name, self.boots, self.count = kind, name, boots, count
        self.tests = []            # in the order of the runs
        self.skips = {}            # test -> {boot: reason}


class Manifest:
    def __init__(self):
        self.boots = {}            # boot -> [checker, ...]
        self.suites = {}           # (kind, name) -> Suite
        self.absent = {}           # (kind, name) -> {boot: reason}

    def expected(self, boot):
        return {k: s for k, s in self.suites.items() if boot in s.boots}


def parse_manifest(path):
    """Read the manifest; a malformed line is fatal (it is ours to fix)."""
    m = Manifest()
    suite = test = None
    for no, raw in enumerate(read_lines(path), 1):
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        word, _, rest = line.partition(' ')
        rest = rest.strip()
        try:
            if word == 'boot':
                name, *checks = rest.split()
                m.boots[name] = checks
            elif word == 'suite':
                boots, kind, name, count = rest.split()
                suite = Suite(kind, name, boots.split(','), int(count))
                m.suites[(kind, name)] = suite
                test = None
            elif word == 'test':
                test = rest
                suite.tests.append(test)
            elif word == 'skip':
                boots, reason = rest.split(None, 1)
                for b in boots.split(','):
                    suite.skips.setdefault(test, {})[b] = reason
            elif word == 'absent':
                boots, kind, name, reason = rest.split(None, 3)
                for b in boots.split(','):
                    m.absent.setdefault((kind, name), {})[b] = reason
            else:
                raise ValueError(f'unknown keyword {word}')
        except (ValueError, AttributeError) as e:
            sys.exit(f'{path}:{no}: bad line ({e}): {raw}')
    for s in m.suites.values():
        if s.count != len(s.tests):
            sys.exit(f'{path}: suite {s.kind} {s.name} says {s.count} tests '
                     f'but lists {len(s.tests)}')
    return m


# ---------------------------------------------------------------- TAP

class Group:
    """The results at one indentation: a file's top level or one subtest."""
    def __init__(self, name=None):
        self.name, self.plan, self.count = name, None, 0
        self.leaves = []           # (name relative to this group, status, skip reason)


def close_group(g, where, problems):
    if g.plan is not None and g.count != g.plan:
        problems.append(f'{where or "top level"}: {g.count} results against a plan of {g.plan}')


def adopt_orphans(groups, above):
    """Fold the groups deeper than @above, whose parent result never came,
    into the group above them: their tests still count, or go missing."""
    problems = []
    for d in sorted((d for d in groups if d > above), reverse=True):
        g = groups.pop(d)
        close_group(g, g.name, problems)
        parents = [p for p in groups if p < d]
        if not parents:
            groups[d] = g
            break
        prefix = (g.name + '.') if g.name else ''
        groups[max(parents)].leaves += [(prefix + n, s, r) for n, s, r in g.leaves]
    return problems


def add_result(groups, depth, m, problems):
    name = m.group(4).strip()
    status = 'fail' if m.group(2) == 'not ok' else 'pass'
    if m.group(5) == 'SKIP':
        if status == 'fail':
            problems.append(f'{name}: "not ok ... # SKIP" is a failure')
        else:
            status = 'skip'
    deeper = sorted(d for d in groups if d > depth)
    leaves = [(name, status, m.group(6) or '')]
    if deeper:
        problems += adopt_orphans(groups, deeper[0])
        kids = groups.pop(deeper[0])
        close_group(kids, name, problems)
        leaves = [(f'{name}.{n}', s, r) for n, s, r in kids.leaves]
        if status == 'fail' and not any(s == 'fail' for _, s, _ in kids.leaves):
            problems.append(f'{name}: "not ok" although each of its results passed')
    g = groups.setdefault(depth, Group())
    g.count += 1
    g.leaves += leaves


def parse_tap(lines):
    """Return ([(name, status, skip reason)] of every leaf result of (nested)
    TAP/KTAP, [problem]): plans not met, a "not ok" over passing subtests."""
    groups, problems = {}, []
    for line in lines:
        m = SUBTEST.match(line)
        if m:
            depth = indent_of(m.group(1))
            problems += adopt_orphans(groups, depth - 1)
            groups[depth] = Group(m.group(2).strip())
            continue
        m = PLAN.match(line)
        if m:
            g = groups.setdefault(indent_of(m.group(1)), Group())
            if g.plan is not None:
                problems.append(f'{g.name or "top level"}: a second plan')
            g.plan = int(m.group(2))
            continue
        m = RESULT.match(line)
        if m:
            add_result(groups, indent_of(m.group(1)), m, problems)
    if not groups:
        return [], problems
    problems += adopt_orphans(groups, min(groups))
    top = groups[min(groups)]
    close_group(top, top.name, problems)
    if top.plan is None:
        problems.append('no TAP plan (1..N)')
    prefix = (top.name + '.') if top.name else ''
    return [(NAME_NOISE.sub('', prefix + n), s, r) for n, s, r in top.leaves], problems


def indent_of(spaces):
    return len(spaces.expandtabs(8))


def read_lines(path):
    with open(path, errors='replace') as f:
        return f.read().splitlines()


def read_int(path):
    try:
        return int(open(path).read().strip())
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- one run

def found_suites(run):
    """(kind, name) -> result file, for every result file of a run."""
    found = {}
    for kind, ext in (('kunit', '.ktap'), ('selftests', '.tap')):
        d = os.path.join(run, kind)
        if os.path.isdir(d):
            for fn in sorted(os.listdir(d)):
                if fn.endswith(ext):
                    found[(kind, fn[:-len(ext)])] = os.path.join(d, fn)
    return found


def suite_leaves(kind, name, path):
    """The results of one file, named relative to the suite."""
    leaves, problems = parse_tap(read_lines(path))
    if kind == 'kunit':
        cut = len(name) + 1
        leaves = [(n[cut:] if n.startswith(name + '.') else n, s, r) for n, s, r in leaves]
    return leaves, problems


def check_suite(boot, suite, path, tally, plan=None):
    label = f'{boot}: {suite.kind} {suite.name}'
    leaves, problems = suite_leaves(suite.kind, suite.name, path)
    if plan is not None:
        # A test glob of T= (suite.test*): the other tests are not judged.
        chosen = [t for t in suite.tests if selects(plan, boot, suite.name, t)]
        leaves = [l for l in leaves if selects(plan, boot, suite.name, l[0])]
        skips = suite.skips
        suite = Suite(suite.kind, suite.name, suite.boots, len(chosen))
        suite.tests, suite.skips = chosen, skips
    for p in problems:
        tally.add('fail', f'{label}: {p}')
    seen = set()
    for name, status, reason in leaves:
        if name in seen:
            tally.add('fail', f'{label}: {name}: reported twice')
            continue
        seen.add(name)
        if name not in suite.tests:
            tally.add('fail', f'{label}: {name}: not in the manifest ({status})')
        elif status == 'skip' and boot not in suite.skips.get(name, {}):
            tally.add('fail', f'{label}: {name}: skipped, and the manifest does not '
                      f'allow it on this boot ({reason or "no reason given"})')
        else:
            tally.add(status, f'{label}: {name}')
    # By name, even when none reported: a program killed part-way.
    for t in suite.tests:
        if t not in seen:
            tally.add('fail', f'{label}: {t}: never ran')
    if suite.kind == 'selftests':
        rc = read_int(path[:-len('.tap')] + '.rc')
        if rc is None:
            tally.add('fail', f'{label}: no exit status (the program did not finish)')
        elif rc != 0 and not any(s == 'fail' for _, s, _ in leaves):
            tally.add('fail', f'{label}: exited with status {rc}')


def check_results(boot, run, manifest, tally, plan=None):
    expected = manifest.expected(boot)
    found = found_suites(run)
    if plan is not None:
        # A partial run judges what it selected, and only that.
        expected = {k: s for k, s in expected.items() if selects(plan, boot, k[1])}
        found = {k: p for k, p in found.items() if selects(plan, boot, k[1])}
    for key, path in sorted(found.items()):
        if key not in expected:
            why = manifest.absent.get(key, {}).get(boot)
            tally.add('fail', f'{boot}: {key[0]} {key[1]}: ran, but the manifest '
                      + (f'says not on this boot: {why}' if why else 'does not list it'))
            continue
        before = tally.counts()
        check_suite(boot, expected[key], path, tally, plan)
        p, f, s = (a - b for a, b in zip(tally.counts(), before))
        print(f'  {key[0]:9} {key[1]:40} {p:4} passed {f:3} failed {s:3} skipped')
    for key, suite in sorted(expected.items()):
        if key not in found:
            tally.add('fail', f'{boot}: {key[0]} {key[1]}: missing '
                      f'(none of its {len(suite.tests)} tests ran)')


def kernel_log(run):
    """The kernel's messages: the console, else dmesg (both hold the same)."""
    for fn in ('console.log', 'dmesg.txt'):
        path = os.path.join(run, fn)
        if os.path.exists(path):
            return read_lines(path)
    return []


def check_checkers(boot, run, checks, tally):
    log = kernel_log(run)
    dmesg = os.path.join(run, 'dmesg.txt')
    if os.path.exists(dmesg):
        log = log + read_lines(dmesg)
    path = os.path.join(run, 'checkers.txt')
    words = set(open(path).read().split()) if os.path.exists(path) else set()
    for c in checks:
        if c not in CHECKERS:
            continue
        message, word = CHECKERS[c]
        if message and not any(message.search(line) for line in log):
            tally.add('fail', f'{boot}: {c} was expected but its boot message is missing')
        if word and word not in words:
            tally.add('fail', f'{boot}: {c} was expected but was not on at the end of the stage')
    if 'kmemleak' in checks:
        off = [line for line in log if KMEMLEAK_OFF.search(line)]
        if off:
            tally.add('fail', f'{boot}: kmemleak was expected but is off: {off[0].strip()}')
        if not os.path.exists(os.path.join(run, 'kmemleak.txt')):
            tally.add('fail', f'{boot}: kmemleak was expected but no kmemleak.txt was written')


def check_kernel(boot, run, tally):
    kernel_rc = read_int(os.path.join(run, 'kernel.rc'))
    if kernel_rc in (124, 137):
        tally.add('fail', f'{boot}: the kernel did not power off in time and was killed')
    elif kernel_rc != 0:
        tally.add('fail', f'{boot}: the kernel (UML or qemu) exited with status {kernel_rc}')
    stage_rc = read_int(os.path.join(run, 'stage.rc'))
    if stage_rc is None:
        tally.add('fail', f'{boot}: the test stage did not finish')
    elif stage_rc != 0:
        tally.add('fail', f'{boot}: the test stage failed with status {stage_rc}')
    for line in kernel_log(run):
        if SPLATS.search(line):
            tally.add('fail', f'{boot}: kernel: {line.strip()}')
    leaks = os.path.join(run, 'kmemleak.txt')
    if os.path.exists(leaks) and os.path.getsize(leaks):
        first = read_lines(leaks)[0]
        tally.add('fail', f'{boot}: kmemleak: {first.strip()}')


def check_boot(run, manifest, tally, plan=None):
    boot = os.path.basename(run.rstrip('/'))
    print(f'{boot}:')
    if boot not in manifest.boots:
        tally.add('fail', f'{boot}: not a boot of the manifest')
        return
    checks = manifest.boots[boot]
    check_results(boot, run, manifest, tally, plan)
    errors = os.path.join(run, 'errors')
    if os.path.exists(errors):
        for line in read_lines(errors):
            tally.add('fail', f'{boot}: {line}')
    if 'kernel' in checks:
        check_kernel(boot, run, tally)
    check_checkers(boot, run, checks, tally)


def main(runs, manifest_path, plan_path=None, selection=None):
    manifest = parse_manifest(manifest_path)
    plan = read_plan(plan_path) if plan_path else None
    tally = Tally()
    for run in runs:
        check_boot(run, manifest, tally, plan)
    for name in tally.failures:
        print(f'FAIL: {name}')
    line = f'{tally.passed} passed, {tally.failed} failed'
    if tally.skipped:
        line += f', {tally.skipped} skipped'
    if plan is not None:
        # Never mistaken for a whole run: what it ran, and a marked total.
        print(f'partial run ({selection or "a selection"}): only the tests selected '
              f'were judged, on {", ".join(os.path.basename(r.rstrip("/")) for r in runs)}')
        line = 'partial: ' + line
    print(line)
    return 1 if tally.failed or not tally.passed else 0


# ---------------------------------------------------------------- --write-manifest

HEADER = """\
# Every test that must run on each boot of `make check`, read by
# tools/uml/results.py: a test that does not report, or reports without
# being listed here, fails the run.  Regenerate after adding or removing
# tests, from the run directories of a full `make check`:
#
#   python3 tools/uml/results.py --write-manifest build/runs/*
#
# then read the diff: every skip and absence needs a true reason.  Lines:
#
#   boot NAME [CHECK...]       a boot (a run directory's name) and what must
#                              hold there: "kernel" (it powered off, its
#                              stage finished, no kernel report), and the
#                              checkers that must be on: kmemleak kasan lockdep
#   suite BOOT,... KIND NAME N a KUnit suite (KIND kunit) or test program
#                              (KIND selftests) that must report N results on
#                              each of these boots; its tests follow
#   test NAME                  one result of the suite above (the rest of
#                              the line; KUnit parameters after a dot)
#   skip BOOT,... REASON       the test above may skip on these boots
#   absent BOOT,... KIND NAME REASON
#                              a program that is built but not run there
"""


def runs_view(runs):
    """boot -> {(kind, name): [(test, status, reason)]} of the given runs."""
    view = {}
    for run in runs:
        boot = os.path.basename(run.rstrip('/'))
        view[boot] = {k: suite_leaves(k[0], k[1], p)[0] for k, p in found_suites(run).items()}
    return view


def default_checks(boot):
    if boot == 'host':
        return []
    if boot.startswith('check-') or boot == 'fuzz':
        return ['kernel', 'kmemleak', 'kasan', 'lockdep']
    return ['kernel']


def merge_suite(key, old, view):
    """A suite as the runs saw it, with what the other boots had kept."""
    kept = [b for b in (old.boots if old else []) if b not in view]
    ran = [b for b in view if key in view[b]]
    suite = Suite(key[0], key[1], kept + ran, 0)
    for b in ran:
        for t, _, _ in view[b][key]:
            if t not in suite.tests:
                suite.tests.append(t)
    if not ran:
        suite.tests = list(old.tests)
    for t in suite.tests:
        for b, reason in (old.skips.get(t, {}) if old else {}).items():
            if b not in view:
                suite.skips.setdefault(t, {})[b] = reason
        for b in ran:
            for n, s, r in view[b][key]:
                if n == t and s == 'skip':
                    prev = old.skips.get(t, {}).get(b) if old else None
                    suite.skips.setdefault(t, {})[b] = prev or r or 'no reason given'
    suite.count = len(suite.tests)
    return suite if suite.boots else None


def format_manifest(m):
    out = [HEADER]
    for boot, checks in m.boots.items():
        out.append(' '.join(['boot', boot] + checks))
    for (kind, name), s in sorted(m.suites.items()):
        out.append('')
        out.append(f'suite {",".join(s.boots)} {kind} {name} {s.count}')
        for t in s.tests:
            out.append(f'  test {t}')
            by_reason = {}
            for b, r in s.skips.get(t, {}).items():
                by_reason.setdefault(r, []).append(b)
            for r, bs in by_reason.items():
                out.append(f'    skip {",".join(bs)} {r}')
    absent = {}
    for key, boots in m.absent.items():
        for b, r in boots.items():
            absent.setdefault((key, r), []).append(b)
    if absent:
        out.append('')
    for ((kind, name), r), bs in sorted(absent.items()):
        out.append(f'absent {",".join(bs)} {kind} {name} {r}')
    return '\n'.join(out) + '\n'


def write_manifest(runs, path):
    old = parse_manifest(path) if os.path.exists(path) else Manifest()
    view = runs_view(runs)
    new = Manifest()
    new.boots = dict(old.boots)
    for boot in view:
        new.boots.setdefault(boot, default_checks(boot))
    new.absent = old.absent
    keys = set(old.suites) | {k for v in view.values() for k in v}
    for key in keys:
        suite = merge_suite(key, old.suites.get(key), view)
        if suite:
            new.suites[key] = suite
    with open(path + '.tmp', 'w') as f:
        f.write(format_manifest(new))
    os.replace(path + '.tmp', path)
    print(f'wrote {path}: {len(new.suites)} suites, '
          f'{sum(s.count for s in new.suites.values())} tests')
    return 0


def parse_args(argv):
    manifest, write, runs, plan, selection = MANIFEST, False, [], None, None
    while argv:
        a = argv.pop(0)
        if a == '--manifest' and argv:
            manifest = argv.pop(0)
        elif a == '--plan' and argv:
            plan = argv.pop(0)
        elif a == '--selection' and argv:
            selection = argv.pop(0)
        elif a == '--write-manifest':
            write = True
        elif a.startswith('--'):
            sys.exit(__doc__)
        else:
            runs.append(a)
    if not runs:
        sys.exit(__doc__)
    return manifest, write, runs, plan, selection


if __name__ == '__main__':
    manifest, write, runs, plan, selection = parse_args(sys.argv[1:])
    sys.exit(write_manifest(runs, manifest) if write else main(runs, manifest, plan, selection))
