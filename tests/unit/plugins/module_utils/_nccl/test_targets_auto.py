# SPDX-License-Identifier: GPL-3.0-or-later
"""min_busbw: auto (issue 34): the target derived from the hosts' NICs and a cited efficiency per collective,
carried from fabric_plan to the gate and the report; refused where the hardware is unknown.

The gate cases use a real published log: 2 x DGX A100 with 8 x HDR 200G per node (deepops), 181.62 GB/s
out-of-place at 1 GiB and 188.53 at 4 GiB; the auto target for 8 x 200G is 8 x 25 GB/s x 0.92 = 184 GB/s.
"""
from __future__ import annotations

import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _report

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
CORPUS = os.path.join(REPO, 'tests', 'data', 'nccl-corpus')


def fabric(nics=8, speed='200G', hosts=('gpu1', 'gpu2'), transport='infiniband', collectives=None):
    intent = {'name': 'lab', 'transport': transport,
              'targets': {'require_gdr': None,
                          'collectives': collectives or {'all_reduce_perf': [{'min_size': '1G', 'min_busbw': 'auto'}]}}}
    devices = {h: {'kind': 'host', 'gpus': 8, 'nics': [{'name': 'mlx5_%d' % i, 'netdev': 'ib%d' % i, 'speed': speed} for i in range(nics)]}
               for h in hosts}
    return intent, devices


@pytest.fixture(scope='module', name='hdr')
def hdr_fixture():
    with open(os.path.join(CORPUS, 'deepops_netop_dgxa100_2node_hdr.txt'), encoding='utf-8') as handle:
        return _nccl_parse.parse(handle.read())


# -- the computation ---------------------------------------------------------------------------------


@pytest.mark.parametrize('coll, nics, gbps, expected, method, algo', [
    ('all_reduce_perf', 8, 400, 368.0, 'ring_nic_aggregate', 'Ring'),     # 8 x 50 GB/s x 0.92
    ('all_reduce', 8, 200, 184.0, 'ring_nic_aggregate', 'Ring'),
    ('all_gather_perf', 4, 400, 184.0, 'ring_nic_aggregate', 'Ring'),
    ('reduce_scatter_perf', 1, 100, 11.5, 'ring_nic_aggregate', 'Ring'),  # 12.5 GB/s x 0.92
    ('alltoall_perf', 8, 400, 46.0, 'single_nic', None),                  # one NDR NIC: the issue's 46-48 GB/s
])
def test_auto_target_is_nics_x_rate_x_efficiency(coll, nics, gbps, expected, method, algo):
    out = _nccl_gate.auto_target(coll, nics, gbps, 2)
    assert out['min_busbw'] == expected and out['method'] == method and out['nccl_algo'] == algo
    assert out['efficiency'] == _nccl_gate.AUTO_EFFICIENCY == 0.92
    assert out['line_rate_gbytes'] == out['nics_counted'] * gbps / 8
    assert out['source'] and 'nccl-tests#119' in out['efficiency_source'] and out['hosts'] == 2


def test_auto_text_says_every_number():
    assert _nccl_gate.auto_text(_nccl_gate.auto_target('all_reduce', 8, 400)) == \
        '8 NICs x 400 Gb/s = 400 GB/s x 0.92 = 368 GB/s (ring_nic_aggregate, NCCL_ALGO=Ring)'
    assert _nccl_gate.auto_text(_nccl_gate.auto_target('alltoall', 8, 400)) == '1 NIC x 400 Gb/s = 50 GB/s x 0.92 = 46 GB/s (single_nic)'


@pytest.mark.parametrize('coll, nics, gbps, message', [
    ('sendrecv_perf', 8, 400, "'auto' has no cited method for sendrecv_perf"),
    ('broadcast', 8, 400, "'auto' has no cited method for broadcast"),
    ('all_reduce', 0, 400, "'auto' needs the launch's hardware: NICs per host is 0"),
    ('all_reduce', 8, None, "'auto' needs the launch's hardware: link rate (Gb/s) is None"),
    ('all_reduce', True, 400, "'auto' needs the launch's hardware: NICs per host is True"),
])
def test_auto_target_refuses(coll, nics, gbps, message):
    with pytest.raises(ValueError, match='^' + message.replace('(', r'\(').replace(')', r'\)')):
        _nccl_gate.auto_target(coll, nics, gbps)


# -- in the intent -----------------------------------------------------------------------------------


def test_plan_derives_auto_from_the_slowest_host():
    intent, devices = fabric(nics=8, speed='400G')
    devices['gpu2']['nics'] = devices['gpu2']['nics'][:4]          # the smaller host bounds the ring
    devices['gpu2']['nics'][0]['speed'] = '200G'                    # and the slowest NIC its rate
    intent['targets']['collectives']['alltoall_perf'] = [{'min_size': '1G', 'max_size': '8G', 'min_busbw': 'auto'},
                                                         {'min_size': '16G', 'min_busbw': 40}]
    plan = _plan.build_plan(intent, devices)
    ent = plan['intent']['targets']['collectives']['all_reduce_perf'][0]
    assert ent['min_busbw'] == 92.0                                 # 4 x 25 GB/s x 0.92
    assert (ent['auto']['nics_per_host'], ent['auto']['link_gbps'], ent['auto']['hosts']) == (4, 200, 2)
    a2a = plan['intent']['targets']['collectives']['alltoall_perf']
    assert a2a[0]['min_busbw'] == 23.0 and a2a[0]['max_size'] == 8 * 1024**3   # one 200G NIC, per size range
    assert a2a[1] == {'min_size': 16 * 1024**3, 'max_size': None, 'min_busbw': 40}   # hand-set targets keep working


