#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests that `make help` names every target and every setting.

    tests/harness/make_help_test.py      TAP on stdout, exit 1 on a failure

The help text is written by hand (Makefile, HTW_HELP); these cases find
what it must name in the sources themselves, so that a new target or a new
knob cannot go unlisted: every target of the Makefile and the rule files
it includes, and every setting read from the environment, that is a shell
variable read with a fallback (${HTW_X:-...}) in the scripts, a `?=` make
variable, a make variable handed to a script (T='$(T)'), a variable
Kbuild tests but nothing assigns, or a name a test program passes to
getenv().  `make check` runs it beside results_test.py,
as the boot "host".
"""
import functools
import glob
import os
import re
import subprocess
import sys
import unittest

from tap import run_as_tap

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MAKEFILES = ['Makefile'] + sorted(glob.glob('tools/**/*.mk', root_dir=TOP, recursive=True))
SCRIPTS = ['.ci/run'] + sorted(glob.glob('tools/**/*.sh', root_dir=TOP, recursive=True))
# The programs `make check` and `make bench` run (the library's own settings
# are its man pages' business).
C_SOURCES = sorted(glob.glob('tests/**/*.c', root_dir=TOP, recursive=True) +
                   glob.glob('tools/bench/**/*.c', root_dir=TOP, recursive=True))

# A rule's targets: plain words before a lone colon (not := or a pattern).
RULE = re.compile(r'^([a-z][a-z0-9_-]*(?:[ \t]+[a-z][a-z0-9_-]*)*)[ \t]*:(?![=:])', re.M)
SHELL_KNOB = re.compile(r'\$\{((?:HTW_|HTWHEEL_)[A-Z0-9_]*|CI|KDIR)(?::?[-+=?])')
MAKE_KNOB = re.compile(r'^([A-Z][A-Z0-9_]*)[ \t]*\?=', re.M)
MAKE_REF = re.compile(r'\$\((HTW_[A-Z0-9_]+)\)')
MAKE_ASSIGNED = re.compile(r'^(?:export[ \t]+|override[ \t]+)?([A-Z][A-Z0-9_]*)[ \t]*[:?+]?=', re.M)
# A make variable handed to a script's environment (check: T='$(T)').
MAKE_PASSED = re.compile(r"\b([A-Z][A-Z0-9_]*)='\$\(\1\)'")
C_KNOB = re.compile(r'\w*env\w*\(\s*"((?:HTW_|HTWHEEL_)[A-Z0-9_]*)"')


def read(path):
    with open(os.path.join(TOP, path), errors='replace') as f:
        return f.read()


def targets():
    found = set()
    for mk in MAKEFILES:
        for m in RULE.finditer(read(mk)):
            found.update(m.group(1).split())
    return found


def knobs():
    """Every setting the harness, the build or a test reads from outside."""
    found = {}
    for path in SCRIPTS:
        for m in SHELL_KNOB.finditer(read(path)):
            found.setdefault(m.group(1), path)
    makefiles = {path: read(path) for path in MAKEFILES + ['Kbuild']}
    assigned = {v for text in makefiles.values() for v in MAKE_ASSIGNED.findall(text)}
    for path, text in makefiles.items():
        for v in MAKE_KNOB.findall(text) + MAKE_PASSED.findall(text):
            found.setdefault(v, path)
        for v in MAKE_REF.findall(text):
            if v not in assigned:
                found.setdefault(v, path)
    for path in C_SOURCES:
        for v in C_KNOB.findall(read(path)):
            found.setdefault(v, path)
    return found


@functools.cache
def help_words():
    out = subprocess.run(['make', '-s', '--no-print-directory', '-C', TOP, 'help'],
                         capture_output=True, text=True, check=True).stdout
    return set(re.findall(r'[A-Za-z0-9_-]+', out))


class Help(unittest.TestCase):
    def setUp(self):
        self.words = help_words()

    def test_lists_every_target(self):
        found = targets()
        self.assertIn('check', found)
        missing = sorted(found - self.words)
        self.assertEqual(missing, [], f'targets `make help` does not list: {missing}')

    def test_lists_every_knob(self):
        found = knobs()
        for k in ('HTW_SKIP_QEMU', 'HTWHEEL_CACHE', 'KDIR', 'HTW_BENCH', 'HTW_STRESS_SECONDS',
                  'T', 'K'):
            self.assertIn(k, found)
        missing = sorted(f'{k} ({p})' for k, p in found.items() if k not in self.words)
        self.assertEqual(missing, [], f'settings `make help` does not list: {missing}')

    def test_lists_every_bench_row(self):
        """ROWS= takes the rows of tools/bench/bench.sh's BENCH_ROWS: each
        is named in `make help`."""
        m = re.search(r'^BENCH_ROWS="([^"]*)"', read('tools/bench/bench.sh'), re.M)
        self.assertIsNotNone(m, 'no BENCH_ROWS in tools/bench/bench.sh')
        rows = m.group(1).split()
        self.assertIn('churn', rows)
        missing = [r for r in rows if r not in self.words]
        self.assertEqual(missing, [], f'bench rows `make help` does not name: {missing}')


if __name__ == '__main__':
    sys.exit(run_as_tap(Help, 'help'))
