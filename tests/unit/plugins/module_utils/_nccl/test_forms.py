# SPDX-License-Identifier: GPL-3.0-or-later
"""Every output form of nccl-tests v2.19.6 (issue 35): -J JSON (file and text, "true"/"false" okay strings), -N cycles,
-C, -S, -M, -T, -z, -x/-R/-D option notices, NCCL 2.19+ INFO 'Failed to open libibverbs.so[.1]', one-rank runs, and
forms the parser does not recognise. Fixtures: tests/data/nccl-corpus/derived-v2.19.6 (derived from the source's print
statements; its README cites file and line)."""
from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as _nccl_stats

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
DERIVED = os.path.join(REPO, 'tests', 'data', 'nccl-corpus', 'derived-v2.19.6')
JSON_FIXTURE = os.path.join(HERE, 'fixtures', 'nccl', 'synthetic_v2196_json_output.json')
GIB = 1 << 30


def _derived(name):
    with open(os.path.join(DERIVED, name), encoding='utf-8') as handle:
        return handle.read()


def _json_doc():
    with open(JSON_FIXTURE, encoding='utf-8') as handle:
        return json.load(handle)


# ---------------------------------------------------------------------------
# -J: the okay flags are strings

def test_json_okay_strings_true_pass():
    res = _nccl_parse.parse(json.dumps(_json_doc()))
    assert res['out_of_bounds'] == '0 OK' and res['failures'] == []
    assert res['complete'] is True
    assert _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 100}]) == []


def test_json_out_of_bounds_okay_false_fails():
    doc = _json_doc()
    doc['out_of_bounds'] = {'count': 3, 'okay': 'false'}    # the string: truthy in Python, a failure in nccl-tests
    res = _nccl_parse.parse(json.dumps(doc))
    assert res['out_of_bounds'] == '3 FAILED'
    assert 'Out of bounds values : 3 FAILED' in res['errors']
    assert any('Out of bounds' in line for line in _nccl_gate.gate(res, []))


def test_json_average_okay_false_fails_the_gate():
    doc = _json_doc()
    doc['average_bus_bandwidth'] = {'bandwidth': 101.25, 'okay': 'false'}   # NCCL_TESTS_MIN_BW above 101.25 / 0.9
    res = _nccl_parse.parse(json.dumps(doc))
    assert res['avg_bus_bandwidth_check'] == 'FAILED'
    lines = _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 100}])
    assert any('average_bus_bandwidth: 101.25 FAILED' in line for line in lines)


@pytest.mark.parametrize('value', ['yes', 1, None, 'TRUE'])
def test_json_okay_unrecognised_is_refused(value):
    doc = _json_doc()
    doc['out_of_bounds'] = {'count': 0, 'okay': value}
    res = _nccl_parse.parse(json.dumps(doc))
    assert any('out_of_bounds.okay is' in f for f in res['failures'])
    assert _nccl_gate.gate(res, [])


def test_json_okay_booleans_mean_the_same():
    doc = _json_doc()
    doc['out_of_bounds']['okay'] = True
    assert _nccl_parse.parse(json.dumps(doc))['failures'] == []
    doc['out_of_bounds']['okay'] = False
    assert _nccl_parse.parse(json.dumps(doc))['out_of_bounds'] == '0 FAILED'


def test_json_cycles_are_samples_for_compare():
    doc = _json_doc()
    second = copy.deepcopy(doc['results'])
    for item in second:
        item['out_of_place']['bus_bw'] = item['out_of_place']['bus_bw'] * 0.98
    doc['results'] = doc['results'] + second          # -N 2: the rows of cycle 2 follow in the same list
    res = _nccl_parse.parse(json.dumps(doc))
    assert res['cycles'] == 2 and res['independent_runs'] is False
    assert [r['cycle'] for r in res['rows']] == [1] * 11 + [2] * 11
    one = _nccl_parse.parse(json.dumps(_json_doc()))
    cmp = _nccl_stats.compare([res], [one], sizes=[GIB])
    assert cmp['sizes'][0]['n_pre'] == 2 and cmp['sizes'][0]['n_post'] == 1


