# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NCCL benchmark reports: busbw series, the PNG plot, the JSON report and its Markdown.

Pure Python except ``plot_busbw`` (matplotlib, imported inside it with the Agg
backend, so no display is ever needed); the Markdown cells are _common/_markdown's,
the name check and the file writer _common/_report_files'.
Nothing here reads a clock: a timestamp appears only when the caller passes
one, so the same input always gives byte-identical files and the report
action can tell whether anything changed.

Used by the nccl_report action (role nccl_gate) and the change-window report.
"""
from __future__ import annotations

import json
import os

from ansible_collections.lossless.fabric.plugins.module_utils._common._markdown import md_cell, md_table
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as _nccl_stats
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as _nccl_vocab

PLACEMENT_KEYS = ('out_of_place', 'in_place')
VERDICTS = ('pass', 'fail', 'not gated')
# Keys of an nccl_result result the report keeps; a registered loop result also carries the launch
# (``item``, with its full log) and the module arguments, which must not be copied into reports or facts.
_RESULT_KEYS = (
    'nccl_tests_version', 'nccl_tests_version_inferred', 'nccl_version', 'collective', 'ranks', 'nodes', 'gpus_per_node',
    'gpu_model', 'rows', 'size_rows', 'largest_size_bytes', 'oop_busbw_at_largest_size', 'avg_bus_bandwidth',
    'out_of_bounds', 'out_of_bounds_count', 'transport', 'transport_evidence', 'gdr_active', 'gdr_evidence', 'errors',
    'failures', 'transport_errors', 'truncated', 'truncated_reasons', 'complete', 'independent_runs', 'parse_warnings', 'header', 'format', 'gate',
)
_LAUNCH_KEYS = ('name', 'status', 'rc', 'duration_s', 'message')


# ---------------------------------------------------------------------------
# sizes as people read them

def size_label(size: int) -> str:
    """Axis label of a size in bytes: 8 -> '8', 1024 -> '1K', 1048576 -> '1M', 1 GiB -> '1G' (powers of 1024, as -b/-e)."""
    for unit, mult in (('T', 1 << 40), ('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if size >= mult and size % mult == 0:
            return '%d%s' % (size // mult, unit)
    return '%d' % size


def _log2_span(lo: int, hi: int, max_ticks: int = 12) -> tuple:
    """(left, right, ticks): lo and hi rounded out to powers of two, and at most max_ticks evenly spaced
    powers of two between them, always including the right edge (the large sizes are the ones that matter)."""
    lo_exp = max(0, (max(int(lo), 1)).bit_length() - 1)
    hi_exp = max(lo_exp + 1, (max(int(hi), 1) - 1).bit_length())
    step = 1
    while (hi_exp - lo_exp) // step + 1 > max_ticks:
        step += 1
    return 1 << lo_exp, 1 << hi_exp, [1 << e for e in range(hi_exp, lo_exp - 1, -step)][::-1]


# ---------------------------------------------------------------------------
# results in, series out

def slim_result(item, path: str = 'results') -> dict:
    """One launch as the report keeps it: the nccl_result fields (no log text, no module arguments) plus
    ``launch`` {name, status, rc, duration_s} when the item is a registered loop result over nccl_benchmark launches.

    Accepts what _nccl_parse.load_launch accepts (a result, a raw log, a slurp or command result, a -J document).
    Raises ValueError naming ``path``."""
    launch = {}
    if isinstance(item, dict):
        src = item.get('item') if isinstance(item.get('item'), dict) else item.get('launch')
        if isinstance(src, dict):
            launch = {k: src.get(k) for k in _LAUNCH_KEYS if k in src}
    parsed = _nccl_parse.load_launch(item, path)
    out = {k: parsed[k] for k in _RESULT_KEYS if k in parsed}
    if 'parse_warnings' not in out and 'warnings' in parsed and isinstance(parsed['warnings'], list):
        out['parse_warnings'] = parsed['warnings']
    if launch:
        out['launch'] = launch
    elif isinstance(item, dict) and isinstance(item.get('name'), str):
        out['launch'] = {'name': item['name']}
    return out


def _size_values(results, placement):
    """{size: [one busbw per launch that printed it]} (a launch that printed a size twice gives its median)."""
    per = {}
    for res in results:
        sizes = sorted({r['size'] for r in res.get('rows') or [] if isinstance(r.get('size'), int)})
        for size in sizes:
            val = _nccl_stats._launch_values(res, size, placement)  # pylint: disable=protected-access  # the per-launch sample compare uses
            if val is not None:
                per.setdefault(size, []).append(val)
    return per


def _median(vals):
    vals = sorted(vals)
    mid = len(vals) // 2
    # rounded: nccl-tests prints at most a few decimals, and 41.480000000000004 only hides that
    return round(vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2.0, 6)


def busbw_series(results: list, label: str, placement: str = 'out_of_place') -> dict:
    """{label, placement, points: [[size_bytes, busbw GB/s], ...], launches: [n per point]}.

    ``results``: nccl_result results or parse() dicts, one per launch (raw logs are parsed). Each point is the
    median over the launches that printed that size of each launch's busbw there (the sample nccl_compare uses).
    Sizes ascend; a size no launch measured is left out."""
    if placement not in PLACEMENT_KEYS:
        raise ValueError('placement: %r is not one of %s' % (placement, ', '.join(PLACEMENT_KEYS)))
    parsed = [_nccl_parse.load_launch(r, 'results[%d]' % i) for i, r in enumerate(results or [])]
    per = _size_values(parsed, placement)
    sizes = sorted(per)
    return {'label': str(label), 'placement': placement,
            'points': [[size, _median(per[size])] for size in sizes], 'launches': [len(per[size]) for size in sizes]}


# ---------------------------------------------------------------------------
# the plot

def _target_segments(targets, x_hi):
    """Each busbw target as [(x0, x1), busbw, label]; a target without max_size runs to the right edge."""
    out = []
    for tgt in targets or []:
        if not isinstance(tgt, dict) or tgt.get('min_busbw') is None:
            continue
        lo = _nccl_vocab.parse_size(tgt.get('min_size') or 0)
        hi = _nccl_vocab.parse_size(tgt['max_size']) if tgt.get('max_size') is not None else None
        right = hi if hi is not None else max(x_hi, lo * 2 if lo else 2)
        left = max(lo, 1)
        if right <= left:
            right = left * 2
        span = size_label(lo) + ('..' + size_label(hi) if hi is not None else '+')
        out.append(((left, right), float(tgt['min_busbw']), 'target %g GB/s (%s)' % (float(tgt['min_busbw']), span)))
    return out


def plot_busbw(series_list: list, targets, path: str, title: str) -> dict:
    """Write a PNG of busbw against message size and return what was drawn.

    ``series_list``: busbw_series() dicts, one line each (e.g. pre and post). ``targets``: gate targets
    ({min_size, max_size, min_busbw, ...}) already narrowed to the plotted collective; each is drawn as a
    dashed horizontal line over its size range. The x axis is log 2 with labels like 1M and 1G; y is GB/s.

    Returns {path, title, lines: [{label, kind: series|target, points}], lines_drawn (counted on the figure),
    x_ticks, x_tick_labels, x_label, y_label, bytes}."""
    import matplotlib  # pylint: disable=import-outside-toplevel  # optional dependency, only for plots
    matplotlib.use('Agg', force=True)
    from matplotlib import pyplot  # pylint: disable=import-outside-toplevel
    from matplotlib.ticker import FixedLocator, NullLocator  # pylint: disable=import-outside-toplevel

    xs = [p[0] for s in series_list or [] for p in s.get('points') or [] if p[0] > 0]
    segs_probe = _target_segments(targets, max(xs) if xs else 1)
    edges = xs + [x for seg in segs_probe for x in seg[0]]
    x_lo, x_hi = (min(edges), max(edges)) if edges else (1, 1 << 30)
    segments = _target_segments(targets, max(xs) if xs else x_hi)
    fig, ax = pyplot.subplots(figsize=(9, 5.5), dpi=100)
    drawn = []
    try:
        for s in series_list or []:
            pts = [p for p in s.get('points') or [] if p[0] > 0]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', markersize=3, linewidth=1.6, label=s.get('label'))
            drawn.append({'label': s.get('label'), 'kind': 'series', 'points': [list(p) for p in pts]})
        for (left, right), bw, label in segments:
            ax.plot([left, right], [bw, bw], linestyle='--', color='tab:red', linewidth=1.2, label=label)
            drawn.append({'label': label, 'kind': 'target', 'points': [[left, bw], [right, bw]]})
        ax.set_xscale('log', base=2)
        left, right, ticks = _log2_span(x_lo, x_hi)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks(ticks, [size_label(t) for t in ticks])
        ax.set_xlim(left, right)
        ax.set_ylim(bottom=0)
        ax.set_xlabel('message size (bytes, log 2)')
        ax.set_ylabel('busbw (GB/s)')
        ax.set_title(title)
        ax.grid(True, which='major', alpha=0.3)
        if drawn:
            ax.legend(loc='best', fontsize='small')
        lines_drawn = len(ax.get_lines())
        fig.tight_layout()
        # No Software/date chunks: the same data gives the same bytes (idempotent report files).
        fig.savefig(path, format='png', metadata={'Software': None})
    finally:
        pyplot.close(fig)
    return {'path': path, 'title': title, 'lines': drawn, 'lines_drawn': lines_drawn, 'x_ticks': ticks,
            'x_tick_labels': [size_label(t) for t in ticks], 'x_label': 'message size (bytes, log 2)',
            'y_label': 'busbw (GB/s)', 'bytes': os.path.getsize(path)}


def evidence_bars(evidence) -> list:
    """[(label, share or None, finding kinds)] of the evidence section: each host NIC, then each switch port, in the
    report's order. None: no share (too little traffic, or the counter is not available)."""
    bars = []
    for host, nics in sorted((evidence.get('hosts') or {}).items()):
        for nic, summary in sorted(nics.items()):
            bars.append(('%s %s' % (host, nic), summary.get('roce_share'), list(summary.get('findings') or [])))
    for device, ports in sorted((evidence.get('switches') or {}).items()):
        for port, summary in ports.items():
            bars.append(('%s %s' % (device, port), summary.get('roce_share'), list(summary.get('findings') or [])))
    return bars


