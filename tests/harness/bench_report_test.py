#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of tools/bench/report.py, fed synthetic run directories.

    tests/harness/bench_report_test.py   TAP on stdout, exit 1 on a failure

Each case writes one or two boots in the sample format, with a targets
file of its own, runs report.py and checks what it printed and what it
kept in results.json: medians and spreads, ratios, verdicts judged on
medians, targets that did not run, keys short of samples, malformed lines
counted.  `make check` runs it beside results_test.py, as the boot "host".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tap import run_as_tap

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(TOP, 'tools', 'bench', 'report.py')

SEC = 'in-kernel schedule+cancel, cold: random order over a population armed earlier'
PEER = 'kmem_cache_alloc(SLAB_ACCOUNT)+mod_timer'


def sample(section, case, n, who, unit, value):
    return '\t'.join(('sample', section, case, str(n), who, unit, str(value))) + '\n'


def target(*fields):
    return '\t'.join(str(f) for f in fields) + '\n'


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


class Report(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='htw-bench-report-test.')
        self.rt = os.path.join(self.dir, 'run-rt')
        self.out = os.path.join(self.dir, 'out')
        self.targets = os.path.join(self.dir, 'targets.txt')
        # htwheel 1..5 ns (median 3), the peer 2x each: ratio 2.
        text = ''.join(sample(SEC, 'schedule+cancel', 1000, 'htwheel', 'ns', v) +
                       sample(SEC, 'schedule+cancel', 1000, PEER, 'ns', 2 * v)
                       for v in (5, 1, 3, 4, 2))
        write(f'{self.rt}/kbench.txt', text)
        write(f'{self.rt}/stage.rc', '0\n')
        write(f'{self.rt}/stage.txt', 'meta\tkernel\t6.12.0-test\n')
        write(f'{self.rt}/host.txt',
              'meta\tgit commit\tabc123\nmeta\tseed\t42\n'
              'meta\thost loadavg before\t0.50 0.40 0.30 1/100 99\n'
              'meta\thost cpu before\t100 0 100 700 0 0 0 100\n'
              'meta\thost loadavg after\t1.50 0.60 0.35 1/100 99\n'
              'meta\thost cpu after\t200 0 200 1400 0 0 0 200\n')
        write(self.targets, target('in-kernel schedule+cancel, cold', 'schedule+cancel', 1000,
                                   PEER, 'ratio>=1.5', 'cheaper than a timer_list'))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_report(self, *runs):
        p = subprocess.run([sys.executable, REPORT, '--out', self.out, '--targets', self.targets,
                            *(runs or (self.rt,))], capture_output=True, text=True)
        with open(os.path.join(self.out, 'results.json')) as f:
            res = json.load(f)
        return p.returncode, p.stdout + p.stderr, res

    def key(self, res, case, n, boot='rt'):
        b = next(b for b in res['boots'] if b['label'] == boot)
        return next(k for k in b['keys'] if k['case'] == case and k['n'] == n)

    def verdict(self, res, text, boot='rt'):
        return next(t['verdict'] for t in res['targets'] if t['text'] == text and t['boot'] == boot)

    def add(self, text, name='ubench-x.txt', run=None):
        with open(os.path.join(run or self.rt, name), 'a') as f:
            f.write(text)

    # -- figures

    def test_clean_run(self):
        rc, out, res = self.run_report()
        self.assertEqual(rc, 0, out)
        self.assertEqual(res['git_commit'], 'abc123')
        self.assertEqual(res['seed'], '42')
        self.assertEqual(res['boots'][0]['malformed'], 0)

    def test_median_and_spread(self):
        rc, out, res = self.run_report()
        h = self.key(res, 'schedule+cancel', 1000)['who']['htwheel']
        self.assertEqual((h['median'], h['min'], h['max'], h['count']), (3, 1, 5, 5))
        self.assertNotIn('p10', h)
        self.assertIn('3 ns [1..5] x5', out)
        self.assertIn('6 ns [2..10] x5', out)

    def test_every_raw_sample_kept(self):
        rc, out, res = self.run_report()
        h = self.key(res, 'schedule+cancel', 1000)['who']['htwheel']
        self.assertEqual(h['samples'], [5, 1, 3, 4, 2])
        self.assertEqual(len(res['boots'][0]['samples']), 10)

    def test_percentiles_from_ten_samples(self):
        self.add(''.join(sample(SEC, 'schedule p99', 1000, 'htwheel', 'ns', v)
                         for v in range(10, 0, -1)))
        rc, out, res = self.run_report()
        h = self.key(res, 'schedule p99', 1000)['who']['htwheel']
        self.assertEqual(h['median'], 5.5)
        self.assertAlmostEqual(h['p10'], 1.9)
        self.assertAlmostEqual(h['p90'], 9.1)
        self.assertIn('p10/p90 1.90/9.10', out)

    def test_ratio_is_peer_over_htwheel(self):
        rc, out, res = self.run_report()
        self.assertEqual(self.key(res, 'schedule+cancel', 1000)['ratio'][PEER], 2.0)
        self.assertIn('2.00x', out)

    def test_ratio_of_medians_not_means(self):
        # htwheel 1,1,1,1,100: median 1, mean 20.8; peer 2 each: ratio 2.
        self.add(''.join(sample(SEC, 'cancel', 10, 'htwheel', 'ns', v) +
                         sample(SEC, 'cancel', 10, PEER, 'ns', 2) for v in (1, 1, 100, 1, 1)))
        rc, out, res = self.run_report()
        self.assertEqual(self.key(res, 'cancel', 10)['ratio'][PEER], 2.0)

    # -- targets

    def test_target_met_on_median(self):
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'cheaper than a timer_list'), 'met (2.00x >= 1.5x)')
        self.assertIn('rt: in-kernel schedule+cancel, cold / schedule+cancel / n=1000 vs '
                      f'{PEER}: cheaper than a timer_list  met (2.00x >= 1.5x)', out)

    def test_target_missed(self):
        self.add(target('in-kernel schedule+cancel, cold', 'schedule+cancel', 1000, PEER,
                        'ratio>=3', 'three times cheaper'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'three times cheaper'), 'MISSED (2.00x < 3x)')
        self.assertEqual(rc, 0, 'a missed target does not fail the run')

    def test_target_size_not_run(self):
        self.add(target('in-kernel schedule+cancel, cold', 'schedule+cancel', 1000000, PEER,
                        'ratio>=1', 'at a million'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'at a million'), 'n/a (not run)')
        self.assertRegex(out, r'rt: in-kernel schedule\+cancel, cold / schedule\+cancel / '
                         r'n=1000000 vs .*: at a million +n/a \(not run\)')

    def test_target_peer_not_run(self):
        self.add(target('in-kernel schedule+cancel, cold', 'schedule+cancel', 1000, 'hrtimer',
                        'ratio>=1', 'against hrtimers'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'against hrtimers'), 'n/a (peer "hrtimer" not run)')

    def test_target_matches_section_prefix_only(self):
        self.add(target('in-kernel schedule+cancel', 'schedule+cancel', 1000, PEER,
                        'ratio>=1', 'prefix too short'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'prefix too short'), 'n/a (not run)')
        self.assertEqual(self.verdict(res, 'cheaper than a timer_list'), 'met (2.00x >= 1.5x)')

    def test_target_value_rule(self):
        self.add(''.join(sample('memory: object counts', 'per timer', 100, 'htwheel', 'B', v)
                         for v in (72, 72, 72, 72, 72)))
        self.add(target('memory', 'per timer', 100, '-', 'value<=64', 'small') +
                 target('memory', 'per timer', 100, '-', 'value<=80', 'not huge'),
                 name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'small'), 'MISSED (72 B > 64 B)')
        self.assertEqual(self.verdict(res, 'not huge'), 'met (72 B <= 80 B)')

    def test_zero_time_is_below_the_clock_not_free(self):
        self.add(''.join(sample(SEC, 'cpu per event', 1000, 'htwheel', 'ns', 0) +
                         sample(SEC, 'cpu per event', 1000, 'libev', 'ns', 50)
                         for _ in range(5)))
        self.add(target(SEC.split(':')[0], 'cpu per event', 1000, 'libev', 'ratio>=1', 'cheap'),
                 name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'cheap'), "n/a (htwheel below the clock's step)")
        self.assertNotIn('inf', out)

    def test_a_peer_at_zero_time_is_below_the_clock_not_a_loss(self):
        self.add(''.join(sample(SEC, 'cpu per event', 1000, 'htwheel', 'ns', 8000) +
                         sample(SEC, 'cpu per event', 1000, 'read()', 'ns', 0)
                         for _ in range(5)))
        self.add(target(SEC.split(':')[0], 'cpu per event', 1000, 'read()', 'ratio>=5', 'ring'),
                 name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'ring'), "n/a (the peer below the clock's step)")
        self.assertIsNone(self.key(res, 'cpu per event', 1000)['ratio']['read()'])

    def test_below_zero_is_noise_not_a_win(self):
        sec = 'expiry to an awake loop: N timers due over 2 s'
        self.add(''.join(sample(sec, 'expiry to an awake loop: machine CPU', 1000, 'htwheel',
                                'ns', -3) +
                         sample(sec, 'expiry to an awake loop: machine CPU', 1000, 'read()',
                                'ns', -30) +
                         sample(sec, 'expiry to an awake loop: machine CPU', 100000, 'htwheel',
                                'ns', 2) +
                         sample(sec, 'expiry to an awake loop: machine CPU', 100000, 'read()',
                                'ns', -30)
                         for _ in range(5)))
        self.add(target('expiry to an awake loop', 'expiry to an awake loop: machine CPU', 1000,
                        'read()', 'ratio>=5', 'ring 5x') +
                 target('expiry to an awake loop', 'expiry to an awake loop: machine CPU', 100000,
                        'read()', 'ratio>=5', 'ring 5x at 100k'),
                 name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'ring 5x'), 'n/a (htwheel below 0: within the noise)')
        self.assertEqual(self.verdict(res, 'ring 5x at 100k'),
                         'n/a (the peer below 0: within the noise)')
        self.assertIsNone(self.key(res, 'expiry to an awake loop: machine CPU', 1000)['ratio']['read()'])

    def test_server_rows_judged_on_machine_cpu_net_rows_kept(self):
        sec = 'steady churn: N pending at now+T (T 1 s)'
        case = 'churn, table htw_table2_cancel+htw_table2_arm'
        ev = 'libev ev_timer_stop+ev_timer_start'
        null = 'the driver alone (null contender)'
        self.add(''.join(sample(sec, case, 1000, 'htwheel', 'ns', 40) +
                         sample(sec, f'{case}: machine CPU', 1000, 'htwheel', 'ns', 60) +
                         sample(sec, f'{case}: machine CPU', 1000, ev, 'ns', 50) +
                         sample(sec, f'{case}: machine CPU', 1000, null, 'ns', 10) +
                         sample(sec, f'{case}: machine CPU, net of the driver', 1000, 'htwheel',
                                'ns', 50) +
                         sample(sec, f'{case}: machine CPU, net of the driver', 1000, ev, 'ns', 40) +
                         sample(sec, f'{case}: timers found fired', 1000, 'htwheel', '%', 1.5) +
                         sample(sec, f'{case}: system calls', 1000, 'htwheel', 'syscalls', 0.001)
                         for _ in range(5)))
        self.add(target('steady churn', f'{case}: machine CPU', 1000, ev, 'ratio>=1',
                        'no dearer than libev'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.verdict(res, 'no dearer than libev'), 'MISSED (0.83x < 1x)')
        k = self.key(res, f'{case}: machine CPU', 1000)
        self.assertEqual(k['who'][null]['median'], 10)
        self.assertEqual(self.key(res, f'{case}: machine CPU, net of the driver', 1000)
                         ['ratio'][ev], 0.8)
        self.assertEqual(self.key(res, f'{case}: timers found fired', 1000)['unit'], '%')
        self.assertEqual(res['boots'][0]['malformed'], 0)

    def test_target_against_htwheel_at_base_size(self):
        self.add(''.join(sample(SEC, 'schedule+cancel', 1000000, 'htwheel', 'ns', v)
                         for v in (4, 4, 4, 4, 4)))
        self.add(target('in-kernel schedule+cancel, cold', 'schedule+cancel', 1000000,
                        'htwheel n=1000', 'ratio>=0.8', 'flat'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertEqual(self.verdict(res, 'flat'), 'MISSED (0.75x < 0.8x)')

    def test_target_only_on_its_boots(self):
        tt = os.path.join(self.dir, 'run-tt')
        write(f'{tt}/stage.rc', '0\n')
        write(f'{tt}/host.txt', 'meta\tgit commit\tabc123\nmeta\tseed\t42\n')
        write(f'{tt}/idle-hour.txt', ''.join(sample('idle: an hour', 'wakeups', 0, 'htwheel',
                                                    '/h', 1) for _ in range(5)))
        self.add(target('idle', 'wakeups', 0, '-', 'value<=5', 'a handful', 'tt'),
                 name='targets.txt', run=self.dir)
        rc, out, res = self.run_report(self.rt, tt)
        self.assertEqual(rc, 0, out)
        got = [(t['boot'], t['verdict']) for t in res['targets'] if t['text'] == 'a handful']
        self.assertEqual(got, [('tt', 'met (1/h <= 5/h)')])

    # -- too few samples, malformed input

    def test_one_sample_flagged(self):
        self.add(sample(SEC, 'schedule+cancel', 10000, 'htwheel', 'ns', 3) +
                 sample(SEC, 'schedule+cancel', 10000, PEER, 'ns', 9))
        self.add(target('in-kernel schedule+cancel, cold', 'schedule+cancel', 10000, PEER,
                        'ratio>=1', 'at 10k'), name='targets.txt', run=self.dir)
        rc, out, res = self.run_report()
        self.assertIn('(only 1 htwheel sample: below the 3 required)', out)
        self.assertEqual(self.verdict(res, 'at 10k'),
                         'met (3.00x >= 1x), only 1 sample (< 3)')

    def test_malformed_lines_ignored_and_counted(self):
        self.add('sched.htwheel_b1024 cpu_ns 123\n'                            # the old format
                 + 'sample\tsec\tcase\t10\thtwheel\tns\n'                       # a field short
                 + 'sample\tsec\tcase\tten\thtwheel\tns\t1\n'                   # n not a number
                 + 'sample\tsec\tcase\t10\thtwheel\tms\t1\n'                    # unknown unit
                 + 'sample\tsec\tcase\t10\thtwheel\tns\tnan\n'                  # not finite
                 + 'hist\tx\t1.5\tmany\n'                                       # bad count
                 + '# a comment\n\n'
                 + sample('sec', 'case', 10, 'htwheel', 'ns', 7))
        rc, out, res = self.run_report()
        b = res['boots'][0]
        self.assertEqual(b['malformed'], 6, b['malformed_examples'])
        self.assertIn('6 malformed lines ignored', out)
        self.assertEqual(self.key(res, 'case', 10)['who']['htwheel']['samples'], [7])
        self.assertEqual(len(b['samples']), 11)

    def test_mixed_units_counted(self):
        self.add(sample(SEC, 'schedule+cancel', 1000, PEER, 'us', 1))
        rc, out, res = self.run_report()
        self.assertEqual(res['boots'][0]['malformed'], 1)
        self.assertEqual(self.key(res, 'schedule+cancel', 1000)['who'][PEER]['count'], 5)

    def test_boot_without_samples_is_a_problem(self):
        write(f'{self.rt}/kbench.txt', 'htwheel 1000 schedule 1234\n')
        rc, out, res = self.run_report()
        self.assertEqual(rc, 1)
        self.assertIn('run-rt: no sample lines (1 malformed)', out)

    def test_failed_stage_is_a_problem(self):
        write(f'{self.rt}/errors', 'insmod htwheel_bench.ko failed\n')
        rc, out, res = self.run_report()
        self.assertEqual(rc, 1)
        self.assertIn('run-rt: insmod htwheel_bench.ko failed', out)

    # -- header and SVG

    def test_host_load_and_steal_in_header(self):
        rc, out, res = self.run_report()
        self.assertIn('host loadavg (1/5/15 min) 0.50 0.40 0.30 before, 1.50 0.60 0.35 after', out)
        self.assertIn('steal 100 of 1000 host CPU jiffies during the boot (10.0%)', out)

    def test_lateness_svg_from_hist(self):
        self.add('hist\thtwheel read()\t0\t5\nhist\thtwheel read()\t1.19\t10\n'
                 'hist\thtwheel read()\t1.41\t5\nhist\ttimerfds\t1000\t3\n')
        rc, out, res = self.run_report()
        self.assertEqual(rc, 0, out)
        self.assertEqual(res['boots'][0]['hist']['htwheel read()'], [[0, 5], [1.19, 10], [1.41, 5]])
        with open(os.path.join(self.out, 'lateness-rt.svg')) as f:
            svg = f.read()
        self.assertIn('htwheel read()', svg)
        self.assertIn('timerfds', svg)

    # -- how long each section took

    def test_section_times(self):
        """The stages' "section seconds" make a table of their own, a column
        a boot with its total, and are in results.json, not among the meta
        lines."""
        self.add('meta\tsection seconds kernel\t120\nmeta\tsection seconds churn\t30\n',
                 'stage.txt')
        qemu = os.path.join(self.dir, 'run-qemu')
        shutil.copytree(self.rt, qemu)
        write(f'{qemu}/stage.txt', 'meta\tsection seconds churn\t45\n')
        rc, out, res = self.run_report(self.rt, qemu)
        self.assertEqual(res['section_seconds'], {'rt': {'kernel': 120, 'churn': 30},
                                                  'qemu': {'churn': 45}})
        table = out[out.index('TIME PER SECTION'):].splitlines()
        self.assertRegex(table[1], r'^section +rt s +qemu s$')
        self.assertRegex(table[2], r'^kernel +120 +-$')
        self.assertRegex(table[3], r'^churn +30 +45$')
        self.assertRegex(table[4], r'^total +150 +45$')
        self.assertNotIn('meta: section seconds', out)


if __name__ == '__main__':
    sys.exit(run_as_tap(Report, 'bench_report'))