def test_json_from_file_and_text_agree(tmp_path):
    path = tmp_path / 'out.json'
    path.write_text(json.dumps(_json_doc()), encoding='utf-8')
    from_file = _nccl_parse.parse(path.read_bytes())
    from_text = _nccl_parse.parse(json.dumps(_json_doc()))
    assert from_file == from_text


def test_json_unknown_version_refused():
    doc = _json_doc()
    doc['version'] = 4
    res = _nccl_parse.parse(json.dumps(doc))
    assert any('JSON file version 4' in f for f in res['failures'])


def test_json_cut_file_refused():
    text = json.dumps(_json_doc())[:-400]
    res = _nccl_parse.parse(text)
    assert res['rows'] == [] and res['truncated'] is True
    assert 'cut before its end' in res['unrecognised']
    assert any('cut before its end' in line for line in _nccl_gate.gate(res, []))


def test_json_not_nccl_tests_refused():
    res = _nccl_parse.parse('{"foo": 1}')
    assert 'not nccl-tests output' in res['unrecognised']
    assert _nccl_gate.gate(res, [], require_complete=False)


def test_json_nan_cells_are_no_value():
    doc = _json_doc()
    doc['results'][-1]['out_of_place']['bus_bw'] = 'nan'     # src/util.cu jsonDouble prints "nan" (line 293)
    res = _nccl_parse.parse(json.dumps(doc))
    assert res['rows'][-1]['out_of_place']['busbw'] is None
    assert _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 1}])


# ---------------------------------------------------------------------------
# text options

def test_all_options_one_node():
    res = _nccl_parse.parse(_derived('all_options_1node_8gpu.txt'))
    assert res['nccl_tests_version'] == '2.19.6' and res['collective'] == 'all_reduce'
    assert (res['ranks'], res['nodes'], res['gpus_per_node']) == (8, 1, 8)
    assert res['gpu_model'] == 'NVIDIA H200'
    assert res['cycles'] == 2 and [r['cycle'] for r in res['rows']] == [1, 1, 2, 2]
    assert res['independent_runs'] is False and res['complete'] is True
    assert all(r['timestamp'].startswith('2026-12-05 00:31:') for r in res['rows'])
    assert res['memory']['total'] == {'text': '8.02 GB', 'bytes': int(round(8.02 * GIB))}
    assert res['memory']['collective']['bytes'] == 512 << 20
    assert 'Blocking Enabled: wait and barrier after each inner iteration (-m)' in res['run_notes']
    assert any('Option -x (cta_policy) is not supported before NCCL 2.27' in w for w in res['warnings'])
    assert res['failures'] == []
    assert _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 700}]) == []
    lines = _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 790}])
    assert lines and '780.24' in lines[0]          # the lowest cell over both cycles


def test_cycles_each_a_sample():
    res = _nccl_parse.parse(_derived('all_options_1node_8gpu.txt'))
    assert _nccl_stats.launch_samples(res, GIB) == [786.08, 783.36]
    cmp = _nccl_stats.compare([res, res], [res], sizes=[GIB])
    assert (cmp['sizes'][0]['n_pre'], cmp['sizes'][0]['n_post']) == (4, 2)


def test_timeout_fails():
    res = _nccl_parse.parse(_derived('timeout_T5.txt'))
    assert 'Test timeout (5s) common.cu:523' in res['failures']
    lines = _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 1}])
    assert any('Test timeout (5s)' in line for line in lines)


def test_device_api_option_refused():
    text = 'Option -D (device implementation) requires NCCL >= 2.28.0\n'
    res = _nccl_parse.parse(text)
    assert any('requires NCCL >= 2.28.0' in f for f in res['failures'])


def test_invalid_option_usage_refused():
    res = _nccl_parse.parse("invalid option 'Q'\nUSAGE: ./build/all_reduce_perf \n\t[-t,--nthreads <num threads>] \n")
    assert any("invalid option 'Q'" in f for f in res['failures'])
    assert _nccl_gate.gate(res, [], require_complete=False)


def test_register_option_ignored_is_a_warning():
    text = _derived('all_options_1node_8gpu.txt').replace(
        'Option -x (cta_policy) is not supported before NCCL 2.27. Ignoring',
        'Option -R (register) is not supported before NCCL 2.19. Ignoring')
    res = _nccl_parse.parse(text)
    assert res['failures'] == [] and any('Option -R (register)' in w for w in res['warnings'])


