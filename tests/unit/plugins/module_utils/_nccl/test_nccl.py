# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests for plugins/module_utils/_nccl/_parse.py, _gate.py and _stats.py: corpus, synthetic fixtures, gate, compare, fuzz."""
from __future__ import annotations

import glob
import json
import os
import random
import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as _nccl_stats

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
CORPUS = os.path.join(REPO, 'tests', 'data', 'nccl-corpus')
FIXTURES = os.path.join(HERE, 'fixtures', 'nccl')

# ---------------------------------------------------------------------------
# corpus: every ground-truth field of every file

# Fields that describe the source or the poster's context; a parser cannot see them.
CONTEXT_FIELDS = {'file', 'source_url', 'source_kind', 'notes', 'transport_context', 'counts_source'}

# Ground-truth values that come from text around the paste (the .json says so in
# counts_source/notes), not from the log.  The parser must not invent them; these
# cases are strict xfails so a parser change that starts guessing shows up.
CONTEXT_VALUES = {
    ('awsome_awsbatch_p5_ompi_tags', 'nodes'): '1 node assumed from 8 ranks (8-GPU node)',
    ('awsome_awsbatch_p5_ompi_tags', 'gpus_per_node'): '8 GPUs per node assumed',
    ('issue_ncclt232_h100_2node_1gpu_tree_truncated', 'nodes'): '-np 2 from the issue text',
    ('issue_ncclt232_h100_2node_1gpu_tree_truncated', 'gpus_per_node'): 'from the issue text',
    ('issue_ncclt176_128gpu_error_column_truncated', 'ranks'): '128 GPUs from the issue text; rows only allow 91..166',
    ('issue_ncclt24_roce_ib_completion_error', 'ranks'): 'mpirun -np 2 -g 4 from the issue text',
    ('issue_ncclt24_roce_ib_completion_error', 'gpus_per_node'): 'mpirun -np 2 -g 4 from the issue text',
    ('issue_ncclt24_roce_ib_completion_error', 'collective'): 'no collective name, row or source file in the paste',
    ('issue_ncclt219_internal_error_2node', 'collective'): 'no collective name, row or source file in the paste',
    ('gcp_gke_a3high_allgather_tcpx_nocheck', 'collective'): 'validation off: all_gather and alltoall print identical rows',
    ('gcp_gke_a3high_allgather_tcpx_nocheck', 'ranks'): 'collective unknown, so the busbw factor cannot be inverted',
    ('issue_nccl428_t4_socket_debug_no_rows', 'nccl_tests_version_inferred'):
        'no table: the layout allows v2.0-v2.11; v2.0-v2.9 needs the date of the issue',
    ('issue_ncclt252_remote_network_error_cascade', 'nccl_tests_version_inferred'): 'inferred from common.cu line numbers',
    # CCI-MOC/roce-testing logs: the file name (and README.md's sendrecv_perf command) names the collective, the log does not
    ('cci_moc_h100_2node_roce_sendrecv_nogdr', 'collective'): 'from the file name sendrecv_roce_1gpu.log',
    ('cci_moc_h100_2node_4gpu_roce_sendrecv_gdrdma', 'collective'): 'from the file name sendrecv_roce_4gpu.log',
}
for _name in ('awsome_p4de_2node_srun_prefix', 'awsome_p5_2node_srun_prefix_16G', 'awsome_p5_eks_mpijob_elided',
              'awsome_p5en_topology_aware_elided', 'coreweave_h100_64gpu_sharp_elided', 'deepops_k8s_sriov_roce_2node',
              'deepops_netop_dgxa100_2node_hdr', 'deepops_slurm_4x_dgxa100', 'dstack_gcp_a4_hashes_stripped',
              'dstack_lambda_2node_hashes_stripped', 'dstack_nebius_2node_hashes_stripped', 'gcp_gke_a3high_allgather_tcpx_nocheck',
              'gcp_gke_a3mega_allgather_newfmt', 'gcp_gke_dwsflex_allgather'):
    CONTEXT_VALUES[(_name, 'nodes')] = 'node count from surrounding text or an assumed 8 GPUs per node'
    CONTEXT_VALUES[(_name, 'gpus_per_node')] = 'GPUs per node from surrounding text or assumed'


