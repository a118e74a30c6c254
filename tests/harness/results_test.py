#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of tools/uml/results.py, fed synthetic run directories.

    tests/harness/results_test.py        TAP on stdout, exit 1 on a failure

Each case starts from two clean boots that results.py passes (a UML-like
boot with every checker and a qemu-like one), breaks one thing, and checks
that results.py fails the run and names what broke.  `make check` runs it
first and hands its TAP to results.py as the boot "host" of
tests/manifest.txt, so a case that stops catching its fault fails the run.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tap import run_as_tap

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(TOP, 'tools', 'uml', 'results.py')

MANIFEST = """\
# a test manifest
boot uml kernel kmemleak kasan lockdep
boot qemu kernel

suite uml kunit s1 3
  test c1
  test c2.p1
  test c2.p2

suite uml,qemu selftests prog 3
  test g.t1
  test g.t2
  test g.t3
    skip uml no such thing in UML

absent qemu selftests script_test needs the host's tools
"""

KTAP = """\
KTAP version 1
1..1
    KTAP version 1
    # Subtest: s1
    1..2
    ok 1 c1
        KTAP version 1
        # Subtest: c2
        ok 1 p1
        ok 2 p2
    # c2: pass:2 fail:0 skip:0 total:2
    ok 2 c2
# s1: pass:2 fail:0 skip:0 total:2
ok 1 s1
"""

TAP_UML = """\
TAP version 13
1..3
ok 1 g.t1
ok 2 g.t2
ok 3 g.t3 # SKIP no such thing
# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0
"""

