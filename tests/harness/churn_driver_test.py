#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the churn driver of `make bench` (tools/bench/ubench/churn_driver.c)
and its libev and libuv contenders, built and run natively on the host.

    tests/harness/churn_driver_test.py   TAP on stdout, exit 1 on a failure

tests/harness/churn_driver_test.c does the checking, at small N and a
T of 100 ms: every operation finds a timer that was pending (or fired,
its expiry consumed) and arms it, counted once; every contender gets
the same picks; a contender that skips an arm is caught.  `make check`
runs it beside bench_report_test.py, as the boot "host".
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tap import run_as_tap

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UB = os.path.join(TOP, 'tools', 'bench', 'ubench')
SRCS = [os.path.join(TOP, 'tests', 'harness', 'churn_driver_test.c')] + \
    [os.path.join(UB, f) for f in ('churn_driver.c', 'churn_peers.c', 'util.c', 'peers.c')]


class ChurnDriver(unittest.TestCase):
    # Each case builds the program afresh (run_as_tap runs cases one by one).
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='htw-churn-driver-test.')
        self.prog = os.path.join(self.dir, 'churn_driver_test')
        cc = os.environ.get('CC', 'cc')
        p = subprocess.run([cc, '-O2', '-Wall', '-Wextra', '-Werror',
                            '-I' + os.path.join(TOP, 'include', 'uapi'), '-I' + UB,
                            '-o', self.prog, *SRCS, '-lev', '-luv', '-lm'],
                           capture_output=True, text=True)
        self.build_error = p.stdout + p.stderr if p.returncode else None

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_prog(self, what):
        self.assertIsNone(self.build_error, self.build_error)
        p = subprocess.run([self.prog, what], capture_output=True, text=True, timeout=120)
        lines = p.stdout.splitlines()
        bad = [line for line in lines if line.startswith('not ok')]
        self.assertEqual(bad, [], p.stdout + p.stderr)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return [line.split()[1] for line in lines if line.startswith('ok ')]

    def test_model_books_and_picks(self):
        oks = self.run_prog('model')
        for name in ('model.books', 'model.picks_distinct_in_batch', 'model.same_picks_as_replay',
                     'model.picks_uniform', 'model.window_at_least_3T'):
            self.assertIn(name, oks)

    def test_broken_contender_caught(self):
        oks = self.run_prog('broken')
        self.assertIn('broken.missing_arm_caught', oks)
        self.assertIn('broken.uncounted_cancel_caught', oks)

    def test_libev_and_libuv_books_and_picks(self):
        oks = self.run_prog('peers')
        for peer in ('ev_churn', 'uv_churn', 'ev_again', 'ev_lazy', 'uv_again'):
            for what in ('books', 'same_picks', 'fired_were_consumed',
                         'one_loop_pass_per_batch'):
                self.assertIn(f'peers.{peer}_{what}', oks)


if __name__ == '__main__':
    sys.exit(run_as_tap(ChurnDriver, 'churn_driver'))
