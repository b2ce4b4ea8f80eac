# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.nccl_result run through main(): parse via src and content, and every kind of gate failure."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.lossless.fabric.plugins.modules import nccl_result

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
HERE_FIXTURES = os.path.join(REPO, 'tests', 'unit', 'plugins', 'module_utils', 'fixtures', 'nccl')
CORPUS = os.path.join(REPO, 'tests', 'data', 'nccl-corpus')
FIXTURES = os.path.join(REPO, 'tests', 'unit', 'plugins', 'module_utils', 'fixtures', 'nccl')

HDR = 'deepops_netop_dgxa100_2node_hdr'                   # complete all_reduce, 16 ranks, no debug lines, 181.62 GB/s at 1 GiB
EFA = 'awsefaeks_p4d_2node_efa_debug_info'                # NCCL_DEBUG=INFO: EFA proven, GPUDirect proven
TRUNCATED = 'issue_ncclt232_h100_2node_1gpu_tree_truncated'  # cut at 32 MiB


def run(args):
    """main() with ``args``; returns (failed, result)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            nccl_result.main()
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


def corpus(name):
    path = os.path.join(CORPUS, name + '.txt')
    return path


def text(name):
    with open(corpus(name), encoding='utf-8') as fh:
        return fh.read()


# ---------------------------------------------------------------------------
# parse only

def test_parse_src_and_content_agree():
    failed, by_src = run({'src': corpus(HDR)})
    assert not failed and by_src['changed'] is False
    failed, by_content = run({'content': text(HDR)})
    assert not failed
    for key in ('rows', 'size_rows', 'largest_size_bytes', 'oop_busbw_at_largest_size', 'collective', 'ranks', 'transport'):
        assert by_src[key] == by_content[key], key
    assert by_src['collective'] == 'all_reduce'
    assert by_src['ranks'] == 16
    assert by_src['largest_size_bytes'] == 4294967296
    assert by_src['oop_busbw_at_largest_size'] == pytest.approx(188.53)
    assert by_src['transport'] == 'unknown' and by_src['gdr_active'] == 'unknown'
    assert by_src['avg_bus_bandwidth'] is not None and by_src['out_of_bounds'] is not None
    assert by_src['truncated'] is False and by_src['errors'] == []
    # require_complete defaults to true in the module itself: a complete, checked log passes the safe gate
    assert by_src['gate']['passed'] is True, by_src['gate']
    assert 'warnings' not in by_src and isinstance(by_src['parse_warnings'], list)
    row = next(r for r in by_src['rows'] if r['size'] == 1 << 30)
    assert set(row) >= {'size', 'count', 'type', 'redop', 'root', 'out_of_place', 'in_place'}
    assert set(row['out_of_place']) >= {'time_us', 'algbw', 'busbw', 'wrong'}


def test_crashed_log_fails_by_default_and_parses_with_the_gate_off():
    # require_complete defaults to true in the module: calling it directly is as safe as the role
    failed, res = run({'src': corpus('issue_ncclt252_remote_network_error_cascade')})
    assert failed and res['size_rows'] == 0 and res['errors']
    assert 'no result rows in the log' in res['msg']
    failed, res = run({'src': corpus('issue_ncclt252_remote_network_error_cascade'), 'require_complete': False})
    assert not failed and res['size_rows'] == 0 and res['errors'] and 'gate' not in res


def test_src_missing_fails(tmp_path):
    failed, res = run({'src': str(tmp_path / 'absent.log')})
    assert failed and res['msg'].startswith('src: cannot read')


def test_src_and_content_are_exclusive_and_one_is_required():
    failed, res = run({'src': '/x', 'content': 'y'})
    assert failed and 'mutually exclusive' in res['msg']
    failed, res = run({})
    assert failed and 'one of the following is required' in res['msg']


# ---------------------------------------------------------------------------
# gate

def test_gate_pass():
    failed, res = run({'src': corpus(HDR), 'targets': [{'min_size': '1G', 'min_busbw': 180}], 'require_complete': True})
    assert not failed, res.get('msg')
    assert res['gate']['passed'] is True and res['gate']['unmet'] == []
    target = next(c for c in res['gate']['checked'] if 'busbw >=' in c['requirement'])
    assert target['passed'] and target['measured'].startswith('min 181.62 GB/s at 1073741824 B')


def test_gate_below_target_names_size_metric_value_and_threshold():
    failed, res = run({'src': corpus(HDR), 'targets': [{'min_size': '1G', 'min_busbw': 185, 'placement': 'out_of_place'}]})
    assert failed
    assert res['msg'] == 'all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 181.62 GB/s < target 185.00 GB/s'
    assert res['gate']['passed'] is False and res['gate']['unmet'] == [res['msg']]
    assert res['rows'], 'the parse result comes back with the failure'


def test_gate_one_line_per_unmet_target():
    failed, res = run({'content': text(HDR), 'targets': [
        {'min_size': '1G', 'min_busbw': 185, 'placement': 'out_of_place'},
        {'min_size': '1G', 'min_busbw': 185, 'placement': 'in_place'},
        {'min_size': '64M', 'max_size': '128M', 'min_busbw': 1},
    ]})
    assert failed
    lines = res['msg'].splitlines()
    assert len(lines) == 2 and 'out-of-place' in lines[0] and 'in-place' in lines[1]


def test_gate_truncated_log_with_target_beyond_last_size_fails():
    failed, res = run({'src': corpus(TRUNCATED), 'targets': [{'min_size': '1G', 'min_busbw': 1}]})
    assert failed
    assert 'no data' in res['msg'] and '33554432 B' in res['msg'] and 'target 1.00 GB/s' in res['msg']
    failed, res = run({'src': corpus(TRUNCATED), 'targets': [{'min_size': '1M', 'max_size': '1G', 'min_busbw': 1}]})
    assert failed and 'the log stops there' in res['msg']


def test_gate_no_rows_never_passes():
    failed, res = run({'src': corpus('issue_ncclt252_remote_network_error_cascade'), 'targets': [{'min_size': 1, 'min_busbw': 0.001}]})
    assert failed and 'no result rows' in res['msg']


def test_gate_transport_not_proven():
    failed, res = run({'src': corpus(HDR), 'require_transport': 'IB'})
    assert failed
    assert res['msg'] == 'all_reduce_perf: transport unknown is not proven to be IB (evidence: no NCCL_DEBUG=INFO transport lines)'
    failed, res = run({'src': corpus(EFA), 'require_transport': ['IB', 'RoCE']})
    assert failed and 'transport EFA is not proven to be IB or RoCE' in res['msg']


def test_gate_transport_and_gdr_proven():
    failed, res = run({'src': corpus(EFA), 'require_transport': ['EFA'], 'require_gdr': True, 'require_complete': True})
    assert not failed, res.get('msg')
    assert res['transport'] == 'EFA' and res['gdr_active'] is True


def test_gate_gdr_unknown_fails():
    failed, res = run({'src': corpus(HDR), 'require_gdr': True})
    assert failed and 'GPUDirect RDMA is not proven' in res['msg']


def test_gate_wrong_above_max_wrong():
    with open(os.path.join(FIXTURES, 'synthetic_v2196_wrong_oob_minbw_failed.txt'), encoding='utf-8') as fh:
        log = fh.read()
    failed, res = run({'content': log, 'targets': []})
    assert failed
    assert '#wrong above 0 at 16777216 B out-of-place: 3, 268435456 B in-place: 1' in res['msg']
    failed, res = run({'content': log, 'targets': [], 'max_wrong': 3})
    assert not any('#wrong' in line for line in res['gate']['unmet'])


def test_max_wrong_alone_does_not_turn_the_gate_on():
    with open(os.path.join(FIXTURES, 'synthetic_v2196_wrong_oob_minbw_failed.txt'), encoding='utf-8') as fh:
        log = fh.read()
    failed, res = run({'content': log, 'max_wrong': 0, 'require_complete': False})
    assert not failed and 'gate' not in res


def test_gate_incomplete_log():
    failed, res = run({'src': corpus('awsome_p5_eks_mpijob_elided'), 'require_complete': True})
    assert failed and 'the log is incomplete' in res['msg']


def test_bad_size_is_an_argument_error():
    failed, res = run({'content': 'x', 'targets': [{'min_size': '1GB', 'min_busbw': 1}]})
    assert failed and res['msg'].startswith("targets[0].min_size: '1GB' is not a size")
    failed, res = run({'content': 'x', 'targets': [{'min_size': '2G', 'max_size': '1G', 'min_busbw': 1}]})
    assert failed and 'is above max_size' in res['msg']


# ---------------------------------------------------------------------------
# fabric_targets: the normalized intent section fabric_plan returns, and the section as written

FABRIC = {   # the shape fabric_plan returns in intent.targets (collectives named as the intent names them)
    'tolerance_percent': 5,
    'require_transport': None,
    'require_gdr': None,
    'collectives': {'all_reduce_perf': [{'min_size': 1 << 30, 'max_size': None, 'min_busbw': 180.0}]},
}


def test_fabric_targets_from_fabric_plan():
    lab = os.path.join(REPO, 'inventories', 'lab', 'group_vars', 'all', 'lossless_fabric.yml')
    if not os.path.exists(lab):
        pytest.skip('lab inventory not found')
    import yaml

    from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

    with open(lab, encoding='utf-8') as fh:
        intent = yaml.safe_load(fh)['lossless_fabric']
    targets = _plan.build_plan(intent, {})['intent']['targets']
    failed, res = run({'src': corpus(HDR), 'fabric_targets': targets})
    assert failed
    # the lab intent asks for RoCE and GPUDirect off; this log proves neither, so both fail. Its busbw target
    # (all_reduce_perf >= 14 GB/s from 1 GiB) this HDR log meets
    assert [c['passed'] for c in res['gate']['checked'] if 'busbw >=' in c['requirement']] == [True]
    assert any('not proven to be RoCE' in line for line in res['gate']['unmet'])
    assert any('GPUDirect RDMA is not proven' in line for line in res['gate']['unmet'])


def test_fabric_targets_pass():
    failed, res = run({'src': corpus(HDR), 'fabric_targets': FABRIC})
    assert not failed, res.get('msg')
    assert any('all_reduce_perf out-of-place and in-place busbw >= 180.0 GB/s at 1 GiB..max' == c['requirement']
               for c in res['gate']['checked'])


def test_fabric_targets_below_target_and_as_written():
    fabric = {'collectives': {'all_reduce_perf': [{'min_size': '1G', 'min_busbw': 185}]}}
    failed, res = run({'src': corpus(HDR), 'fabric_targets': fabric})
    assert failed
    lines = res['msg'].splitlines()
    assert len(lines) == 2
    assert lines[0].startswith('all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 181.62 GB/s < target 185.00 GB/s')
    # one validator for the intent and the gate: a section as written gets the intent's default require_gdr: true
    assert lines[1] == 'all_reduce_perf: GPUDirect RDMA is not proven, required active (evidence: no NCCL_DEBUG=INFO GDR lines)'


def test_fabric_targets_transport_and_gdr_apply_and_options_win():
    fabric = {'require_transport': 'RoCE', 'require_gdr': True,
              'collectives': {'all_reduce_perf': [{'min_size': 1 << 30, 'max_size': None, 'min_busbw': 40.0}]}}
    failed, res = run({'src': corpus(EFA), 'fabric_targets': fabric})
    assert failed
    assert res['msg'] == 'all_reduce_perf: transport EFA is not proven to be RoCE (evidence: %s)' % '; '.join(res['transport_evidence'])
    failed, res = run({'src': corpus(EFA), 'fabric_targets': fabric, 'require_transport': ['EFA']})
    assert not failed, res.get('msg')
    failed, res = run({'src': corpus(EFA), 'fabric_targets': fabric, 'require_transport': ['EFA'], 'require_gdr': False})
    assert failed and res['msg'].startswith('all_reduce_perf: GPUDirect RDMA is active, required off')


def test_fabric_targets_without_a_target_for_the_collective_fails():
    fabric = {'collectives': {'all_gather_perf': [{'min_size': '1G', 'min_busbw': 10}]}}
    failed, res = run({'src': corpus(HDR), 'fabric_targets': fabric})
    assert failed and 'no busbw target applies to all_reduce (targets exist for: all_gather)' in res['msg']


def test_explicit_targets_for_another_collective_only_fail():
    failed, res = run({'src': corpus(HDR), 'targets': [{'min_size': '1G', 'min_busbw': 1, 'collective': 'alltoall'}]})
    assert failed and res['msg'] == 'all_reduce_perf: no busbw target applies to all_reduce (targets exist for: alltoall)'
    failed, res = run({'src': corpus(HDR), 'targets': [{'min_size': '1G', 'min_busbw': 1, 'collective': 'alltoall'},
                                                       {'min_size': '1G', 'min_busbw': 1, 'collective': 'all_reduce'}]})
    assert not failed, res.get('msg')


def test_fabric_targets_bad_shape():
    failed, res = run({'content': 'x', 'fabric_targets': {'collectives': {'allreduce': [{'min_size': '1G', 'min_busbw': -1}]}, 'x': 1}})
    assert failed
    assert 'fabric_targets.x: unknown key' in res['msg']
    assert 'fabric_targets.collectives.allreduce: unknown collective' in res['msg']


def test_json_file_from_src_and_its_okay_strings(tmp_path):
    # -J writes its booleans as the strings "true"/"false" (nccl-tests src/util.cu jsonBool): "false" fails the gate
    doc = json.loads(pathlib.Path(HERE_FIXTURES, 'synthetic_v2196_json_output.json').read_text(encoding='utf-8'))
    path = tmp_path / 'out.json'
    path.write_text(json.dumps(doc), encoding='utf-8')
    failed, res = run({'src': str(path)})
    assert not failed and res['format'] == 'json'
    doc['average_bus_bandwidth']['okay'] = 'false'
    path.write_text(json.dumps(doc), encoding='utf-8')
    failed, res = run({'src': str(path)})
    assert failed and 'average_bus_bandwidth: 101.25 FAILED' in res['msg']


def test_parse_only_refuses_what_is_no_nccl_tests_output():
    failed, res = run({'content': 'connection reset by peer\n', 'require_complete': False})
    assert failed and res['msg'] == 'content: no nccl-tests output recognised (no table, header, device list, footer or NCCL line)'
    failed, res = run({'content': '{"foo": 1}', 'require_complete': False})
    assert failed and 'not nccl-tests output' in res['msg']
