# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Pre/post comparison of nccl-tests launches with exact Mann-Whitney statistics (no SciPy).

Pure Python standard library; no Ansible imports.  ``compare`` judges the
change; ``compare_report`` adds the absolute gate on the post medians.
"""
from __future__ import annotations

import math

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as V

human_size = V.human_size

# ---------------------------------------------------------------------------
# compare: exact Mann-Whitney statistics without SciPy
#
# Samples are launches: one out-of-place busbw per launch and size (the
# median when a launch printed the size more than once).  Ties: the p-value
# is the exact permutation distribution of the rank sum with mid-ranks,
# conditional on the observed tie pattern (counting, by dynamic programming,
# the subsets of the pooled ranks).  The Hodges-Lehmann interval uses the
# untied Mann-Whitney distribution; with ties it is approximate.
# Noise = (max - min) / median of the pre launches, in percent.

_EXACT_LIMIT = 120    # pooled samples beyond this use the normal approximation


def _median(vals):
    s = sorted(vals)
    n = len(s)
    if not n:
        return None
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2.0


def _ranksum_counts(scores, m):
    """counts[s] = number of m-subsets of ``scores`` (ints) whose sum is s."""
    total = sum(scores)
    dp = [[0] * (total + 1) for _row in range(m + 1)]
    dp[0][0] = 1
    for i, sc in enumerate(scores):
        for j in range(min(i + 1, m), 0, -1):
            prev = dp[j - 1]
            cur = dp[j]
            for s in range(total - sc, -1, -1):
                if prev[s]:
                    cur[s + sc] += prev[s]
    return dp[m]


def mann_whitney_less(pre, post):
    """Exact one-sided p-value for H1: post < pre, and the smallest p-value the sample sizes allow."""
    n, m = len(pre), len(post)
    pooled = sorted([(v, 0) for v in pre] + [(v, 1) for v in post])
    # doubled mid-ranks stay integers
    ranks2 = [0] * len(pooled)
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks2[k] = i + j + 2
        i = j + 1
    w_obs = sum(r for r, (_v, g) in zip(ranks2, pooled) if g == 1)
    if n + m > _EXACT_LIMIT:
        return _normal_p(ranks2, m, w_obs), 0.0, 'normal approximation'
    counts = _ranksum_counts(ranks2, m)
    total = sum(counts)
    below = sum(counts[:w_obs + 1])
    first = next(c for c in counts if c)
    return below / total, first / total, 'exact'


def _normal_p(ranks2, m, w_obs):
    big_n = len(ranks2)
    mean = m * sum(ranks2) / big_n
    mu2 = sum(r * r for r in ranks2) / big_n - (sum(ranks2) / big_n) ** 2
    var = m * (big_n - m) / (big_n - 1) * mu2 if big_n > 1 else 0.0
    if var <= 0:
        return 1.0
    z = (w_obs + 1 - mean) / math.sqrt(var)    # continuity correction (doubled ranks: step 2)
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _u_cdf(n, m):
    """P(U <= u) for the untied Mann-Whitney U with sizes n, m; list indexed by u."""
    counts = _ranksum_counts(list(range(1, n + m + 1)), m)
    base = m * (m + 1) // 2
    u_counts = counts[base:base + n * m + 1]
    total = sum(u_counts)
    cdf = []
    acc = 0
    for c in u_counts:
        acc += c
        cdf.append(acc / total)
    return cdf


def hodges_lehmann_ratio(pre, post, alpha=0.05):
    """HL estimate of post/pre on the log scale and its exact two-sided (1-alpha) interval."""
    diffs = sorted(math.log(b) - math.log(a) for a in pre for b in post if a > 0 and b > 0)
    if not diffs:
        return None, None, None, None
    est = math.exp(_median(diffs))
    n, m = len(pre), len(post)
    if n + m > _EXACT_LIMIT:
        return est, None, None, None
    cdf = _u_cdf(n, m)
    # largest k with P(U <= k-1) <= alpha/2: the interval is [d_(k), d_(nm+1-k)]
    k = 0
    while k < len(cdf) and cdf[k] <= alpha / 2:
        k += 1
    if k == 0:
        return est, None, None, None
    level = 1 - 2 * cdf[k - 1]
    return est, math.exp(diffs[k - 1]), math.exp(diffs[len(diffs) - k]), level


def _launch_values(result, size, key='out_of_place'):
    vals = []
    for r in (result or {}).get('rows') or []:
        if r['size'] == size:
            half = r.get(key)
            if half and half.get('busbw') is not None:
                vals.append(half['busbw'])
    return _median(vals) if vals else None


def compare(pre: list, post: list, sizes=None, tolerance_percent: float = 5.0, targets=None, alpha: float = 0.05) -> dict:
    """Compare launches before and after a change, per gated size.

    ``pre``/``post`` are lists of ``parse`` results, one per launch.  Sizes:
    ``sizes`` if given, else every size that a target covers and all
    launches printed, else the largest size all launches printed.

    Returns {'verdict': 'ok'|'regressed'|'inconclusive', 'sizes': [per-size
    dicts], 'flags': [...], 'transport': {'pre': [...], 'post': [...],
    'changed': bool}, 'gdr_active': {... same ...}, 'noise_definition': str}.
    Per size: size, size_human, pre, post (samples), n_pre, n_post,
    pre_median, post_median, ratio (post/pre medians), hl_ratio,
    ci_low, ci_high, ci_level, p_value, min_p_value, noise_percent,
    threshold_percent, change_percent, verdict, reason.
    """
    pre = [r for r in (pre or []) if isinstance(r, dict)]
    post = [r for r in (post or []) if isinstance(r, dict)]
    if sizes is None:
        sizes = _default_sizes(pre + post, targets)
    out_sizes = []
    for size in sizes or []:
        out_sizes.append(_compare_size(pre, post, int(size), float(tolerance_percent), alpha, targets))
    flags = []
    res = {'sizes': out_sizes, 'flags': flags, 'tolerance_percent': float(tolerance_percent), 'alpha': alpha,
           'noise_definition': 'noise_percent = 100 * (max - min) / median of the pre launches (out-of-place busbw); '
                               'threshold_percent = max(tolerance_percent, 2 * noise_percent)'}
    for key in ('transport', 'gdr_active'):
        pre_v = sorted({str(r.get(key, 'unknown')) for r in pre})
        post_v = sorted({str(r.get(key, 'unknown')) for r in post})
        changed = pre_v != post_v
        res[key] = {'pre': pre_v, 'post': post_v, 'changed': changed}
        if changed:
            flags.append('%s changed: pre %s, post %s' % (key, '/'.join(pre_v) or '-', '/'.join(post_v) or '-'))
    if not out_sizes:
        res['verdict'] = 'inconclusive'
        res['reason'] = 'no size is present in every launch'
    elif any(s['verdict'] == 'regressed' for s in out_sizes):
        res['verdict'] = 'regressed'
    elif any(s['verdict'] == 'inconclusive' for s in out_sizes):
        res['verdict'] = 'inconclusive'
    else:
        res['verdict'] = 'ok'
    return res


def _default_sizes(results, targets):
    if not results:
        return []
    common = None
    for r in results:
        sizes = {row['size'] for row in r.get('rows') or []}
        common = sizes if common is None else common & sizes
    common = sorted(common or [])
    if not common:
        return []
    if targets:
        picked = [s for s in common if any(
            isinstance(t, dict) and s >= int(t.get('min_size') or 0) and (t.get('max_size') is None or s <= int(t['max_size']))
            for t in targets)]
        if picked:
            return picked
    return [common[-1]]


def launch_samples(result, size, key='out_of_place'):
    """The samples one launch gives at ``size``: one per -N cycle (the parser's ``cycle`` of each row; src/common.cu
    TimeTest prints the whole sweep once per cycle), else the one value ``_launch_values`` gives. [] when none."""
    if (result or {}).get('cycles', 1) > 1:
        per = {}
        for r in result.get('rows') or []:
            half = r.get(key)
            if r['size'] == size and half and half.get('busbw') is not None:
                per.setdefault(r.get('cycle', 1), []).append(half['busbw'])
        return [_median(per[c]) for c in sorted(per)]
    val = _launch_values(result, size, key)
    return [] if val is None else [val]


def _compare_size(pre, post, size, tolerance, alpha, targets):  # noqa: C901
    pre_s = [launch_samples(r, size) for r in pre]
    post_s = [launch_samples(r, size) for r in post]
    a = [v for vals in pre_s for v in vals]
    b = [v for vals in post_s for v in vals]
    ent = {'size': size, 'size_human': human_size(size), 'pre': a, 'post': b, 'n_pre': len(a), 'n_post': len(b),
           'missing_pre': sum(1 for v in pre_s if not v), 'missing_post': sum(1 for v in post_s if not v),
           'pre_median': _median(a), 'post_median': _median(b), 'ratio': None, 'hl_ratio': None,
           'ci_low': None, 'ci_high': None, 'ci_level': None, 'p_value': None, 'min_p_value': None,
           'noise_percent': None, 'threshold_percent': None, 'change_percent': None}
    for t in targets or []:
        if isinstance(t, dict) and size >= int(t.get('min_size') or 0) and (t.get('max_size') is None or size <= int(t['max_size'])):
            ent['target_busbw_gbps'] = float(t.get('min_busbw', 0))
            ent['post_median_meets_target'] = ent['post_median'] is not None and ent['post_median'] >= ent['target_busbw_gbps']
    if not a or not b:
        ent['verdict'] = 'inconclusive'
        ent['reason'] = 'no %s samples at this size' % ('pre' if not a else 'post')
        return ent
    if ent['pre_median'] > 0:
        ent['ratio'] = ent['post_median'] / ent['pre_median']
        ent['noise_percent'] = 100.0 * (max(a) - min(a)) / ent['pre_median']
    threshold = max(tolerance, 2.0 * (ent['noise_percent'] or 0.0))
    ent['threshold_percent'] = threshold
    p, min_p, method = mann_whitney_less(a, b)
    if method == 'exact':
        # the bound the sample sizes set (1 / C(n+m, m)); the tie-conditional bound can be 1 when all values tie,
        # and that says nothing about how many launches are needed
        min_p = 1.0 / math.comb(len(a) + len(b), len(b))
    ent['p_value'] = p
    ent['min_p_value'] = min_p
    ent['test'] = method
    est, lo, hi, level = hodges_lehmann_ratio(a, b, alpha)
    ent['hl_ratio'], ent['ci_low'], ent['ci_high'], ent['ci_level'] = est, lo, hi, level
    if est is None:
        ent['verdict'] = 'inconclusive'
        ent['reason'] = 'busbw is zero: nothing to compare'
        return ent
    drop = (1.0 - est) * 100.0
    ent['change_percent'] = -drop
    if method == 'exact' and min_p >= alpha:
        ent['verdict'] = 'inconclusive'
        ent['reason'] = ('with %d pre and %d post launches the smallest possible exact one-sided p-value is %.3g, '
                         'so p < %g cannot be reached; run more launches (4 vs 4 or more)' % (len(a), len(b), min_p, alpha))
        return ent
    if p < alpha:
        if drop > threshold:
            ent['verdict'] = 'regressed'
            ent['reason'] = 'busbw dropped %.1f%% (HL estimate), beyond the %.1f%% threshold, p=%.3g' % (drop, threshold, p)
        else:
            ent['verdict'] = 'ok'
            ent['reason'] = 'a significant but small drop of %.1f%% (threshold %.1f%%)' % (drop, threshold)
        return ent
    if lo is not None and lo >= 1.0 - threshold / 100.0:
        ent['verdict'] = 'ok'
        ent['reason'] = 'no significant drop (p=%.3g); the %.0f%% interval excludes a drop beyond %.1f%%' % (p, 100 * level, threshold)
    else:
        ent['verdict'] = 'inconclusive'
        ent['reason'] = 'no significant drop (p=%.3g), but the interval [%s, %s] cannot exclude a drop beyond %.1f%%' % (
            p, '-' if lo is None else '%.3f' % lo, '-' if hi is None else '%.3f' % hi, threshold)
    return ent


def median_result(results: list) -> dict:
    """Several launches as one result: per size that every launch printed, the median of each number and the
    largest #wrong; transport, GPUDirect and collective only when every launch agrees."""
    results = [r for r in results if isinstance(r, dict)]
    common = None
    for r in results:
        sizes = {row['size'] for row in r.get('rows') or []}
        common = sizes if common is None else common & sizes
    rows = []
    for size in sorted(common or []):
        per = [next(row for row in r['rows'] if row['size'] == size) for r in results]
        row = {k: per[0].get(k) for k in ('size', 'count', 'type', 'redop', 'root')}
        for key in ('out_of_place', 'in_place'):
            halves = [p.get(key) for p in per]
            if any(h is None for h in halves):
                row[key] = None
                continue
            half = {}
            for num in ('time_us', 'algbw', 'busbw'):
                vals = [h.get(num) for h in halves]
                half[num] = None if any(v is None for v in vals) else _median(vals)
            wrongs = [h.get('wrong') for h in halves]
            half['wrong'] = None if any(w is None for w in wrongs) else max(wrongs)
            deltas = [h.get('max_delta') for h in halves if h.get('max_delta') is not None]
            half['max_delta'] = max(deltas) if deltas else None
            row[key] = half
        rows.append(row)

    def agreed(key, default):
        vals = {str(r.get(key, default)) for r in results}
        if len(vals) != 1:
            return default
        return results[0].get(key, default)

    oob = [r for r in results if r.get('out_of_bounds_count')]
    oob_worst = max(oob, key=lambda r: r['out_of_bounds_count']) if oob else None
    out = {
        'rows': rows, 'size_rows': len(rows), 'largest_size_bytes': rows[-1]['size'] if rows else None,
        'collective': agreed('collective', None), 'transport': agreed('transport', 'unknown'),
        'gdr_active': agreed('gdr_active', 'unknown'),
        'transport_evidence': ['launch %d: %s' % (i + 1, r.get('transport', 'unknown')) for i, r in enumerate(results)],
        'gdr_evidence': ['launch %d: %s' % (i + 1, r.get('gdr_active', 'unknown')) for i, r in enumerate(results)],
        'failures': list(dict.fromkeys(f for r in results for f in r.get('failures') or [])),
        'independent_runs': any(r.get('independent_runs') for r in results),
        'complete': bool(results) and all(r.get('complete') for r in results),
        'truncated_reasons': ['launch %d: %s' % (i + 1, reason) for i, r in enumerate(results) for reason in r.get('truncated_reasons') or []],
        'out_of_bounds_count': oob_worst['out_of_bounds_count'] if oob_worst else None,
        'out_of_bounds': oob_worst.get('out_of_bounds') if oob_worst else None,
        # what the gate's evidence checks read: the requested sweep, the footer, damaged rows, rank count
        'header': agreed('header', None),
        'avg_bus_bandwidth': 'median' if results and all(r.get('avg_bus_bandwidth') is not None for r in results) else None,
        'damaged_rows': [dict(d, reason='launch %d: %s' % (i + 1, d.get('reason'))) for i, r in enumerate(results) for d in r.get('damaged_rows') or []],
        'independent_reasons': ['launch %d: %s' % (i + 1, why) for i, r in enumerate(results) for why in r.get('independent_reasons') or []],
        'ranks': agreed('ranks', None), 'wrong_column': agreed('wrong_column', None),
    }
    return out