def test_plan_refuses_auto_without_hosts():
    intent, _devices = fabric()
    errors, _warnings = _plan.validate(intent, {})
    assert errors == ["lossless_fabric.targets.collectives.all_reduce_perf[0].min_busbw: 'auto' needs the launch's hardware (the hosts' "
                      "NICs and their link rate): no device of kind host with nics is in scope (pass fabric_plan's result, "
                      "fabric_plan_result.intent.targets, or give GB/s)"]
    with pytest.raises(_tables.IntentError):
        _plan.build_plan(intent, {})


def test_plan_refuses_auto_for_a_collective_without_a_method_and_for_the_node_baseline():
    intent, devices = fabric(collectives={'sendrecv_perf': [{'min_size': '1G', 'min_busbw': 'auto'}]})
    intent['targets']['node'] = [{'gpu_model': 'NVIDIA H100 80GB HBM3', 'min_size': '1G', 'min_busbw': 'auto'}]
    errors, _warnings = _plan.validate(intent, devices)
    assert "lossless_fabric.targets.collectives.sendrecv_perf[0].min_busbw: 'auto' has no cited method for sendrecv_perf " \
           "(only all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf): set min_busbw by hand" in errors
    assert "lossless_fabric.targets.node[0].min_busbw: 'auto' is not a positive bus bandwidth (GB/s > 0)" in errors


def test_section_as_written_with_auto_is_refused_by_the_gate_path():
    intent, _devices = fabric()
    section, errors = _intent_targets.fabric_targets(intent['targets'])
    assert section is None
    assert errors == ["fabric_targets.collectives.all_reduce_perf[0].min_busbw: 'auto' needs the launch's hardware (the hosts' NICs "
                      "and their link rate): the section as written carries no hardware (pass fabric_plan's result, "
                      "fabric_plan_result.intent.targets, or give GB/s)"]


def test_a_hand_set_gate_target_refuses_auto_and_takes_numbers():
    _settings, errors = _nccl_gate.gate_settings({'targets': [{'min_size': '1G', 'min_busbw': 'auto'}]})
    assert errors == ["targets[0].min_busbw: 'auto' needs the launch's hardware, which a hand-set target does not carry: put it in the "
                      "intent's targets (fabric_plan derives it from the hosts' NICs) and pass fabric_targets, or give GB/s"]
    settings, errors = _nccl_gate.gate_settings({'targets': [{'min_size': '1G', 'min_busbw': '40.5'}]})
    assert errors == [] and settings['targets'][0]['min_busbw'] == 40.5
    _settings, errors = _nccl_gate.gate_settings({'targets': [{'min_size': '1G', 'min_busbw': 'fast'}]})
    assert errors == ["targets[0].min_busbw: 'fast' is not a bus bandwidth (GB/s above 0)"]


def test_a_forged_auto_record_is_refused():
    intent, devices = fabric()
    section = _plan.build_plan(intent, devices)['intent']['targets']
    section['collectives']['all_reduce_perf'][0]['min_busbw'] = 10     # the number edited, the record left
    _section, errors = _intent_targets.fabric_targets(section)
    assert errors == ["fabric_targets.collectives.all_reduce_perf[0].auto: a mapping is not fabric_plan's record of how min_busbw 10 was derived"]


# -- through the gate and the report ---------------------------------------------------------------------


def gate_settings_from_plan(min_size):
    intent, devices = fabric(collectives={'all_reduce_perf': [{'min_size': min_size, 'min_busbw': 'auto'}]})
    # as the nccl_gate role passes it with nccl_gate_check_transport false: this log has no NCCL_DEBUG=INFO lines
    section = dict(_plan.build_plan(intent, devices)['intent']['targets'], require_transport=None, require_gdr=None)
    fabric_section, fabric_errors = _intent_targets.fabric_targets(section)
    settings, errors = _nccl_gate.gate_settings({'fabric_targets': section, 'require_complete': True}, fabric_section, fabric_errors)
    assert errors == []
    return settings


def test_gate_fails_a_real_log_below_the_auto_target_naming_its_numbers(hdr):
    settings = gate_settings_from_plan('1G')
    assert settings['targets'][0]['min_busbw'] == 184.0
    out = _nccl_gate.gate_report(hdr, settings)
    assert not out['passed']
    line = next(u for u in out['unmet'] if '184' in u)
    assert '181.62 GB/s < target 184.00 GB/s' in line, out['unmet']
    requirement = next(c['requirement'] for c in out['checked'] if 'busbw' in c['requirement'])
    assert requirement.endswith('(auto: 8 NICs x 200 Gb/s = 200 GB/s x 0.92 = 184 GB/s (ring_nic_aggregate, NCCL_ALGO=Ring))'), requirement


def test_gate_passes_a_real_log_above_the_auto_target(hdr):
    out = _nccl_gate.gate_report(hdr, gate_settings_from_plan('4G'))   # 188.53 GB/s at 4 GiB
    assert out['passed'], out['unmet']


def test_report_prints_the_method_and_numbers(hdr):
    report = _report.benchmark_report([hdr], 'bench', gate_settings_from_plan('4G'))
    auto = report['targets']['busbw'][0]['auto']
    assert auto['method'] == 'ring_nic_aggregate' and auto['nics_per_host'] == 8 and auto['link_gbps'] == 200 and auto['efficiency'] == 0.92
    text = _report.benchmark_markdown(report)
    assert 'Targets derived from the hardware (min_busbw: auto; docs/benchmark.md):' in text
    assert '- all_reduce 4 GiB+: 8 NICs x 200 Gb/s = 200 GB/s x 0.92 = 184 GB/s (ring_nic_aggregate, NCCL_ALGO=Ring); 2 host(s).' in text
    assert 'The method assumes NCCL_ALGO=Ring (the nccl_gate role pins nccl_gate_algo, default Ring)' in text