def _corpus_cases():
    cases = []
    for txt in sorted(glob.glob(os.path.join(CORPUS, '*.txt'))):
        name = os.path.basename(txt)[:-4]
        with open(txt[:-4] + '.json', encoding='utf-8') as fh:
            truth = json.load(fh)
        for field in sorted(truth):
            marks = []
            if (name, field) in CONTEXT_VALUES:
                marks.append(pytest.mark.xfail(strict=True, reason='ground truth from context: ' + CONTEXT_VALUES[(name, field)]))
            cases.append(pytest.param(name, field, marks=marks, id='%s-%s' % (name, field)))
    return cases


_CACHE = {}


def _load(name):
    if name not in _CACHE:
        with open(os.path.join(CORPUS, name + '.txt'), encoding='utf-8') as fh:
            text = fh.read()
        with open(os.path.join(CORPUS, name + '.json'), encoding='utf-8') as fh:
            truth = json.load(fh)
        _CACHE[name] = (text, truth, _nccl_parse.parse(text))
    return _CACHE[name]


def _strip_note(value):
    """'2.26.2 (surrounding text)' -> ('2.26.2', 'surrounding text')."""
    m = re.match(r'^(.*?)\s*\(([^()]*)\)$', value)
    return (m.group(1), m.group(2)) if m else (value, None)


@pytest.mark.parametrize('name,field', _corpus_cases())
def test_corpus_field(name, field):  # noqa: C901 - one comparison rule per field
    text, truth, res = _load(name)
    want = truth[field]
    if field in CONTEXT_FIELDS:
        # not a parser output; check only that the annotation exists
        assert want is not None
        return
    got = res.get(field)
    if field == 'nccl_version':
        if want is None:
            assert got is None
            return
        value, note = _strip_note(want)
        if note and ('surrounding' in note or 'context' in note):
            assert got is None, 'the log does not show the NCCL version; parser must not invent one'
        else:
            assert got is not None and got.split('+')[0] == value.split('+')[0]
            if note is None:
                assert got == want
        return
    if field == 'nccl_tests_version_inferred':
        if want is None:
            assert got is None
            return
        assert got is not None
        assert want.startswith(got), '%r is not the era of %r' % (got, want)
        return
    if field == 'wrong_column':
        if want is None:
            assert got is None
        else:
            assert got is not None and got.split()[0] == want.split()[0]
        return
    if field == 'gpu_model':
        base = _strip_note(want)[0] if want else None
        if base and base in text:
            assert got == base
        else:
            assert got is None or got in text
        return
    if field == 'transport':
        # free-text evidence in the ground truth; the parser's class must appear in it
        keyword = {'IB-verbs': 'NET/IB'}.get(res['transport_class'].split()[0], res['transport_class'])
        assert keyword in want or (keyword == 'unknown' and want.startswith('unknown'))
        return
    if field == 'errors':
        if not want:
            assert not got, got
            return
        assert got, 'errors expected: %r' % want
        for item in want:
            base = _strip_note(item)[0]
            if base in text or any(base == g for g in got):
                assert base in got, '%r missing from %r' % (base, got)
            else:
                # a human summary ("reported as a hang"): only require that some error was found
                assert got
        return
    if field == 'oop_busbw_at_largest_size' and want is not None:
        assert got == pytest.approx(want)
        return
    assert got == want


def test_corpus_summary_prints_counts():
    files = glob.glob(os.path.join(CORPUS, '*.txt'))
    assert files


# ---------------------------------------------------------------------------
# synthetic fixtures (all files in fixtures/nccl are labelled SYNTHETIC)

def _fixture(name):
    with open(os.path.join(FIXTURES, name), encoding='utf-8') as fh:
        return fh.read()


def test_synthetic_fixtures_are_labelled():
    for path in glob.glob(os.path.join(FIXTURES, '*')):
        assert 'synthetic' in os.path.basename(path)
        with open(path, encoding='utf-8') as fh:
            assert 'SYNTHETIC' in fh.read(400)


def test_synthetic_nonzero_wrong_oob_failed_min_bw_failed():
    res = _nccl_parse.parse(_fixture('synthetic_v2196_wrong_oob_minbw_failed.txt'))
    assert res['nccl_tests_version'] == '2.19.6'
    assert res['nccl_version'] == '2.28.3'
    assert res['collective'] == 'all_reduce'
    assert (res['ranks'], res['nodes'], res['gpus_per_node']) == (16, 2, 8)
    assert res['out_of_bounds'] == '2 FAILED'
    assert res['out_of_bounds_count'] == 2
    assert res['avg_bus_bandwidth'] == '95.4321'
    assert res['avg_bus_bandwidth_check'] == 'FAILED'
    assert res['any_nonzero_wrong'] is True
    wrong = [(r['size'], k, r[k]['wrong']) for r in res['rows'] for k in ('out_of_place', 'in_place') if r[k]['wrong']]
    assert wrong == [(1 << 24, 'out_of_place', 3), (1 << 28, 'in_place', 1)]
    assert 'Out of bounds values : 2 FAILED' in res['errors']
    assert res['truncated'] is False
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 30, 'max_size': None, 'min_busbw': 100}])
    assert any('#wrong above 0 at 16777216 B out-of-place: 3' in line and '268435456 B in-place: 1' in line for line in lines)


