#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a partial `make check T=... K=...` runs, and on which boots.

    selection.py plan [--manifest FILE] T K      print the plan, or fail
    selection.py names [--manifest FILE]          every name T= takes

T is a comma-separated list of test programs, harness tests and KUnit
suites (a suite may carry a test glob after a dot, "suite.test*", as
kunit.py's filter does); K a comma-separated list of kernels: host (the
harness's own tests), uml, generic, rt.  Either may be empty: no T means
every test the manifest lists on the kernels named, no K every kernel the
tests run on.

The plan, for tools/uml/check.sh, is a line per boot that has something
to run: "BOOT PROGRAMS KUNIT GLOB", the first two comma-separated lists or
"-" for none, GLOB the kunit.filter_glob that runs them (kunit_glob()).  A name that is neither in tests/manifest.txt nor a test source of
the tree, or a kernel not in the list above, is an error that lists the
valid ones (exit 2).

tools/uml/results.py reads the same plan back (--plan FILE) and judges
only what it selected.
"""
import fnmatch
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = os.path.join(TOP, 'tests', 'manifest.txt')
KERNELS = ('host', 'uml', 'generic', 'rt')
# Where a test that the manifest does not list yet runs: a new program.
SOURCES = ('tests/selftests/*_test.c', 'tests/stress/*_test.c',
           'tests/lib/*_test.c', 'tests/lib/*_test.sh')
HARNESS_SOURCES = ('tests/harness/*_test.py', 'tests/harness/*_test.sh')


def kernel_of(boot):
    """The K= word of a boot of the manifest (None: not a `make check` boot)."""
    if boot == 'host':
        return 'host'
    if boot.startswith(('check-', 'kunit-')):
        return 'uml'
    if re.match(r'debian-.*-rt-amd64$', boot):
        return 'rt'
    if re.match(r'debian-.*-amd64$', boot):
        return 'generic'
    return None


def check_boots(manifest):
    return [b for b in manifest.boots if kernel_of(b)]


def source_names():
    """Test names from the tree's sources: kind -> {name: default boots}."""
    names = {}
    for pattern in SOURCES + HARNESS_SOURCES:
        for path in glob.glob(pattern, root_dir=TOP):
            base = os.path.basename(path).rsplit('.', 1)[0]
            names[base] = pattern in HARNESS_SOURCES
    return names


def catalogue(manifest, sources=True):
    """name -> (kind, [boot, ...]) of everything T= may name: what the
    manifest lists, and (@sources) the tree's tests it does not list yet."""
    boots = check_boots(manifest)
    cat = {}
    for (kind, name), suite in manifest.suites.items():
        where = [b for b in suite.boots if b in boots]
        if where:
            cat[name] = (kind, where)
    qemu = [b for b in boots if kernel_of(b) in ('generic', 'rt')]
    for name, harness in (source_names() if sources else {}).items():
        if name in cat:
            continue
        if harness:
            cat[name] = ('selftests', ['host'])
        elif name.endswith('_tt_test'):
            cat[name] = ('selftests', ['check-tt'])
        else:
            cat[name] = ('selftests', ['check-rt'] + qemu)
    return cat


def split_list(text):
    return [w for w in (text or '').replace(' ', ',').split(',') if w]


def suite_part(word):
    """A T= word's suite (or program) name: the part before a test glob."""
    return word.split('.', 1)[0]


def make_plan(manifest, tests, kernels):
    """{boot: ([program], [kunit filter])}, or raise ValueError."""
    cat = catalogue(manifest)
    bad = [k for k in kernels if k not in KERNELS]
    if bad:
        raise ValueError(f'unknown kernel {", ".join(bad)} in K=; valid: {", ".join(KERNELS)}')
    bad = [t for t in tests if suite_part(t) not in cat]
    if bad:
        raise ValueError(f'unknown test {", ".join(bad)} in T=; valid:\n  '
                         + '\n  '.join(sorted(cat)))
    for t in tests:
        if '.' in t and cat[suite_part(t)][0] != 'kunit':
            raise ValueError(f'{t}: only a KUnit suite takes a test glob after a dot')
    # No T: what the manifest lists on the kernels of K.
    wanted = tests or sorted(catalogue(manifest, sources=False))
    plan = {}
    for word in wanted:
        kind, boots = cat[suite_part(word)]
        for b in boots:
            if kernels and kernel_of(b) not in kernels:
                continue
            progs, kunit = plan.setdefault(b, ([], []))
            (kunit if kind == 'kunit' else progs).append(word)
    if not plan:
        raise ValueError(f'T={",".join(tests)} K={",".join(kernels)} selects no test '
                         'on any boot')
    return plan


def kunit_glob(filters):
    """The one kunit.filter_glob that runs every filter of the list: the
    filter itself when alone, else the suites' common prefix and "*".  A
    KUnit module cannot be loaded twice in one UML boot (without
    KASAN_VMALLOC, the first load's freed globals stay poisoned), so the
    suites it runs beyond the selection run unjudged."""
    if not filters:
        return '-'
    if len(filters) == 1:
        return filters[0]
    return os.path.commonprefix([suite_part(f) for f in filters]) + '*'


def format_plan(plan):
    return ''.join(f'{b} {",".join(p) or "-"} {",".join(k) or "-"} {kunit_glob(k)}\n'
                   for b, (p, k) in plan.items())


def read_plan(path):
    """{boot: {suite name: test glob or None}} from a plan file."""
    plan = {}
    for line in open(path).read().splitlines():
        if not line.strip():
            continue
        boot, progs, kunit, _ = line.split()
        sel = plan.setdefault(boot, {})
        for word in (progs + ',' + kunit).split(','):
            if word and word != '-':
                name, _, test = word.partition('.')
                sel[name] = test or None
    return plan


def selects(plan, boot, name, test=None):
    """Does the plan run this suite (and this test of it) on this boot?"""
    sel = plan.get(boot, {})
    if name not in sel:
        return False
    return test is None or sel[name] is None or fnmatch.fnmatchcase(test, sel[name])


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from results import parse_manifest
    manifest = MANIFEST
    if '--manifest' in argv:
        i = argv.index('--manifest')
        manifest = argv[i + 1]
        del argv[i:i + 2]
    m = parse_manifest(manifest)
    if argv[:1] == ['names']:
        for name, (kind, boots) in sorted(catalogue(m).items()):
            kernels = sorted({kernel_of(b) for b in boots})
            print(f'{name:40} {kind:9} {",".join(kernels)}')
        return 0
    if argv[:1] != ['plan'] or len(argv) != 3:
        sys.exit(__doc__)
    try:
        plan = make_plan(m, split_list(argv[1]), split_list(argv[2]))
    except ValueError as e:
        print(f'make check: {e}', file=sys.stderr)
        return 2
    sys.stdout.write(format_plan(plan))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
