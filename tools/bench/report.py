#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw output of one `make bench` into the table, JSON and SVG.

    report.py --out build/bench [--elapsed SECS] [--qemu RUN_QEMU] RUN_RT RUN_TT

RUN_RT holds kbench.txt (htwheel_bench.ko), ubench-*.txt and idle-rt.txt
from the real-time boot, RUN_TT idle-hour.txt from the time-travel boot.
RUN_QEMU (tools/qemu/bench.sh) holds the same files as RUN_RT from a boot
of Debian's 6.1 generic kernel under qemu with 2 CPUs; its rows follow
UML's in a second table (JSON: "qemu").
Writes OUT/results.json, OUT/table.txt and OUT/lateness.svg (and
OUT/lateness-qemu.svg) and prints the table.  Ratios are anchor / htwheel:
above 1 means htwheel is cheaper.
Targets are reported, never enforced: the exit status only says whether
the benchmark ran.
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys


def read_lines(path):
    try:
        with open(path) as f:
            return [line.split() for line in f if line.strip() and not line.startswith('#')]
    except OSError:
        return []


def load_kbench(run, dropped=None):
    """{(who, n, metric): ns}.  A time whose total over n operations is
    "negative" (above 2^63 ps: the module's u64 difference wrapped) is left
    out and named in dropped."""
    res = {}
    for f in read_lines(os.path.join(run, 'kbench.txt')):
        if len(f) == 4 and f[1].isdigit():
            try:
                v = int(f[3])
            except ValueError:
                continue
            if v * max(int(f[1]), 1) >= 2 ** 63 and not f[2].endswith(('errors', 'cascaded')):
                if dropped is not None:
                    dropped.append(f'{f[0]} n={f[1]} {f[2]}: negative time (wrapped), shown as n/a')
                continue
            # ps per op, except the counters
            res[(f[0], int(f[1]), f[2])] = v if f[2].endswith(('errors', 'cascaded')) else v / 1000.0
    return res


def load_ubench(paths):
    """{case: {metric: value}}, hist bins kept apart"""
    res = {}
    for p in paths:
        for f in read_lines(p):
            if len(f) != 3:
                continue
            try:
                v = float(f[2])
            except ValueError:
                continue
            res.setdefault(f[0], {})[f[1]] = v
    return res


def machine():
    cpu = ''
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    cpu = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        'host': platform.node(),
        'host_kernel': platform.release(),
        'cpu': cpu,
        'cpus': os.cpu_count(),
    }


def fmt(v, unit=''):
    if v is None:
        return 'n/a'
    if isinstance(v, float) and math.isinf(v):
        return 'inf'
    a = abs(v)
    if a >= 100 or v == int(v):
        s = f'{v:,.0f}'
    elif a >= 10:
        s = f'{v:.1f}'
    elif a >= 0.01:
        s = f'{v:.2f}'
    else:
        s = f'{v:.4f}'
    return s + unit


def ratio(anchor, ours):
    if anchor is None or ours is None:
        return None
    if ours == 0:
        return math.inf if anchor > 0 else 1.0
    return anchor / ours