def test_synthetic_per_iteration_timestamps_srun_roce():
    res = _nccl_parse.parse(_fixture('synthetic_v2196_per_iter_srun_roce.txt'))
    assert res['size_rows'] == 11
    row = res['rows'][-1]
    assert row['size'] == 1 << 30
    assert row['out_of_place']['i_cv_pct'] == 3.25
    assert row['out_of_place']['i_max_us'] is not None
    assert row['timestamp'].startswith('2026-03-01 12:00:')
    assert res['transport'] == 'RoCE' and res['transport_class'] == 'RoCE'
    assert res['gdr_active'] is True
    assert res['nccl_version'] == '2.28.3+cuda12.9'
    assert (res['ranks'], res['nodes']) == (16, 2)
    assert res['complete'] is True
    assert _nccl_gate.gate(res, [{'min_size': 1 << 30, 'max_size': 1 << 30, 'min_busbw': 150}], require_transport='RoCE', require_gdr=True,
                           require_complete=True) == []


def test_synthetic_json_output():
    res = _nccl_parse.parse(_fixture('synthetic_v2196_json_output.json'))
    assert res['format'] == 'json'
    assert res['collective'] == 'all_reduce'
    assert res['nccl_version'] == '2.28.3'
    assert res['size_rows'] == 11
    assert res['largest_size_bytes'] == 1 << 30
    assert res['oop_busbw_at_largest_size'] == pytest.approx(149.78, abs=0.01)
    assert res['out_of_bounds'] == '0 OK'
    assert res['avg_bus_bandwidth'] == '101.25'
    assert (res['ranks'], res['nodes'], res['gpus_per_node']) == (16, 2, 8)
    assert res['truncated'] is False
    doc = json.loads(_fixture('synthetic_v2196_json_output.json'))
    del doc['end_time']
    doc['results'] = doc['results'][:3]
    cut = _nccl_parse.parse(json.dumps(doc))
    assert cut['truncated'] is True and cut['size_rows'] == 3


def test_synthetic_2017_layout():
    res = _nccl_parse.parse(_fixture('synthetic_v100_2017_all_gather.txt'))
    assert res['nccl_tests_version_inferred'] == 'v1.x (2017)'
    assert res['collective'] == 'all_gather'
    assert res['rows'][0]['out_of_place']['time_us'] == pytest.approx(45.0)    # printed in ms
    assert res['wrong_column'].startswith('error')
    assert res['avg_bus_bandwidth'] == '41.7302'
    assert res['out_of_bounds'] == '0 OK'
    assert (res['ranks'], res['nodes'], res['gpus_per_node']) == (8, 1, 8)
    assert res['truncated'] is False


def test_synthetic_mpirun_independent_runs_refused():
    res = _nccl_parse.parse(_fixture('synthetic_mpirun_interleaved_independent_runs.txt'))
    assert res['independent_runs'] is True
    assert res['size_rows'] == 6
    assert res['transport'] == 'Socket'
    assert res['complete'] is False
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 20, 'max_size': None, 'min_busbw': 1}])
    assert any('independent runs' in line for line in lines)


def test_prefixes_and_rank_labels_inside_rows():
    row = '     8388608       2097152     float     sum      -1    204.8   40.96   76.80      0    201.1   41.71   78.20      0'
    for prefix in ('[1,3]<stdout>:', '0: ', '12: ', '   '):
        res = _nccl_parse.parse(prefix + row + '\n')
        assert res['size_rows'] == 1 and res['rows'][0]['out_of_place']['busbw'] == 76.80
    res = _nccl_parse.parse('[3] ' + row[:60] + '[3] ' + row[60:] + '\n')
    assert res['size_rows'] == 1 and res['rows'][0]['in_place']['busbw'] == 78.20