def plot_evidence(evidence, path: str, title: str) -> dict:
    """Write a PNG of the counter evidence: per host NIC and per crossed switch port, the share of its bytes on the RoCE
    priority (queue), the required share as a dashed line; a bar with a finding is red, one without a share is drawn
    empty and labelled n/a. Returns {path, bars: [[label, share, findings]], bytes}."""
    import matplotlib  # pylint: disable=import-outside-toplevel  # optional dependency, only for plots
    matplotlib.use('Agg', force=True)
    from matplotlib import pyplot  # pylint: disable=import-outside-toplevel

    bars = evidence_bars(evidence)
    want = (evidence.get('settings') or {}).get('share')
    fig, ax = pyplot.subplots(figsize=(9, max(2.5, 0.35 * len(bars) + 1.5)), dpi=100)
    try:
        ys = list(range(len(bars)))
        values = [100.0 * (b[1] or 0) for b in bars]
        colors = ['tab:red' if b[2] else 'tab:green' for b in bars]
        ax.barh(ys, values, color=colors)
        for y, entry in zip(ys, bars):
            if entry[1] is None:
                ax.text(1, y, 'n/a', va='center', fontsize='small')
        if want:
            ax.axvline(100.0 * want, linestyle='--', color='tab:red', linewidth=1.2, label='required %.0f %%' % (100.0 * want))
            ax.legend(loc='lower right', fontsize='small')
        ax.set_yticks(ys, [b[0] for b in bars])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel('bytes on the RoCE priority / queue (%)')
        ax.set_title(title)
        fig.tight_layout()
        fig.savefig(path, format='png', metadata={'Software': None})
    finally:
        pyplot.close(fig)
    return {'path': path, 'bars': [list(b) for b in bars], 'bytes': os.path.getsize(path)}