def test_memory_line_of_another_shape_is_a_warning():
    text = _derived('all_options_1node_8gpu.txt').replace('| Total  8.02 GB', '| Total  8.02 TB')
    res = _nccl_parse.parse(text)
    assert res['memory'] is None and any('GPU memory usage line' in w for w in res['warnings'])


# ---------------------------------------------------------------------------
# one GPU, no libibverbs

def test_info_libibverbs_means_no_rdma():
    res = _nccl_parse.parse(_derived('one_gpu_all_reduce_no_verbs.txt'))
    assert res['libibverbs_missing'] is True
    assert res['gdr_active'] is False
    assert res['errors'] == []                  # INFO is not an error
    assert res['transport'] == 'Socket'


def test_one_gpu_all_reduce_busbw_zero_is_said():
    res = _nccl_parse.parse(_derived('one_gpu_all_reduce_no_verbs.txt'))
    assert res['ranks'] == 1 and res['single_rank'] is True
    assert res['independent_runs'] is False and res['complete'] is True
    lines = _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 100}])
    assert len(lines) == 1 and 'busbw is 0 by definition for all_reduce at 1 rank' in lines[0]
    # without a busbw target the log is a valid one-rank run
    assert _nccl_gate.gate(res, []) == []


def test_one_gpu_broadcast_has_a_real_busbw():
    res = _nccl_parse.parse(_derived('one_gpu_broadcast.txt'))
    assert res['ranks'] == 1 and res['collective'] == 'broadcast'
    assert res['rows'][-1]['out_of_place']['busbw'] > 1000
    assert _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 1000}]) == []
    lines = _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 2000}])
    assert lines and 'by definition' not in lines[0]


# ---------------------------------------------------------------------------
# node baseline targets per GPU model

def _node_settings(*targets):
    settings, errors = _nccl_gate.gate_settings({'targets': [dict(t, min_size='1G') for t in targets]})
    assert errors == []
    return settings


def test_gpu_model_target_applies_to_its_model_only():
    res = _nccl_parse.parse(_derived('all_options_1node_8gpu.txt'))      # 8 x NVIDIA H200, 780-799 GB/s
    both = _node_settings({'min_busbw': 900, 'gpu_model': 'NVIDIA H100 80GB HBM3'}, {'min_busbw': 700, 'gpu_model': 'nvidia  h200'})
    assert _nccl_gate.gate_report(res, both)['passed'] is True
    strict = _node_settings({'min_busbw': 790, 'gpu_model': 'NVIDIA H200'})
    assert any('780.24' in line for line in _nccl_gate.gate_report(res, strict)['unmet'])


def test_gpu_model_targets_for_other_models_only_fail():
    res = _nccl_parse.parse(_derived('all_options_1node_8gpu.txt'))
    other = _node_settings({'min_busbw': 100, 'gpu_model': 'NVIDIA H100 80GB HBM3'})
    unmet = _nccl_gate.gate_report(res, other)['unmet']
    assert unmet == ['all_reduce_perf: no busbw target applies to GPU model NVIDIA H200 (targets exist for: NVIDIA H100 80GB HBM3)']


def test_gpu_model_target_without_device_list_fails():
    text = '\n'.join(line for line in _derived('all_options_1node_8gpu.txt').splitlines() if 'Rank ' not in line)
    res = _nccl_parse.parse(text)
    lines = _nccl_gate.gate(res, [{'min_size': GIB, 'max_size': None, 'min_busbw': 1, 'gpu_model': 'NVIDIA H200'}])
    assert any('names no GPU model' in line for line in lines)


def test_gpu_model_must_be_a_name():
    _settings, errors = _nccl_gate.gate_settings({'targets': [{'min_size': '1G', 'min_busbw': 1, 'gpu_model': ' '}]})
    assert errors and 'gpu_model' in errors[0]


@pytest.mark.parametrize('text', ['', 'hello world\n', 'Segmentation\n\n'])
def test_text_with_nothing_nccl_tests_prints_is_refused(text):
    res = _nccl_parse.parse(text)
    assert res['unrecognised'].startswith('no nccl-tests output recognised')
    assert _nccl_gate.gate(res, [], require_complete=False)