def test_cut_row_is_not_counted():
    text = ('#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n'
            '     8388608       2097152     float     sum      -1    204.8   40.96   76.80      0    201.1   41.71   78.20      0\n'
            '    16777216       4194304     float     sum      -1    298.1   56.28  105.52\n')
    res = _nccl_parse.parse(text)
    assert res['size_rows'] == 1
    assert res['truncated'] is True


def test_transport_rules():
    base = 'h1:1:1 [0] NCCL INFO '
    ib = _nccl_parse.parse(base + 'NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB\n' + base + 'Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n')
    assert ib['transport'] == 'IB' and ib['gdr_active'] is False
    ports_only = _nccl_parse.parse(base + 'NET/IB : Using [0]mlx5_0:1/RoCE\n' + base + 'Using network IB\n')
    assert ports_only['transport'] == 'unknown'        # rule 1: ports alone do not prove the data path
    mixed = _nccl_parse.parse(base + 'NET/IB : Using [0]mlx5_0:1/RoCE\n' + base + 'Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n'
                              + base + 'Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1\n')
    assert mixed['transport'] == 'RoCE' and mixed['gdr_active'] is False
    summary = _nccl_parse.parse(base + 'Connected all rings, use ring PXN 0 GDR 1\n')
    assert summary['gdr_active'] is True
    socket = _nccl_parse.parse(base + 'NET/IB : Using [0]mlx5_0:1/IB\n' + base + 'Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n')
    assert socket['transport'] == 'Socket' and socket['gdr_active'] is False
    nvl = _nccl_parse.parse('#  Rank  0 Group  0 Pid 1 on h1 device  0 [0x01] GPU\n#  Rank  1 Group  0 Pid 1 on h1 device  1 [0x02] GPU\n#\n'
                            + base + 'Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n')
    assert nvl['transport'] == 'NVLink-only'
    none = _nccl_parse.parse('')
    assert none['transport'] == 'unknown' and none['gdr_active'] == 'unknown'


# ---------------------------------------------------------------------------
# gate

def _corpus(name):
    return _load(name)[2]


TARGET_1G = {'min_size': 1 << 30, 'max_size': None, 'min_busbw': 180.0, 'placement': 'out_of_place'}


def test_gate_pass():
    res = _corpus('deepops_netop_dgxa100_2node_hdr')
    assert _nccl_gate.gate(res, [TARGET_1G]) == []


def test_gate_busbw_below_target_names_value():
    res = _corpus('deepops_netop_dgxa100_2node_hdr')
    lines = _nccl_gate.gate(res, [dict(TARGET_1G, min_busbw=185.0)])
    assert lines == ['all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 181.62 GB/s < target 185.00 GB/s']


def test_gate_truncated_before_size():
    res = _corpus('issue_ncclt232_h100_2node_1gpu_tree_truncated')
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 30, 'max_size': 1 << 30, 'min_busbw': 10}], require_complete=False)
    assert len(lines) == 1 and 'no data' in lines[0] and '33554432 B' in lines[0]
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 20, 'max_size': 1 << 30, 'min_busbw': 10}], require_complete=False)
    assert len(lines) == 1 and 'stops' in lines[0]
    # require_complete is the default: the missing footer is a line of its own
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 20, 'max_size': 1 << 30, 'min_busbw': 10}])
    assert len(lines) == 2 and lines[1] == 'all_reduce_perf: the log is incomplete: no "Avg bus bandwidth" footer'


def test_gate_no_rows_and_crash():
    res = _corpus('issue_ncclt252_remote_network_error_cascade')
    lines = _nccl_gate.gate(res, [TARGET_1G])
    assert any('no result rows' in line for line in lines)
    assert any('failure' in line for line in lines)
    assert any('no data' in line for line in lines)
    crashed = _corpus('issue_nccl1184_midrun_failure_fragment')
    lines = _nccl_gate.gate(crashed, [{'min_size': 524288, 'max_size': 524288, 'min_busbw': 0.1}])
    assert lines and 'invalid usage' in lines[0]


def test_gate_na_cells():
    res = _corpus('gcp_gke_a3high_allgather_tcpx_nocheck')
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 29, 'max_size': None, 'min_busbw': 10}])
    assert any('no correctness evidence' in line for line in lines)
    assert not _nccl_gate.gate(res, [{'min_size': 1 << 29, 'max_size': None, 'min_busbw': 10}], require_correctness=False)
    text = '     1048576        262144     float     sum      -1   1000.0    1.05     N/A      0   1000.0    1.05    1.97      0\n'
    res = _nccl_parse.parse(text)
    lines = _nccl_gate.gate(res, [{'min_size': 1 << 20, 'max_size': None, 'min_busbw': 1}])
    assert any('N/A (no measurement)' in line for line in lines)