# ---------------------------------------------------------------------------
# the report

def _launch_name(res, index, phase):
    name = (res.get('launch') or {}).get('name')
    return str(name) if name else '%slaunch %d' % (('%s ' % phase) if phase else '', index + 1)


def _launch_failure(launch):
    """'the launch timed out: <first line of the launcher's message>' / 'the launch failed (rc 1): ...'."""
    text = 'the launch %s' % ('timed out' if launch.get('status') == 'timeout' else 'failed')
    if launch.get('rc') is not None:
        text += ' (rc %s)' % launch['rc']
    message = str(launch.get('message') or '').strip().splitlines()
    return text + (': %s' % message[0] if message else '')


def _launch_entry(res, index, phase, settings):
    """One launch of the report: what the log proves, the gate verdict, and the lines that fail it."""
    launch = res.get('launch') or {}
    name = _launch_name(res, index, phase)
    own = res.get('gate') if isinstance(res.get('gate'), dict) else None
    if settings is not None and settings.get('active'):
        gate = _nccl_gate.gate_report(res, settings)
        if own and own.get('unmet'):
            # the verdict nccl_result already gave stays: the report's own options (require_complete is on by default)
            # add checks, they never replace the targets the result was gated on
            extra = [u for u in own['unmet'] if u not in gate['unmet']]
            gate = dict(gate, passed=False, unmet=gate['unmet'] + extra)
    else:
        gate = own
    unmet = list(gate.get('unmet') or []) if gate else []
    status = launch.get('status')
    if status is not None and status != 'succeeded':
        unmet.insert(0, _launch_failure(launch))
    verdict = 'not gated' if gate is None and status in (None, 'succeeded') else ('fail' if unmet else 'pass')
    return {
        'name': name, 'status': status, 'rc': launch.get('rc'), 'duration_s': launch.get('duration_s'),
        'collective': res.get('collective'), 'ranks': res.get('ranks'), 'nodes': res.get('nodes'),
        'gpus_per_node': res.get('gpus_per_node'), 'gpu_model': res.get('gpu_model'), 'nccl_version': res.get('nccl_version'),
        'nccl_tests_version': res.get('nccl_tests_version'), 'transport': res.get('transport', 'unknown'),
        'gdr_active': res.get('gdr_active', 'unknown'), 'largest_size_bytes': res.get('largest_size_bytes'),
        'oop_busbw_at_largest_size': res.get('oop_busbw_at_largest_size'),
        'avg_bus_bandwidth': res.get('avg_bus_bandwidth'), 'out_of_bounds': res.get('out_of_bounds'),
        'errors': list(res.get('errors') or []), 'complete': res.get('complete'),
        'gate': {'verdict': verdict, 'unmet': ['%s: %s' % (name, line) for line in unmet],
                 'checked': list(gate.get('checked') or []) if gate else []},
    }


