# SPDX-License-Identifier: GPL-3.0-or-later
"""The report's counter evidence (issue 34): blocking findings fail a run whose busbw passes, and the section shows per
host NIC and per switch port the bytes by priority, pauses, marks, CNPs and drops with the findings beside each."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.action.nccl_report import evidence_of
from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _report

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(HERE, '..', '..', '..', '..', 'tests', 'data', 'nccl-corpus')
GB = 10**9
HOST = {'kind': 'host', 'dscp_map': {'26': 3, '48': 6}, 'traffic_class': 104, 'pfc_priorities': [3], 'cnp': {'priority': 6}}
SWITCH = {'kind': 'switch', 'pfc_priorities': [3], 'ecn_queue': 3, 'cnp': {'priority': 6, 'queue': 6}}


@pytest.fixture(scope='module')
def efa():
    with open(os.path.join(CORPUS, 'awsefaeks_p4d_2node_efa_debug_info.txt'), encoding='utf-8') as handle:
        return _nccl_parse.parse(handle.read())


def _settings(min_busbw):
    fabric = {'collectives': {'all_reduce_perf': [{'min_size': '1G', 'min_busbw': min_busbw}]}}
    settings, errors = _nccl_gate.gate_settings({'fabric_targets': fabric, 'require_complete': True}, *_intent_targets.fabric_targets(fabric))
    assert not errors
    return settings


def _evidence(tx):
    """Two snapshots around a launch: gpu1 sent ``tx`` bytes by priority; leaf1 swp1 queued the run on queue 3."""
    def nic(values, at):
        return _snapshot.snapshot('gpu1', 'mlnx', {'mlx5_0': {'tx_prio_bytes': values, 'np_cnp_sent': 0, 'rp_cnp_handled': 0}}, {},
                                  taken_at=at, kind='nic', names=('tx_prio_bytes', 'np_cnp_sent', 'rp_cnp_handled', 'pfc_rx_frames'))

    def port(values, at):
        return {'failed': False, 'counters': _snapshot.snapshot('leaf1', 'eos', {'swp1': {'queue_tx_bytes': values, 'ecn_marked': {'3': 0}}}, {},
                                                                taken_at=at)}
    zero = {k: 0 for k in tx}
    return evidence_of({'switches_before': {'leaf1': port({'3': 0, '0': 0}, 'T0')}, 'switches_after': {'leaf1': port({'3': 90 * GB, '0': 10}, 'T1')},
                        'nics_before': {'gpu1': nic(zero, 'T0')}, 'nics_after': {'gpu1': nic(tx, 'T1')},
                        'plans': {'gpu1': HOST, 'leaf1': SWITCH}, 'ports': {'leaf1': ['swp1']}, 'settings': {'share': 95}}, 'post')


def test_busbw_passes_and_the_counters_fail_the_run(efa):
    report = _report.benchmark_report([efa], 'bench', _settings(40), evidence=_evidence({'3': GB, '0': 50 * GB}))
    assert report['launches'][0]['gate']['verdict'] == 'pass'
    assert report['verdict'] == 'fail'
    assert len(report['unmet']) == 1 and report['unmet'][0].startswith('counter evidence: gpu1: mlx5_0: 2.0 % of the sent bytes on the RoCE priority 3')
    assert report['evidence']['verdict_note'].startswith('fail on the counter evidence alone: bus bandwidth met its targets')
    finding = report['evidence']['findings'][0]
    assert (finding['kind'], finding['device'], finding['port'], finding['counter'], finding['index'], finding['phase']) == (
        'roce_off_priority', 'gpu1', 'mlx5_0', 'tx_prio_bytes', '0', 'post')
    md = _report.benchmark_markdown(report)
    assert '## Counter evidence' in md and '### Hosts' in md and '### Switch ports' in md
    assert '| gpu1 | mlx5_0 | 3 | 2.0 % | 0: 50000000000, 3: 1000000000 |' in md
    assert 'roce_off_priority' in md and '| leaf1 | swp1 | 3 | 100.0 % |' in md
    # The NIC cannot read pfc_rx_frames: listed as not available, shown as n/a, never 0.
    assert '- gpu1: pfc_rx_frames' in md and '| n/a / n/a |' in md
    json.dumps(report)


def test_a_run_on_the_lossless_class_keeps_its_busbw_verdict(efa):
    report = _report.benchmark_report([efa], 'bench', _settings(40), evidence=_evidence({'3': 50 * GB, '0': GB // 100}))
    assert report['verdict'] == 'pass' and report['unmet'] == [] and report['evidence']['verdict_note'] is None
    assert report['evidence']['hosts']['gpu1']['mlx5_0']['findings'] == []
    assert 'No finding: the run rode the plan' in _report.benchmark_markdown(report)


def test_both_the_busbw_and_the_counters_fail(efa):
    report = _report.benchmark_report([efa], 'bench', _settings(400), evidence=_evidence({'3': GB, '0': 50 * GB}))
    assert report['evidence']['verdict_note'].startswith('fail: the busbw gate and the counter evidence')
    assert [line.startswith('counter evidence: ') for line in report['unmet']] == [False, True]


def test_without_evidence_the_report_has_no_section(efa):
    report = _report.benchmark_report([efa], 'bench', _settings(40))
    assert report['evidence'] is None and '## Counter evidence' not in _report.benchmark_markdown(report)


def test_evidence_settings_are_checked():
    with pytest.raises(ValueError, match='share'):
        evidence_of({'settings': {'share': 0}})


def test_the_evidence_plot_is_a_fourth_file_with_one_bar_per_nic_and_port(tmp_path, efa):
    report = _report.benchmark_report([efa], 'bench', _settings(40), evidence=_evidence({'3': GB, '0': 50 * GB}))
    files = _report.render_files(report, str(tmp_path))
    assert sorted(files) == ['bench-evidence.png', 'bench.json', 'bench.md', 'bench.png']
    assert files['bench-evidence.png'].startswith(b'\x89PNG\r\n\x1a\n')
    assert '![RoCE share per NIC and port](bench-evidence.png)' in files['bench.md'].decode()
    assert _report.evidence_bars(report['evidence']) == [('gpu1 mlx5_0', 0.0196, ['roce_off_priority']), ('leaf1 swp1', 1.0, [])]
    # the same data gives the same bytes
    assert _report.render_files(report, str(tmp_path))['bench-evidence.png'] == files['bench-evidence.png']
    assert sorted(_report.render_files(_report.benchmark_report([efa], 'bench', _settings(40)), str(tmp_path))) == [
        'bench.json', 'bench.md', 'bench.png']