CONSOLE_UML = """\
Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
kmemleak: Kernel memory leak detector initialized (mem pool available: 15855)
htwheel: stage finished, powering off
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


class Runs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='htw-results-test.')
        self.manifest = os.path.join(self.dir, 'manifest.txt')
        write(self.manifest, MANIFEST)
        self.uml = os.path.join(self.dir, 'uml')
        self.qemu = os.path.join(self.dir, 'qemu')
        for run, tap in ((self.uml, TAP_UML), (self.qemu, TAP_UML.replace(' # SKIP no such thing', ''))):
            write(f'{run}/selftests/prog.tap', tap)
            write(f'{run}/selftests/prog.rc', '0\n')
            write(f'{run}/kernel.rc', '0\n')
            write(f'{run}/stage.rc', '0\n')
            write(f'{run}/console.log', 'htwheel: stage finished, powering off\n')
        write(f'{self.uml}/kunit/s1.ktap', KTAP)
        write(f'{self.uml}/console.log', CONSOLE_UML)
        write(f'{self.uml}/kmemleak.txt', '')
        write(f'{self.uml}/checkers.txt', 'kasan\nlockdep\n')

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_results(self, *extra):
        p = subprocess.run([sys.executable, RESULTS, '--manifest', self.manifest,
                            *extra, self.uml, self.qemu],
                           capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    def assertFails(self, *needles):
        """results.py exits 1, prints each needle on a FAIL line, and ends
        with the one verdict line."""
        rc, out = self.run_results()
        self.assertEqual(rc, 1, out)
        fails = [line for line in out.splitlines() if line.startswith('FAIL: ')]
        for n in needles:
            self.assertTrue(any(n in line for line in fails), f'no FAIL line with {n!r}:\n{out}')
        last = out.splitlines()[-1]
        self.assertRegex(last, r'^\d+ passed, [1-9]\d* failed(, \d+ skipped)?$')
        return out

    def edit(self, path, old, new):
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        write(path, text.replace(old, new))

    # -- the clean runs pass, and are counted

    def test_clean_runs_pass(self):
        rc, out = self.run_results()
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.splitlines()[-1], '8 passed, 0 failed, 1 skipped')

    # -- missing, unexpected, duplicated

    def test_missing_kunit_suite(self):
        os.remove(f'{self.uml}/kunit/s1.ktap')
        self.assertFails('uml: kunit s1: missing')

    def test_missing_program(self):
        os.remove(f'{self.qemu}/selftests/prog.tap')
        self.assertFails('qemu: selftests prog: missing')

    def test_missing_single_test(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', 'ok 2 g.t2\n', '')
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3', '1..2')
        self.edit(f'{self.qemu}/selftests/prog.tap', 'ok 3', 'ok 2')
        self.assertFails('qemu: selftests prog: g.t2: never ran')

    def test_missing_kunit_case(self):
        self.edit(f'{self.uml}/kunit/s1.ktap', '        ok 2 p2\n', '')
        self.assertFails('kunit s1: c2.p2: never ran')

    def test_unexpected_test(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3\n', '1..4\nok 4 g.t4\n')
        self.assertFails('qemu: selftests prog: g.t4: not in the manifest')

    def test_unexpected_program(self):
        write(f'{self.qemu}/selftests/new_test.tap', 'TAP version 13\n1..1\nok 1 x\n')
        write(f'{self.qemu}/selftests/new_test.rc', '0\n')
        self.assertFails('qemu: selftests new_test: ran, but the manifest does not list it')

    def test_absent_program_that_ran(self):
        write(f'{self.qemu}/selftests/script_test.tap', 'TAP version 13\n1..1\nok 1 x\n')
        self.assertFails("script_test: ran, but the manifest says not on this boot")

    def test_unknown_boot(self):
        os.rename(self.qemu, os.path.join(self.dir, 'other'))
        self.qemu = os.path.join(self.dir, 'other')
        self.assertFails('other: not a boot of the manifest')

    def test_duplicated_result(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', 'ok 2 g.t2\n', 'ok 2 g.t2\nok 2 g.t2\n')
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3', '1..4')
        self.assertFails('qemu: selftests prog: g.t2: reported twice')

    # -- plans

    def test_fewer_results_than_plan(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3', '1..4')
        self.assertFails('3 results against a plan of 4')

    def test_more_results_than_plan(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3', '1..2')
        self.assertFails('3 results against a plan of 2')

    def test_kunit_suite_plan(self):
        self.edit(f'{self.uml}/kunit/s1.ktap', '    1..2\n', '    1..3\n')
        self.assertFails('s1: 2 results against a plan of 3')

    def test_no_plan(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3\n', '')
        self.assertFails('no TAP plan')

    # -- skips and statuses

    def test_skip_without_leave(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', 'ok 1 g.t1', 'ok 1 g.t1 # SKIP not today')
        self.assertFails('qemu: selftests prog: g.t1: skipped, and the manifest does not allow it')

    def test_skip_allowed_on_another_boot_only(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', 'ok 3 g.t3', 'ok 3 g.t3 # SKIP no such thing')
        self.assertFails('qemu: selftests prog: g.t3: skipped')

    def test_not_ok_skip_is_a_failure(self):
        self.edit(f'{self.uml}/selftests/prog.tap', 'ok 3 g.t3 # SKIP', 'not ok 3 g.t3 # SKIP')
        self.assertFails('uml: selftests prog: g.t3: "not ok ... # SKIP" is a failure')

    def test_failed_test(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', 'ok 2 g.t2', 'not ok 2 g.t2')
        self.edit(f'{self.qemu}/selftests/prog.rc', '0', '1')
        out = self.assertFails('qemu: selftests prog: g.t2')
        self.assertNotIn('exited with status', out)

    def test_suite_not_ok_over_passing_cases(self):
        self.edit(f'{self.uml}/kunit/s1.ktap', '\nok 1 s1', '\nnot ok 1 s1')
        self.assertFails('uml: kunit s1: s1: "not ok" although each of its results passed')

    def test_case_not_ok_over_passing_params(self):
        self.edit(f'{self.uml}/kunit/s1.ktap', '    ok 2 c2', '    not ok 2 c2')
        self.assertFails('c2: "not ok" although each of its results passed')

    def test_exit_status_without_failed_test(self):
        self.edit(f'{self.qemu}/selftests/prog.rc', '0', '1')
        self.assertFails('qemu: selftests prog: exited with status 1')

    def test_no_exit_status(self):
        os.remove(f'{self.qemu}/selftests/prog.rc')
        self.assertFails('qemu: selftests prog: no exit status')

    # -- a stage killed part-way

    def test_stage_killed_part_way(self):
        write(f'{self.qemu}/selftests/prog.tap', 'TAP version 13\n1..3\nok 1 g.t1\n')
        os.remove(f'{self.qemu}/selftests/prog.rc')
        os.remove(f'{self.qemu}/stage.rc')
        write(f'{self.qemu}/kernel.rc', '137\n')
        self.assertFails('qemu: selftests prog: g.t2: never ran',
                         'qemu: selftests prog: g.t3: never ran',
                         'qemu: the kernel did not power off in time',
                         'qemu: the test stage did not finish')

    def test_program_killed_before_any_result(self):
        write(f'{self.qemu}/selftests/prog.tap', '# prog: started; the boot ended before it did\n')
        os.remove(f'{self.qemu}/selftests/prog.rc')
        self.assertFails('qemu: selftests prog: g.t1: never ran',
                         'qemu: selftests prog: g.t3: never ran',
                         'qemu: selftests prog: no exit status')

    def test_kunit_killed_mid_suite(self):
        cut = KTAP.index('        ok 2 p2')
        write(f'{self.uml}/kunit/s1.ktap', KTAP[:cut])
        self.assertFails('kunit s1: c2.p2: never ran', 'against a plan of')

    def test_stage_errors(self):
        write(f'{self.uml}/errors', 'test program /x/y_test is missing or not executable\n')
        self.assertFails('uml: test program /x/y_test is missing or not executable')

    # -- checkers that were expected but off

    def test_kmemleak_disabled(self):
        self.edit(f'{self.uml}/console.log', 'htwheel: stage',
                  'kmemleak: Kernel memory leak detector disabled\nhtwheel: stage')
        self.assertFails('uml: kmemleak was expected but is off')

    def test_kmemleak_report_missing(self):
        os.remove(f'{self.uml}/kmemleak.txt')
        self.assertFails('uml: kmemleak was expected but no kmemleak.txt')

    def test_kmemleak_never_started(self):
        self.edit(f'{self.uml}/console.log', 'kmemleak: Kernel memory leak detector initialized', '')
        self.assertFails('uml: kmemleak was expected but its boot message is missing')

    def test_kmemleak_leak(self):
        write(f'{self.uml}/kmemleak.txt', 'unreferenced object 0x6000 (size 64):\n')
        self.assertFails('uml: kmemleak: unreferenced object')

    def test_kasan_off(self):
        write(f'{self.uml}/checkers.txt', 'lockdep\n')
        self.assertFails('uml: kasan was expected but was not on')

    def test_lockdep_never_started(self):
        self.edit(f'{self.uml}/console.log', 'Lock dependency validator', 'Lock validator')
        self.assertFails('uml: lockdep was expected but its boot message is missing')

    def test_lockdep_turned_off(self):
        write(f'{self.uml}/checkers.txt', 'kasan\n')
        self.assertFails('uml: lockdep was expected but was not on')

    # -- kernel reports

    def splat(self, line):
        self.edit(f'{self.qemu}/console.log', 'htwheel: stage', line + '\nhtwheel: stage')
        self.assertFails('qemu: kernel: ' + line)

    def test_splat_rcu_stall(self):
        self.splat('rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:')

    def test_splat_rcu_self_detected_stall(self):
        self.splat('rcu: INFO: rcu_sched self-detected stall on CPU')

    def test_splat_soft_lockup(self):
        self.splat('watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [htwheel_race_:77]')

    def test_splat_hung_task(self):
        self.splat('INFO: task htwheel_dev_te:88 blocked for more than 120 seconds.')

    def test_splat_oom_kill(self):
        self.splat('Out of memory: Killed process 91 (htwheel_limits_) total-vm:1000kB')

    def test_splat_oom_killer(self):
        self.splat('htwheel_limits_ invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0')

    def test_splat_lockdep_off(self):
        self.splat('turning off the locking correctness validator.')

    # -- the manifest itself

    def test_manifest_count_must_match(self):
        self.edit(self.manifest, 'kunit s1 3', 'kunit s1 4')
        rc, out = self.run_results()
        self.assertNotEqual(rc, 0)
        self.assertIn('says 4 tests but lists 3', out)

    def test_write_manifest_round_trip(self):
        """Rewriting the manifest from clean runs keeps it (and its reasons)."""
        rc, out = self.run_results('--write-manifest')
        self.assertEqual(rc, 0, out)
        with open(self.manifest) as f:
            text = f.read()
        self.assertIn('skip uml no such thing in UML', text)
        self.assertIn('absent qemu selftests script_test needs the host', text)
        self.assertEqual(self.run_results()[0], 0)

    def test_write_manifest_adds_new_tests(self):
        self.edit(f'{self.qemu}/selftests/prog.tap', '1..3\n', '1..4\nok 4 g.t4\n')
        self.edit(f'{self.uml}/selftests/prog.tap', '1..3\n', '1..4\nok 4 g.t4\n')
        self.assertEqual(self.run_results('--write-manifest')[0], 0)
        rc, out = self.run_results()
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.splitlines()[-1], '10 passed, 0 failed, 1 skipped')

    # -- a partial run (make check T=... K=...): only the selection counts

    def run_partial(self, plan):
        write(f'{self.dir}/plan.txt', plan)
        return self.run_results('--plan', f'{self.dir}/plan.txt', '--selection', 'T=x K=y')

    def test_partial_counts_only_the_selection(self):
        """The unselected suite's failure is not counted; the closing line
        says the run was partial."""
        self.edit(f'{self.uml}/kunit/s1.ktap', '    ok 1 c1', '    not ok 1 c1')
        rc, out = self.run_partial('uml prog - -\nqemu prog - -\n')
        self.assertEqual(rc, 0, out)
        self.assertIn('partial run (T=x K=y)', out)
        self.assertEqual(out.splitlines()[-1], 'partial: 5 passed, 0 failed, 1 skipped')

    def test_partial_selected_but_missing_fails(self):
        os.remove(f'{self.uml}/kunit/s1.ktap')
        rc, out = self.run_partial('uml - s1 s1\n')
        self.assertEqual(rc, 1, out)
        self.assertIn('FAIL: uml: kunit s1: missing', out)
        self.assertRegex(out.splitlines()[-1], r'^partial: 0 passed, [1-9]\d* failed')

    def test_partial_test_glob(self):
        """A KUnit test glob (suite.c2*) judges only the tests it matches:
        c1 failing is not counted, c2.p2 missing is."""
        self.edit(f'{self.uml}/kunit/s1.ktap', '    ok 1 c1', '    not ok 1 c1')
        rc, out = self.run_partial('uml - s1.c2* s1.c2*\n')
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.splitlines()[-1].startswith('partial: 2 passed, 0 failed'), out)
        self.edit(f'{self.uml}/kunit/s1.ktap', '        ok 2 p2\n', '')
        rc, out = self.run_partial('uml - s1.c2* s1.c2*\n')
        self.assertEqual(rc, 1, out)
        self.assertIn('kunit s1: c2.p2: never ran', out)


if __name__ == '__main__':
    sys.exit(run_as_tap(Runs, 'results'))