def _targets_section(settings):
    if settings is None:
        return None
    busbw = []
    for tgt in settings.get('targets') or []:
        busbw.append({'collective': tgt.get('collective'), 'min_size': tgt.get('min_size'), 'max_size': tgt.get('max_size'),
                      'min_size_human': _nccl_vocab.human_size(tgt.get('min_size') or 0),
                      'max_size_human': _nccl_vocab.human_size(tgt['max_size']) if tgt.get('max_size') is not None else None,
                      'min_busbw': tgt.get('min_busbw'), 'placement': tgt.get('placement') or 'both'})
        if tgt.get('auto'):
            # min_busbw: auto (issue 34): the method and every number that went into the target
            busbw[-1]['auto'] = dict(tgt['auto'], text=_nccl_gate.auto_text(tgt['auto']))
    return {'busbw': busbw, 'require_transport': settings.get('require_transport'), 'require_gdr': settings.get('require_gdr'),
            'max_wrong': settings.get('max_wrong'), 'require_complete': settings.get('require_complete'),
            'tolerance_percent': settings.get('tolerance_percent')}


def plot_targets(settings, collective) -> list:
    """The busbw targets of ``settings`` that apply to ``collective`` (all of them when it is unknown)."""
    if settings is None:
        return []
    return [t for t in settings.get('targets') or []
            if not t.get('collective') or collective is None or t.get('collective') == collective]


def _target_at(targets, size):
    """The strictest busbw target covering ``size``, or None."""
    best = None
    for tgt in targets:
        lo, hi = tgt.get('min_size') or 0, tgt.get('max_size')
        if size >= lo and (hi is None or size <= hi) and (best is None or tgt['min_busbw'] > best['min_busbw']):
            best = tgt
    return best


def _stats(vals):
    if not vals:
        return None
    return {'median': _median(vals), 'min': min(vals), 'max': max(vals), 'n': len(vals)}