class Table:
    def __init__(self):
        self.rows = []

    def add(self, section, case, ours, anchor_name, anchor, unit, target=None, verdict=None):
        r = ratio(anchor, ours)
        self.rows.append({
            'section': section, 'case': case, 'unit': unit,
            'htwheel': ours, 'anchor_name': anchor_name, 'anchor': anchor,
            'ratio': None if r is None else (r if not math.isinf(r) else 'inf'),
            'target': target, 'verdict': verdict,
        })

    def render(self):
        hdr = ('case', 'htwheel', 'anchor', 'anchor value', 'ratio', 'target')
        body = []
        section = None
        for r in self.rows:
            if r['section'] != section:
                section = r['section']
                body.append(('--', section))
            rv = r['ratio']
            rs = 'n/a' if rv is None else ('inf' if rv == 'inf' else f'{rv:.2f}x')
            tgt = ''
            if r['target']:
                tgt = f"{r['target']}: {r['verdict'] or 'n/a'}"
            body.append((r['case'], fmt(r['htwheel'], r['unit']), r['anchor_name'],
                         fmt(r['anchor'], r['unit']), rs, tgt))
        widths = [len(h) for h in hdr]
        for b in body:
            if b[0] == '--':
                continue
            widths = [max(w, len(c)) for w, c in zip(widths, b)]
        lines = []

        def line(cells):
            return '  '.join(c.ljust(w) if i in (0, 2, 5) else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
        lines.append(line(hdr))
        lines.append('  '.join('-' * w for w in widths))
        for b in body:
            if b[0] == '--':
                lines.append(f'[{b[1]}]')
            else:
                lines.append(line(b))
        return '\n'.join(lines)


def verdict_ge(r, want, what='ratio'):
    if r is None:
        return None
    if r >= want:
        return f'met ({r:.2f}x >= {want:g}x)'
    return f'MISSED by {(want / r - 1) * 100:.0f}% ({r:.2f}x < {want:g}x)'


def verdict_le(v, limit, unit):
    if v is None:
        return None
    if v <= limit:
        return f'met ({fmt(v, unit)} <= {fmt(limit, unit)})'
    return f'MISSED by {fmt(v - limit, unit)} ({(v / limit - 1) * 100:.0f}% over)' if limit else \
        f'MISSED ({fmt(v, unit)} > 0)'


def label_n(n):
    return f'{n // 1000000}M' if n >= 1000000 and n % 1000000 == 0 else \
        (f'{n // 1000}k' if n % 1000 == 0 else str(n))


def build_table(k, u, idle_rt, idle_tt, irq_label='system timer IRQs/s'):
    t = Table()
    sizes = sorted({n for (_, n, _) in k})
    g = lambda who, n, m: k.get((who, n, m))

    def pair(who, n):
        s, c = g(who, n, 'schedule'), g(who, n, 'cancel')
        return None if s is None or c is None else s + c

    sec = 'in-kernel, ns per operation (random delays 8.6 s..73 min; expiry: 1 ms..2.1 s)'
    big = max(sizes) if sizes else None
    for n in sizes:
        ln = label_n(n)
        r = ratio(pair('timer', n), pair('htwheel', n))
        t.add(sec, f'schedule+cancel, {ln} pending', pair('htwheel', n),
              'mod_timer+timer_delete', pair('timer', n), ' ns',
              'no dearer than the timer wheel', verdict_ge(r, 1.0))
        r = ratio(pair('hrtimer', n), pair('htwheel', n))
        t.add(sec, f'schedule+cancel, {ln} pending', pair('htwheel', n),
              'hrtimer_start+cancel', pair('hrtimer', n), ' ns',
              '>= 2x cheaper at 1M' if n == 1000000 else None,
              verdict_ge(r, 2.0) if n == 1000000 else None)
        t.add(sec, f'schedule+cancel, {ln} pending', pair('htwheel', n),
              'kmem_cache_alloc+mod_timer', pair('timer_alloc', n), ' ns')
        t.add(sec, f'expiry, {ln} timers', g('htwheel', n, 'expiry'),
              'timer wheel softirq', g('timer', n, 'expiry'), ' ns')
        t.add(sec, f'expiry, {ln} timers', g('htwheel', n, 'expiry'),
              'hrtimer interrupt', g('hrtimer', n, 'expiry'), ' ns')
    if sizes:
        base = min(sizes)
        for m in ('schedule', 'cancel'):
            for n in sizes:
                if n == base:
                    continue
                v, a = g('htwheel', n, m), g('htwheel', base, m)
                dev = None if v is None or not a else v / a - 1
                verdict = None
                if m == 'schedule' and dev is not None:
                    verdict = (f'met ({dev * 100:+.0f}%)' if abs(dev) <= 0.2
                               else f'MISSED by {abs(dev) * 100 - 20:.0f} points ({dev * 100:+.0f}%)')
                if m == 'cancel' and n != big:
                    continue
                t.add('htwheel flatness: cost at N pending vs at ' + label_n(base),
                      f'htwheel {m}, {label_n(n)} pending', v, f'htwheel at {label_n(base)}', a,
                      ' ns', 'within +-20%' if m == 'schedule' else None, verdict)

    sec = ('user space, 100k timers scheduled then cancelled: CPU ns per timer '
           '(wall time of a CPU-bound loop)')
    tf = u.get('sched.timerfd_create', {}).get('cpu_ns')
    for b in (1, 64, 1024):
        c = u.get(f'sched.htwheel_b{b}', {})
        r = ratio(tf, c.get('cpu_ns'))
        t.add(sec, f'htwheel batch {b}', c.get('cpu_ns'), 'timerfd create+set+close', tf, ' ns',
              '>= 20x' if b == 1024 else None, verdict_ge(r, 20) if b == 1024 else None)
    c = u.get('sched.htwheel_b1024', {})
    for name, label in (('sched.timerfd_arm', 'timerfd settime/disarm'),
                        ('sched.posix', 'POSIX create+settime+delete')):
        a = u.get(name, {}).get('cpu_ns')
        r = ratio(a, c.get('cpu_ns'))
        t.add(sec, 'htwheel batch 1024', c.get('cpu_ns'), label, a, ' ns',
              '>= 20x' if name == 'sched.timerfd_arm' else None,
              verdict_ge(r, 20) if name == 'sched.timerfd_arm' else None)
    for b in (1, 64, 1024):
        s = u.get(f'sched.htwheel_b{b}', {}).get('syscalls')
        t.add('user space: syscalls per scheduled+cancelled timer', f'htwheel batch {b}', s,
              'timerfd settime/disarm', u.get('sched.timerfd_arm', {}).get('syscalls'), '',
              '<= 0.01' if b == 1024 else None, verdict_le(s, 0.01, '') if b == 1024 else None)

    sec = 'user space, 100k timers expiring over 1 s'
    tfd = u.get('deliver.timerfd_epoll', {})
    tick = None
    for name, label in (('deliver.htwheel_read', 'htwheel read()'),
                        ('deliver.htwheel_eventfd', 'htwheel eventfd+epoll')):
        h = u.get(name, {})
        tick = tick or h.get('tick_ns')
        r = ratio(tfd.get('used_ns'), h.get('used_ns'))
        t.add(sec, f'{label}: CPU per expiry', h.get('used_ns'), 'timerfds in epoll',
              tfd.get('used_ns'), ' ns', '>= 10x', verdict_ge(r, 10))
        lim = (tick or 1e6) + 200e3
        for p in ('p50', 'p99', 'max'):
            v = h.get(f'late_{p}_ns')
            t.add(sec, f'{label}: lateness {p}', None if v is None else v / 1000,
                  'timerfds in epoll', None if tfd.get(f'late_{p}_ns') is None
                  else tfd[f'late_{p}_ns'] / 1000, ' us',
                  f'<= tick+200us ({lim / 1000:.0f} us)' if p == 'p99' else None,
                  verdict_le(v / 1000, lim / 1000, ' us') if p == 'p99' and v is not None else None)
        e = h.get('early')
        if e is not None:
            e += h.get('kernel_early', 0)
        t.add(sec, f'{label}: early expirations', e, 'timerfds in epoll', tfd.get('early'), '',
              '0', verdict_le(e, 0, '') if e is not None else None)
        t.add(sec, f'{label}: syscalls per expiry', h.get('syscalls'), 'timerfds in epoll',
              tfd.get('syscalls'), '')

    sec = 'idle: wakeups'
    w = idle_rt.get('idle', {}).get('window_s')
    none = idle_rt.get('idle.none', {})
    if w:
        v = none.get('tick_wakeups')
        tk = idle_rt.get('idle', {}).get('tick_ns') or 1e6
        t.add(sec, 'nothing pending: htwheel tick wakeups/s', None if v is None else v / w,
              f'a periodic {tk / 1e6:g} ms tick', 1e9 / tk, '/s', '0', verdict_le(
                  None if v is None else v / w, 0, '/s'))
        v = none.get('system_timer_irqs')
        t.add(sec, f'nothing pending: {irq_label}', None if v is None else v / w,
              f'a periodic {tk / 1e6:g} ms tick', 1e9 / tk, '/s')
    hw = idle_tt.get('idle.htwheel_1h', {})
    tw = idle_tt.get('idle.timerfd_1h', {})
    wt = idle_tt.get('idle', {}).get('window_s')
    if wt:
        scale = 3600.0 / wt
        v = hw.get('tick_wakeups')
        tk = idle_tt.get('idle', {}).get('tick_ns') or 1e6
        t.add(sec, 'one timer 1 h away: htwheel tick wakeups/h', None if v is None else v * scale,
              f'a periodic {tk / 1e6:g} ms tick', 3.6e12 / tk, '/h', 'a handful (<= 5)',
              verdict_le(None if v is None else v * scale, 5, '/h'))
        a, b = hw.get('system_timer_irqs'), tw.get('system_timer_irqs')
        t.add(sec, 'one timer 1 h away: system timer IRQs/h', None if a is None else a * scale,
              'same, one timerfd instead', None if b is None else b * scale, '/h')
        b0 = idle_tt.get('idle.none', {}).get('system_timer_irqs')
        t.add(sec, 'nothing pending (1 h, time travel): system timer IRQs/h',
              None if b0 is None else b0 * scale, 'one timerfd 1 h away',
              None if b is None else b * scale, '/h')

    sec = 'kernel memory per pending timer (100k timers; slab counters)'
    hm, tm = u.get('mem.htwheel', {}), u.get('mem.timerfd_epoll', {})
    t.add(sec, 'htwheel vs timerfd + epoll item: Slab', hm.get('slab_bytes'), 'timerfd+epoll',
          tm.get('slab_bytes'), ' B', '<= 64 B', verdict_le(hm.get('slab_bytes'), 64, ' B'))
    return t


def slab_delta(run, which):
    """Per-cache byte deltas from /proc/slabinfo snapshots."""
    def parse(p):
        d = {}
        for f in read_lines(p):
            if len(f) > 4 and f[1].isdigit():
                d[f[0]] = int(f[2]) * int(f[3])   # num_objs * objsize
        return d
    a = parse(os.path.join(run, f'slab-{which}-before.txt'))
    b = parse(os.path.join(run, f'slab-{which}-after.txt'))
    deltas = {c: b.get(c, 0) - a.get(c, 0) for c in set(a) | set(b)}
    return {c: v for c, v in sorted(deltas.items(), key=lambda x: -x[1]) if v > 4096}


def hist_of(run, case):
    h = {}
    for f in read_lines(os.path.join(run, 'ubench-deliver.txt')):
        if len(f) == 3 and f[0] == case and f[1].startswith('hist'):
            h[int(f[1][4:])] = int(f[2])
    return h


def bin_lo_us(i):
    return 0.0 if i == 0 else 2 ** ((i - 1) / 4)


def svg(run, path, tick_ns, where='one UML boot'):
    series = [('deliver.htwheel_read', 'htwheel read()', '#1f77b4'),
              ('deliver.htwheel_eventfd', 'htwheel eventfd+epoll', '#2ca02c'),
              ('deliver.timerfd_epoll', '100k timerfds in epoll', '#d62728')]
    data = [(hist_of(run, c), lab, col) for c, lab, col in series]
    data = [d for d in data if d[0]]
    if not data:
        return False
    W, H, L, R, T, B = 860, 440, 70, 20, 40, 60
    xmin, xmax = 1.0, 1.0
    for h, _, _ in data:
        xmax = max(xmax, max(bin_lo_us(i + 1) for i in h))
    xmax = 10 ** math.ceil(math.log10(xmax))
    lx0, lx1 = math.log10(xmin), math.log10(xmax)
    ymax = max(v / sum(h.values()) for h, _, _ in data for v in h.values())
    ymax = math.ceil(ymax * 10) / 10
    X = lambda us: L + (math.log10(max(us, xmin)) - lx0) / (lx1 - lx0) * (W - L - R)
    Y = lambda fr: H - B - fr / ymax * (H - T - B)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">'
         f'Lateness of 100k expiries over 1 s, seen by user space ({where})</text>']
    d = 0
    while 10 ** d <= xmax:
        x = X(10 ** d)
        o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#ddd"/>')
        lab = f'{10 ** d:g} us' if d < 3 else (f'{10 ** (d - 3):g} ms' if d < 6 else f'{10 ** (d - 6):g} s')
        o.append(f'<text x="{x:.1f}" y="{H - B + 16}" text-anchor="middle">{lab}</text>')
        d += 1
    for i in range(0, int(ymax * 10) + 1):
        y = Y(i / 10)
        o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#eee"/>')
        o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{i * 10}%</text>')
    if tick_ns:
        x = X((tick_ns + 200e3) / 1000)
        o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#888" '
                 f'stroke-dasharray="4 3"/>')
        o.append(f'<text x="{x + 4:.1f}" y="{T + 12}" fill="#555">tick + 200 us</text>')
    for h, lab, col in data:
        tot = sum(h.values())
        pts = []
        for i in range(min(h), max(h) + 1):
            fr = h.get(i, 0) / tot
            x0, x1 = X(max(bin_lo_us(i), xmin)), X(bin_lo_us(i + 1))
            pts += [f'{x0:.1f},{Y(fr):.1f}', f'{x1:.1f},{Y(fr):.1f}']
        first = X(max(bin_lo_us(min(h)), xmin))
        last = X(bin_lo_us(max(h) + 1))
        o.append(f'<polyline fill="{col}" fill-opacity="0.15" stroke="{col}" stroke-width="1.5" '
                 f'points="{first:.1f},{Y(0):.1f} {" ".join(pts)} {last:.1f},{Y(0):.1f}"/>')
    for j, (_, lab, col) in enumerate(data):
        y = T + 30 + 18 * j
        o.append(f'<rect x="{W - R - 220}" y="{y - 10}" width="12" height="12" fill="{col}"/>')
        o.append(f'<text x="{W - R - 202}" y="{y}">{lab}</text>')
    o.append(f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>')
    o.append(f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - 20}" text-anchor="middle">'
             f'lateness (deadline to user space seeing it), 4 bins per octave, log scale</text>')
    o.append(f'<text x="16" y="{(T + H - B) / 2}" transform="rotate(-90 16 {(T + H - B) / 2})" '
             f'text-anchor="middle">share of expiries</text>')
    o.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')
    return True


