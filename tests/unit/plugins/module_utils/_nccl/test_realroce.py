# SPDX-License-Identifier: GPL-3.0-or-later
"""Real RoCE nccl-tests logs with NCCL_DEBUG=INFO lines (CCI-MOC/roce-testing, sources in tests/data/nccl-corpus/*.json).

They are the only complete real RoCE logs in reach whose own lines prove the transport (``NET/IB : Using
[0]mlx5_5:1/RoCE``) and whether GPUDirect RDMA carried the network channels (``via NET/IB/1/GDRDMA/Shared`` or not):
the lab's passing replay is the all_reduce one (tests/lab/nccl/README.md).
"""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(HERE, '..', '..', '..', '..', 'tests', 'data', 'nccl-corpus')
ALLREDUCE = 'cci_moc_h100_2node_roce_allreduce_nogdr'
SENDRECV = 'cci_moc_h100_2node_roce_sendrecv_nogdr'
SENDRECV_GDR = 'cci_moc_h100_2node_4gpu_roce_sendrecv_gdrdma'
GIB = 1 << 30


def _text(name):
    with open(os.path.join(CORPUS, name + '.txt'), encoding='utf-8') as fh:
        return fh.read()


def _truth(name):
    with open(os.path.join(CORPUS, name + '.json'), encoding='utf-8') as fh:
        return json.load(fh)


@pytest.mark.parametrize('name', [ALLREDUCE, SENDRECV, SENDRECV_GDR])
def test_transport_is_roce_from_the_logs_own_lines(name):
    res = _nccl_parse.parse(_text(name))
    assert res['transport'] == 'RoCE' and res['transport_class'] == 'RoCE'
    assert 'NET/IB ports: mlx5_5:1/RoCE' in res['transport_evidence']
    assert res['complete'] and not res['truncated'] and res['failures'] == []


@pytest.mark.parametrize('name,gdr,evidence', [
    (ALLREDUCE, False, '0 of 4 network channel lines carry /GDRDMA'),
    (SENDRECV, False, '0 of 4 network channel lines carry /GDRDMA'),
    (SENDRECV_GDR, True, '4 of 4 network channel lines carry /GDRDMA'),
])
def test_gdr_active_follows_the_channel_lines(name, gdr, evidence):
    res = _nccl_parse.parse(_text(name))
    assert res['gdr_active'] is gdr is _truth(name)['gdr_active']
    assert res['gdr_evidence'] == [evidence]


@pytest.mark.parametrize('name,ranks,busbw,avg', [
    (ALLREDUCE, 2, 14.97, '15.0418'),
    (SENDRECV, 2, 13.96, '13.9592'),
    (SENDRECV_GDR, 8, 5.85, '5.80752'),
])
def test_busbw_at_the_largest_size_and_the_counts(name, ranks, busbw, avg):
    res = _nccl_parse.parse(_text(name))
    last = res['rows'][-1]
    assert last['size'] == res['largest_size_bytes'] == 26843545600 == 25 * GIB
    assert last['out_of_place']['busbw'] == res['oop_busbw_at_largest_size'] == busbw
    assert res['avg_bus_bandwidth'] == avg and res['out_of_bounds'] == '0 OK'
    assert res['size_rows'] == 13 and res['ranks'] == ranks and res['nodes'] == 2
    # The logs name no collective. busbw == algbw with an op: all_reduce at 2 ranks or sendrecv; the all_reduce log's
    # in-place #wrong is checked (sendrecv never checks it), so only that one is named; the sendrecv logs are not guessed.
    assert res['collective'] == ('all_reduce' if name == ALLREDUCE else None)


def test_sendrecv_in_place_is_unchecked_and_all_reduce_in_place_is_checked():
    allreduce = _nccl_parse.parse(_text(ALLREDUCE))
    sendrecv = _nccl_parse.parse(_text(SENDRECV))
    assert {r['in_place']['wrong'] for r in allreduce['rows']} == {0}
    assert {r['in_place']['wrong'] for r in sendrecv['rows']} == {None}


def test_the_gate_checks_transport_and_gpudirect_as_a_real_run_would():
    res = _nccl_parse.parse(_text(ALLREDUCE))
    target = [{'min_size': GIB, 'max_size': None, 'min_busbw': 14.0}]
    assert _nccl_gate.gate(res, target, require_transport='RoCE', require_gdr=False) == []
    lines = _nccl_gate.gate(res, target, require_transport='IB', require_gdr=True)
    assert lines == [
        'all_reduce_perf: transport RoCE is not proven to be IB (evidence: channels via NET/IB; NET/IB ports: mlx5_5:1/RoCE)',
        'all_reduce_perf: GPUDirect RDMA is not active, required active (evidence: 0 of 4 network channel lines carry /GDRDMA)',
    ]
    gdr = _nccl_parse.parse(_text(SENDRECV_GDR))
    assert _nccl_gate.gate(gdr, [{'min_size': GIB, 'max_size': None, 'min_busbw': 5.5}], require_transport='RoCE', require_gdr=True) == []


def test_without_its_info_lines_the_same_log_proves_neither():
    """The evidence is the NCCL_DEBUG=INFO lines and nothing else: drop them and the gate fails the same table."""
    text = ''.join(line for line in _text(ALLREDUCE).splitlines(True) if ' NCCL INFO ' not in line)
    res = _nccl_parse.parse(text)
    assert res['transport'] == 'unknown' and res['gdr_active'] == 'unknown'
    assert res['oop_busbw_at_largest_size'] == 14.97 and res['complete']
    lines = _nccl_gate.gate(res, [], require_transport='RoCE', require_gdr=False)
    assert [line.split(' (')[0] for line in lines] == [
        'all_reduce_perf: transport unknown is not proven to be RoCE', 'all_reduce_perf: GPUDirect RDMA is not proven, required off']