def _size_table(results, baseline, targets, compare):
    per = {key: _size_values(results, key) for key in PLACEMENT_KEYS}
    pre = _size_values(baseline, 'out_of_place') if baseline else {}
    by_size = {ent.get('size'): ent for ent in (compare or {}).get('sizes') or [] if isinstance(ent, dict)}
    table = []
    for size in sorted(set(per['out_of_place']) | set(per['in_place']) | set(pre)):
        row = {'size': size, 'size_human': _nccl_vocab.human_size(size),
               'out_of_place': _stats(per['out_of_place'].get(size, [])), 'in_place': _stats(per['in_place'].get(size, []))}
        tgt = _target_at(targets, size)
        row['target_busbw'] = tgt['min_busbw'] if tgt else None
        if tgt:
            halves = ('out_of_place', 'in_place') if (tgt.get('placement') or 'both') == 'both' else (tgt['placement'],)
            row['median_meets_target'] = all(row[h] is not None and row[h]['median'] >= tgt['min_busbw'] for h in halves)
        if baseline:
            row['baseline'] = _stats(pre.get(size, []))
        ent = by_size.get(size)
        if ent:
            keys = ('verdict', 'ratio', 'hl_ratio', 'ci_low', 'ci_high', 'ci_level', 'p_value',
                    'change_percent', 'threshold_percent', 'noise_percent', 'reason')
            row['compare'] = {k: ent.get(k) for k in keys}
        table.append(row)
    return table


def _compare_section(compare):
    if not compare:
        return None
    keep = ('verdict', 'unmet', 'flags', 'notes', 'tolerance_percent', 'n_pre', 'n_post', 'collective', 'transport', 'gdr_active',
            'noise_definition')
    out = {k: compare.get(k) for k in keep if k in compare}
    out['unmet'] = list(compare.get('unmet') or [])
    return out


def _agreed(results, key):
    vals = {json.dumps(r.get(key), sort_keys=True) for r in results}
    return results[0].get(key) if len(vals) == 1 and results else None


def benchmark_report(results: list, name: str, settings: dict | None = None, baseline: list | None = None,  # pylint: disable=too-many-locals,too-many-arguments
                     compare: dict | None = None, title: str | None = None, phase: str | None = None,
                     baseline_label: str = 'baseline', generated_at: str | None = None, evidence: dict | None = None) -> dict:
    """The JSON-able report of one benchmark run.

    ``results``: slim_result() dicts (or anything it accepts), one per launch. ``settings``: _nccl_gate.gate_settings()
    output; when it is active every launch is gated with it, else each launch's own ``gate`` (from nccl_result) is
    used. ``baseline``: the launches of an earlier run (the pre line of the plot, the baseline column).
    ``compare``: an nccl_compare result of baseline against these launches.

    verdict: ``fail`` when any launch failed or missed a requirement, or the comparison has unmet lines, or there
    is no launch; ``pass`` when something was gated and nothing failed; ``not gated`` otherwise. ``unmet`` holds
    every failing line, each naming the launch (or the comparison), the requirement and the measured value.
    ``evidence``: _common/_evidence.judge() of the counters around the launches; its blocking findings fail the run
    even when busbw passes (``counter evidence: ...`` lines; the evidence section says so)."""
    results = [slim_result(r, 'results[%d]' % i) for i, r in enumerate(results or [])]
    baseline = [slim_result(r, 'baseline[%d]' % i) for i, r in enumerate(baseline or [])]
    launches = [_launch_entry(r, i, phase, settings) for i, r in enumerate(results)]
    collective = _agreed(results, 'collective')
    targets = plot_targets(settings, collective)
    label = phase or 'this run'
    series = [busbw_series(baseline, baseline_label)] if baseline else []
    series.append(busbw_series(results, label))
    unmet = [line for entry in launches for line in entry['gate']['unmet']]
    cmp_section = _compare_section(compare)
    if cmp_section:
        unmet.extend('compare: %s' % line for line in cmp_section['unmet'])
    if not results:
        unmet.insert(0, 'no launch to report (the benchmark produced no log)')
    busbw_unmet = list(unmet)
    ev_section = _evidence_section(evidence)
    if ev_section is not None:
        unmet.extend(ev_section['unmet'])
        ev_section['verdict_note'] = _nccl_gate.evidence_verdict_note(busbw_unmet, ev_section['unmet'])
    gated = any(e['gate']['verdict'] != 'not gated' for e in launches) or cmp_section is not None or bool(ev_section and ev_section['unmet'])
    verdict = 'fail' if unmet else ('pass' if gated else 'not gated')
    return {
        'name': name, 'title': title or 'NCCL %s busbw: %s' % (collective or 'benchmark', name), 'phase': phase,
        'generated_at': generated_at, 'collective': collective, 'verdict': verdict, 'unmet': unmet,
        'targets': _targets_section(settings), 'launches': launches, 'baseline_launches': len(baseline),
        'sizes': _size_table(results, baseline, targets, compare), 'compare': cmp_section,
        'series': series, 'plot': '%s.png' % name, 'evidence': ev_section,
    }