def test_gate_transport_gdr_and_complete():
    res = _corpus('awsefaeks_p4d_2node_efa_debug_info')
    assert _nccl_gate.gate(res, [], require_transport='EFA', require_gdr=True, require_complete=True) == []
    lines = _nccl_gate.gate(res, [], require_transport=['IB', 'RoCE'])
    assert len(lines) == 1 and 'EFA' in lines[0]
    unknown = _corpus('deepops_netop_dgxa100_2node_hdr')
    lines = _nccl_gate.gate(unknown, [], require_transport='IB', require_gdr=True)
    assert len(lines) == 2 and 'unknown' in lines[0] and 'not proven' in lines[1]
    elided = _corpus('awsome_p5_eks_mpijob_elided')
    lines = _nccl_gate.gate(elided, [], require_complete=True)
    assert len(lines) == 1 and 'incomplete' in lines[0]


def test_gate_collective_filter():
    res = _corpus('gcp_gke_dwsflex_allgather')
    assert _nccl_gate.gate(res, [dict(TARGET_1G, collective='all_reduce_perf', min_busbw=1000)], require_complete=False) == []
    lines = _nccl_gate.gate(res, [dict(TARGET_1G, collective='all_gather', min_busbw=1000)], require_complete=False)
    assert lines and lines[0].startswith('all_gather_perf out-of-place busbw')


def test_gate_wrong_counts():
    text = ('     1048576        262144     float     sum      -1   1000.0    1.05    1.97      5   1000.0    1.05    1.97      0\n'
            '# Out of bounds values : 1 FAILED\n# Avg bus bandwidth    : 1.97 \n')
    res = _nccl_parse.parse(text)
    assert any('1048576 B out-of-place: 5' in line for line in _nccl_gate.gate(res, []))
    assert not any('#wrong' in line for line in _nccl_gate.gate(res, [], max_wrong=5))


# ---------------------------------------------------------------------------
# compare (synthetic samples)

def _launch(busbw, size=1 << 30, transport='RoCE', gdr=True):
    row = {'size': size, 'count': size // 4, 'type': 'float', 'redop': 'sum', 'root': -1,
           'out_of_place': {'time_us': 1.0, 'algbw': busbw / 1.875, 'busbw': busbw, 'wrong': 0, 'max_delta': None},
           'in_place': {'time_us': 1.0, 'algbw': busbw / 1.875, 'busbw': busbw, 'wrong': 0, 'max_delta': None}}
    return {'rows': [row], 'transport': transport, 'gdr_active': gdr}


def test_exact_mann_whitney_known_values():
    assert _nccl_stats.mann_whitney_less([10, 11, 12], [7, 8, 9])[0] == pytest.approx(1 / 20)
    assert _nccl_stats.mann_whitney_less([10, 11, 12, 13, 14], [7, 8, 9, 9.5, 9.7])[0] == pytest.approx(1 / 252)
    # ties: the pooled values are all equal, so every split is equally extreme
    assert _nccl_stats.mann_whitney_less([5, 5, 5], [5, 5, 5])[0] == pytest.approx(1.0)
    p, _min_p, _m = _nccl_stats.mann_whitney_less([1, 2, 3, 4], [5, 6, 7, 8])
    assert p == pytest.approx(1.0)


def test_compare_clear_regression():
    pre = [_launch(v) for v in (380, 382, 379, 381, 383, 380)]
    post = [_launch(v) for v in (300, 302, 299, 301, 303, 298)]
    out = _nccl_stats.compare(pre, post, None, 5.0)
    ent = out['sizes'][0]
    assert out['verdict'] == 'regressed' and ent['verdict'] == 'regressed'
    assert ent['p_value'] < 0.01
    assert ent['hl_ratio'] == pytest.approx(300.5 / 380.5, rel=0.01)
    assert ent['ci_low'] < ent['hl_ratio'] < ent['ci_high'] < 1.0


def test_compare_no_change():
    pre = [_launch(v) for v in (380, 382, 379, 381, 383, 380)]
    post = [_launch(v) for v in (381, 380, 382, 379, 383, 381)]
    out = _nccl_stats.compare(pre, post, [1 << 30], 5.0)
    assert out['verdict'] == 'ok', out


