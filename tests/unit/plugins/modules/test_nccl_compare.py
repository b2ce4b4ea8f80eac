# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.nccl_compare run through main(): regression, no change, too few launches, transport change, targets."""
from __future__ import annotations

import json
import os
import sys

import pytest
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.modules import nccl_compare

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
CORPUS = os.path.join(REPO, 'tests', 'data', 'nccl-corpus')

GIB = 1 << 30


def run(args):
    """main() with ``args``; returns (failed, result)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            nccl_compare.main()
    return exc.value.code != 0, exc.value.result


@pytest.fixture(autouse=True)
def _capture(monkeypatch, capsys):
    """Keep the JSON main() prints and hand it back on the SystemExit."""

    def fake_exit(code=0):
        err = SystemExit(code)
        err.result = json.loads(capsys.readouterr().out)
        raise err

    monkeypatch.setattr(sys, 'exit', fake_exit)
    # warnings are process-global in a module; each run starts with none, as a real module process does
    monkeypatch.setattr(ansible_warnings, '_global_warnings', {})
    monkeypatch.setattr(ansible_warnings, '_global_deprecations', {})


def log(busbw_1g, busbw_512m=None, wrong=0):
    """A complete all_reduce_perf log (2.17 layout, 16 ranks) with the given busbw at 512 MiB and 1 GiB."""
    busbw_512m = busbw_1g * 0.98 if busbw_512m is None else busbw_512m
    lines = [
        '# nThread 1 nGpus 1 minBytes 536870912 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0',
        '#',
        '#                                                              out-of-place                       in-place          ',
        '#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong',
        '#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ',
    ]
    for size, bus in ((GIB // 2, busbw_512m), (GIB, busbw_1g)):
        alg = bus / 1.875
        time_us = size / alg / 1e3
        lines.append('%12d  %12d     float     sum      -1  %7.1f  %6.2f  %6.2f  %5d  %7.1f  %6.2f  %6.2f  %5d' % (
            size, size // 4, time_us, alg, bus, wrong, time_us, alg, bus, 0))
    lines += ['# Out of bounds values : 0 OK', '# Avg bus bandwidth    : %.4f ' % busbw_1g, '#', '']
    return '\n'.join(lines)


def parsed(busbw_1g, transport='RoCE', gdr=True, **kwargs):
    """An nccl_result result (what ``register`` holds) with the transport and GPUDirect the debug lines would prove."""
    res = _nccl_parse.parse(log(busbw_1g, **kwargs))
    res['transport'] = transport
    res['gdr_active'] = gdr
    res['parse_warnings'] = res.pop('warnings')
    res.update(changed=False, failed=False, item='x', ansible_loop_var='item')
    return res


PRE = (380.1, 382.4, 379.2, 381.0, 383.3)
SAME = (381.2, 380.0, 382.5, 379.8, 383.0)
DROP = (300.2, 302.9, 299.4, 301.1, 303.0)


def test_synthetic_log_parses_complete():
    res = _nccl_parse.parse(log(380.0))
    assert res['complete'] and res['collective'] == 'all_reduce' and res['largest_size_bytes'] == GIB


def test_clear_regression_fails():
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v) for v in DROP]})
    assert failed and res['verdict'] == 'regressed' and res['changed'] is False
    ent = res['sizes'][0]
    assert ent['size'] == GIB and ent['verdict'] == 'regressed'
    assert ent['pre_median'] == pytest.approx(381.0) and ent['post_median'] == pytest.approx(301.1)
    assert ent['hl_ratio'] < ent['ci_high'] < 1.0 and ent['p_value'] < 0.01
    line = res['msg'].splitlines()[0]
    assert line.startswith('all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): regressed: post median 301.10 GB/s vs pre median 381.00 GB/s')
    assert 'threshold 5.0%' in line


def test_no_change_passes_with_raw_logs_and_command_results():
    pre = [log(v) for v in PRE]
    post = [{'stdout': log(v), 'rc': 0, 'changed': True} for v in SAME]
    failed, res = run({'pre': pre, 'post': post})
    assert not failed, res.get('msg')
    assert res['verdict'] == 'ok' and res['sizes'][0]['verdict'] == 'ok' and res['unmet'] == []
    assert res['n_pre'] == 5 and res['n_post'] == 5 and res['notes'] == []


def test_three_vs_three_is_inconclusive_and_fails_unless_allowed():
    args = {'pre': [parsed(v) for v in PRE[:3]], 'post': [parsed(v) for v in DROP[:3]]}
    failed, res = run(args)
    assert failed and res['verdict'] == 'inconclusive'
    assert 'inconclusive (3 pre vs 3 post launches)' in res['msg'] and 'cannot be reached' in res['msg']
    assert "pre: 3 launch(es); 5 a side is the default" in json.dumps(res['notes'])
    failed, res = run(dict(args, allow_inconclusive=True))
    assert not failed and res['verdict'] == 'inconclusive'


def test_transport_change_fails():
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v, transport='Socket') for v in SAME]})
    assert failed and res['verdict'] == 'ok'
    assert res['transport'] == {'pre': ['RoCE'], 'post': ['Socket'], 'changed': True}
    assert res['msg'] == 'all_reduce_perf: transport changed: pre RoCE, post Socket'


def test_gdr_change_fails():
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v, gdr=False) for v in SAME]})
    assert failed and 'gdr_active changed: pre True, post False' in res['msg']


def test_post_below_absolute_target_fails():
    args = {'pre': [parsed(v) for v in PRE], 'post': [parsed(v) for v in SAME],
            'targets': [{'min_size': '1G', 'min_busbw': 385, 'placement': 'out_of_place'}]}
    failed, res = run(args)
    assert failed and res['verdict'] == 'ok'
    assert res['msg'] == ('post (median of 5 launch(es)): all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): '
                          '381.20 GB/s < target 385.00 GB/s')
    assert res['gate']['passed'] is False
    assert res['sizes'][0]['target_busbw_gbps'] == 385 and res['sizes'][0]['post_median_meets_target'] is False


def test_fabric_targets_sizes_tolerance_and_transport():
    fabric = {'tolerance_percent': 30, 'require_transport': 'RoCE', 'require_gdr': True,
              'collectives': {'all_reduce_perf': [{'min_size': 1 << 29, 'max_size': None, 'min_busbw': 250.0}]}}
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v) for v in DROP], 'fabric_targets': fabric})
    # a 21 % drop is within the intent's 30 % tolerance, and 300 GB/s meets the 250 GB/s target at both sizes
    assert not failed, res.get('msg')
    assert res['tolerance_percent'] == 30 and [s['size'] for s in res['sizes']] == [GIB // 2, GIB]
    assert all(c['passed'] for c in res['gate']['checked'])
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v) for v in DROP], 'fabric_targets': fabric,
                       'tolerance_percent': 5, 'sizes': ['1G']})
    assert failed and [s['size'] for s in res['sizes']] == [GIB] and res['verdict'] == 'regressed'
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v, transport='unknown') for v in PRE], 'fabric_targets': fabric})
    assert failed and 'post (median of 5 launch(es)): all_reduce_perf: transport unknown is not proven to be RoCE' in res['msg']


def test_post_wrong_fails_the_absolute_gate():
    failed, res = run({'pre': [parsed(v) for v in PRE], 'post': [parsed(v, wrong=2) for v in SAME], 'targets': []})
    assert failed and '#wrong above 0 at 536870912 B out-of-place: 2' in res['msg']


def test_corpus_launches_via_nccl_result_shape():
    path = os.path.join(CORPUS, 'deepops_netop_dgxa100_2node_hdr.txt')
    with open(path, encoding='utf-8') as fh:
        text = fh.read()
    # the same log five times: no spread at all, so the verdict is ok
    failed, res = run({'pre': [text] * 5, 'post': [text] * 5, 'sizes': [GIB, '4G']})
    assert not failed, res.get('msg')
    assert [s['verdict'] for s in res['sizes']] == ['ok', 'ok']


def test_bad_input_is_an_argument_error():
    failed, res = run({'pre': [{'foo': 1}], 'post': [5], 'sizes': ['1GB'], 'alpha': 0.7})
    assert failed
    lines = res['msg'].splitlines()
    assert "sizes[0]: '1GB' is not a size" in lines[0]
    assert any(line.startswith('alpha:') for line in lines)
    assert 'pre[0]: a mapping without rows, stdout or content is not an nccl_result result' in lines
    assert 'post[0]: int is not a log or an nccl_result result' in lines


def test_empty_side_fails_even_when_inconclusive_is_allowed():
    failed, res = run({'pre': [], 'post': [parsed(v) for v in SAME], 'allow_inconclusive': True})
    assert failed and 'pre: no launches to compare' in res['msg']
