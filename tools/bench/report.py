#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw output of one `make bench` into the table, JSON and SVG.

    report.py --out OUT [--elapsed SECS] [--targets FILE] RUNDIR...

Each RUNDIR is one boot (tools/bench/bench.sh: run-rt, run-tt, run-qemu);
its label is the directory's name without "run-".  In each, the files
kbench*.txt, ubench-*.txt, idle-*.txt, host.txt and stage.txt are read in
the sample format of Documentation/benchmark.rst: one line per sample,
meta or hist, fields separated by one tab.  Any other line is malformed:
it is ignored and counted.  Samples are grouped by boot and key
(section, case, n); each key shows htwheel's median with its spread and
every peer's, and the ratio of medians, peer / htwheel (above 1: htwheel
is cheaper).  The targets of tools/bench/targets.txt are judged on those
medians.

Writes OUT/results.json (every raw sample), OUT/table.txt and one
OUT/lateness-LABEL.svg per boot with hist lines, and prints the table.
Targets are reported, never enforced: the exit status only says whether
every boot ran and produced samples.
"""
import argparse
import datetime
import glob
import json
import math
import os
import platform
import statistics
import sys

UNITS = ('ns', 'us', 'B', 'syscalls', '/s', '/h', 'count', '%')
SAMPLE_FILES = ('kbench*.txt', 'ubench-*.txt', 'idle-*.txt', 'host.txt', 'stage.txt')
MIN_SAMPLES = 3
BOOTS = {
    'rt': 'UML, real time',
    'tt': 'UML, time-travel=inf-cpu',
    'qemu': 'qemu',
}


# ---- reading

class Boot:
    """Everything one run directory holds in the sample format."""

    def __init__(self, run):
        self.dir = run
        self.label = os.path.basename(os.path.normpath(run))
        if self.label.startswith('run-'):
            self.label = self.label[4:]
        self.samples = []       # (section, case, n, who, unit, value, file)
        self.meta = []          # (key, value)
        self.hist = {}          # name -> {bin_lo_us: count}
        self.malformed = 0
        self.malformed_examples = []
        for path in sorted(p for pat in SAMPLE_FILES for p in glob.glob(os.path.join(run, pat))):
            self.read(path)

    def bad(self, path, lineno, why):
        self.malformed += 1
        if len(self.malformed_examples) < 5:
            self.malformed_examples.append(f'{os.path.basename(path)}:{lineno}: {why}')

    def read(self, path):
        try:
            with open(path, errors='replace') as f:
                lines = f.read().splitlines()
        except OSError:
            return
        name = os.path.basename(path)
        for i, line in enumerate(lines, 1):
            if not line.strip() or line.startswith('#'):
                continue
            f = line.split('\t')
            try:
                if f[0] == 'sample' and len(f) == 7:
                    section, case, n, who, unit, value = f[1:]
                    if not (section and case and who) or unit not in UNITS:
                        raise ValueError('empty label or unknown unit')
                    v = float(value)
                    if not math.isfinite(v):
                        raise ValueError('value not finite')
                    self.samples.append((section, case, int(n), who, unit, v, name))
                elif f[0] == 'meta' and len(f) == 3:
                    self.meta.append((f[1], f[2]))
                elif f[0] == 'hist' and len(f) == 4:
                    lo, count = float(f[2]), int(f[3])
                    if not math.isfinite(lo) or lo < 0 or count < 0:
                        raise ValueError('bad bin')
                    h = self.hist.setdefault(f[1], {})
                    h[lo] = h.get(lo, 0) + count
                else:
                    raise ValueError('not a sample, meta or hist line')
            except ValueError as e:
                self.bad(path, i, str(e))

    def meta_value(self, key):
        """The last value recorded for @key, or None."""
        vals = [v for k, v in self.meta if k == key]
        return vals[-1] if vals else None


def percentile(sorted_vals, p):
    """Linear interpolation between closest ranks."""
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    x = (len(sorted_vals) - 1) * p / 100.0
    lo = math.floor(x)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (x - lo)


def stats(values):
    v = sorted(values)
    s = {'count': len(v), 'median': statistics.median(v), 'min': v[0], 'max': v[-1]}
    if len(v) >= 10:
        s['p10'] = percentile(v, 10)
        s['p90'] = percentile(v, 90)
    return s


def ratio(peer, ours):
    if ours == 0:
        return math.inf if peer > 0 else 1.0
    return peer / ours


class Key:
    """One (section, case, n) of one boot: htwheel's samples and each peer's."""

    def __init__(self, section, case, n):
        self.section, self.case, self.n = section, case, n
        self.who = {}           # who -> [values], in file order
        self.unit = None

    def add(self, who, unit, value):
        if self.unit is None:
            self.unit = unit
        elif unit != self.unit:
            return False
        self.who.setdefault(who, []).append(value)
        return True

    def stats(self, who):
        return stats(self.who[who]) if self.who.get(who) else None

    def peers(self):
        return [w for w in self.who if w != 'htwheel']

    def ratio(self, peer):
        h, p = self.stats('htwheel'), self.stats(peer)
        if h is None or p is None or self.below_clock(h) or self.below_zero(h) or \
                self.below_zero(p) or self.below_clock(p):
            return None
        return ratio(p['median'], h['median'])

    def below_clock(self, h):
        """A time of 0 is a clock that did not move (UML's process CPU
        clock steps 10 ms), not a free operation: no ratio, no verdict."""
        return h['median'] == 0 and self.unit in ('ns', 'us')

    def below_zero(self, s):
        """A time below 0 (a figure net of a baseline or of the driver,
        within their noise) is no cost at all: no ratio, no verdict."""
        return s is not None and s['median'] < 0 and self.unit in ('ns', 'us')


def group(boot):
    """{(section, case, n): Key} in the order keys first appear."""
    keys = {}
    for section, case, n, who, unit, v, name in boot.samples:
        k = keys.setdefault((section, case, n), Key(section, case, n))
        if not k.add(who, unit, v):
            boot.bad(name, 0, f'{section} / {case} / {n} / {who}: unit {unit}, '
                     f'the key\'s other samples are in {k.unit}')
    return keys


# ---- targets

class Target:
    def __init__(self, fields, lineno):
        self.prefix, self.case, n, self.peer, self.rule, self.text = fields[:6]
        self.boots = [b for b in fields[6].split(',') if b] if len(fields) > 6 else []
        self.n = int(n)
        self.lineno = lineno
        for kind, op in (('ratio', '>='), ('value', '<=')):
            if self.rule.startswith(kind + op):
                self.kind = kind
                self.limit = float(self.rule[len(kind) + 2:])
                break
        else:
            raise ValueError(f'unknown rule {self.rule!r}')
        if self.kind == 'ratio' and self.peer == '-':
            raise ValueError('a ratio rule needs a peer')
        self.base_n = None
        if self.peer.startswith('htwheel n='):
            self.base_n = int(self.peer[len('htwheel n='):])

    def applies(self, label):
        return not self.boots or label in self.boots

    def matches(self, key):
        return (key.section.split(':', 1)[0].strip() == self.prefix and
                key.case == self.case and key.n == self.n)

    def judge(self, keys):
        """(verdict, key or None) of this target on one boot's keys."""
        found = [k for k in keys.values() if self.matches(k)]
        if len(found) > 1:
            return f'n/a (ambiguous: {len(found)} sections match)', None
        if not found or 'htwheel' not in found[0].who:
            return 'n/a (not run)', None
        k = found[0]
        h = k.stats('htwheel')
        if k.below_clock(h):
            return 'n/a (htwheel below the clock\'s step)', k
        if k.below_zero(h):
            return 'n/a (htwheel below 0: within the noise)', k
        fewest = h['count']
        if self.kind == 'value':
            v = h['median']
            verdict = (f'met ({fmt(v, k.unit)} <= {fmt(self.limit, k.unit)})' if v <= self.limit
                       else f'MISSED ({fmt(v, k.unit)} > {fmt(self.limit, k.unit)})')
        else:
            if self.base_n is not None:
                base = [b for b in keys.values() if b.section == k.section and
                        b.case == k.case and b.n == self.base_n and 'htwheel' in b.who]
                if not base:
                    return f'n/a (htwheel at n={self.base_n} not run)', k
                p = base[0].stats('htwheel')
            else:
                p = k.stats(self.peer)
                if p is None:
                    return f'n/a (peer "{self.peer}" not run)', k
            if k.below_zero(p):
                return 'n/a (the peer below 0: within the noise)', k
            if k.below_clock(p):
                return 'n/a (the peer below the clock\'s step)', k
            fewest = min(fewest, p['count'])
            r = ratio(p['median'], h['median'])
            verdict = (f'met ({fmt_ratio(r)} >= {self.limit:g}x)' if r >= self.limit else
                       f'MISSED ({fmt_ratio(r)} < {self.limit:g}x)')
        if fewest < MIN_SAMPLES:
            verdict += f', only {fewest} sample{"s" if fewest != 1 else ""} (< {MIN_SAMPLES})'
        return verdict, k