def test_compare_noise_only():
    pre = [_launch(v) for v in (300, 380, 340, 390, 310, 360)]
    post = [_launch(v) for v in (320, 370, 300, 385, 330, 350)]
    ent = _nccl_stats.compare(pre, post, [1 << 30], 5.0)['sizes'][0]
    assert ent['verdict'] != 'regressed'
    assert ent['threshold_percent'] == pytest.approx(2 * 100 * 90 / 350)


def test_compare_too_few_samples():
    pre = [_launch(v) for v in (380, 381, 382)]
    post = [_launch(v) for v in (200, 201, 202)]
    ent = _nccl_stats.compare(pre, post, [1 << 30], 5.0)['sizes'][0]
    assert ent['verdict'] == 'inconclusive'
    assert 'cannot be reached' in ent['reason']
    assert ent['min_p_value'] == pytest.approx(0.05)


def test_compare_transport_change_and_missing_size():
    pre = [_launch(v) for v in (380, 381, 382, 383)]
    post = [_launch(v, transport='Socket', gdr=False) for v in (380, 381, 382, 383)]
    out = _nccl_stats.compare(pre, post, None, 5.0)
    assert out['transport']['changed'] and out['gdr_active']['changed']
    assert any('transport changed' in f for f in out['flags'])
    out = _nccl_stats.compare(pre, [{'rows': []}], [1 << 30], 5.0)
    assert out['verdict'] == 'inconclusive'


def test_compare_with_targets_picks_sizes():
    pre = [_launch(v) for v in (380, 381, 382, 383)]
    post = [_launch(v) for v in (380, 381, 382, 383)]
    out = _nccl_stats.compare(pre, post, None, 5.0, targets=[{'min_size': 1 << 30, 'max_size': None, 'min_busbw': 350}])
    assert out['sizes'][0]['size'] == 1 << 30 and out['sizes'][0]['post_median_meets_target'] is True


# ---------------------------------------------------------------------------
# robustness

def _all_texts():
    texts = [_fixture(os.path.basename(p)) for p in sorted(glob.glob(os.path.join(FIXTURES, '*')))]
    for p in sorted(glob.glob(os.path.join(CORPUS, '*.txt'))):
        with open(p, encoding='utf-8') as fh:
            texts.append(fh.read())
    assert len(texts) > 20, 'the corpus travels with the repository: tests/data/nccl-corpus'
    return texts


def test_parse_never_raises_on_mangled_input():
    rng = random.Random(1234)
    garbage = ['', '\x00\xff', '#', '# size count type', '1 2 x', '1 2 float sum -1 a b c d e f g h', 'NCCL INFO', 'x NCCL WARN',
               '[1,0]<stdout>:', '0: ', ' '.join(['9'] * 40), '{"results": [1, {"size": "x"}]}', '{"config": 5}', '{',
               'h:1:2 [0] NCCL INFO Channel 00 : via NET/', 'Rank 0 on x device y [', '# Avg bus bandwidth :', '# Out of bounds values :']
    for text in _all_texts():
        lines = text.splitlines()
        for _attempt in range(25):
            mode = rng.randrange(5)
            if mode == 0:
                mangled = text[:rng.randrange(len(text) + 1)]
            elif mode == 1:
                shuffled = lines[:]
                rng.shuffle(shuffled)
                mangled = '\n'.join(shuffled)
            elif mode == 2:
                mangled = '\n'.join(ln[:rng.randrange(len(ln) + 1)] for ln in lines)
            elif mode == 3:
                mangled = '\n'.join(rng.choice(garbage) if rng.random() < 0.2 else ln for ln in lines)
            else:
                chars = list(text)
                for _i in range(20):
                    if chars:
                        chars[rng.randrange(len(chars))] = chr(rng.randrange(1, 0x2100))
                mangled = ''.join(chars)
            res = _nccl_parse.parse(mangled)
            assert isinstance(res, dict) and isinstance(res['rows'], list)
            _nccl_gate.gate(res, [TARGET_1G], require_transport='IB', require_gdr=True, require_complete=True)
    for junk in garbage + [None, b'bytes \xff', 12]:
        assert isinstance(_nccl_parse.parse(junk), dict)


def test_duplicated_paste_is_flagged():
    text = _load('gcp_a3mega_h100_2node')[0]
    res = _nccl_parse.parse(text + text)
    assert res['size_rows'] == 62
    assert res['independent_runs'] is True
    assert res['warnings']
