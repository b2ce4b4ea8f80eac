# SPDX-License-Identifier: GPL-3.0-or-later
"""Real nccl-tests pastes from GitHub issues (tests/data/nccl-issues, sources in SOURCES.md) against their ground truth."""
from __future__ import annotations

import glob
import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(HERE, '..', '..', '..', '..', 'tests', 'data', 'nccl-issues')
NAMES = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(DATA, '*.txt')))


def _case(name):
    with open(os.path.join(DATA, name + '.txt'), encoding='utf-8') as fh:
        text = fh.read()
    with open(os.path.join(DATA, name + '.json'), encoding='utf-8') as fh:
        truth = json.load(fh)
    return text, truth, _nccl_parse.parse(text)


def test_every_paste_has_its_source():
    assert len(NAMES) >= 3
    with open(os.path.join(DATA, 'SOURCES.md'), encoding='utf-8') as fh:
        sources = fh.read()
    for name in NAMES:
        _text, truth, _res = _case(name)
        assert truth['source_url'].startswith('https://github.com/') and truth['source_url'] in sources


@pytest.mark.parametrize('name', NAMES)
def test_ground_truth(name):
    _text, truth, res = _case(name)
    for field in ('independent_runs', 'size_rows', 'collective', 'ranks'):
        if field in truth:
            assert res[field] == truth[field], field
    for field in ('avg_bus_bandwidth', 'out_of_bounds'):
        if field in truth:
            assert res[field] == truth[field], field
    if 'damaged_rows' in truth:
        assert len(res['damaged_rows']) == truth['damaged_rows'], res['damaged_rows']
    if 'wrong_column' in truth:
        assert res['wrong_column'].split()[0] == truth['wrong_column']
    if 'max_delta' in truth:
        assert max(h['max_delta'] for r in res['rows'] for h in (r['out_of_place'], r['in_place'])) == truth['max_delta']
    settings, errors = _nccl_gate.gate_settings({})
    assert not errors
    assert _nccl_gate.gate_report(res, settings)['passed'] is truth['gate_passes']


def test_two_processes_under_mpirun_are_refused_as_one_benchmark():
    _text, _truth, res = _case('ncclt107_two_processes_rank0_twice')
    settings, _errors = _nccl_gate.gate_settings({'targets': [{'min_size': 1, 'min_busbw': 1}]})
    unmet = _nccl_gate.gate_report(res, settings)['unmet']
    assert any('several independent runs, not one multi-node benchmark (several headers or device lists that each start at rank 0)' in u
               for u in unmet)


def test_pre_213_deviation_within_the_bound_is_not_a_failure():
    _text, _truth, res = _case('nccl318_p3dn_v100_error_column')
    lines = _nccl_gate.gate(res, [], require_complete=False)
    assert lines == []


def test_tagged_rows_are_read():
    _text, _truth, res = _case('awsk8stester503_tagged_rows')
    assert [r['size'] for r in res['rows']] == [8, 16, 32]
    assert res['rows'][2]['out_of_place']['time_us'] == 22.25 and res['wrong_column'].startswith('#wrong')