def _evidence_section(evidence):
    """The report's evidence section: the judge() output with the unmet lines of its blocking findings; None: no evidence
    (switched off, or a report of launches run elsewhere)."""
    if not isinstance(evidence, dict):
        return None
    findings = [f for f in evidence.get('findings') or [] if isinstance(f, dict)]
    return {
        'settings': evidence.get('settings'), 'modes': evidence.get('modes') or {}, 'ports': evidence.get('ports'),
        'hosts': evidence.get('hosts') or {}, 'switches': evidence.get('switches') or {},
        'not_available': evidence.get('not_available') or {}, 'findings': findings, 'read': evidence.get('read') or {},
        'unmet': _nccl_gate.evidence_unmet(findings), 'note': evidence.get('note'),
    }


# ---------------------------------------------------------------------------
# Markdown

def _md_targets(targets):
    if not targets:
        return ['No targets given: the launches were not gated on bus bandwidth.']
    rows = [[md_cell(t['collective'] or 'any'), md_cell(t['min_size_human'] + ('..' + t['max_size_human'] if t['max_size_human'] else '+')),
             md_cell(t['placement'].replace('_', '-')), md_cell(t['min_busbw'], '%g')] for t in targets['busbw']]
    out = md_table(['collective', 'sizes', 'placement', 'min busbw (GB/s)'], rows) if rows else ['No busbw target.']
    derived = [t for t in targets['busbw'] if t.get('auto')]
    if derived:
        out += ['', 'Targets derived from the hardware (min_busbw: auto; docs/benchmark.md):', '']
        for t in derived:
            auto = t['auto']
            out.append('- %s %s: %s; %d host(s). Method: %s. Efficiency: %s.%s' % (
                md_cell(t['collective'] or 'any'), md_cell(t['min_size_human'] + ('..' + t['max_size_human'] if t['max_size_human'] else '+')),
                md_cell(auto.get('text')), auto.get('hosts') or 0, md_cell(auto.get('source')), md_cell(auto.get('efficiency_source')),
                (' The method assumes NCCL_ALGO=%s (the nccl_gate role pins nccl_gate_algo, default Ring); the gate does not read '
                 'the algorithm from the log.' % auto['nccl_algo']) if auto.get('nccl_algo') else ''))
    gdr = targets.get('require_gdr')
    out.append('')
    out.append('Transport: %s. GPUDirect RDMA: %s. #wrong at most %s in every cell%s.' % (
        ' or '.join(targets['require_transport']) if targets.get('require_transport') else 'not required',
        'not checked' if gdr is None else ('required' if gdr else 'must be off'), md_cell(targets.get('max_wrong')),
        '; complete logs required' if targets.get('require_complete') else ''))
    return out


def _md_launches(launches):
    rows = []
    for ent in launches:
        gdr = ent['gdr_active']
        at_size = ' @ %s' % _nccl_vocab.human_size(ent['largest_size_bytes']) if ent['largest_size_bytes'] is not None else ''
        rows.append([md_cell(ent['name']), md_cell(ent['status']), md_cell(ent['collective']), md_cell(ent['ranks']), md_cell(ent['nodes']),
                     md_cell(ent['transport']), md_cell(gdr if isinstance(gdr, bool) else 'unknown'),
                     md_cell(ent['oop_busbw_at_largest_size'], '%.2f') + at_size,
                     md_cell(ent['avg_bus_bandwidth']), md_cell(len(ent['errors'])), md_cell(ent['gate']['verdict'].upper())])
    return md_table(['launch', 'status', 'collective', 'ranks', 'nodes', 'transport', 'GDR', 'busbw at largest size (GB/s)',
                     'avg bus bandwidth', 'errors', 'gate'], rows)