def load_targets(path, problems):
    targets = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        problems.append(f'targets: {e}')
        return targets
    for i, line in enumerate(lines, 1):
        if not line.strip() or line.startswith('#'):
            continue
        fields = line.split('\t')
        try:
            if len(fields) not in (6, 7):
                raise ValueError(f'{len(fields)} fields, not 6 or 7')
            targets.append(Target(fields, i))
        except ValueError as e:
            problems.append(f'{os.path.basename(path)}:{i}: {e}')
    return targets


# ---- rendering

def fmt(v, unit=''):
    if v is None:
        return 'n/a'
    if math.isinf(v):
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
    return s + (' ' + unit if unit and not unit.startswith('/') else unit)


def fmt_ratio(r):
    return 'n/a' if r is None else ('inf' if math.isinf(r) else f'{r:.2f}x')


def fmt_stats(s, unit):
    """median [min..max] (xK), with p10/p90 when there are 10 samples."""
    if s is None:
        return 'n/a'
    t = f'{fmt(s["median"], unit)} [{fmt(s["min"])}..{fmt(s["max"])}] x{s["count"]}'
    if 'p10' in s:
        t += f' p10/p90 {fmt(s["p10"])}/{fmt(s["p90"])}'
    return t


def render(rows):
    """Columns left-aligned but the ratio; ('--', title) rows are headings."""
    hdr = ('case', 'n', 'htwheel median [min..max] xreps', 'peer',
           'peer median [min..max] xreps', 'ratio', 'target')
    widths = [len(h) for h in hdr]
    for r in rows:
        if r[0] != '--':
            widths = [max(w, len(c)) for w, c in zip(widths, r)]

    def line(cells):
        return '  '.join(c.rjust(w) if i in (1, 5) else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    out = [line(hdr), '  '.join('-' * w for w in widths)]
    for r in rows:
        out.append(f'[{r[1]}]' if r[0] == '--' else line(r))
    return '\n'.join(out)


def boot_table(boot, keys, targets):
    """The table rows of one boot, and the JSON of its keys."""
    verdicts = {}
    for t in targets:
        if t.applies(boot.label):
            v, k = t.judge(keys)
            if k is not None:
                verdicts.setdefault(id(k), []).append((t, v))
    rows, jkeys = [], []
    section = None
    for k in keys.values():
        if k.section != section:
            section = k.section
            rows.append(('--', section))
        h = k.stats('htwheel')
        mine = verdicts.get(id(k), [])
        peers = k.peers() or [None]
        for i, p in enumerate(peers):
            tv = [f'{t.text}: {v}' for t, v in mine if t.peer == p or (
                i == 0 and (t.peer == '-' or t.base_n is not None))]
            cells = (k.case if i == 0 else '', str(k.n) if i == 0 else '',
                     fmt_stats(h, k.unit) if i == 0 else '', p or '',
                     fmt_stats(k.stats(p), k.unit) if p else '',
                     fmt_ratio(k.ratio(p)) if p else '', '; '.join(tv))
            rows.append(cells)
        flag = ''
        if h is not None and h['count'] < MIN_SAMPLES:
            flag = f'only {h["count"]} htwheel sample{"s" if h["count"] != 1 else ""}'
        elif h is None:
            flag = 'no htwheel sample'
        if flag:
            rows.append(('', '', f'({flag}: below the {MIN_SAMPLES} required)', '', '', '', ''))
        jkeys.append({
            'section': k.section, 'case': k.case, 'n': k.n, 'unit': k.unit,
            'who': {w: {'samples': v, **stats(v)} for w, v in k.who.items()},
            'ratio': {p: (lambda r: None if r is None else ('inf' if math.isinf(r) else r))(
                k.ratio(p)) for p in k.peers()},
        })
    return rows, jkeys


def host_line(boot):
    """Host load and steal around the boot, from host.txt."""
    la0, la1 = boot.meta_value('host loadavg before'), boot.meta_value('host loadavg after')
    c0, c1 = boot.meta_value('host cpu before'), boot.meta_value('host cpu after')
    if la0 is None and c0 is None:
        return 'host load and steal: not recorded'
    parts = []
    if la0 is not None and la1 is not None:
        parts.append(f'host loadavg (1/5/15 min) {" ".join(la0.split()[:3])} before, '
                     f'{" ".join(la1.split()[:3])} after')
    try:
        a = [int(x) for x in c0.split()]
        b = [int(x) for x in c1.split()]
        total = sum(b[:8]) - sum(a[:8])
        steal = b[7] - a[7]
        parts.append(f'steal {steal} of {total} host CPU jiffies during the boot'
                     f' ({100.0 * steal / total if total else 0:.1f}%)')
    except (AttributeError, ValueError, IndexError):
        parts.append('host steal: not recorded')
    return ', '.join(parts)


def boot_title(boot):
    kernel = boot.meta_value('kernel') or '?'
    return f'{BOOTS.get(boot.label, boot.label)} ({boot.label}): kernel {kernel}'


# ---- SVG

def svg(boot, path, tick_ns=None):
    """Lateness histograms of one boot, log x axis; False when it has none."""
    colours = ('#1f77b4', '#2ca02c', '#d62728', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2')
    data = []
    for j, (name, h) in enumerate(sorted(boot.hist.items())):
        los = sorted(h)
        total = sum(h.values())
        if not total:
            continue
        bins = []
        for i, lo in enumerate(los):
            if i + 1 < len(los):
                hi = los[i + 1]
            elif i > 0 and los[i - 1] > 0:
                hi = lo * lo / los[i - 1]
            else:
                hi = max(lo * 2, 1.0)
            bins.append((lo, hi, h[lo] / total))
        data.append((name, bins, colours[j % len(colours)]))
    if not data:
        return False
    W, H, L, R, T, B = 900, 460, 70, 20, 40, 60
    xmin = 1.0
    xmax = max(hi for _, bins, _ in data for _, hi, _ in bins)
    xmax = 10 ** math.ceil(math.log10(max(xmax, 10.0)))
    lx0, lx1 = math.log10(xmin), math.log10(xmax)
    ymax = max(fr for _, bins, _ in data for _, _, fr in bins)
    ymax = max(math.ceil(ymax * 10) / 10, 0.1)

    def X(us):
        return L + (math.log10(max(us, xmin)) - lx0) / (lx1 - lx0) * (W - L - R)

    def Y(fr):
        return H - B - fr / ymax * (H - T - B)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">'
         f'Lateness seen by user space: {esc(boot_title(boot))}</text>']
    d = 0
    while 10 ** d <= xmax:
        x = X(10 ** d)
        o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#ddd"/>')
        lab = (f'{10 ** d:g} us' if d < 3 else
               (f'{10 ** (d - 3):g} ms' if d < 6 else f'{10 ** (d - 6):g} s'))
        o.append(f'<text x="{x:.1f}" y="{H - B + 16}" text-anchor="middle">{lab}</text>')
        d += 1
    for i in range(0, int(round(ymax * 10)) + 1):
        y = Y(i / 10)
        o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#eee"/>')
        o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{i * 10}%</text>')
    if tick_ns:
        x = X((tick_ns + 200e3) / 1000)
        o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#888" '
                 f'stroke-dasharray="4 3"/>')
        o.append(f'<text x="{x + 4:.1f}" y="{T + 12}" fill="#555">tick + 200 us</text>')
    for name, bins, col in data:
        pts = []
        for lo, hi, fr in bins:
            pts += [f'{X(lo):.1f},{Y(fr):.1f}', f'{X(hi):.1f},{Y(fr):.1f}']
        first, last = X(bins[0][0]), X(bins[-1][1])
        o.append(f'<polyline fill="{col}" fill-opacity="0.15" stroke="{col}" stroke-width="1.5" '
                 f'points="{first:.1f},{Y(0):.1f} {" ".join(pts)} {last:.1f},{Y(0):.1f}"/>')
    for j, (name, _, col) in enumerate(data):
        y = T + 30 + 18 * j
        o.append(f'<rect x="{W - R - 330}" y="{y - 10}" width="12" height="12" fill="{col}"/>')
        o.append(f'<text x="{W - R - 312}" y="{y}">{esc(name)}</text>')
    o.append(f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>')
    o.append(f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - 20}" text-anchor="middle">'
             f'lateness (deadline to user space holding the expiry), log scale</text>')
    o.append(f'<text x="16" y="{(T + H - B) / 2}" transform="rotate(-90 16 {(T + H - B) / 2})" '
             f'text-anchor="middle">share of expiries</text>')
    o.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')
    return True


