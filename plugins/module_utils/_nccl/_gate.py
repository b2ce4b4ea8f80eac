# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The busbw gate: one human line per unmet requirement of one nccl-tests result.

Pure Python standard library; no Ansible imports.  ``gate_settings`` turns the
module options (GATE_ARG_SPEC, documented in plugins/doc_fragments/_nccl_gate.py)
into settings; ``gate_report`` judges one ``_nccl_parse.parse`` result under them.
Missing evidence never passes.
"""
from __future__ import annotations

import math

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as V

human_size = V.human_size

_PLACEMENTS = {'out_of_place': ('out_of_place',), 'in_place': ('in_place',), 'both': ('out_of_place', 'in_place')}
_PLACEMENT_TEXT = {'out_of_place': 'out-of-place', 'in_place': 'in-place'}


# collectives whose bus factor is 0 at one rank (src/<coll>.cu GetBw, v2.19.6): all_reduce 2(n-1)/n, the others (n-1)/n;
# broadcast, reduce and sendrecv have factor 1 and measure a real busbw on one GPU
ONE_RANK_ZERO_BUSBW = {'all_reduce': '2(n-1)/n', 'all_gather': '(n-1)/n', 'reduce_scatter': '(n-1)/n', 'alltoall': '(n-1)/n',
                       'alltoallv': '(n-1)/n', 'gather': '(n-1)/n', 'scatter': '(n-1)/n'}


# ---------------------------------------------------------------------------
# min_busbw: auto (issue 34): a target derived from the launch's hardware
#
# A busbw target is the hardware's line rate in GB/s (decimal, nccl-tests' busbw unit: Gb/s / 8) times an
# efficiency a healthy fabric reaches, per collective:
# - ring_nic_aggregate (all_reduce, all_gather, reduce_scatter): busbw is defined so that it compares with the
#   hardware's peak whatever the rank count (NVIDIA/nccl-tests doc/PERFORMANCE.md, "Bus bandwidth"), and a ring
#   crosses each node boundary once per NIC, so the ceiling is NICs per host x the NIC's rate (reference
#   nccl-tests.md section 6). It holds for Ring only: on two nodes Tree or NVLS put part of the traffic on
#   NVLink and report more than the NICs carry (sjeaugey in NVIDIA/nccl-tests#160: with ring "the busbw is going
#   to reflect exactly what's going through the NICs", tree does not; NVIDIA/nccl#1576, nccl-tests#153), so the
#   method needs NCCL_ALGO=Ring: the nccl_gate role pins it (nccl_gate_algo, default Ring) and the report says
#   the target assumes it. The gate cannot yet see the algorithm in a log (the parser does not read NCCL's
#   "NCCL_ALGO set by environment" line): a launch without the pin is on the user.
# - single_nic (alltoall): "Alltoall cannot aggregate the bandwidth of multiple NICs, so the performance you
#   should see is the performance of a single NIC" (sjeaugey, NVIDIA/nccl-tests#267); with more than one node
#   the busbw is N/(N-1) x the per-GPU network bandwidth (nccl-tests#130), never less than one NIC's, so one
#   NIC is the lower bound. No algorithm to pin (alltoall is point-to-point).
# The efficiency: NVIDIA's maintainers give the peak per NIC as 24 GB/s per 200G NIC and 12 GB/s per 100G
# (sjeaugey, NVIDIA/nccl-tests#119: 96 % of the line rate), 192 GB/s all_reduce busbw on 8 x 200G HDR
# (AddyLaddy, quoted in NVIDIA/nccl#1576: 96 %) and "up to 48-49GB/s per NIC" for CX-7 at NDR
# (AddyLaddy, nccl-tests#267: 96-98 %), "around 48GB/s from each CX7 NIC at 400Gbps" with NCCL_ALGO=RING on two
# nodes (AddyLaddy, nccl-tests#319). Issue 34 cites nccl-tests#290 for 46-48 GB/s; that thread was not found in
# the issue corpus searched (2026-12-05), so #319 stands for it. A gate target is a floor, not the peak: 92 % (46 GB/s per
# 400G NIC), the low end of those numbers and of the 90-97 % the reference sees on healthy rings.
# Other collectives have no cited method: ``auto`` is refused for them (set min_busbw by hand).
AUTO_EFFICIENCY = 0.92
AUTO_EFFICIENCY_SOURCE = ('NVIDIA/nccl-tests#119 (24 GB/s per 200G NIC), #267 (48-49 GB/s per NDR NIC), '
                          'NVIDIA/nccl#1576 (192 GB/s on 8 x 200G), nccl-tests#319 (about 48 GB/s per CX-7 400G NIC, Ring, 2 nodes)')
AUTO_METHODS = {
    'all_reduce': ('ring_nic_aggregate', 'Ring', 'NVIDIA/nccl-tests doc/PERFORMANCE.md; nccl-tests#160 (ring busbw = what the NICs carry)'),
    'all_gather': ('ring_nic_aggregate', 'Ring', 'NVIDIA/nccl-tests doc/PERFORMANCE.md; nccl-tests#160 (ring busbw = what the NICs carry)'),
    'reduce_scatter': ('ring_nic_aggregate', 'Ring', 'NVIDIA/nccl-tests doc/PERFORMANCE.md; nccl-tests#160 (ring busbw = what the NICs carry)'),
    'alltoall': ('single_nic', None, 'NVIDIA/nccl-tests#267 (alltoall cannot aggregate NICs), #130'),
}


def auto_target(collective, nics_per_host, link_gbps, hosts=None) -> dict:
    """The ``min_busbw: auto`` target of ``collective`` on hosts with ``nics_per_host`` NICs of ``link_gbps`` Gb/s each.

    Returns {method, collective, nics_per_host, link_gbps, nics_counted, line_rate_gbytes, efficiency, min_busbw,
    nccl_algo (the NCCL_ALGO the method needs, or None), source, efficiency_source, hosts}. Raises ValueError,
    naming the collective or the number, when there is no cited method or the hardware is unknown.
    """
    coll = V.collective_name(collective)
    if coll not in AUTO_METHODS:
        raise ValueError("'auto' has no cited method for %s (only %s): set min_busbw by hand"
                         % (collective, ', '.join(c + '_perf' for c in AUTO_METHODS)))
    for label, value in (('NICs per host', nics_per_host), ('link rate (Gb/s)', link_gbps)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError("'auto' needs the launch's hardware: %s is %r" % (label, value))
    method, algo, source = AUTO_METHODS[coll]
    counted = nics_per_host if method == 'ring_nic_aggregate' else 1
    line_rate = counted * link_gbps / 8.0
    return {'method': method, 'collective': coll, 'nics_per_host': nics_per_host, 'link_gbps': link_gbps, 'nics_counted': counted,
            'line_rate_gbytes': line_rate, 'efficiency': AUTO_EFFICIENCY, 'min_busbw': round(line_rate * AUTO_EFFICIENCY, 2),
            'nccl_algo': algo, 'source': source, 'efficiency_source': AUTO_EFFICIENCY_SOURCE, 'hosts': hosts}


def auto_text(auto) -> str:
    """'8 NICs x 400 Gb/s = 400 GB/s x 0.92 = 368 GB/s (ring_nic_aggregate, NCCL_ALGO=Ring)': the numbers behind a target."""
    if not isinstance(auto, dict):
        return ''
    return '%d NIC%s x %s Gb/s = %g GB/s x %g = %g GB/s (%s%s)' % (
        auto.get('nics_counted') or 0, '' if auto.get('nics_counted') == 1 else 's', auto.get('link_gbps'),
        auto.get('line_rate_gbytes') or 0, auto.get('efficiency') or 0, auto.get('min_busbw') or 0, auto.get('method'),
        ', NCCL_ALGO=%s' % auto['nccl_algo'] if auto.get('nccl_algo') else '')


def same_gpu_model(want, have):
    """A target's gpu_model against the log's (nccl-tests prints CUDA's prop.name, e.g. 'NVIDIA H100 80GB HBM3'):
    case and spacing aside, equal - a target 'NVIDIA H100' does not silently cover 'NVIDIA H100 NVL'."""
    def norm(text):
        return ' '.join(str(text).lower().split())
    return norm(want) == norm(have)


def gate_label(coll):
    """'all_reduce' -> 'all_reduce_perf', the name every gate line starts with."""
    return ('%s_perf' % coll) if coll else 'nccl-tests'


def gate(result: dict, targets: list, require_transport=None, require_gdr=None, max_wrong=0, require_complete=True,
         require_correctness=True, accept_transport_errors=False) -> list:
    """Return one human line per unmet requirement; an empty list means the log passes.

    A target is {min_size, max_size (None = no upper bound), min_busbw,
    placement ('out_of_place' | 'in_place' | 'both', default 'both'),
    collective (optional)}.  Missing data never passes: no rows in the
    range, a log cut before max_size, N/A cells and crashed runs each give a
    line.  ``require_transport`` is a name or a list of accepted names and
    ``require_gdr`` a bool; "unknown" never satisfies either.  ``require_complete`` defaults to true, as in the modules.
    ``require_correctness=False`` accepts a log without correctness evidence (run with ``-c 0``);
    a wrong count or a deviation beyond nccl-tests' bound still fails.
    A NET/IB completion error on any rank fails unless ``accept_transport_errors`` says otherwise.
    """
    return [c['line'] for c in _gate_checks(result, targets, require_transport, require_gdr, max_wrong, require_complete, require_correctness,
                                            accept_transport_errors) if c['line']]


def _gate_checks(result, targets, require_transport=None, require_gdr=None, max_wrong=0, require_complete=True,  # noqa: C901
                 require_correctness=True, accept_transport_errors=False):
    """Every requirement ``gate`` checks, in its order: {requirement, passed, measured, line}; ``line`` is None when met."""
    result = result if isinstance(result, dict) else {}
    rows = result.get('rows') or []
    coll = result.get('collective')
    label = gate_label(coll)
    out = []

    def check(requirement, lines, measured=None):
        lines = [x for x in lines if x]
        out.append({'requirement': requirement, 'passed': not lines, 'measured': measured, 'line': None})
        if lines:
            out[-1]['line'] = lines[0]
            out.extend({'requirement': requirement, 'passed': False, 'measured': measured, 'line': x} for x in lines[1:])

    transport_errors = result.get('transport_errors') or []
    transport_texts = {e['text'] for e in transport_errors}
    failures = [f for f in result.get('failures') or [] if f not in transport_texts]
    base = []
    if not rows:
        base.append('%s: no result rows in the log (run crashed, hung or was cut before the table)' % label)
    for failure in failures[:3]:
        base.append('%s: the run reported a failure: %s' % (label, failure))
    if result.get('independent_runs'):
        why = '; '.join(result.get('independent_reasons') or []) or 'several headers or device lists'
        base.append('%s: the log holds several independent runs, not one multi-node benchmark (%s); refusing to gate on it' % (label, why))
    check('%s: result rows from one run that reported no failure' % label, base,
          '%d row(s), %d failure(s)' % (len(rows), len(failures)))
    if transport_errors:
        # after a completion error on a queue pair NCCL retries or aborts that connection: the numbers of the
        # table that follows were not measured on a healthy transport, even when the table completes
        check('%s: no NET/IB transport error on any rank%s' % (label, ' (accepted: accept_transport_errors)' if accept_transport_errors else ''),
              [] if accept_transport_errors else [_transport_error_line(label, e) for e in transport_errors[:3]],
              '%d transport error(s)' % len(transport_errors))
    model = result.get('gpu_model')
    for tgt in targets or []:
        if isinstance(tgt, dict) and tgt.get('collective') and coll is not None and V.collective_name(tgt.get('collective')) != coll:
            continue    # a target for another collective: not this log's business
        if isinstance(tgt, dict) and tgt.get('gpu_model'):
            if model is None:
                check(_target_text(tgt, coll), ['%s: a target for GPU model %s cannot be checked: the log names no GPU model '
                                                '(no nccl-tests device list)' % (label, tgt['gpu_model'])])
                continue
            if not same_gpu_model(tgt['gpu_model'], model):
                continue    # a target for another GPU model (the node baseline's per-model targets)
        lines = _gate_target(result, rows, coll, tgt)
        check(_target_text(tgt, coll), lines if isinstance(lines, list) else [lines], _target_measured(rows, tgt))
    wrong_cells = [r[k]['wrong'] for r in rows for k in ('out_of_place', 'in_place') if r.get(k) and r[k].get('wrong') is not None]
    check('%s: #wrong <= %d in every checked cell, and correctness checked' % (label, max_wrong),
          _gate_wrong(result, rows, label, max_wrong, require_correctness), ('max #wrong %d' % max(wrong_cells)) if wrong_cells else None)
    if require_transport:
        accepted = [require_transport] if isinstance(require_transport, str) else list(require_transport)
        have = result.get('transport') or 'unknown'
        line = None
        if have.lower() not in [a.lower() for a in accepted]:
            line = '%s: transport %s is not proven to be %s (evidence: %s)' % (
                label, have, ' or '.join(accepted), '; '.join(result.get('transport_evidence') or []) or 'no NCCL_DEBUG=INFO transport lines')
        check('%s: transport %s' % (label, ' or '.join(accepted)), [line], have)
    if require_gdr is not None:
        have = result.get('gdr_active', 'unknown')
        line = None
        if have is not bool(require_gdr):
            line = '%s: GPUDirect RDMA is %s, required %s (evidence: %s)' % (
                label, {True: 'active', False: 'not active'}.get(have, 'not proven'), 'active' if require_gdr else 'off',
                '; '.join(result.get('gdr_evidence') or []) or 'no NCCL_DEBUG=INFO GDR lines')
        check('%s: GPUDirect RDMA %s' % (label, 'active' if require_gdr else 'off'), [line], str(have))
    if require_complete:
        line = None
        complete = result.get('complete') or (accept_transport_errors and rows and not failures and not result.get('independent_runs')
                                              and not result.get('truncated_reasons'))
        if rows and not complete:
            why = list(result.get('truncated_reasons') or [])
            if result.get('failures'):
                why.append('the run reported failures')
            if result.get('independent_runs'):
                why.append('independent runs')
            line = '%s: the log is incomplete: %s' % (label, '; '.join(why) or 'not a complete run')
        check('%s: a complete log' % label, [line], 'complete' if complete else 'incomplete')
    return out


def _transport_error_line(label, err):
    where = ['rank %d' % err['rank'] if err.get('rank') is not None else 'rank unknown (no device list names this process)']
    where += ['%s %s' % (k, err[key]) for k, key in (('host', 'host'), ('GPU', 'device'), ('hca', 'hca'), ('peer', 'peer'), ('status', 'status'))
              if err.get(key) is not None]
    return '%s: transport error on %s: %s (set accept_transport_errors to gate on such a run anyway)' % (label, ', '.join(where), err['text'])


def _target_span(tgt):
    try:
        lo = int(tgt.get('min_size') or 0)
        hi = tgt.get('max_size')
        hi = int(hi) if hi is not None else None
    except (TypeError, ValueError):
        return None, None, '?'
    if hi == lo:
        return lo, hi, '%d B (%s)' % (lo, human_size(lo))
    return lo, hi, '%s..%s' % (human_size(lo), human_size(hi) if hi is not None else 'max')


def _target_text(tgt, coll):
    if not isinstance(tgt, dict):
        return 'invalid target %r' % (tgt,)
    want = V.collective_name(tgt.get('collective')) if tgt.get('collective') else None
    _lo, _hi, span = _target_span(tgt)
    placement = tgt.get('placement') or 'both'
    halves = ' and '.join(_PLACEMENT_TEXT[k] for k in _PLACEMENTS.get(placement, ()))
    text = '%s %s busbw >= %s GB/s at %s' % (gate_label(want or coll), halves or placement, tgt.get('min_busbw'), span)
    if tgt.get('auto'):
        text += ' (auto: %s)' % auto_text(tgt['auto'])
    return text


def _target_measured(rows, tgt):
    """The lowest busbw in the target's size range and placement, as text (None without data)."""
    if not isinstance(tgt, dict):
        return None
    lo, hi, _span = _target_span(tgt)
    if lo is None:
        return None
    worst = None
    for r in rows:
        if r['size'] < lo or (hi is not None and r['size'] > hi):
            continue
        for key in _PLACEMENTS.get(tgt.get('placement') or 'both', ()):
            half = r.get(key)
            bw = half.get('busbw') if half else None
            if bw is None:
                return 'N/A at %d B %s' % (r['size'], _PLACEMENT_TEXT[key])
            if worst is None or bw < worst[0]:
                worst = (bw, r['size'], key)
    if worst is None:
        return None
    return 'min %.2f GB/s at %d B (%s) %s' % (worst[0], worst[1], human_size(worst[1]), _PLACEMENT_TEXT[worst[2]])


def _gate_target(result, rows, coll, tgt):  # noqa: C901
    if not isinstance(tgt, dict):
        return 'invalid target %r' % (tgt,)
    want_coll = V.collective_name(tgt.get('collective')) if tgt.get('collective') else None
    label = gate_label(want_coll or coll)
    if want_coll:
        if coll is None:
            return '%s target cannot be checked: the log does not show which collective ran' % label
        if want_coll != coll:
            return None
    try:
        min_size = int(tgt.get('min_size') or 0)
        max_size = tgt.get('max_size')
        max_size = int(max_size) if max_size is not None else None
        min_bw = float(tgt['min_busbw'])
    except (KeyError, TypeError, ValueError):
        return 'invalid target %r' % (tgt,)
    placement = tgt.get('placement') or 'both'
    halves = _PLACEMENTS.get(placement)
    if halves is None:
        return 'invalid target placement %r' % (placement,)
    span = '%d B (%s)' % (min_size, human_size(min_size)) if max_size == min_size else \
        '%s..%s' % (human_size(min_size), human_size(max_size) if max_size is not None else 'max')
    if result.get('ranks') == 1 and coll in ONE_RANK_ZERO_BUSBW and min_bw > 0:
        # busbw = algbw x 2(n-1)/n (all_reduce) or (n-1)/n: 0 at n = 1 whatever the GPU does (nccl-tests
        # doc/PERFORMANCE.md; src/all_reduce.cu AllReduceGetBw, v2.19.6). Say so instead of failing on a 0 that is no measure.
        return ('%s busbw at %s: one rank - busbw is 0 by definition for %s at 1 rank (bus factor %s = 0), so a busbw '
                'target cannot be judged; run 2 or more GPUs (-g), or gate broadcast/reduce (factor 1) on one GPU') % (
            label, span, coll, ONE_RANK_ZERO_BUSBW[coll])
    in_range = [r for r in rows if r['size'] >= min_size and (max_size is None or r['size'] <= max_size)]
    largest = result.get('largest_size_bytes')
    evidence = []
    damaged = [d for d in result.get('damaged_rows') or [] if _damage_in_range(d, rows, min_size, max_size)]
    if damaged:
        d = damaged[0]
        evidence.append('%s busbw at %s: the row at line %s %sis damaged (%s): no evidence < target %.2f GB/s' % (
            label, span, d.get('line'), ('(%d B) ' % d['size']) if d.get('size') is not None else '', d['reason'], min_bw))
    gap = _evidence_gap(result, rows, min_size, max_size) if in_range else None   # no row at all: the value line says so
    if gap:
        evidence.append('%s busbw at %s: %s < target %.2f GB/s' % (label, span, gap, min_bw))
    value = _gate_value(label, span, in_range, largest, max_size, min_bw, halves)
    return evidence + ([value] if value else [])


def _damage_in_range(d, rows, lo, hi):
    """Whether a damaged row may be a row of the range: its printed size cannot be trusted, so where it sits decides -
    between the intact rows around it (the sizes before and after it in the table) and the range."""
    line = d.get('line') or 0
    intact = [r for r in rows if not r.get('damaged') and r.get('line') is not None]
    before = [r['size'] for r in intact if r['line'] < line]
    after = [r['size'] for r in intact if r['line'] > line]
    prev = before[-1] if before else None
    nxt = after[0] if after else None
    if prev is not None and nxt is not None and nxt < prev:
        nxt = None      # the table restarts after it: it may be the last row of the first sweep
    return (nxt is None or nxt >= lo) and (prev is None or hi is None or prev <= hi)


def _gate_value(label, span, in_range, largest, max_size, min_bw, halves):
    if not in_range:
        return '%s busbw at %s: no data (the log %s) < target %.2f GB/s' % (
            label, span, ('ends at %d B (%s)' % (largest, human_size(largest))) if largest is not None else 'has no rows', min_bw)
    if max_size is not None and (largest is None or largest < max_size):
        return '%s busbw at %s: no data above %d B (%s): the log stops there < target %.2f GB/s' % (
            label, span, largest, human_size(largest), min_bw)
    worst = None
    bad = 0
    for r in in_range:
        for key in halves:
            half = r.get(key)
            bw = half.get('busbw') if half else None
            if bw is None or bw < min_bw:
                bad += 1
                score = -1.0 if bw is None else bw
                if worst is None or score < worst[0]:
                    worst = (score, r['size'], key, bw)
    if worst is None:
        return None
    _score, size, key, bw = worst
    more = (' (%d more cell(s) in range below target)' % (bad - 1)) if bad > 1 else ''
    value = 'N/A (no measurement)' if bw is None else '%.2f GB/s' % bw
    return '%s %s busbw at %d B (%s): %s < target %.2f GB/s%s' % (
        label, _PLACEMENT_TEXT[key], size, human_size(size), value, min_bw, more)


def _sweep(header):
    """The sizes nccl-tests was asked for: minBytes, then x step (factor) or + step (bytes), up to maxBytes
    (src/common.cu TimeTest; the header line prints all three, src/util.cu)."""
    if not isinstance(header, dict):
        return None
    lo = header.get('minBytes')
    hi = header.get('maxBytes_reduced') or header.get('maxBytes')
    step = header.get('step') or 2
    kind = header.get('step_kind') or 'factor'
    if not isinstance(lo, int) or not isinstance(hi, int) or lo < 0 or hi < lo or not isinstance(step, int) or step < 1:
        return None
    if kind == 'factor' and (step < 2 or lo == 0):
        return None
    out = []
    size = lo
    while size <= hi and len(out) < 4096:
        out.append(size)
        size = size * step if kind == 'factor' else size + step
    return out


def _ranges(sizes):
    return ', '.join(('%s' % human_size(a)) if a == b else ('%s-%s' % (human_size(a), human_size(b))) for a, b in sizes)


def _evidence_gap(result, rows, lo, hi):  # noqa: C901
    """Why the rows do not cover the target's range, or None: requested sizes absent, or a table that starts or
    ends inside the range where the log cannot say what it requested."""
    sweep = _sweep(result.get('header'))
    printed = sorted({r['size'] for r in rows})
    if sweep:
        want = [s for s in sweep if s >= lo and (hi is None or s <= hi)]
        missing = []
        for n, s in enumerate(want):
            below = sweep[sweep.index(s) - 1] if sweep.index(s) > 0 else -1
            # nccl-tests rounds each size down to whole elements (x ranks for all_gather): a printed size in (previous, s] is s
            if not any(below < p <= s for p in printed):
                if missing and missing[-1][1] == want[n - 1]:
                    missing[-1][1] = s
                else:
                    missing.append([s, s])
        if missing:
            return 'no evidence for sizes %s (requested by the header, minBytes %d maxBytes %d, absent from the log)' % (
                _ranges(missing), sweep[0], sweep[-1])
        return None
    if not printed:
        return None
    first, last = printed[0], printed[-1]
    # after its column header the first row is minBytes (src/common.cu TimeTest); only a paste that lost the header hides it
    if first > lo and 'the output starts inside the table' in ' '.join(result.get('truncated_reasons') or []):
        return 'the table starts at %d B (%s), inside the range, and the log does not show what was requested: no evidence for %s-%s' % (
            first, human_size(first), human_size(lo), human_size(first))
    if hi is None and result.get('avg_bus_bandwidth') is None and last >= lo:
        return 'the table ends at %d B (%s) without a footer, inside the range (up to the largest size): later sizes may be missing' % (
            last, human_size(last))
    return None


# DeltaMaxValue of NVIDIA/nccl-tests src/common.cu before 2.13 (v2.0.0..v2.11.0): the bound a max deviation is held to,
# times (nranks - 1); above it the run counts an error ("Out of bounds values").  Integer types: any deviation.
_DELTA_MAX = {'half': 1e-2, 'bfloat16': 1e-2, 'float': 1e-5, 'double': 1e-12}


def _gate_wrong(result, rows, label, max_wrong, require_correctness=True):  # noqa: C901
    out = []
    bad = []
    unchecked = []
    deviations = []
    coll = result.get('collective')
    ranks = result.get('ranks')
    # before 2.13 the footer counts the rows whose deviation broke the bound with the real rank count: "0 OK" vouches
    # for the delta cells when this log does not show the rank count (a visible violation with known ranks still fails)
    oob_ok = result.get('out_of_bounds_count') == 0 and result.get('wrong_column', '') and 'deviation' in (result.get('wrong_column') or '')

    def other_checked(r):
        # only sendrecv and alltoall(v) print N/A in place next to a checked out-of-place cell (src/<coll>.cu reportErrors)
        oop = r.get('out_of_place') or {}
        return oop.get('wrong') is not None or oop.get('max_delta') is not None
    for r in rows:
        for key in ('out_of_place', 'in_place'):
            half = r.get(key)
            if not half:
                continue
            wrong = half.get('wrong')
            never_checked = key == 'in_place' and (coll in V.INPLACE_UNCHECKED or (
                coll is None and other_checked(r)))
            if never_checked and coll in V.INPLACE_UNCHECKED:
                continue    # printed (a count in 2.13.0, a deviation before), but nccl-tests compares it with nothing
            if wrong is not None:
                if wrong > max_wrong:
                    bad.append('%d B %s: %d' % (r['size'], _PLACEMENT_TEXT[key], wrong))
            elif half.get('max_delta') is not None:
                if never_checked:
                    continue    # printed, but nccl-tests compares it with nothing (reportErrors = 0 in place)
                bound = _DELTA_MAX.get(r.get('type'), 0.0) * max(1, (ranks or 2) - 1)
                if half['max_delta'] > bound and not (oob_ok and not ranks):
                    deviations.append('%d B %s: %g (bound %g for %s%s)' % (
                        r['size'], _PLACEMENT_TEXT[key], half['max_delta'], bound, r.get('type'),
                        (', %d ranks' % ranks) if ranks else ', ranks unknown: 2 assumed'))
            elif not never_checked:
                # N/A where nccl-tests checks: the run had -c 0
                unchecked.append(r['size'])
    if bad:
        out.append('%s: #wrong above %d at %s%s' % (label, max_wrong, ', '.join(bad[:6]), ' ...' if len(bad) > 6 else ''))
    if deviations:
        out.append('%s: max deviation above nccl-tests\' bound at %s%s' % (label, ', '.join(deviations[:4]), ' ...' if len(deviations) > 4 else ''))
    if unchecked and require_correctness:
        out.append('%s: no correctness evidence: #wrong/error is N/A at %d cell(s), e.g. %d B (run with -c 1, '
                   'or set require_correctness: false)' % (label, len(unchecked), unchecked[0]))
    oob = result.get('out_of_bounds_count')
    if oob and oob > 0 and not bad:
        out.append('%s: Out of bounds values : %s' % (label, result.get('out_of_bounds')))
    return out


# ---------------------------------------------------------------------------
# module glue: the gate options nccl_result, nccl_compare and nccl_report share
# (documented once in plugins/doc_fragments/_nccl_gate.py; keep the two in step)
PLACEMENTS = V.PLACEMENTS

GATE_ARG_SPEC = {
    'targets': {
        'type': 'list', 'elements': 'dict',
        'options': {
            'min_size': {'type': 'raw', 'required': True},
            'max_size': {'type': 'raw'},
            # raw, so 'auto' (which needs the intent's hardware) is refused by gate_settings with its reason
            'min_busbw': {'type': 'raw', 'required': True},
            'placement': {'type': 'str', 'default': 'both', 'choices': list(V.PLACEMENTS)},
            'collective': {'type': 'str', 'choices': list(V.COLLECTIVES)},
            'gpu_model': {'type': 'str'},
        },
    },
    'fabric_targets': {'type': 'dict'},
    'require_transport': {'type': 'list', 'elements': 'str', 'choices': list(V.TRANSPORTS)},
    'require_gdr': {'type': 'bool'},
    'max_wrong': {'type': 'int', 'default': 0},
    'require_correctness': {'type': 'bool', 'default': True},
    'require_complete': {'type': 'bool', 'default': True},
    'accept_transport_errors': {'type': 'bool', 'default': False},
}


def size_option(value, path, errors):
    if value is None:
        return None
    try:
        return V.parse_size(value)
    except ValueError as exc:
        errors.append('%s: %s' % (path, exc))
        return None


def _busbw_option(bw, path, errors):
    """A hand-set target's min_busbw (the option is raw: Ansible's float would turn 'auto' into its own message) -> GB/s."""
    if isinstance(bw, str) and bw.strip().lower() == 'auto':
        errors.append("%s: 'auto' needs the launch's hardware, which a hand-set target does not carry: put it in the intent's "
                      "targets (fabric_plan derives it from the hosts' NICs) and pass fabric_targets, or give GB/s" % path)
        return bw
    if isinstance(bw, str):
        try:
            bw = float(bw)   # as Ansible's float type took '40' before
        except ValueError:
            pass
    if isinstance(bw, bool) or not isinstance(bw, (int, float)) or math.isnan(bw) or math.isinf(bw) or bw <= 0:
        errors.append('%s: %r is not a bus bandwidth (GB/s above 0)' % (path, bw))
    return bw


def gate_settings(params: dict, fabric=None, fabric_errors=()) -> tuple:
    """Module parameters (GATE_ARG_SPEC keys) -> (settings, errors).

    ``params['fabric_targets']`` arrives checked by the caller with the intent's own rules
    (``_intent._targets.fabric_targets``: the gate imports nothing of the intent, so the NCCL
    modules do not carry it): ``fabric`` is that section normalized (None when not given or
    invalid) and ``fabric_errors`` what was wrong with it, reported after the gate's own errors.
    settings: targets (normalized, each with collective or None), require_transport (list or None),
    require_gdr, max_wrong, require_correctness, require_complete, accept_transport_errors, tolerance_percent (from
    fabric_targets, or None) and active (the gate runs).
    Explicit options win over fabric_targets; explicit targets add to the intent's.
    ``require_complete`` defaults to true here, as in GATE_ARG_SPEC, so a caller that leaves it out
    gets the safe gate; the gate is off only when require_complete is false and nothing else is set.
    """
    errors = []
    targets = []
    for i, tgt in enumerate(params.get('targets') or []):
        path = 'targets[%d]' % i
        lo = size_option(tgt.get('min_size'), path + '.min_size', errors)
        hi = size_option(tgt.get('max_size'), path + '.max_size', errors)
        if lo is not None and hi is not None and lo > hi:
            errors.append('%s: min_size %d B is above max_size %d B' % (path, lo, hi))
        bw = _busbw_option(tgt.get('min_busbw'), path + '.min_busbw', errors)
        coll = tgt.get('collective')
        if coll is not None and V.collective_name(coll) is None:
            errors.append('%s.collective: %r is not one of %s' % (path, coll, ', '.join(V.COLLECTIVES)))
        model = tgt.get('gpu_model')
        if model is not None and (not isinstance(model, str) or not model.strip()):
            errors.append('%s.gpu_model: %r is not a GPU model name as nccl-tests prints it (e.g. NVIDIA H200)' % (path, model))
            model = None
        targets.append({'min_size': lo, 'max_size': hi, 'min_busbw': bw,
                        'placement': tgt.get('placement') or 'both', 'collective': V.collective_name(coll) if coll else None,
                        'gpu_model': model.strip() if model else None})
    settings = {
        'require_transport': params.get('require_transport') or None,
        'require_gdr': params.get('require_gdr'),
        'max_wrong': params.get('max_wrong') or 0,
        'require_correctness': params.get('require_correctness') is not False,
        'require_complete': params.get('require_complete') is not False,
        'accept_transport_errors': params.get('accept_transport_errors') is True,
        'tolerance_percent': None,
    }
    if settings['max_wrong'] < 0:
        errors.append('max_wrong: %d is below 0' % settings['max_wrong'])
    errors.extend(fabric_errors)
    if fabric is not None and not fabric_errors:
        targets.extend(_fabric_targets(fabric, settings))
    settings['targets'] = targets
    settings['active'] = bool(params.get('targets') is not None or params.get('fabric_targets') is not None or settings['require_transport']
                              or settings['require_gdr'] is not None or settings['require_complete'])
    return settings, errors


def _fabric_targets(section, settings):
    """The fabric intent's ``targets`` section, as ``_intent._targets.fabric_targets`` normalized it -> gate targets."""
    settings['tolerance_percent'] = float(section['tolerance_percent'])
    if settings['require_transport'] is None and section['require_transport'] is not None:
        settings['require_transport'] = [section['require_transport']]
    if settings['require_gdr'] is None:
        settings['require_gdr'] = section['require_gdr']
    out = []
    for binary in sorted(section['collectives']):
        for ent in section['collectives'][binary]:
            tgt = {'min_size': ent['min_size'], 'max_size': ent['max_size'], 'min_busbw': float(ent['min_busbw']),
                   'placement': 'both', 'collective': V.collective_name(binary)}
            if ent.get('auto'):
                tgt['auto'] = dict(ent['auto'])  # how fabric_plan derived it (min_busbw: auto): the report prints it
            out.append(tgt)
    return out


def gate_report(result: dict, settings: dict, prefix: str = '') -> dict:
    """{passed, unmet (one line each), checked ([{requirement, passed, measured}])} of one result under ``settings``."""
    checks = _gate_checks(result, settings['targets'], settings['require_transport'], settings['require_gdr'],
                          settings['max_wrong'], settings['require_complete'], settings.get('require_correctness', True),
                          settings.get('accept_transport_errors', False))
    coll = (result or {}).get('collective')
    targets = settings['targets']
    if coll is not None and targets and all(t.get('collective') and t['collective'] != coll for t in targets):
        # targets exist, but none for this collective: a busbw gate that checks nothing must not pass
        wanted = sorted({t['collective'] for t in targets})
        checks.insert(1, {'requirement': '%s: a busbw target for %s' % (gate_label(coll), coll), 'passed': False, 'measured': coll,
                          'line': '%s: no busbw target applies to %s (targets exist for: %s)' % (gate_label(coll), coll, ', '.join(wanted))})
    model = (result or {}).get('gpu_model')
    if model is not None and targets and all(t.get('gpu_model') for t in targets) and \
            not any(same_gpu_model(t['gpu_model'], model) for t in targets):
        # per-model targets, none for this node's GPUs: a node baseline that checks nothing must not pass
        wanted = sorted({t['gpu_model'] for t in targets})
        checks.insert(1, {'requirement': '%s: a busbw target for %s' % (gate_label(coll), model), 'passed': False, 'measured': model,
                          'line': '%s: no busbw target applies to GPU model %s (targets exist for: %s)' % (
                              gate_label(coll), model, ', '.join(wanted))})
    unmet = [prefix + c['line'] for c in checks if c['line']]
    checked = []
    for c in checks:
        if checked and checked[-1]['requirement'] == c['requirement']:
            continue    # a requirement with several unmet lines is one entry
        checked.append({'requirement': prefix + c['requirement'], 'passed': c['passed'], 'measured': c['measured']})
    return {'passed': not unmet, 'unmet': unmet, 'checked': checked}


# ---------------------------------------------------------------------------
# module glue: launches for nccl_compare


# ---------------------------------------------------------------------------
# counter evidence (issue 34): the run rode the lossless class, or the gate fails however high the busbw

EVIDENCE_PREFIX = 'counter evidence: '


def evidence_unmet(findings) -> list:
    """One unmet line per blocking counter finding (_common/_evidence.judge: each names the device, the port or NIC, the
    counter and the delta). A run whose busbw passes still fails on these: a fabric that is fast only because the run
    left the lossless class (PFC off its priority, ECN without CNPs) is not the fabric the plan promises."""
    return [EVIDENCE_PREFIX + str(f.get('message')) for f in findings or [] if isinstance(f, dict) and f.get('severity') == 'blocking']


def evidence_verdict_note(busbw_unmet, evidence_lines) -> str | None:
    """What the verdict rests on when the counters speak: None when they have nothing blocking."""
    if not evidence_lines:
        return None
    if busbw_unmet:
        return 'fail: the busbw gate and the counter evidence (%d blocking finding(s))' % len(evidence_lines)
    return ('fail on the counter evidence alone: bus bandwidth met its targets, but %d blocking finding(s) show the run '
            'off the lossless class' % len(evidence_lines))