def compare_report(pre: list, post: list, settings: dict, sizes=None, tolerance_percent=None, alpha=0.05,
                   allow_inconclusive=False) -> dict:
    """``compare`` plus the absolute gate on the post medians; ``unmet`` holds one line per reason to fail."""
    tol = tolerance_percent if tolerance_percent is not None else settings.get('tolerance_percent')
    tol = 5.0 if tol is None else float(tol)
    colls = {r.get('collective') for r in pre + post}
    coll = next(iter(colls)) if len(colls) == 1 else None
    targets = [t for t in settings['targets'] if t.get('collective') in (None, coll)]
    res = compare(pre, post, sizes, tol, targets, alpha)
    res['collective'] = coll
    res['n_pre'] = len(pre)
    res['n_post'] = len(post)
    label = _nccl_gate.gate_label(coll)
    unmet = []
    notes = []
    for side, launches in (('pre', pre), ('post', post)):
        if not launches:
            unmet.append('%s: %s: no launches to compare' % (label, side))
        elif len(launches) < 5:
            notes.append('%s: %d launch(es); 5 a side is the default, and with 3 or fewer a side no drop can be significant (p < %g)' % (
                side, len(launches), alpha))
    res['compare_warnings'] = notes
    if len(colls) > 1:
        unmet.append('%s: pre and post ran different collectives: %s' % (label, ', '.join(sorted(str(c) for c in colls))))
    for ent in res['sizes']:
        where = '%s out-of-place busbw at %d B (%s)' % (label, ent['size'], ent['size_human'])
        if ent['verdict'] == 'regressed':
            unmet.append('%s: regressed: post median %.2f GB/s vs pre median %.2f GB/s, post/pre %.3f (%s), p=%.3g; '
                         'drop %.1f%% > threshold %.1f%% (tolerance %.1f%%, 2 x pre noise %.1f%%)' % (
                             where, ent['post_median'], ent['pre_median'], ent['hl_ratio'], _ci_text(ent), ent['p_value'],
                             -ent['change_percent'], ent['threshold_percent'], tol, 2 * (ent['noise_percent'] or 0.0)))
        elif ent['verdict'] == 'inconclusive' and not allow_inconclusive:
            unmet.append('%s: inconclusive (%d pre vs %d post launches): %s' % (where, ent['n_pre'], ent['n_post'], ent['reason']))
    if pre and post and not res['sizes'] and not allow_inconclusive:
        unmet.append('%s: inconclusive: %s' % (label, res['reason']))
    for flag in res['flags']:
        unmet.append('%s: %s' % (label, flag))
    if settings.get('active'):
        res['gate'] = _nccl_gate.gate_report(median_result(post), settings, 'post (median of %d launch(es)): ' % len(post))
        unmet.extend(res['gate']['unmet'])
    res['unmet'] = unmet
    return res