def esc(s):
    return s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')


# ---- main

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
    return {'host': platform.node(), 'host_kernel': platform.release(), 'cpu': cpu,
            'cpus': os.cpu_count()}


def boot_problems(boot):
    p = []
    name = os.path.basename(os.path.normpath(boot.dir))
    try:
        with open(os.path.join(boot.dir, 'errors')) as f:
            p += [f'{name}: {e.strip()}' for e in f if e.strip()]
    except OSError:
        pass
    try:
        with open(os.path.join(boot.dir, 'stage.rc')) as f:
            if f.read().strip() != '0':
                p.append(f'{name}: stage failed')
    except OSError:
        p.append(f'{name}: stage did not finish (see console.log)')
    if not boot.samples:
        p.append(f'{name}: no sample lines ({boot.malformed} malformed)')
    return p


SECTION_KEY = 'section seconds '


def section_times(boots):
    """{boot label: {row: seconds}} of the stages' "section seconds" meta."""
    times = {}
    for boot in boots:
        for k, v in boot.meta:
            if k.startswith(SECTION_KEY):
                try:
                    times.setdefault(boot.label, {})[k[len(SECTION_KEY):]] = int(v)
                except ValueError:
                    pass
    return times


def section_table(times):
    """A row per section, a column per boot, in seconds, with the totals."""
    labels = list(times)
    rows = []
    for t in times.values():
        rows += [r for r in t if r not in rows]
    out = [['section'] + [f'{b} s' for b in labels]]
    for r in rows:
        out.append([r] + [str(times[b].get(r, '-')) for b in labels])
    out.append(['total'] + [str(sum(times[b].values())) for b in labels])
    widths = [max(len(r[i]) for r in out) for i in range(len(out[0]))]
    return '\n'.join('  '.join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                      for r in out)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--elapsed', type=int)
    ap.add_argument('--targets', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       'targets.txt'))
    ap.add_argument('runs', nargs='+')
    a = ap.parse_args(argv)

    problems = []
    targets = load_targets(a.targets, problems)
    boots = [Boot(r) for r in a.runs]
    now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    mach = machine()
    first = boots[0]
    commit = first.meta_value('git commit') or '?'
    seed = first.meta_value('seed') or '?'
    text = [f'htwheel bench, {now}, {mach["cpu"] or "unknown CPU"} x{mach["cpus"]}, '
            f'host {mach["host_kernel"]}, commit {commit}, seed {seed}'
            + (f', {a.elapsed} s' if a.elapsed is not None else ''),
            'Each figure: median [min..max] xrepetitions (p10/p90 from 10 repetitions on); '
            'ratio = peer median / htwheel median, above 1: htwheel is cheaper.  '
            'Only ratios within one boot count.']
    res = {'date': now, 'machine': mach, 'elapsed_s': a.elapsed, 'git_commit': commit,
           'seed': seed, 'boots': [], 'targets': [], 'problems': problems}
    summary = []
    for boot in boots:
        keys = group(boot)
        problems += boot_problems(boot)
        for key in ('git commit', 'seed'):
            if boot.meta_value(key) != first.meta_value(key):
                problems.append(f'{boot.label}: {key} {boot.meta_value(key)} differs from '
                                f'{first.label}\'s {first.meta_value(key)}')
        rows, jkeys = boot_table(boot, keys, targets)
        text += ['', boot_title(boot), host_line(boot)]
        text += [f'meta: {k} = {v}' for k, v in boot.meta
                 if not k.startswith(('host ', SECTION_KEY))
                 and k not in ('git commit', 'seed', 'kernel')]
        text += ['', render(rows) if rows else '(no samples)']
        if boot.malformed:
            text.append(f'{boot.malformed} malformed line{"s" if boot.malformed != 1 else ""} '
                        'ignored, e.g.:')
            text += ['  ' + e for e in boot.malformed_examples]
        res['boots'].append({
            'label': boot.label, 'dir': boot.dir, 'meta': boot.meta, 'keys': jkeys,
            'samples': [{'section': s, 'case': c, 'n': n, 'who': w, 'unit': u, 'value': v,
                         'file': f} for s, c, n, w, u, v, f in boot.samples],
            'hist': {name: sorted(h.items()) for name, h in boot.hist.items()},
            'malformed': boot.malformed, 'malformed_examples': boot.malformed_examples,
        })
        for t in targets:
            if t.applies(boot.label):
                v, _ = t.judge(keys)
                summary.append((boot.label, t, v))
                res['targets'].append({'boot': boot.label, 'section': t.prefix, 'case': t.case,
                                       'n': t.n, 'peer': t.peer, 'rule': t.rule,
                                       'text': t.text, 'verdict': v})
    times = section_times(boots)
    res['section_seconds'] = times
    if times:
        text += ['', 'TIME PER SECTION (the stages\' own clocks; a boot adds its start and end):',
                 section_table(times)]
    if summary:
        text += ['', 'TARGETS (judged on medians; tools/bench/targets.txt):']
        names = [f'{b}: {t.prefix} / {t.case} / n={t.n}'
                 + ('' if t.peer == '-' else f' vs {t.peer}') + f': {t.text}'
                 for b, t, _ in summary]
        w = max(len(x) for x in names)
        text += [f'  {x.ljust(w)}  {v}' for x, (_, _, v) in zip(names, summary)]
    if problems:
        text += ['', 'PROBLEMS:'] + ['  ' + p for p in problems]
    out = '\n'.join(text) + '\n'

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'table.txt'), 'w') as f:
        f.write(out)
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(res, f, indent=1)
        f.write('\n')
    svgs = []
    for boot in boots:
        tick = boot.meta_value('tick_ns')
        try:
            tick = float(tick) if tick is not None else None
        except ValueError:
            tick = None
        p = os.path.join(a.out, f'lateness-{boot.label}.svg')
        if svg(boot, p, tick):
            svgs.append(p)
    print(out, end='')
    print(f'results: {a.out}/results.json, {a.out}/table.txt' +
          ''.join(f', {p}' for p in svgs))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