def _md_sizes(report):
    has_base = report['baseline_launches'] > 0
    has_cmp = any('compare' in row for row in report['sizes'])
    header = ['size', 'bytes']
    if has_base:
        header.append('baseline out-of-place median')
    header += ['out-of-place median (min..max)', 'in-place median', 'target']
    if has_cmp:
        header += ['compare', 'post/pre (CI)', 'p']

    def stat(st):
        return '-' if st is None else '%.2f (%.2f..%.2f, n=%d)' % (st['median'], st['min'], st['max'], st['n'])

    rows = []
    for row in report['sizes']:
        line = [md_cell(row['size_human']), md_cell(row['size'])]
        if has_base:
            line.append('-' if row.get('baseline') is None else '%.2f' % row['baseline']['median'])
        line += [stat(row['out_of_place']), '-' if row['in_place'] is None else '%.2f' % row['in_place']['median'],
                 '-' if row['target_busbw'] is None else '%g%s' % (row['target_busbw'], '' if row.get('median_meets_target') else ' (missed)')]
        if has_cmp:
            cmp = row.get('compare')
            if cmp:
                ci = '' if cmp.get('ci_low') is None else ' (%.3f..%.3f)' % (cmp['ci_low'], cmp['ci_high'])
                line += [md_cell(cmp['verdict']), md_cell(cmp.get('hl_ratio'), '%.3f') + ci, md_cell(cmp.get('p_value'), '%.3g')]
            else:
                line += ['-', '-', '-']
        rows.append(line)
    return md_table(header, rows)


def benchmark_markdown(report: dict) -> str:
    """The report for people: verdict, unmet lines, targets, one row per launch, one row per size, the plot."""
    out = ['# %s' % md_cell(report['title']), '']
    out.append('Verdict: **%s**' % report['verdict'].upper())
    facts = []
    if report.get('phase'):
        facts.append('phase: %s' % md_cell(report['phase']))
    facts.append('collective: %s' % md_cell(report.get('collective')))
    facts.append('%d launch(es)' % len(report['launches']))
    if report['baseline_launches']:
        facts.append('baseline: %d launch(es)' % report['baseline_launches'])
    if report.get('generated_at'):
        facts.append('generated: %s' % md_cell(report['generated_at']))
    out += ['', '; '.join(facts) + '.', '']
    if report['unmet']:
        out += ['## Unmet', ''] + ['- %s' % md_cell(line) for line in report['unmet']] + ['']
    out += ['## Targets', ''] + _md_targets(report['targets']) + ['']
    out += ['## Launches', ''] + _md_launches(report['launches']) + ['']
    errors = [(ent['name'], err) for ent in report['launches'] for err in ent['errors']]
    if errors:
        out += ['Errors in the logs:', ''] + ['- %s: %s' % (md_cell(n), md_cell(e)) for n, e in errors[:50]] + ['']
    out += ['## Bus bandwidth per size', '',
            'busbw in GB/s, the median over the launches of each launch\'s value (nccl-tests busbw, 10^9 bytes/s).', '']
    out += _md_sizes(report) + ['']
    cmp = report.get('compare')
    if cmp:
        out += ['## Comparison with the baseline', '', 'Verdict: **%s** (%s pre vs %s post launches, tolerance %s %%).' % (
            md_cell(cmp.get('verdict')), md_cell(cmp.get('n_pre')), md_cell(cmp.get('n_post')), md_cell(cmp.get('tolerance_percent'), '%g')), '']
        out += ['- %s' % md_cell(n) for n in (cmp.get('notes') or []) + (cmp.get('flags') or [])]
        out += [''] if (cmp.get('notes') or cmp.get('flags')) else []
    if report.get('evidence'):
        out += _md_evidence(report['evidence'])
        out += ['![RoCE share per NIC and port](%s-evidence.png)' % report['name'], '']
    out += ['## Plot', '', '![busbw against message size](%s)' % report['plot'], '']
    return '\n'.join(out)


def _md_by(values, unit=''):
    """'p3 1200, p0 10' of a per-index delta (largest first); 'n/a' when the device cannot read it."""
    if values is None:
        return 'n/a'
    items = sorted(((k, v) for k, v in values.items() if v), key=lambda kv: -kv[1])
    return ', '.join('%s: %d%s' % (k, v, unit) for k, v in items[:4]) or '0'


def _md_num(value):
    return 'n/a' if value is None else md_cell(value)


def _md_share(value):
    return '-' if value is None else '%.1f %%' % (value * 100)