def qemu_cpus(run):
    """CPUs the qemu guest brought up (dmesg), else those it was given."""
    try:
        with open(os.path.join(run, 'dmesg.txt')) as f:
            for line in f:
                if 'smp: Brought up' in line:
                    return int(line.split('node,')[1].split()[0])
    except (OSError, IndexError, ValueError):
        pass
    for f in read_lines(os.path.join(run, 'qemu.txt')):
        if len(f) >= 4 and f[3].isdigit():
            return int(f[3])
    return 1


def load_qemu(run):
    """The qemu boot of tools/qemu/bench.sh: its table, header and JSON."""
    dropped = []
    k = load_kbench(run, dropped)
    u = load_ubench([os.path.join(run, f'ubench-{c}.txt') for c in ('sched', 'deliver', 'mem')])
    idle = load_ubench([os.path.join(run, 'idle-rt.txt')])
    cpus = qemu_cpus(run)
    # htwheel_ubench's used_ns is wall minus the idle time of /proc/stat's
    # "cpu" line, right for UML's single CPU; that line sums every CPU, so
    # here the machine's busy time is cpus x wall minus idle.
    for case, m in u.items():
        if case.startswith('deliver.') and m.get('wall_s') and m.get('expiries') \
                and 'tick_idle_ns' in m:
            m['used_ns_one_cpu'] = m.get('used_ns')
            m['used_ns'] = m['wall_s'] * 1e9 * cpus / m['expiries'] - m['tick_idle_ns']
    t = build_table(k, u, idle, {}, irq_label='system timer IRQs/s (CPU0)')
    info = (read_lines(os.path.join(run, 'qemu.txt')) or [[]])[0]
    kernel = info[1] if len(info) > 1 else '?'
    version = info[2] if len(info) > 2 else '?'
    accel = info[4] if len(info) > 4 else '?'
    secs = None
    try:
        with open(os.path.join(run, 'seconds.txt')) as f:
            secs = int(f.read().strip())
    except (OSError, ValueError):
        pass
    head = (f'qemu: Debian {kernel} ({version}), {cpus} CPUs, {accel.upper()}'
            f'{f", boot {secs} s" if secs is not None else ""}\n'
            'ratio = anchor / htwheel, as above.  Under TCG every absolute time is that of '
            'emulated code: only the ratios, all from this one boot, count.\n'
            'A system call costs ~1 us here against ~31 us in UML, so the user-space ratios '
            'are the nearer to real hardware.  No idle hour (needs UML time travel).')
    kraw = {}
    for (who, n, m), v in sorted(k.items()):
        kraw.setdefault(who, {}).setdefault(str(n), {})[m] = v
    return {
        'k': k, 'u': u, 'table': t, 'head': head, 'notes': dropped,
        'tick': u.get('deliver.htwheel_read', {}).get('tick_ns'),
        'json': {
            'kernel': kernel, 'version': version, 'cpus': cpus, 'accel': accel,
            'boot_s': secs, 'rows': t.rows, 'notes': dropped,
            'raw': {'kernel_ns_per_op': kraw, 'user': u, 'idle_rt': idle,
                    'slab_delta_bytes': {w: slab_delta(run, w) for w in ('htwheel', 'timerfd')}},
        },
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--elapsed', type=int)
    ap.add_argument('--qemu', help='run directory of tools/qemu/bench.sh')
    ap.add_argument('run_rt')
    ap.add_argument('run_tt', nargs='?')
    a = ap.parse_args()

    problems = []
    for run in filter(None, (a.run_rt, a.run_tt, a.qemu)):
        try:
            with open(os.path.join(run, 'errors')) as f:
                problems += [f'{os.path.basename(run)}: {e.strip()}' for e in f if e.strip()]
        except OSError:
            pass
        try:
            with open(os.path.join(run, 'stage.rc')) as f:
                if f.read().strip() != '0':
                    problems.append(f'{os.path.basename(run)}: stage failed')
        except OSError:
            problems.append(f'{os.path.basename(run)}: stage did not finish (see console.log)')

    notes = []
    k = load_kbench(a.run_rt, notes)
    u = load_ubench([os.path.join(a.run_rt, f'ubench-{c}.txt') for c in ('sched', 'deliver', 'mem')])
    idle_rt = load_ubench([os.path.join(a.run_rt, 'idle-rt.txt')])
    idle_tt = load_ubench([os.path.join(a.run_tt, 'idle-hour.txt')]) if a.run_tt else {}
    for (who, n, m), v in k.items():
        if m.endswith('errors') and v:
            problems.append(f'in-kernel {who} n={n}: {int(v)} {m}')

    t = build_table(k, u, idle_rt, idle_tt)
    q = load_qemu(a.qemu) if a.qemu else None
    if q:
        for (who, n, m), v in q['k'].items():
            if m.endswith('errors') and v:
                problems.append(f'qemu in-kernel {who} n={n}: {int(v)} {m}')
    now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    mach = machine()
    try:
        with open(os.path.join(a.run_rt, 'uname.txt')) as f:
            mach['uml_kernel'] = f.read().strip()
    except OSError:
        pass
    tick = u.get('deliver.htwheel_read', {}).get('tick_ns')
    head = (f'htwheel bench, {now}, {mach["cpu"] or "unknown CPU"} x{mach["cpus"]}, '
            f'host {mach["host_kernel"]}, UML {mach.get("uml_kernel", "?")} (um-bench, no debug)\n'
            'ratio = anchor / htwheel: above 1 means htwheel is cheaper. All figures from one boot '
            '(idle hour: a second, time-travel boot).')
    text = head + '\n\n' + t.render() + '\n'
    if notes:
        text += '\nNOTES:\n' + '\n'.join('  ' + x for x in notes) + '\n'
    if q:
        text += '\n' + q['head'] + '\n\n' + q['table'].render() + '\n'
        if q['notes']:
            text += '\nNOTES (qemu):\n' + '\n'.join('  ' + x for x in q['notes']) + '\n'
    if problems:
        text += '\nPROBLEMS:\n' + '\n'.join('  ' + p for p in problems) + '\n'
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'table.txt'), 'w') as f:
        f.write(text)
    kraw = {}
    for (who, n, m), v in sorted(k.items()):
        kraw.setdefault(who, {}).setdefault(str(n), {})[m] = v
    res = {
        'date': now, 'machine': mach, 'elapsed_s': a.elapsed,
        'rows': t.rows,
        'raw': {'kernel_ns_per_op': kraw, 'user': u, 'idle_rt': idle_rt, 'idle_tt': idle_tt,
                'slab_delta_bytes': {w: slab_delta(a.run_rt, w) for w in ('htwheel', 'timerfd')}},
        'problems': problems, 'notes': notes,
    }
    if q:
        res['qemu'] = q['json']
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(res, f, indent=1)
        f.write('\n')
    have_svg = svg(a.run_rt, os.path.join(a.out, 'lateness.svg'), tick)
    have_qsvg = q and svg(a.qemu, os.path.join(a.out, 'lateness-qemu.svg'), q['tick'],
                          f'one qemu boot of Debian {q["json"]["kernel"]}')
    print(text)
    print(f'results: {a.out}/results.json, {a.out}/table.txt' +
          (f', {a.out}/lateness.svg' if have_svg else '') +
          (f', {a.out}/lateness-qemu.svg' if have_qsvg else ''))
    ok = k and u and (q is None or (q['k'] or q['u']))
    return 0 if ok and not problems else 1


if __name__ == '__main__':
    sys.exit(main())
