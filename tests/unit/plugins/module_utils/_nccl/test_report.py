# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests for plugins/module_utils/_nccl/_report.py (series, plot, report dict, Markdown) and _common/_markdown, _common/_report_files (cells, file sync).

Real logs from the public corpus; the numbers asserted are read off those logs."""
from __future__ import annotations

import json
import os
import struct

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._common import _markdown, _report_files
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _report
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as _nccl_stats

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
CORPUS = os.path.join(REPO, 'tests', 'data', 'nccl-corpus')
PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
GIB = 1 << 30


def _log(name):
    with open(os.path.join(CORPUS, name + '.txt'), encoding='utf-8') as handle:
        return handle.read()


@pytest.fixture(scope='module')
def hdr():
    """2 x DGX A100, 8 x HDR: 181.62 GB/s out-of-place at 1 GiB, 188.53 at 4 GiB (no debug lines)."""
    return _nccl_parse.parse(_log('deepops_netop_dgxa100_2node_hdr'))


@pytest.fixture(scope='module')
def slurm4():
    """4 x DGX A100 over Slurm: 178.69 GB/s out-of-place at 1 GiB, 191.05 at 4 GiB; starts at 1 MiB."""
    return _nccl_parse.parse(_log('deepops_slurm_4x_dgxa100'))


@pytest.fixture(scope='module')
def efa():
    """2 x p4d over EFA with NCCL_DEBUG=INFO: transport EFA, GDR proven; 42.48/42.46 GB/s at 1 GiB."""
    return _nccl_parse.parse(_log('awsefaeks_p4d_2node_efa_debug_info'))


def _settings(min_busbw, **extra):
    fabric = {'collectives': {'all_reduce_perf': [{'min_size': '1G', 'min_busbw': min_busbw}]}}
    fabric.update(extra)
    settings, errors = _nccl_gate.gate_settings({'fabric_targets': fabric, 'require_complete': True}, *_intent_targets.fabric_targets(fabric))
    assert not errors
    return settings


def _png_size(path):
    with open(path, 'rb') as handle:
        data = handle.read(32)
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b'IHDR'
    return struct.unpack('>II', data[16:24])


# ---------------------------------------------------------------------------
# sizes

@pytest.mark.parametrize('size, label', [(8, '8'), (1024, '1K'), (1536, '1536'), (1 << 20, '1M'), (512 << 20, '512M'),
                                         (GIB, '1G'), (3 * GIB, '3G'), (16 * GIB, '16G')])
def test_size_label(size, label):
    assert _report.size_label(size) == label


def test_log2_span_keeps_the_right_edge_and_at_most_twelve_ticks():
    left, right, ticks = _report._log2_span(8, 4 * GIB)
    assert (left, right) == (8, 4 * GIB)
    assert ticks[-1] == 4 * GIB and len(ticks) <= 12
    assert all(t & (t - 1) == 0 for t in ticks)
    # a size between powers of two is rounded out
    assert _report._log2_span(3000, 3 * GIB)[:2] == (2048, 4 * GIB)


# ---------------------------------------------------------------------------
# series

def test_series_is_the_median_per_size_over_launches(hdr, slurm4):
    series = _report.busbw_series([hdr, slurm4, hdr], 'post')
    points = dict(series['points'])
    assert series['label'] == 'post' and series['placement'] == 'out_of_place'
    assert points[GIB] == 181.62            # median of 181.62, 178.69, 181.62
    assert points[4 * GIB] == 188.53        # median of 188.53, 191.05, 188.53
    # sizes below 1 MiB only the two hdr launches printed; every point says how many launches it rests on
    by_size = dict(zip([p[0] for p in series['points']], series['launches']))
    assert by_size[8] == 2 and by_size[GIB] == 3
    assert [p[0] for p in series['points']] == sorted(p[0] for p in series['points'])


def test_series_of_two_launches_is_their_mean_and_in_place_is_its_own(hdr, slurm4):
    assert dict(_report.busbw_series([hdr, slurm4], 'x')['points'])[GIB] == pytest.approx((181.62 + 178.69) / 2)
    in_place = dict(_report.busbw_series([slurm4], 'x', 'in_place')['points'])
    assert in_place[GIB] == slurm4['rows'][[r['size'] for r in slurm4['rows']].index(GIB)]['in_place']['busbw']


def test_series_takes_raw_logs_like_parsed_results(hdr):
    assert _report.busbw_series([_log('deepops_netop_dgxa100_2node_hdr')], 'a')['points'] == \
        _report.busbw_series([hdr], 'a')['points']


def test_series_refuses_an_unknown_placement(hdr):
    with pytest.raises(ValueError, match="placement: 'both'"):
        _report.busbw_series([hdr], 'x', 'both')


def test_series_of_a_log_without_rows_is_empty():
    crashed = _nccl_parse.parse(_log('issue_ncclt219_internal_error_2node'))
    assert _report.busbw_series([crashed], 'x')['points'] == []


# ---------------------------------------------------------------------------
# plot

def test_plot_writes_a_png_with_one_line_per_series_and_target(tmp_path, hdr, slurm4):
    targets = _settings(180)['targets'] + [{'min_size': 64 << 20, 'max_size': 512 << 20, 'min_busbw': 120}]
    path = str(tmp_path / 'p.png')
    info = _report.plot_busbw([_report.busbw_series([hdr], 'pre'), _report.busbw_series([slurm4], 'post')], targets, path, 'pre vs post')
    assert _png_size(path) == (900, 550)
    assert info['bytes'] == os.path.getsize(path) > 10000
    # counted on the matplotlib figure itself: 2 series + 2 targets
    assert info['lines_drawn'] == 4
    assert [ln['kind'] for ln in info['lines']] == ['series', 'series', 'target', 'target']
    assert [ln['label'] for ln in info['lines'][:2]] == ['pre', 'post']
    # a target without max_size runs to the largest size; one with max_size stops there
    assert info['lines'][2]['points'] == [[GIB, 180.0], [4 * GIB, 180.0]]
    assert info['lines'][3]['points'] == [[64 << 20, 120.0], [512 << 20, 120.0]]
    assert info['x_tick_labels'][-1] == '4G' and '1M' in info['x_tick_labels']
    assert info['y_label'] == 'busbw (GB/s)' and 'log 2' in info['x_label'] and info['title'] == 'pre vs post'


def test_plot_is_byte_identical_for_the_same_data(tmp_path, hdr):
    series = [_report.busbw_series([hdr], 'run')]
    _report.plot_busbw(series, _settings(180)['targets'], str(tmp_path / 'a.png'), 't')
    _report.plot_busbw(series, _settings(180)['targets'], str(tmp_path / 'b.png'), 't')
    assert (tmp_path / 'a.png').read_bytes() == (tmp_path / 'b.png').read_bytes()


def test_plot_of_a_crashed_run_still_shows_the_target(tmp_path):
    path = str(tmp_path / 'empty.png')
    info = _report.plot_busbw([{'label': 'crashed', 'points': []}], [{'min_size': '1G', 'min_busbw': 100}], path, 'no rows')
    assert _png_size(path)[0] == 900
    assert info['lines_drawn'] == 2 and info['lines'][1]['points'][0] == [GIB, 100.0]


# ---------------------------------------------------------------------------
# report

def test_report_passes_when_every_launch_meets_every_requirement(efa):
    settings = _settings(40, require_transport='EFA', require_gdr=True)
    report = _report.benchmark_report([efa, efa], 'bench', settings)
    assert report['verdict'] == 'pass' and report['unmet'] == []
    first = report['launches'][0]
    assert first['name'] == 'launch 1' and first['collective'] == 'all_reduce' and first['ranks'] == 16
    assert first['transport'] == 'EFA' and first['gdr_active'] is True
    assert first['oop_busbw_at_largest_size'] == 43.81 and first['largest_size_bytes'] == 4 * GIB
    assert first['avg_bus_bandwidth'] == efa['avg_bus_bandwidth']
    assert first['gate']['verdict'] == 'pass'
    assert {c['requirement'] for c in first['gate']['checked']} >= {'all_reduce_perf: transport EFA', 'all_reduce_perf: GPUDirect RDMA active'}
    assert report['targets']['busbw'] == [{'collective': 'all_reduce', 'min_size': GIB, 'max_size': None, 'min_size_human': '1 GiB',
                                           'max_size_human': None, 'min_busbw': 40.0, 'placement': 'both'}]
    assert report['targets']['require_transport'] == ['EFA'] and report['targets']['require_gdr'] is True
    row = next(r for r in report['sizes'] if r['size'] == GIB)
    assert row['out_of_place'] == {'median': 42.48, 'min': 42.48, 'max': 42.48, 'n': 2}
    assert row['target_busbw'] == 40.0 and row['median_meets_target'] is True
    assert report['generated_at'] is None and report['plot'] == 'bench.png'


def test_report_fails_naming_launch_target_and_measured_value(efa, hdr):
    report = _report.benchmark_report([efa, hdr], 'bench', _settings(43, require_gdr=True), phase='post')
    assert report['verdict'] == 'fail'
    assert report['launches'][0]['name'] == 'post launch 1'
    assert ('post launch 1: all_reduce_perf in-place busbw at 1073741824 B (1 GiB): 42.46 GB/s < target 43.00 GB/s '
            '(1 more cell(s) in range below target)') in report['unmet']
    # the second launch meets the busbw target but its log cannot prove GPUDirect RDMA
    assert [line for line in report['unmet'] if line.startswith('post launch 2:')] == [
        'post launch 2: all_reduce_perf: GPUDirect RDMA is not proven, required active (evidence: no NCCL_DEBUG=INFO GDR lines)']
    assert [e['gate']['verdict'] for e in report['launches']] == ['fail', 'fail']


def test_report_counts_a_failed_launch_and_uses_its_name(efa):
    crashed = _nccl_parse.parse(_log('issue_ncclt219_internal_error_2node'))
    items = [dict(efa, item={'name': 'nccl-ar-x1-1', 'status': 'succeeded', 'rc': 0, 'log': 'L' * 100}),
             dict(crashed, item={'name': 'nccl-ar-x1-2', 'status': 'failed', 'rc': 1, 'log': 'crash',
                                 'message': 'MPIJob nccl-ar-x1-2: condition Failed reason BackoffLimitExceeded\nmore'}),
             dict(crashed, item={'name': 'nccl-ar-x1-3', 'status': 'timeout', 'rc': None, 'log': ''})]
    report = _report.benchmark_report(items, 'bench', _settings(40))
    assert [e['name'] for e in report['launches']] == ['nccl-ar-x1-1', 'nccl-ar-x1-2', 'nccl-ar-x1-3']
    assert report['launches'][1]['status'] == 'failed' and report['launches'][1]['rc'] == 1
    assert report['unmet'][0] == 'nccl-ar-x1-2: the launch failed (rc 1): MPIJob nccl-ar-x1-2: condition Failed reason BackoffLimitExceeded'
    assert 'nccl-ar-x1-3: the launch timed out' in report['unmet']
    assert [e['gate']['verdict'] for e in report['launches']] == ['pass', 'fail', 'fail']
    assert any(line.startswith('nccl-ar-x1-2: nccl-tests: no result rows') for line in report['unmet'])
    assert 'L' * 100 not in _report.report_json(report)


def test_report_uses_each_results_own_gate_without_settings(efa):
    gated = dict(efa, gate=_nccl_gate.gate_report(efa, _settings(43)))
    report = _report.benchmark_report([gated], 'bench')
    assert report['verdict'] == 'fail' and report['targets'] is None
    assert report['unmet'][0].startswith('launch 1: all_reduce_perf in-place busbw at 1073741824 B')
    assert _report.benchmark_report([efa], 'bench')['verdict'] == 'not gated'


def test_report_without_launches_fails():
    report = _report.benchmark_report([], 'bench', _settings(40))
    assert report['verdict'] == 'fail' and report['unmet'] == ['no launch to report (the benchmark produced no log)']


def test_report_with_baseline_and_compare(hdr, slurm4):
    settings = _settings(180)
    pre = [hdr] * 5
    post = [slurm4] * 5
    cmp = _nccl_stats.compare_report(pre, post, settings)
    report = _report.benchmark_report(post, 'window', settings, baseline=pre, compare=cmp, phase='post', baseline_label='pre')
    assert [s['label'] for s in report['series']] == ['pre', 'post']
    assert report['baseline_launches'] == 5
    row = next(r for r in report['sizes'] if r['size'] == GIB)
    assert row['baseline']['median'] == 181.62 and row['out_of_place']['median'] == 178.69
    assert row['compare']['verdict'] == cmp['sizes'][0]['verdict']
    assert report['compare']['verdict'] == cmp['verdict'] and report['compare']['n_pre'] == 5
    # every unmet line of the comparison is a reason to fail, marked as such
    assert cmp['unmet'] and all('compare: %s' % line in report['unmet'] for line in cmp['unmet'])
    assert report['verdict'] == 'fail'


def test_report_json_is_deterministic_and_json_able(efa):
    settings = _settings(40, require_gdr=True)
    one = _report.report_json(_report.benchmark_report([efa], 'bench', settings))
    two = _report.report_json(_report.benchmark_report([_log('awsefaeks_p4d_2node_efa_debug_info')], 'bench', settings))
    assert one == two and one.endswith('}\n')
    assert json.loads(one)['verdict'] == 'pass'
    assert list(json.loads(one)) == sorted(json.loads(one))
    stamped = _report.benchmark_report([efa], 'bench', settings, generated_at='2026-11-30T07:00:00Z')
    assert stamped['generated_at'] == '2026-11-30T07:00:00Z'


def test_slim_result_drops_the_log_and_the_module_arguments(efa):
    item = dict(efa, item={'name': 'n-1', 'status': 'succeeded', 'rc': 0, 'duration_s': 12.5, 'log': 'x'},
                invocation={'module_args': {'content': 'x'}}, changed=False, failed=False, msg='m')
    slim = _report.slim_result(item)
    assert slim['launch'] == {'name': 'n-1', 'status': 'succeeded', 'rc': 0, 'duration_s': 12.5}
    assert not {'item', 'invocation', 'changed', 'failed', 'msg'} & set(slim)
    assert slim['rows'] == efa['rows'] and slim['transport'] == 'EFA'
    assert _report.slim_result(slim) == slim
    with pytest.raises(ValueError, match=r'results\[3\]'):
        _report.slim_result({'skipped': True}, 'results[3]')


# ---------------------------------------------------------------------------
# Markdown

def test_markdown_has_verdict_unmet_launch_and_size_tables(efa, hdr):
    report = _report.benchmark_report([efa, hdr], 'bench', _settings(43, require_gdr=True), phase='post', title='Gate | lab')
    md = _report.benchmark_markdown(report)
    lines = md.splitlines()
    assert lines[0] == '# Gate \\| lab'
    assert 'Verdict: **FAIL**' in lines
    assert '- post launch 1: all_reduce_perf in-place busbw at 1073741824 B (1 GiB): 42.46 GB/s < target 43.00 GB/s ' \
           '(1 more cell(s) in range below target)' in lines
    assert '| all_reduce | 1 GiB+ | both | 43 |' in lines
    assert 'Transport: not required. GPUDirect RDMA: required. #wrong at most 0 in every cell; complete logs required.' in lines
    launch_rows = [ln for ln in lines if ln.startswith('| post launch ')]
    assert launch_rows == [
        '| post launch 1 | - | all_reduce | 16 | 2 | EFA | yes | 43.81 @ 4 GiB | %s | %d | FAIL |' % (
            efa['avg_bus_bandwidth'], len(efa['errors'])),
        '| post launch 2 | - | all_reduce | 16 | - | unknown | unknown | 188.53 @ 4 GiB | 53.7098 | 0 | FAIL |']
    assert '| 1 GiB | 1073741824 | 112.05 (42.48..181.62, n=2) | 112.80 | 43 |' in lines
    assert lines[-1] == '![busbw against message size](bench.png)'


def test_markdown_of_a_comparison_has_its_columns(hdr):
    settings = _settings(180)
    cmp = _nccl_stats.compare_report([hdr] * 5, [hdr] * 5, settings)
    md = _report.benchmark_markdown(_report.benchmark_report([hdr] * 5, 'w', settings, baseline=[hdr] * 5, compare=cmp))
    assert '| size | bytes | baseline out-of-place median | out-of-place median (min..max) | in-place median | target | compare | post/pre (CI) | p |' in md
    assert '## Comparison with the baseline' in md
    assert '| 1 GiB | 1073741824 | 181.62 | 181.62 (181.62..181.62, n=5) |' in md


def test_md_cell_and_md_table_keep_a_row_one_row():
    # the helpers every report's tables use (_change_report's too)
    assert [_markdown.md_cell(v) for v in (None, True, False, 0, 'a|b', 'two\r\nlines')] == ['-', 'yes', 'no', '0', 'a\\|b', 'two  lines']
    assert _markdown.md_cell(181.6234, '%.2f') == '181.62' and _markdown.md_cell('x', '%.2f') == 'x'
    assert _markdown.md_table(['a', 'b'], [['1', _markdown.md_cell('x|y')]]) == ['| a | b |', '|---|---|', '| 1 | x\\|y |']


# ---------------------------------------------------------------------------
# files

def test_render_files_gives_the_three_files(tmp_path, efa):
    files = _report.render_files(_report.benchmark_report([efa], 'bench', _settings(40)), str(tmp_path))
    assert sorted(files) == ['bench.json', 'bench.md', 'bench.png']
    assert files['bench.png'][:8] == PNG_SIGNATURE
    assert json.loads(files['bench.json'])['name'] == 'bench'


def test_sync_files_writes_only_what_changed(tmp_path):
    where = str(tmp_path / 'reports' / 'lab')
    files = {'a.json': b'{}\n', 'a.md': b'# a\n'}
    checked = _report_files.sync_files(where, files, check_mode=True)
    assert checked['changed'] and checked['created_dir'] and checked['written'] == ['a.json', 'a.md']
    assert not os.path.exists(where)
    assert checked['diff'][1] == {'before_header': os.path.join(where, 'a.md') + ' (absent)', 'after_header': os.path.join(where, 'a.md'),
                                  'before': '', 'after': '# a\n'}
    first = _report_files.sync_files(where, files)
    assert first['changed'] and sorted(os.listdir(where)) == ['a.json', 'a.md']
    assert oct(os.stat(os.path.join(where, 'a.md')).st_mode & 0o777) == '0o644'
    again = _report_files.sync_files(where, files)
    assert not again['changed'] and again['written'] == [] and again['diff'] == []
    files['a.md'] = b'# b\n'
    files['a.png'] = PNG_SIGNATURE + b'rest'
    partial = _report_files.sync_files(where, files, check_mode=True)
    assert partial['written'] == ['a.md', 'a.png'] and partial['unchanged'] == ['a.json']
    assert partial['diff'][0]['before'] == '# a\n' and partial['diff'][0]['after'] == '# b\n'
    assert partial['diff'][1]['after'].startswith('<PNG, 12 bytes, sha256 ')
    with open(os.path.join(where, 'a.md'), 'rb') as handle:
        assert handle.read() == b'# a\n'    # check mode wrote nothing
    assert [n for n in os.listdir(where) if n.startswith('.')] == []    # no temp file left