def _ci_text(ent):
    if ent.get('ci_low') is None:
        return 'no interval'
    return '%.0f%% CI %.3f..%.3f' % (100 * ent['ci_level'], ent['ci_low'], ent['ci_high'])


def tenant_verdict(res: dict, tenant: str) -> dict:
    """A tenant's launches (``post``) held against the host baseline of the same hosts (``pre``), in words.

    ``res`` is ``compare``'s (or ``compare_report``'s) result. 'tenant X at bare-metal speed' when every size is ok;
    'tenant X slower by N %' when a size regressed (N: the largest Hodges-Lehmann drop among the regressed sizes,
    the statistic the regression verdict rests on); otherwise 'inconclusive' with the first size's reason.
    Returns {'tenant', 'verdict': bare_metal|slower|inconclusive, 'slower_percent', 'size', 'text'}."""
    sizes = res.get('sizes') or []
    out = {'tenant': tenant, 'verdict': 'inconclusive', 'slower_percent': None, 'size': None}
    regressed = [s for s in sizes if s.get('verdict') == 'regressed' and s.get('change_percent') is not None]
    if regressed:
        worst = min(regressed, key=lambda s: s['change_percent'])
        out.update(verdict='slower', slower_percent=round(-worst['change_percent'], 1), size=worst['size'])
        out['text'] = 'tenant %s slower by %.1f %% than the host baseline (at %s: %.2f vs %.2f GB/s, p=%.3g)' % (
            tenant, -worst['change_percent'], worst['size_human'], worst['post_median'], worst['pre_median'], worst['p_value'])
    elif sizes and all(s.get('verdict') == 'ok' for s in sizes) and not res.get('flags'):
        worst = min(sizes, key=lambda s: s['change_percent'])
        out.update(verdict='bare_metal', size=worst['size'])
        out['text'] = 'tenant %s at bare-metal speed (largest change %+.1f %% at %s, within %.1f %%)' % (
            tenant, worst['change_percent'] or 0.0, worst['size_human'], worst['threshold_percent'])  # no '-0.0'
    else:
        why = next((s.get('reason') for s in sizes if s.get('verdict') != 'ok'), None) or res.get('reason') or '; '.join(res.get('flags') or [])
        out['text'] = 'tenant %s: inconclusive against the host baseline: %s' % (tenant, why or 'nothing to compare')
    return out
