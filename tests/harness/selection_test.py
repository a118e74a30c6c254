#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of `make check T=... K=...`'s selection (tools/uml/selection.py).

    tests/harness/selection_test.py      TAP on stdout, exit 1 on a failure

A small manifest with the boots of `make check` stands in for the real one:
the plan must put each named test on the boots it runs on and no other,
K= must narrow it, and an unknown name or kernel must fail with the list
of valid ones.  Last, `make check T=` of an unknown name must stop before
building anything, with the same list.
"""
import os
import subprocess
import sys
import tempfile
import unittest

from tap import run_as_tap

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SELECTION = os.path.join(TOP, 'tools', 'uml', 'selection.py')

MANIFEST = """\
boot check-rt kernel
boot check-tt kernel
boot debian-6.1-amd64 kernel
boot debian-6.1-rt-amd64 kernel
boot fuzz kernel
boot host
boot kunit-rt kernel

suite check-rt,kunit-rt kunit suite_a 1
  test a1
suite check-rt kunit suite_b 1
  test b1
suite check-tt kunit suite_tt 1
  test t1
suite check-rt,debian-6.1-amd64,debian-6.1-rt-amd64,fuzz selftests prog_test 1
  test p1
suite host selftests results_test 1
  test r1
suite fuzz selftests fuzz_only_test 1
  test f1
"""


class Selection(unittest.TestCase):
    def setUp(self):
        fd, self.manifest = tempfile.mkstemp(prefix='htw-selection-test.')
        with os.fdopen(fd, 'w') as f:
            f.write(MANIFEST)

    def tearDown(self):
        os.remove(self.manifest)

    def plan(self, t, k):
        p = subprocess.run([sys.executable, SELECTION, '--manifest', self.manifest,
                            'plan', t, k], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def test_program_everywhere_it_runs(self):
        rc, out, err = self.plan('prog_test', '')
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ['check-rt prog_test - -',
                                            'debian-6.1-amd64 prog_test - -',
                                            'debian-6.1-rt-amd64 prog_test - -'])

    def test_kernel_narrows(self):
        rc, out, err = self.plan('prog_test,suite_a', 'rt,uml')
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(out.splitlines()), ['check-rt prog_test suite_a suite_a',
                                                    'debian-6.1-rt-amd64 prog_test - -',
                                                    'kunit-rt - suite_a suite_a'])

    def test_kernel_alone_takes_all_its_tests(self):
        rc, out, err = self.plan('', 'uml')
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(out.splitlines()), ['check-rt prog_test suite_a,suite_b suite_*',
                                                    'check-tt - suite_tt suite_tt',
                                                    'kunit-rt - suite_a suite_a'])

    def test_kunit_test_glob(self):
        rc, out, err = self.plan('suite_tt.t*', '')
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, 'check-tt - suite_tt.t* suite_tt.t*\n')

    def test_suite_runs_in_both_kunit_boots(self):
        """A suite runs in the harness's boot and in kunit.py's, both UML."""
        rc, out, err = self.plan('suite_a', 'uml')
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ['check-rt - suite_a suite_a',
                                            'kunit-rt - suite_a suite_a'])

    def test_several_suites_one_glob(self):
        """A KUnit module loads once a boot: several suites share one
        kunit.filter_glob, their common prefix; the plan still names each."""
        rc, out, err = self.plan('suite_a,suite_b.x*', '')
        self.assertEqual((rc, out), (0, 'check-rt - suite_a,suite_b.x* suite_*\n'
                                     'kunit-rt - suite_a suite_a\n'), err)

    def test_harness_tests_on_host(self):
        rc, out, err = self.plan('results_test', '')
        self.assertEqual((rc, out), (0, 'host results_test - -\n'), err)

    def test_unknown_name_lists_the_valid_ones(self):
        rc, out, err = self.plan('prog_test,nosuch_test', '')
        self.assertEqual(rc, 2)
        self.assertEqual(out, '')
        self.assertIn('unknown test nosuch_test', err)
        for name in ('prog_test', 'suite_a', 'suite_tt', 'results_test'):
            self.assertIn(f'\n  {name}\n', err + '\n')

    def test_fuzz_boot_is_not_a_check_boot(self):
        rc, _, err = self.plan('fuzz_only_test', '')
        self.assertEqual(rc, 2)
        self.assertIn('unknown test fuzz_only_test', err)

    def test_unknown_kernel(self):
        rc, _, err = self.plan('', 'uml,sparc')
        self.assertEqual(rc, 2)
        self.assertIn('unknown kernel sparc in K=; valid: host, uml, generic, rt', err)

    def test_selection_that_selects_nothing(self):
        rc, _, err = self.plan('results_test', 'uml')
        self.assertEqual(rc, 2)
        self.assertIn('selects no test', err)

    def test_make_check_unknown_name(self):
        """`make check T=` of an unknown name fails at once, with the list
        (the real manifest's names), before any build."""
        p = subprocess.run(['make', '-s', '--no-print-directory', '-C', TOP, 'check',
                            'T=htwheel_nosuch_test'], capture_output=True, text=True,
                           timeout=120)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('unknown test htwheel_nosuch_test in T=; valid:', p.stderr)
        self.assertIn('\n  htwheel_dev_test\n', p.stderr)
        self.assertNotIn('building', p.stderr)


if __name__ == '__main__':
    sys.exit(run_as_tap(Selection, 'selection'))