def _md_evidence(ev):
    """Per host NIC and per switch port: bytes by priority, pauses, marks, CNPs, drops, the findings beside each."""
    opts = ev.get('settings') or {}
    out = ['## Counter evidence', '']
    if ev.get('verdict_note'):
        out += ['**%s**' % md_cell(ev['verdict_note']), '']
    out.append('Counter snapshots before and after the launch (docs/benchmark.md, "Counter evidence"): the RoCE priority must carry '
               'at least %s of the bytes of each NIC and port with %s bytes or more; %s.' % (
                   _md_share(opts.get('share')), md_cell(opts.get('min_bytes')),
                   'modes: ' + ', '.join(sorted(set((ev.get('modes') or {}).values()))) if ev.get('modes') else 'no plan mode read'))
    if ev.get('note'):
        out += ['', md_cell(ev['note'])]
    out.append('')
    rows = []
    for host, nics in sorted((ev.get('hosts') or {}).items()):
        for nic, s in sorted(nics.items()):
            rows.append([md_cell(host), md_cell(nic), md_cell(s.get('roce_priority')), _md_share(s.get('roce_share')), _md_by(s.get('tx_bytes')),
                         _md_by(s.get('pfc_rx')) + ' / ' + _md_by(s.get('pfc_tx')), _md_num(s.get('ecn_marked')),
                         _md_num(s.get('cnp_sent')) + ' / ' + _md_num(s.get('cnp_handled')), _md_by(s.get('retransmissions')),
                         _md_by(s.get('drops')), md_cell(', '.join(s.get('findings') or []) or 'ok')])
    if rows:
        header = ['host', 'NIC', 'RoCE prio', 'share', 'tx bytes by priority', 'pause rx / tx', 'ECN marked', 'CNP sent / handled',
                  'retransmissions', 'drops', 'findings']
        out += ['### Hosts', ''] + md_table(header, rows) + ['']
    rows = []
    for device, ports in sorted((ev.get('switches') or {}).items()):
        for port, s in ports.items():
            rows.append([md_cell(device), md_cell(port), md_cell(s.get('roce_queue')), _md_share(s.get('roce_share')),
                         _md_by(s.get('by_queue')) + (' (%s)' % s['by_queue_counter'] if s.get('by_queue_counter') else ''),
                         _md_num(s.get('pfc_rx')) + ' / ' + _md_num(s.get('pfc_tx')), _md_by(s.get('ecn_by_queue')), _md_num(s.get('cnp_packets')),
                         _md_by(s.get('drops_by_queue')), md_cell(', '.join(s.get('findings') or []) or 'ok')])
    if rows:
        header = ['switch', 'port', 'RoCE queue', 'share', 'tx by queue', 'lossless pause rx / tx', 'ECN marked by queue', 'CNPs',
                  'drops by queue', 'findings']
        out += ['### Switch ports', ''] + md_table(header, rows) + ['']
    unread = {d: n for d, n in sorted((ev.get('not_available') or {}).items()) if n}
    if unread:
        out += ['Not available (the device cannot read them; never counted as 0):', '']
        out += ['- %s: %s' % (md_cell(d), md_cell(', '.join(n))) for d, n in unread.items()] + ['']
    if ev.get('findings'):
        out += ['### Findings', ''] + ['- %s %s: %s' % (md_cell(f.get('severity')), md_cell(f.get('kind')), md_cell(f.get('message')))
                                       for f in ev['findings']] + ['']
    else:
        out += ['No finding: the run rode the plan\'s classes.', '']
    return out


def report_json(report: dict) -> str:
    """The report as written to <name>.json: sorted keys, two-space indent, a final newline."""
    return json.dumps(report, indent=2, sort_keys=True) + '\n'


# ---------------------------------------------------------------------------
# files

def render_files(report: dict, workdir: str) -> dict:
    """{file name: bytes} of the three report files (four with counter evidence: <name>-evidence.png); the PNGs are drawn
    in ``workdir``."""
    name = report['name']
    png = os.path.join(workdir, name + '.png')
    plot_busbw(report['series'], plot_targets(_settings_of(report), report.get('collective')), png, report['title'])
    with open(png, 'rb') as handle:
        png_bytes = handle.read()
    files = {name + '.json': report_json(report).encode('utf-8'), name + '.md': benchmark_markdown(report).encode('utf-8'),
             name + '.png': png_bytes}
    if report.get('evidence'):
        png = os.path.join(workdir, name + '-evidence.png')
        plot_evidence(report['evidence'], png, 'Counter evidence: %s' % name)
        with open(png, 'rb') as handle:
            files[name + '-evidence.png'] = handle.read()
    return files


def _settings_of(report):
    tg = report.get('targets') or {}
    return {'targets': tg.get('busbw') or []}
