# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""nccl-tests output parser.

Pure Python 3.11 standard library; no Ansible imports, so the lab, the
modules and the unit tests share one implementation.

``parse(text)`` reads nccl-tests stdout of every release (2017 layout to
2.20), ``-J`` JSON files, launcher prefixes and ``NCCL_DEBUG=INFO`` noise,
and returns one flat dict (see ``parse``).  It never raises on text input.
``load_launch`` turns any form a playbook holds (a log, a registered command,
a slurp, an nccl_result result) into such a dict.

Print formats are those of NVIDIA/nccl-tests src/common.cu and src/util.cu
(docs/benchmark.md, "What the gate reads", cites them per version); format
facts are also in shared/reference/nccl-tests.md (sections 5, 6, 8 and 10),
the section numbers in comments refer to that file.
"""
from __future__ import annotations

import collections
import gc
import json
import math
import re

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as V

# ---------------------------------------------------------------------------
# constants

# busbw = algbw * factor(n); section 6.  None: factor 1, the rank count cannot be recovered.
_FACTOR = {
    'all_reduce': lambda n: 2.0 * (n - 1) / n,
    'reduce_scatter': lambda n: (n - 1) / n,
    'all_gather': lambda n: (n - 1) / n,
    'alltoall': lambda n: (n - 1) / n,
    'alltoallv': lambda n: (n - 1) / n,
    'gather': lambda n: (n - 1) / n,
    'scatter': lambda n: (n - 1) / n,
}

_WRONG_COUNT = '#wrong (count of wrong elements)'
_WRONG_DELTA = 'error (max deviation, pre-2.13)'
_WRONG_COUNT_INFERRED = '#wrong (count; inferred from integer values, no header)'

TRANSPORTS = V.TRANSPORTS + (V.UNKNOWN_TRANSPORT,)   # values of a result's 'transport'
_IB_VERBS = 'IB-verbs (IB or RoCE not distinguishable)'

# launcher prefixes; section 10
_RE_MPI_TAG = re.compile(r'^\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:\s?')
_RE_SRUN = re.compile(r'^\s*\d+: ')
_SRUN_START = frozenset(' 0123456789')
_INF = (float('inf'), float('-inf'))
_RE_RANK_LABEL = re.compile(r'\[\d+\] ?')
_RE_DEVICE = re.compile(
    r'^Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?(?:Pid\s+(\d+)\s+)?on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$')
_RE_NTHREAD_KV = re.compile(r'(nThread|nGpus|minBytes|maxBytes|warmup iters|agg iters|iters|validation|graph|unalign):\s*(-?\d+)|'
                            r'(nThread|nGpus|minBytes|maxBytes)\s+(-?\d+)|step:\s*(\d+)\((factor|bytes)\)')
_RE_PERF_NAME = re.compile(r'\b([a-z_]+?)_perf(?:_mpi)?\b')
_RE_DEBUG = re.compile(r'^\s*(.*?)\s*:(\d+):(\d+) \[(\d+)\] ')
# A work completion with an error status on a NET/IB queue pair (the transport gave up on a packet: retry
# exceeded, remote access error...). Every form NCCL's net_ib WARN has printed (NVIDIA/nccl src/transport/net_ib.cc
# and net_ib/p2p.cc; GIN: net_ib/gin.cc): "Got completion with error %d, opcode %d, len %d, vendor err %d" (<= 2.11),
# "Got completion from peer %s with error %d, opcode %d, ..." (2.12-2.18), "... with status=%d opcode=%d len=%d
# vendor err %d (%s) ... hca %s" (2.19-2.26), "... with status=%s(%d) opcode=%s(%d) vendor_err=%u ... hca %s" (2.27+),
# and "ncclIbTest: Got CQE with error (...)" (2.27+).
_RE_COMPLETION_ERROR = re.compile(
    r'^NET/IB(?:/GIN)?\s*:\s*(?:Got completion (?:from peer (?P<peer>\S+) )?with (?:error (?P<err>\d+)|status=(?:\w+\()?(?P<status>\d+))'
    r'|ncclIbTest: Got CQE with error)')
_RE_HCA = re.compile(r' hca (\S+)')
_RE_COMM = re.compile(r'\brank (\d+) nranks (\d+) cudaDev (\d+)')
_RE_IB_PORT = re.compile(r'\[\d+\](\S+?)/(IB|RoCE)\b')
# first 4 characters of the INFO payloads _debug_line uses (plus ' via ' and ' -> ' lines); the rest is skipped cheaply
_INFO_KEEP4 = frozenset(('NET/', 'Usin', 'NCCL', 'GPU ', 'comm', 'Conn', 'Fail'))
_RE_TRACE = re.compile(r'^(\S+\.(?:cc|cu|h|c|cpp)):(\d+) -> (\d+)')
_RE_TEST_FAIL = re.compile(r'(Test (?:NCCL|CUDA) failure .*|Test failure \S+:\d+|NCCL failure \S+:\d+ .*|Test timeout .*)$')
_RE_FAIL_SRC = re.compile(r'Test failure ([a-z_]+)\.cu:')
_RE_PROC_RETURNED = re.compile(r'(\d+) process(?:es)? returned')
_RE_TIMESTAMP = (re.compile(r'^\d{4}-\d{2}-\d{2}$'), re.compile(r'^\d{2}:\d{2}:\d{2}$'))
_RE_INT = re.compile(r'-?[0-9]+')
_RE_ELISION = re.compile(r'^(?:\.{3,}|\u2026)$')

_VERSION_ERAS = (
    # (lo, hi, label): label text used by the corpus ground truth for the inferred nccl-tests era.
    ((1, 0, 0), (2, 0, 0), 'v1.x (2017)'),
    ((2, 0, 0), (2, 10, 0), 'v2.0-v2.9 era (2019-03..2021-06)'),
    ((2, 10, 0), (2, 13, 0), 'v2.10-v2.11 era (2021-06..2022-08)'),
    ((2, 0, 0), (2, 13, 0), 'v2.0-v2.11 era (2019-03..2022-08)'),
    ((2, 13, 0), (2, 17, 3), '>=2.13 and <2.17.3'),
    ((2, 13, 4), (2, 14, 1), '2.13.4-2.14.0'),
    ((2, 14, 1), (2, 16, 7), '2.14.1-2.16.x'),
    ((2, 17, 3), None, '>=2.17.3'),
)


# ---------------------------------------------------------------------------

# small helpers

def _num(tok):
    """float of a table cell, None for N/A or non-finite values."""
    try:
        val = float(tok)
    except (TypeError, ValueError):
        return None
    if math.isnan(val) or math.isinf(val):
        return None
    return val


def _half_ulp(tok):
    """Half of the last printed digit: how far the printed value may be from the real one."""
    if 'e' in tok or 'E' in tok:
        mant, _sep, exp = tok.lower().partition('e')
        dec = len(mant.partition('.')[2])
        try:
            return 0.5 * 10 ** (int(exp) - dec)
        except ValueError:
            return 0.5
    dec = len(tok.partition('.')[2])
    return 0.5 * 10 ** (-dec)


def _version_from_code(code):
    """NCCL_VERSION_CODE (major*10000 + minor*100 + patch; older major*1000+minor*100+patch) -> '2.26.2'."""
    try:
        code = int(code)
    except (TypeError, ValueError):
        return None
    if code <= 0:
        return None
    if code >= 10000:
        return '%d.%d.%d' % (code // 10000, (code % 10000) // 100, code % 100)
    return '%d.%d.%d' % (code // 1000, (code % 1000) // 100, code % 100)


# ---------------------------------------------------------------------------
# parser state

class _State:
    # a plain attribute bag keeps the hot loop cheap
    def __init__(self):
        self.rows = []
        self.header_labels = None       # label columns after 'type' from the column header
        self.header_wrong = None        # 'count' or 'delta'
        self.header_per_iter = False
        self.header_type_width = None
        self.header_seen = 0
        self.banner_pending = False
        self.banner_seen = False
        self.source_names = []
        self.beginning_missing = False
        self.anything_before_table = False
        self.nthread = None
        self.nthread_lines = 0
        self.nthread_has_agg = None
        self.nthread_has_unalign = False
        self.reduced_max = None
        self.devices = []
        self.device_lists = 0
        self.device_list_closed = False
        self.device_list_open = False
        self.version_line = None
        self.nccl_headers = None
        self.nccl_library = None
        self.nccl_version = None
        self.compiled_with = None
        self.start_names = []
        self.concluded_names = []
        self.cmd_names = []
        self.oob = None
        self.avg = None
        self.avg_status = None
        self.footers = 0
        self.json_path = None
        self.errors = []
        self.errors_seen = set()
        self.failures = []
        self.warnings = []
        self.elided = False
        self.partial_rows = 0
        self.last_line_partial_row = False
        self.legacy_2017 = False
        self.time_fmt_old = 0
        self.time_fmt_new = 0
        self.row_type_width = {}
        self.hosts = set()
        self.comm = []                  # (rank, nranks, cudaDev, host)
        self.abort_ranks = []
        self.ib_ports = []
        self.ib_no_device = False
        self.socket_using = False
        self.nets = []
        self.efa_provider = None
        self.no_verbs = False
        self.net_channels = {}          # net name -> [n, n_gdr]
        self.intra_channels = 0
        self.via_list = []              # text after ' via ', one per channel line; counted once in _finish
        self.vias = {}                  # text after ' via ' -> count (built in _finish)
        self.net_ib_dataplane = False
        self.transport_errors = []      # {host, pid, device, peer, status, hca, text}: NET/IB completion errors (_RE_COMPLETION_ERROR)
        self.gdr_hca = [0, 0]           # enabled, disabled
        self.gdr_path = [0, 0]
        self.gdr_summary = [0, 0]
        self.proc_returned = None
        self.after_proc_returned = False
        self.restarts = 0
        self.header_cputime = False
        self.memory = None              # -M: {'initialization': ..., 'user_allocated': ..., 'collective': ..., 'total': ...}
        self.run_notes = []             # header lines of -z, -I/-K, -p and option notices of -R/-x (what the run was told)
        self.damaged = []               # {line, size, reason}: rows inside the table that are not rows nccl-tests prints
        self.cells = []                 # (row index, half, time, half-ulp, algbw, half-ulp, busbw, half-ulp) for consistency checks

    def error(self, text):
        text = text.strip()
        if text and text not in self.errors_seen:
            self.errors_seen.add(text)
            self.errors.append(text)


# ---------------------------------------------------------------------------
# parse

def parse(text: str) -> dict:
    """Parse nccl-tests output (text or ``-J`` JSON) into a result dict.

    Keys (names and meaning follow tests/data/nccl-corpus/README.md):
    nccl_tests_version, nccl_tests_version_inferred, nccl_version,
    nccl_headers, nccl_library, collective, collective_source, ranks, nodes,
    gpus_per_node, counts_source, gpu_model, transport (one of TRANSPORTS),
    transport_class, transport_evidence, gdr_active (True/False/'unknown'),
    gdr_evidence, avg_bus_bandwidth (str as printed or None),
    avg_bus_bandwidth_check ('OK'/'FAILED'/None), out_of_bounds (str or
    None), out_of_bounds_count, largest_size_bytes,
    oop_busbw_at_largest_size, size_rows, rows, wrong_column,
    any_nonzero_wrong, errors, failures, warnings, truncated,
    truncated_reasons, complete, damaged_rows ({line, size, reason}),
    independent_runs, independent_reasons, header (nThread values), devices,
    runs, json_output_path, format ('text' or 'json').

    Each row: size, count, type, redop, root, out_of_place, in_place
    (each None or {time_us, algbw, busbw, wrong, max_delta[, i_min_us,
    i_max_us, i_p99_us, i_cv_pct]}), timestamp, run, line[, damaged (why the cells contradict each other)].
    """
    if not isinstance(text, str):
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode('utf-8', 'replace')
        else:
            text = '' if text is None else str(text)
    stripped = text.lstrip()
    if stripped.startswith('{'):
        doc = None
        try:
            doc = json.loads(stripped)
        except ValueError as exc:
            doc = None
            if '"nccl_version"' in stripped[:1 << 16] or '"results"' in stripped[:1 << 16]:
                # -J writes its file as the run goes (src/util.cu jsonKey/jsonStr...): a crash or a kill leaves it cut
                return _refused('format', 'a -J JSON file that is not valid JSON (%s): cut before its end (crashed, killed or '
                                'still running)' % exc, truncated=True)
        if isinstance(doc, dict) and ('results' in doc or 'config' in doc):
            return _parse_json_doc(doc)
        if doc is not None:
            return _refused('format', 'a JSON document without the "results" or "config" key every nccl-tests -J file has '
                            '(src/util.cu jsonOutputInit/writeDeviceReport, v2.19.6): not nccl-tests output')
    # rows are many small acyclic dicts: the cyclic GC would rescan them again and again on big logs
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_lines(text)
    finally:
        if gc_was_enabled:
            gc.enable()


def _refused(fmt, why, truncated=False):
    """A result for input the parser does not recognise: no rows, the reason as a failure (so every gate fails it)."""
    st = _State()
    st.error(why)
    st.failures.append(why)
    res = _finish(st)
    res['format'] = fmt if fmt != 'format' else 'json'
    res['unrecognised'] = why
    if truncated:
        res['truncated'] = True
        res['truncated_reasons'].append(why)
    return res


def _parse_lines(text):
    st = _State()
    debug = _debug_line
    feed = _feed
    hosts = st.hosts
    keep4 = _INFO_KEEP4
    add_via = st.via_list.append
    mpi_tag = _RE_MPI_TAG.match
    rank_label = _RE_RANK_LABEL.match
    last_host = '\0'
    idx = -1
    for chunk in _chunks(text):
        for line in chunk.splitlines():
            idx += 1
            # hot path: most lines of a debug log are NCCL INFO lines; handle them with plain string ops
            c = line[:1]
            if (c == ' ' or c == '\t') and '<std' in line[:40]:
                # an indented or space-led mpirun --tag-output prefix (as pasted in issues): strip it as well
                s = line.lstrip()
                if s[:1] == '[':
                    m = mpi_tag(s)
                    if m:
                        line = s[m.end():]
                        c = line[:1]
            if c == '[':
                # an mpirun --tag-output prefix or a leading [N] rank label (section 10)
                m = mpi_tag(line) or rank_label(line)
                if m:
                    line = line[m.end():]
            elif c in _SRUN_START and line.find(': ', 0, 12) > 0:
                m = _RE_SRUN.match(line)
                if m:
                    line = line[m.end():]
            pos = line.find('NCCL ')
            if pos > 0:
                kind = line[pos + 5:pos + 10]
                if kind == 'INFO ' or kind == 'WARN ':
                    if not line.startswith(last_host):
                        # host:pid:tid prefix; consecutive lines usually share it, so this runs rarely
                        colon = line.find(':', 0, pos)
                        if colon > 0:
                            hosts.add(line[:colon])
                            last_host = line[:colon + 1]
                    vpos = line.find(' via ', pos)
                    if vpos > 0:
                        # channel lines dominate INFO logs: count distinct routes, classify them once in _finish
                        add_via(line[vpos + 5:])
                    elif kind == 'WARN ' or line[pos + 10:pos + 14] in keep4 or ' -> ' in line:
                        debug(st, line, pos, kind)
                    continue
            feed(st, line, idx)
    st.hosts = {h.strip() for h in hosts} - {''}
    res = _finish(st)
    if not (st.rows or st.header_seen or st.partial_rows or st.nthread or st.version_line or st.devices or st.start_names
            or st.hosts or st.errors or st.failures or st.oob or st.avg or st.json_path or st.nccl_version or st.cmd_names):
        # nothing nccl-tests or NCCL prints: refused by name, never an empty success of a parse-only call
        why = 'no nccl-tests output recognised (no table, header, device list, footer or NCCL line)'
        res['unrecognised'] = why
        res['errors'].append(why)
        res['failures'].append(why)
    return res


def _chunks(text, size=1 << 20):
    """Slices of about ``size`` characters ending at a newline: splitting a 200 MB log at once costs memory and cache."""
    start = 0
    end_all = len(text)
    while start < end_all:
        end = text.find('\n', start + size)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end + 1]
        start = end + 1


def _feed(st, line, idx):  # noqa: C901 - one dispatch loop is the fast path
    """A line without a NCCL INFO/WARN marker; launcher prefixes are already stripped."""
    if 'NCCL' in line:
        pos = line.find('NCCL INFO ')
        if pos < 0:
            pos = line.find('NCCL WARN ')
        if pos >= 0:
            # reached only for prefixes the fast path in parse() does not strip (srun labels)
            m = _RE_DEBUG.match(line[:pos])
            if m and m.group(1).strip():
                st.hosts.add(m.group(1).strip())
            _debug_line(st, line, pos, line[pos + 5:pos + 10])
            return
        if line.lstrip().startswith('NCCL version '):
            st.nccl_version = line.split()[2]
            return
    content = line.strip()
    if not content:
        return
    if content[0] == '#':
        content = content.lstrip('#').strip()
        if not content:
            if st.device_list_open:
                st.device_list_open = False
                st.device_list_closed = True
            return
        hashed = True
    else:
        hashed = False
    first = content[0]
    if first.isdigit() or (first == '-' and content[1:2].isdigit()):
        if 'Test timeout' in content or 'failure' in content:
            # -T: the timeout line lands right after the row's preamble (src/common.cu testStreamSynchronize, v2.19.6
            # line 523, prints while the size/count/type cells wait for their times): keep the failure, the row is cut
            m = _RE_TEST_FAIL.search(content)
            if m:
                st.error(m.group(1))
                st.failures.append(m.group(1))
                content = content[:m.start()].rstrip()
        if '[' in content:
            # launcher rank labels inserted inside a row (NVIDIA/nccl#1453)
            content = _RE_RANK_LABEL.sub('', content)
        toks = content.split()
        if len(toks) >= 3 and toks[0].isascii() and toks[0].isdigit() and toks[1].isascii() and toks[1].isdigit() and toks[2][:1].isalpha():
            _row(st, toks, content, idx)
            return
        if not hashed and _in_table(st) and _row_like(toks):
            _damaged(st, idx, toks, 'size, count or type column is not a number, a number and a type name')
            return
    st.last_line_partial_row = False
    if not hashed and _in_table(st):
        toks = content.split()
        if _row_like(toks):
            _damaged(st, idx, toks, 'a data row whose first column is not a size')
            return
    _other_line(st, content, hashed)


def _in_table(st):
    """Between the column header (or the first row) and the footer: where every row-like line is a row."""
    return bool(st.rows or st.header_seen or st.partial_rows) and st.footers == 0 and st.avg is None


def _row_like(toks):
    """A line with the shape of a data row (at least 10 cells, most of them numbers or N/A)."""
    if len(toks) < 10:
        return False
    numeric = 0
    for tok in toks:
        if tok == 'N/A' or _num(tok) is not None:
            numeric += 1
    return numeric * 2 >= len(toks)


def _damaged(st, idx, toks, why):
    st.partial_rows += 1
    st.last_line_partial_row = True
    size = int(toks[0]) if toks and toks[0].isascii() and toks[0].isdigit() else None
    st.damaged.append({'line': idx + 1, 'size': size, 'reason': why})


def _row(st, toks, content, idx):
    row = _parse_row(st, toks, content)
    if row is None:
        _damaged(st, idx, toks, 'the cells do not fit the table layout (a damaged number, a missing or extra cell, or a cut line)')
        return
    st.last_line_partial_row = False
    if st.device_list_open:
        st.device_list_open = False
        st.device_list_closed = True
    rows = st.rows
    if rows:
        prev = rows[-1]
        if row['size'] < prev['size'] and row['type'] == prev['type'] and row['redop'] == prev['redop']:
            st.restarts += 1
    elif not st.header_seen and not st.anything_before_table:
        st.beginning_missing = True
    row['run'] = st.header_seen
    row['line'] = idx + 1
    rows.append(row)


def _parse_row(st, toks, content):  # noqa: C901 - hot path, kept flat on purpose
    """One data row, or None when it is damaged or cut."""
    # trailing -S timestamp: 'YYYY-MM-DD HH:MM:SS'
    timestamp = None
    if ':' in toks[-1] and len(toks) >= 5 and _RE_TIMESTAMP[1].match(toks[-1]) and _RE_TIMESTAMP[0].match(toks[-2]):
        timestamp = toks[-2] + ' ' + toks[-1]
        toks = toks[:-2]
    nrest = len(toks) - 3
    labels = st.header_labels
    if labels is None or st.legacy_2017 or (nrest - len(labels)) not in (8, 16):
        # no usable header: the token count tells the label columns (8 or 16 numeric cells)
        k = nrest % 4
        if k == 3 or nrest - k not in (8, 16):
            return None
        if k == 2:
            labels = ('redop', 'root')
        elif k == 1:
            labels = ('root',) if toks[3].lstrip('-').isdigit() else ('redop',)
        else:
            labels = ()
        if st.legacy_2017 and st.header_labels is not None and len(st.header_labels) == k:
            labels = st.header_labels
    k = len(labels)
    redop = None
    root = None
    for i in range(k):
        tok = toks[3 + i]
        if labels[i] == 'root':
            if not _RE_INT.fullmatch(tok):
                return None
            root = int(tok)
        else:
            if not tok[:1].isalpha():
                return None
            redop = tok
    cells = toks[3 + k:]
    try:
        vals = list(map(float, cells))
    except ValueError:
        try:
            vals = [None if tok == 'N/A' else float(tok) for tok in cells]
        except ValueError:
            return None
    total = sum(v for v in vals if v is not None) if None in vals else sum(vals)
    if total - total != 0:
        # NaN/inf cells are no measurement: v - v is 0 only for finite numbers
        vals = [v if v is None or v - v == 0 else None for v in vals]
    per_half = len(cells) // 2
    halves = []
    wrong_kind = st.header_wrong
    legacy = st.legacy_2017
    for base in (0, per_half):
        time_v = vals[base]
        if time_v is not None and legacy:
            time_v *= 1000.0    # 2017 layout prints milliseconds
        half = {'time_us': time_v, 'algbw': vals[base + 1], 'busbw': vals[base + 2], 'wrong': None, 'max_delta': None}
        wval = vals[base + 3]
        if wval is not None:
            kind = wrong_kind
            if kind is None:
                wtok = cells[base + 3]
                kind = 'delta' if ('e-' in wtok or '.' in wtok) else 'count'
                st.row_type_width['delta_inferred' if kind == 'delta' else 'count_inferred'] = True
            if kind == 'delta':
                half['max_delta'] = wval
            else:
                half['wrong'] = int(wval)
        if per_half == 8:
            half['i_min_us'] = vals[base + 4]
            half['i_max_us'] = vals[base + 5]
            half['i_p99_us'] = vals[base + 6]
            half['i_cv_pct'] = vals[base + 7]
        halves.append(half)
        if half['time_us'] is not None and half['algbw'] is not None and half['busbw'] is not None:
            et = _half_ulp(cells[base]) * (1000.0 if legacy else 1.0)
            st.cells.append((len(st.rows), 'out_of_place' if base == 0 else 'in_place', half['time_us'], et,
                             half['algbw'], _half_ulp(cells[base + 1]), half['busbw'], _half_ulp(cells[base + 2])))
    if len(st.rows) < 64:
        if not legacy:
            _note_time_format(st, cells[0])
            _note_time_format(st, cells[per_half])
        # width of the type column tells 2.0-2.9 (6) from 2.10+ (8); section 5.2
        pos = content.find(' ' + toks[2] + ' ', len(toks[0]))
        if pos >= 0:
            cnt_end = content.find(toks[1], len(toks[0])) + len(toks[1])
            width = pos + 1 + len(toks[2]) - cnt_end - 2
            st.row_type_width[width] = st.row_type_width.get(width, 0) + 1
    return {
        'size': int(toks[0]), 'count': int(toks[1]), 'type': toks[2], 'redop': redop, 'root': root,
        'out_of_place': halves[0], 'in_place': halves[1], 'timestamp': timestamp,
    }


def _note_time_format(st, tok):
    """Old (<2.17.3) time cells drop decimals at 100/10000 us; new ones fill 7 chars."""
    val = _num(tok)
    if val is None or val < 100 or val >= 99999.5 or 'e' in tok:
        return
    dec = len(tok.partition('.')[2])
    fit = 7 - len('%d' % int(val)) - 1
    fit = max(0, min(2, fit))
    if fit == 0 and dec == 0:
        return
    if dec == fit:
        st.time_fmt_new += 1
    else:
        st.time_fmt_old += 1


def _other_line(st, content, hashed):  # noqa: C901
    low = content[:40]
    if content.startswith('Rank ') and ' device ' in content:
        m = _RE_DEVICE.match(content)
        if m:
            if not st.device_list_open:
                st.device_lists += 1
                st.device_list_open = True
                st.device_list_closed = False
            st.devices.append({
                'rank': int(m.group(1)), 'group': int(m.group(2)) if m.group(2) else None,
                'pid': int(m.group(3)) if m.group(3) else None, 'host': m.group(4),
                'device': int(m.group(5)), 'device_id': m.group(6), 'name': m.group(7).strip(),
                'list': st.device_lists,
            })
            st.anything_before_table = True
            return
    if st.device_list_open:
        st.device_list_open = False
        st.device_list_closed = True
    if low.startswith('nThread'):
        _nthread(st, content, hashed)
        return
    if low.startswith('size') or low.startswith('bytes'):
        toks = content.replace('#wrong', 'wrong').split()
        if 'type' in toks and ('count' in toks or 'N' in toks):
            _column_header(st, content, toks)
            return
    if 'out-of-place' in low:
        st.banner_pending = True
        st.banner_seen = True
        st.anything_before_table = True
        return
    if low.startswith('(B)'):
        return
    if low.startswith('Out of bounds values'):
        val = content.partition(':')[2].strip()
        st.oob = val
        st.footers += 1
        if 'FAILED' in val:
            st.error('Out of bounds values : ' + val)
        return
    if low.startswith('Avg bus bandwidth'):
        val = content.partition(':')[2].split()
        st.avg = val[0] if val else None
        st.avg_status = val[1] if len(val) > 1 else None
        if st.avg_status == 'FAILED':
            # NCCL_TESTS_MIN_BW: the average is below 0.9 x the minimum (src/util.cu writeResultFooter), and the run exits 1
            st.error('Avg bus bandwidth : ' + ' '.join(val))
            st.failures.append('# Avg bus bandwidth : ' + ' '.join(val))
        return
    if low.startswith('nccl-tests version'):
        _version_line(st, content)
        return
    if low.startswith('Collective test starting:'):
        st.start_names.append(content.partition(':')[2].strip())
        st.anything_before_table = True
        return
    if low.startswith('Collective test concluded:'):
        st.concluded_names.append(content.partition(':')[2].strip())
        return
    if low.startswith('Using devices'):
        st.anything_before_table = True
        return
    if low.startswith('NCCL Tests compiled with NCCL'):
        st.compiled_with = content.rsplit(' ', 1)[-1]
        st.legacy_2017 = True
        return
    if low.startswith('Reducing maxBytes to'):
        m = re.search(r'(\d+)', content)
        if m:
            st.reduced_max = int(m.group(1))
        return
    if low.startswith('Writing JSON output to'):
        st.json_path = content.partition(' to ')[2].strip()
        return
    if low.startswith('GPU memory usage'):
        _memory_line(st, content)
        return
    if low.startswith(('Blocking Enabled', 'Per-Iteration Report', 'Parallel Init Enabled')):
        # header lines of -z 1/2/3, -I 1 (-K), -p 1 (src/util.cu writeDeviceReport, v2.19.6 lines 629-639)
        st.run_notes.append(content.strip())
        st.anything_before_table = True
        return
    if content.startswith('Option -') and ('not supported before NCCL' in content or 'requires NCCL' in content):
        _option_line(st, content)
        return
    if low.startswith('skipping json output'):
        # -J could not create its file (src/util.cu jsonOutputInit, v2.19.6 lines 337 and 343): the text is all there is
        st.warnings.append('-J: ' + content)
        return
    if content.startswith('invalid option ') or content.startswith('device_cta_count (-V)') or content.startswith('invalid sizes for'):
        _refused_options(st, content)
        return
    if hashed and low.startswith('error:'):
        msg = content[6:].strip()
        if msg:
            st.error('error: ' + msg)
        return
    if _RE_ELISION.match(content):
        st.elided = True
        return
    # failures printed by nccl-tests and launchers (section 5.1)
    if 'failure' in content or 'Test timeout' in content:
        m = _RE_TEST_FAIL.search(content)
        if m:
            st.error(m.group(1))
            st.failures.append(m.group(1))
            src = _RE_FAIL_SRC.match(m.group(1))
            if src and V.collective_name(src.group(1)):
                st.source_names.append(src.group(1))
            return
    if 'process returned' in content or 'processes returned' in content:
        m = _RE_PROC_RETURNED.search(content)
        if m:
            st.proc_returned = m.group(1)
            st.after_proc_returned = True
            return
    if st.after_proc_returned:
        st.after_proc_returned = False
        if 'non-zero exit code' in content:
            msg = 'mpirun: %s process%s returned a non-zero exit code' % (st.proc_returned, '' if st.proc_returned == '1' else 'es')
            st.error(msg)
            st.failures.append(msg)
            return
    if content.startswith('srun: error:') and ('Exited with exit code' in content or 'Killed' in content or 'signal' in content):
        # Slurm's srun reports a task that exited non-zero (unverified wording, as users paste it)
        st.error(content)
        st.failures.append(content)
        return
    if 'exited with non-zero status' in content and content.startswith(('mpirun', 'prterun')):
        # Open MPI's "mpirun detected that one or more processes exited with non-zero status" (unverified wording)
        st.error(content)
        st.failures.append(content)
        return
    if 'exited on signal' in content and content.startswith(('mpirun', 'prterun')):
        st.error(content)
        st.failures.append(content)
        return
    if 'completion with error' in content:
        st.error(content.rstrip(':'))
        st.failures.append(content.rstrip(':'))
        st.net_ib_dataplane = True
        return
    if 'Invalid number of GPUs' in content or 'Segmentation fault' in content or 'core dumped' in content:
        st.error(content)
        st.failures.append(content)
        return
    if '_perf' in content:
        for m in _RE_PERF_NAME.finditer(content):
            name = V.collective_name(m.group(1))
            if name:
                st.cmd_names.append(name)
                break


_RE_MEM_PART = re.compile(r'^\s*(Initialization|User-Allocated|Collective|Total)\s+(-?[0-9.]+) (B|KB|MB|GB)\s*$')
_MEM_UNIT = {'B': 1, 'KB': 1 << 10, 'MB': 1 << 20, 'GB': 1 << 30}


def _memory_line(st, content):
    """-M 1: '# GPU memory usage : Initialization 1.23 GB | User-Allocated 4.00 GB | Collective 512 MB | Total  5.73 GB'
    (src/util.cu writeMemInfo and getMemString, v2.19.6 lines 796-834: units of 1024, 2/1/0 decimals below 10/100/above).
    Each part in bytes as printed (rounded); a line of another shape is a warning, not a guess."""
    body = content.partition(':')[2]
    mem = {}
    for part in body.split('|'):
        m = _RE_MEM_PART.match(part)
        if not m:
            st.warnings.append('GPU memory usage line not in the form nccl-tests 2.19.6 prints: %s' % content)
            return
        key = m.group(1).lower().replace('-', '_')
        mem[key] = {'text': '%s %s' % (m.group(2), m.group(3)), 'bytes': int(round(float(m.group(2)) * _MEM_UNIT[m.group(3)]))}
    st.memory = mem


def _option_line(st, content):
    """Option notices of src/common.cu parseArgs (v2.19.6): -R/-x 'not supported before NCCL ...' are ignored and the run
    goes on (lines 1307, 1311, 1327, 1331); -D/-V 'requires NCCL >= 2.28.0' end the program before any test (1338, 1351)."""
    if 'requires NCCL' in content:
        st.error(content)
        st.failures.append(content + ' (nccl-tests stops before any test)')
    else:
        st.run_notes.append(content)
        st.warnings.append('nccl-tests ignored an option: ' + content)


def _refused_options(st, content):
    """nccl-tests refused its command line (src/common.cu parseArgs, v2.19.6 lines 1360 and 1408): no test ran."""
    if content.startswith('device_cta_count (-V)'):
        # a bad -V is replaced by 16 and the run goes on (line 1346)
        st.warnings.append(content)
        return
    msg = content + ': nccl-tests printed its usage or refused the sizes and ran no test'
    st.error(msg)
    st.failures.append(msg)


def _nthread(st, content, hashed):
    vals = {}
    for m in _RE_NTHREAD_KV.finditer(content):
        if m.group(1):
            vals[m.group(1)] = int(m.group(2))
        elif m.group(3):
            vals[m.group(3)] = int(m.group(4))
        elif m.group(5):
            vals['step'] = int(m.group(5))
            vals['step_kind'] = m.group(6)
    if 'minBytes' not in vals and 'maxBytes' not in vals:
        return
    st.nthread_lines += 1
    st.nthread = vals
    st.nthread_has_agg = 'agg iters' in vals
    st.nthread_has_unalign = 'unalign' in vals
    st.anything_before_table = True


def _column_header(st, content, toks):
    if st.rows and st.header_seen:
        # a second header after rows: a second run in the same stream
        pass
    st.header_seen += 1
    if not st.banner_pending and not st.anything_before_table and not st.rows:
        st.beginning_missing = True
    st.banner_pending = False
    st.anything_before_table = True
    try:
        t_idx = toks.index('type')
    except ValueError:
        return
    labels = []
    for tok in toks[t_idx + 1:]:
        if tok in ('time', 'cputime'):
            break
        if tok in ('redop', 'op', 'root'):
            labels.append('redop' if tok == 'op' else tok)
    st.header_labels = tuple(labels)
    st.header_per_iter = 'i_min' in toks
    # -C 1 prints the CPU time while algbw comes from the GPU time (src/common.cu BenchTime, v2.19.6)
    st.header_cputime = 'cputime' in toks
    if 'error' in toks or 'res' in toks:
        st.header_wrong = 'delta'
    elif 'wrong' in toks:
        st.header_wrong = 'count'
    if toks[0] == 'bytes':
        st.legacy_2017 = True
    # type column width from the header spacing: '%12s  %6s' vs '%12s  %8s'
    m = re.search(r'\b(?:count|N)( +)type\b', content)
    if m:
        st.header_type_width = len(m.group(1)) - 2 + 4


def _version_line(st, content):
    body = content[len('nccl-tests version'):].strip()
    ver = body.split(' nccl-headers=')[0].strip()
    st.version_line = ver or None
    m = re.search(r'nccl-headers=(\d+)', body)
    if m:
        st.nccl_headers = int(m.group(1))
    m = re.search(r'nccl-library=(\d+)', body)
    if m:
        st.nccl_library = int(m.group(1))
    st.anything_before_table = True


def _debug_line(st, line, pos, kind):  # noqa: C901
    """NCCL_DEBUG lines: evidence for transport and GDR (section 8) and WARN errors."""
    msg = line[pos + 10:]
    if kind == 'WARN ':
        msg = msg.rstrip()
        st.error('NCCL WARN ' + msg)
        if 'libibverbs' in msg:
            st.no_verbs = True
        else:
            c = _RE_COMPLETION_ERROR.match(msg)
            if c:
                st.net_ib_dataplane = True
                _transport_error(st, line[:pos], msg, c)
        return
    # INFO: cheapest, most frequent checks first
    if ' via ' in msg:
        st.via_list.append(msg.partition(' via ')[2])
        return
    msg = msg.rstrip()
    if msg[:1] in '0123456789' or msg.startswith(('Channel', 'Trees', 'Setting affinity', 'Connected all trees')):
        return
    if ' -> ' in msg:
        t = _RE_TRACE.match(msg)
        if t and t.group(3) != '0':
            st.error('%s:%s -> %s' % t.groups())
            return
    if msg.startswith('NCCL version '):
        st.nccl_version = msg.split()[2]
        return
    if msg.startswith('Failed to open libibverbs'):
        # NCCL 2.19+ says it at INFO level (src/misc/ibvwrap.cc buildIbvSymbols: INFO(NCCL_INIT, "Failed to open
        # libibverbs.so[.1]"), seen in a 2.23.4 log); older releases WARN it: no verbs library, so no IB/RoCE and no RDMA
        st.no_verbs = True
        return
    if msg.startswith('NET/IB'):
        if 'No device found' in msg:
            st.ib_no_device = True
        elif ': Using' in msg:
            st.ib_ports.extend(_RE_IB_PORT.findall(msg))
        elif 'GPU Direct RDMA' in msg:
            _gdr_info(st, msg)
        return
    if msg.startswith('NET/Socket') and 'Using' in msg:
        st.socket_using = True
        return
    if msg.startswith('Using network '):
        st.nets.append(msg[len('Using network '):].strip())
        return
    if 'Selected Provider is' in msg or 'Selected provider is' in msg:
        st.efa_provider = msg.rsplit(' ', 1)[-1].strip()
        return
    if 'GPU Direct RDMA' in msg:
        _gdr_info(st, msg)
        return
    if 'use ring PXN' in msg and ' GDR ' in msg:
        g = msg.rsplit(' GDR ', 1)[1].strip()[:1]
        if g == '1':
            st.gdr_summary[0] += 1
        elif g == '0':
            st.gdr_summary[1] += 1
        return
    if 'nranks' in msg and 'COMPLETE' in msg:
        c = _RE_COMM.search(msg)
        if c:
            m = _RE_DEBUG.match(line[:pos])
            host = m.group(1).strip() or None if m else None
            st.comm.append((int(c.group(1)), int(c.group(2)), int(c.group(3)), host))
            if 'Abort COMPLETE' in msg:
                st.abort_ranks.append(int(c.group(1)))


def _transport_error(st, prefix, msg, match):
    """A NET/IB completion error: the run's numbers cannot be trusted after it (issue 33), so it is a failure
    that names where it happened; the gate lets an engineer accept it only explicitly (accept_transport_errors)."""
    d = _RE_DEBUG.match(prefix)
    status = match.group('err') or match.group('status')
    hca = _RE_HCA.search(msg)
    text = 'NCCL WARN ' + msg
    st.transport_errors.append({
        'host': (d.group(1).strip() or None) if d else None, 'pid': int(d.group(2)) if d else None,
        'device': int(d.group(4)) if d else None, 'peer': match.group('peer'),
        'status': int(status) if status is not None else None, 'hca': hca.group(1) if hca else None, 'text': text})
    st.failures.append(text)


def _transport_errors(st):
    """The NET/IB completion errors, each with the rank whose process printed it: nccl-tests' device list
    ("Rank N Group G Pid P on HOST device D") names the rank of a host, pid and GPU; None where the log has no such list."""
    out = []
    for e in st.transport_errors:
        ranks = [d['rank'] for d in st.devices
                 if d.get('host') == e['host'] and d.get('pid') == e['pid'] and (d.get('device') is None or d.get('device') == e['device'])]
        out.append(dict(e, rank=ranks[0] if len(ranks) == 1 else None))
    return out


def _gdr_info(st, msg):
    enabled = 'RDMA Enabled' in msg
    disabled = 'RDMA Disabled' in msg
    if ' for GPU ' in msg:
        target = st.gdr_path
    elif ' for HCA ' in msg:
        target = st.gdr_hca
    else:
        return
    if enabled:
        target[0] += 1
    elif disabled:
        target[1] += 1


# ---------------------------------------------------------------------------
# post-processing

def _classify_vias(st):
    # Counter keeps first-seen order, as the dict it replaces did
    st.vias = dict(collections.Counter(st.via_list))
    for via, count in st.vias.items():
        via = via.strip()
        if via.startswith('NET/'):
            name = via[4:].split('/', 1)[0]
            ent = st.net_channels.get(name)
            if ent is None:
                ent = st.net_channels[name] = [0, 0]
            ent[0] += count
            if '/GDRDMA' in via:
                ent[1] += count
        elif via.startswith(('P2P', 'SHM')):
            st.intra_channels += count


def _finish(st):  # noqa: C901
    _classify_vias(st)
    rows = st.rows
    res = {'format': 'text'}

    # versions
    res['nccl_tests_version'] = st.version_line
    nccl_version = st.nccl_version
    source = 'NCCL version line' if nccl_version else None
    if nccl_version is None and st.nccl_library:
        nccl_version = _version_from_code(st.nccl_library)
        source = 'nccl-library=%d' % st.nccl_library
    res['nccl_version'] = nccl_version
    res['nccl_version_source'] = source
    res['nccl_headers'] = _version_from_code(st.nccl_headers) if st.nccl_headers else st.compiled_with
    res['nccl_library'] = _version_from_code(st.nccl_library) if st.nccl_library else None
    res['nccl_tests_version_inferred'] = None if st.version_line else _infer_tests_version(st)

    # collective
    coll, coll_src = _infer_collective(st)
    res['collective'] = coll
    res['collective_source'] = coll_src

    # rows and summary numbers
    res['rows'] = rows
    res['size_rows'] = len(rows)
    if rows:
        largest = max(r['size'] for r in rows)
        res['largest_size_bytes'] = largest
        first = next(r for r in rows if r['size'] == largest)
        oop = first['out_of_place']
        res['oop_busbw_at_largest_size'] = oop['busbw'] if oop else None
    else:
        res['largest_size_bytes'] = None
        res['oop_busbw_at_largest_size'] = None
    res['avg_bus_bandwidth'] = st.avg
    res['avg_bus_bandwidth_check'] = st.avg_status
    res['out_of_bounds'] = st.oob
    oob_count = None
    if st.oob:
        m = re.match(r'(\d+)', st.oob)
        oob_count = int(m.group(1)) if m else None
    res['out_of_bounds_count'] = oob_count

    if st.header_wrong == 'count':
        res['wrong_column'] = _WRONG_COUNT
    elif st.header_wrong == 'delta':
        res['wrong_column'] = _WRONG_DELTA
    elif st.row_type_width.get('delta_inferred'):
        res['wrong_column'] = _WRONG_DELTA
    elif st.row_type_width.get('count_inferred'):
        res['wrong_column'] = _WRONG_COUNT_INFERRED
    else:
        res['wrong_column'] = None
    any_wrong = False
    for r in rows:
        for half in (r['out_of_place'], r['in_place']):
            if half and half['wrong']:
                any_wrong = True
    if oob_count and res['wrong_column'] == _WRONG_DELTA:
        any_wrong = True
    res['any_nonzero_wrong'] = any_wrong

    # ranks, nodes
    _counts(st, res, coll)
    _check_rows(st, rows)
    res['damaged_rows'] = sorted(st.damaged, key=lambda d: d['line'] or 0)

    # gpu model from the device list
    names = sorted({d['name'] for d in st.devices if d['name']})
    res['gpu_model'] = names[0] if len(names) == 1 else (', '.join(names) if names else None)
    res['devices'] = [{k: v for k, v in d.items() if k != 'list'} for d in st.devices]

    # transport and GDR
    _transport(st, res)

    # errors and completeness
    if st.abort_ranks:
        ranks = sorted(set(st.abort_ranks))
        if len(ranks) == 1:
            st.error('Abort COMPLETE on rank %d' % ranks[0])
        else:
            st.error('Abort COMPLETE on ranks %s and %d' % (', '.join(str(r) for r in ranks[:-1]), ranks[-1]))
    res['errors'] = list(st.errors)
    res['failures'] = list(dict.fromkeys(st.failures))
    res['transport_errors'] = _transport_errors(st)
    warnings = list(st.warnings)
    independent = st.device_lists > 1 or st.nthread_lines > 1 or st.header_seen > 1
    if st.devices:
        zero_ranks = sum(1 for d in st.devices if d['rank'] == 0)
        if zero_ranks > 1:
            independent = True
    res['independent_runs'] = bool(independent and (st.device_lists > 1 or st.nthread_lines > 1
                                                    or sum(1 for d in st.devices if d['rank'] == 0) > 1))
    res['runs'] = max(1, st.header_seen) if rows else st.header_seen
    why_independent = []
    if res['independent_runs']:
        why_independent.append('several headers or device lists that each start at rank 0')
    why_independent.extend(_independent_sweeps(st, rows, coll, res.get('ranks') == 1))
    res['independent_runs'] = bool(why_independent)
    res['independent_reasons'] = why_independent
    if st.restarts and not why_independent:
        warnings.append('sizes restart %d time(s): several sweeps in one stream (-N cycles, -d all or -o all)' % st.restarts)
    for why in why_independent:
        warnings.append('independent runs in one stream: ' + why)
    reasons = []
    if st.avg is None:
        reasons.append('no "Avg bus bandwidth" footer')
    if st.oob is None and 'no "Avg bus bandwidth" footer' not in reasons:
        reasons.append('no "Out of bounds values" footer')
    if st.elided:
        reasons.append('an elision line ("...") replaces output')
    if st.beginning_missing:
        reasons.append('the output starts inside the table (banner and header lines missing)')
    if st.devices:
        ranks_listed = sorted({d['rank'] for d in st.devices})
        if ranks_listed[0] != 0 or len(ranks_listed) != ranks_listed[-1] + 1:
            reasons.append('the device list is incomplete')
    if st.damaged or st.partial_rows:
        first = min(st.damaged, key=lambda d: d['line'] or 0) if st.damaged else None
        reasons.append('%d damaged or cut data row(s)%s' % (
            max(len(st.damaged), st.partial_rows), (' (first at line %d: %s)' % (first['line'], first['reason'])) if first else ''))
    max_req = st.reduced_max if st.reduced_max else (st.nthread or {}).get('maxBytes')
    if rows and max_req and not st.elided:
        last = rows[-1]['size']
        step = (st.nthread or {}).get('step') or 2
        kind = (st.nthread or {}).get('step_kind') or 'factor'
        nxt = last * step if kind == 'factor' else last + step
        largest = res['largest_size_bytes']
        if largest < max_req and nxt <= max_req and not (st.start_names and largest > max_req):
            reasons.append('the last row (%d B) is below the requested maxBytes (%d B)' % (last, max_req))
        elif largest > max_req and st.reduced_max is None:
            warnings.append('rows go beyond the header maxBytes (%d B): header and rows disagree' % max_req)
    if st.nthread and st.nthread_has_agg is False and st.header_wrong == 'count' and st.header_labels == ('redop', 'root'):
        warnings.append('the nThread line is older than the table layout: header and rows disagree')
    res['truncated'] = bool(reasons)
    res['truncated_reasons'] = reasons
    res['complete'] = bool(rows) and not reasons and not res['failures'] and not res['independent_runs']
    res['warnings'] = warnings
    res['header'] = dict(st.nthread) if st.nthread else None
    if res['header'] is not None and st.reduced_max:
        res['header']['maxBytes_reduced'] = st.reduced_max
    res['json_output_path'] = st.json_path
    res['memory'] = st.memory
    res['run_notes'] = list(st.run_notes)
    res['libibverbs_missing'] = st.no_verbs
    res['cycles'] = _mark_cycles(rows, (st.nthread or {}).get('step_kind') == 'bytes') if rows else 0
    res['single_rank'] = res.get('ranks') == 1
    return res


def _mark_cycles(rows, step_bytes):
    """-N <cycles>: nccl-tests prints the whole sweep again into the same table (src/common.cu TimeTest, v2.19.6
    lines 934-943, 'do { for (size...) } while (--repeat)'), and -J appends the rows to the same 'results' list.
    Each row gets its cycle (1, 2, ...) per (run, type, redop) sweep; the count of cycles is returned."""
    last = {}
    cycle = {}
    for r in rows:
        key = (r.get('run'), r['type'], r['redop'])
        prev = last.get(key)
        if prev is not None and (r['size'] < prev or (r['size'] == prev and r['size'] != 0 and not step_bytes)):
            cycle[key] = cycle.get(key, 1) + 1
        r['cycle'] = cycle.get(key, 1)
        last[key] = r['size']
    return max(cycle.values(), default=1)


# Type names nccl-tests prints and their element size in bytes (src/common.cu test_typenames, v1.0.0 to v2.19.6;
# "char"/"int" are the NCCL 1 names) and the reduction names (test_opnames; "none" for collectives without one).
TYPE_BYTES = {'int8': 1, 'uint8': 1, 'char': 1, 'int32': 4, 'uint32': 4, 'int': 4, 'int64': 8, 'uint64': 8,
              'half': 2, 'float': 4, 'double': 8, 'bfloat16': 2, 'f8e4m3': 1, 'f8e5m2': 1}
REDOPS = frozenset(('sum', 'prod', 'max', 'min', 'avg', 'mulsum', 'none'))
_SLACK = 1e-4   # relative: printf rounding is in the half-ulps; this covers only the float arithmetic around them


def _check_rows(st, rows):  # noqa: C901
    """Rows whose cells contradict each other are damaged, never silently believed.

    nccl-tests computes algbw = size / time (GB/s, time in us) and busbw = algbw * factor(nranks) for every row
    (src/common.cu BenchTime, src/<coll>.cu GetBw), prints size = count * element size * m with m the same for
    every row (1, or nranks for all_gather/gather/scatter/alltoall), and only its own type and op names.
    A single damaged token breaks one of these; each check compares a row with the other rows, so it needs no
    knowledge of the collective.  A row that fails is reported with its line; it stays in ``rows``.
    """
    bad = {}

    def mark(i, why):
        if i not in bad:
            bad[i] = why

    mults = collections.Counter()
    for i, r in enumerate(rows):
        tb = TYPE_BYTES.get(r['type'])
        if tb is None:
            mark(i, 'type %r is not a type nccl-tests prints' % r['type'])
            continue
        if r['redop'] is not None and r['redop'] not in REDOPS:
            mark(i, 'op %r is not an op nccl-tests prints' % r['redop'])
        for key in ('out_of_place', 'in_place'):
            h = r[key]
            if h and any(h.get(k) is not None and h[k] < 0 for k in ('time_us', 'algbw', 'busbw')):
                mark(i, 'a negative time or bandwidth')
        if r['count'] > 0:
            q, rem = divmod(r['size'], r['count'] * tb)
            if rem or not q:
                mark(i, 'size %d B is not count %d x %d B (%s) x ranks' % (r['size'], r['count'], tb, r['type']))
            else:
                mults[q] += 1
    if mults:
        m = mults.most_common(1)[0][0]
        for i, r in enumerate(rows):
            tb = TYPE_BYTES.get(r['type'])
            if i not in bad and tb and r['count'] > 0 and r['size'] != r['count'] * tb * m:
                mark(i, 'size %d B is not count %d x %d B x %d as in the other rows' % (r['size'], r['count'], tb, m))
    # algbw * time / size is one constant per log; busbw / algbw is one constant per log
    alg = []
    bus = []
    for i, _key, tm, et, a, ea, b, eb in st.cells:
        r = rows[i] if i < len(rows) else None
        if r is None or r['size'] <= 0 or tm <= 0:
            continue
        lo_t = max(tm - et, 1e-9)
        alg.append((i, (a - ea) * lo_t * 1e3 / r['size'], (a + ea) * (tm + et) * 1e3 / r['size']))
        if a - ea > 0:
            bus.append((i, (b - eb) / (a + ea), (b + eb) / (a - ea)))
    checks = [('busbw / algbw differs from the other rows', bus)]
    if not st.header_cputime:
        checks.insert(0, ('algbw does not match size / time', alg))
    for name, spans in checks:
        ref = _reference(spans)
        if ref is None:
            continue
        for i, lo, hi in spans:
            if not lo * (1 - _SLACK) - 1e-12 <= ref <= hi * (1 + _SLACK) + 1e-12:
                mark(i, name)
    for i, why in sorted(bad.items()):
        r = rows[i]
        r['damaged'] = why
        st.damaged.append({'line': r.get('line'), 'size': r['size'], 'reason': why})


def _reference(spans):
    """The value most rows agree on: the point inside the most intervals (an interval endpoint), or None without a majority."""
    if not spans:
        return None
    best, best_n = None, -1
    for cand in sorted({x for _i, lo, hi in spans for x in (lo, hi) if x > 0}):
        n = sum(1 for _j, lo, hi in spans if lo * (1 - _SLACK) - 1e-12 <= cand <= hi * (1 + _SLACK) + 1e-12)
        if n > best_n:
            best, best_n = cand, n
    if best is None or (best_n * 2 <= len(spans) and len(spans) > 2):
        return None     # no majority: nothing to compare against (a layout this parser does not know)
    return best


def _independent_sweeps(st, rows, coll, one_rank=False):
    """Reasons the rows are not one nccl-tests run (src/common.cu TimeTest: each -N cycle prints the whole sweep
    minBytes..maxBytes again, -d all / -o all start a sweep per type / op; nothing else repeats a size)."""
    out = []
    segs = []
    # equal neighbours are legal where the element rounding maps several requested sizes to one printed size:
    # size 0 (all_gather of fewer bytes than ranks x element) and -i steps smaller than that rounding
    step_bytes = (st.nthread or {}).get('step_kind') == 'bytes'
    for r in rows:
        key = (r.get('run'), r['type'], r['redop'])
        prev = segs[-1][1][-1] if segs and segs[-1][0] == key else None
        if prev is not None and (r['size'] > prev or (r['size'] == prev and (r['size'] == 0 or step_bytes))):
            segs[-1][1].append(r['size'])
        else:
            if prev is not None and r['size'] == prev:
                out.append('size %d B (%s) printed twice in a row at line %d: two processes writing one stream' % (
                    r['size'], r['type'], r.get('line') or 0))
                return out
            segs.append((key, [r['size']]))
    by_key = {}
    for n, (key, sizes) in enumerate(segs):
        by_key.setdefault(key, []).append((n, sizes))
    for key, group in by_key.items():
        if len(group) < 2:
            continue
        first = group[0][1]
        for n, sizes in group[1:]:
            last = n == len(segs) - 1
            same = sizes == first or (last and sizes == first[:len(sizes)])
            if not same:
                out.append('sizes restart at %d B (%s %s) with a sweep unlike the first (%d..%d B): not -N cycles of one run' % (
                    sizes[0], key[1], key[2] or '', first[0], first[-1]))
                return out
    if st.header_seen > 1 and any(r.get('run', 0) > 1 for r in rows) and any(r.get('run', 0) == 1 for r in rows):
        out.append('%d column headers, each followed by rows: nccl-tests prints one per process' % st.header_seen)
    # busbw 0 next to a non-zero algbw: factor (n-1)/n with n = 1; collectives with factor 1 never print it
    big = [h for r in rows if r['size'] > 0 for h in (r['out_of_place'], r['in_place']) if h and h['algbw'] and h['algbw'] >= 0.01]
    # (a log whose own device list and header show one rank is that one-rank run: the gate says what it means)
    if big and all(h['busbw'] == 0 for h in big) and not one_rank:
        out.append('busbw is 0 in every row while algbw is not: one-rank runs (bus factor (n-1)/n = 0 for n = 1), not one multi-rank job')
    return out


def _infer_tests_version(st):
    """Version range from layout features; table features win over header features (section 5.2)."""
    lo, hi = (1, 0, 0), None
    feats_table = []
    feats_dev = []
    feats_head = []
    if st.legacy_2017:
        return _era_label((1, 0, 0), (2, 0, 0))
    wrong = st.header_wrong or ('delta' if st.row_type_width.get('delta_inferred') else
                                ('count' if st.row_type_width.get('count_inferred') else None))
    if wrong == 'delta':
        feats_table.append(((2, 0, 0), (2, 13, 0)))
        width = st.header_type_width
        if width is None:
            widths = [k for k in st.row_type_width if isinstance(k, int)]
            width = max(widths, key=lambda k: st.row_type_width[k]) if widths else None
        if width == 6:
            feats_table.append(((2, 0, 0), (2, 10, 0)))
        elif width == 8:
            feats_table.append(((2, 10, 0), (2, 13, 0)))
    elif wrong == 'count':
        feats_table.append(((2, 13, 0), None))
    if st.rows or st.header_seen:
        if st.time_fmt_new and not st.time_fmt_old:
            feats_table.append(((2, 17, 3), None))
        elif st.time_fmt_old and not st.time_fmt_new:
            feats_table.append(((1, 0, 0), (2, 17, 3)))
    if st.devices:
        if any(d['group'] is not None for d in st.devices):
            feats_dev.append(((2, 13, 4), None))
        elif any(d['pid'] is not None for d in st.devices):
            feats_dev.append(((2, 0, 0), (2, 13, 4)))
        ids = [d['device_id'] for d in st.devices]
        if any(i.startswith('0x') for i in ids):
            feats_dev.append(((1, 0, 0), (2, 14, 1)))
        elif any(':' in i for i in ids):
            feats_dev.append(((2, 14, 1), None))
    if st.nthread:
        if st.nthread_has_unalign:
            feats_head.append(((2, 18, 2), None))
        if st.nthread_has_agg:
            feats_head.append(((2, 13, 0), None))
        else:
            feats_head.append(((2, 0, 0), (2, 13, 0)))
        if st.start_names or st.concluded_names:
            feats_head.append(((2, 16, 7), None))
        elif st.banner_seen:
            # absence of the starting line is evidence only in an unabridged header (banner kept)
            feats_head.append(((1, 0, 0), (2, 16, 7)))
    elif st.start_names or st.concluded_names:
        feats_head.append(((2, 16, 7), None))
    if not (feats_table or feats_dev or feats_head):
        return None
    for group in (feats_table, feats_dev, feats_head):
        glo, ghi = lo, hi
        ok = True
        for flo, fhi in group:
            nlo = max(glo, flo)
            nhi = fhi if ghi is None else (ghi if fhi is None else min(ghi, fhi))
            if nhi is not None and nlo >= nhi:
                ok = False
                break
            glo, ghi = nlo, nhi
        if ok:
            lo, hi = glo, ghi
    return _era_label(lo, hi)


def _era_label(lo, hi):
    for elo, ehi, label in _VERSION_ERAS:
        if elo == lo and ehi == hi:
            return label
    los = '.'.join(str(x) for x in lo)
    if hi is None:
        return '>=%s' % los
    return '>=%s and <%s' % (los, '.'.join(str(x) for x in hi))


def _infer_collective(st):
    for names, src in ((st.start_names, 'Collective test starting line'), (st.concluded_names, 'Collective test concluded line'),
                       (st.cmd_names, 'command line in the log'), (st.source_names, 'failing source file <collective>.cu')):
        for name in names:
            coll = V.collective_name(name)
            if coll:
                return coll, src
    labels = st.header_labels
    rows = st.rows
    if not rows:
        return None, None
    redops = {r['redop'] for r in rows}
    roots = {r['root'] for r in rows}
    ratio = _bw_ratio(rows)
    has_redop = bool(redops - {None, 'none'})
    rooted = any(r is not None and r >= 0 for r in roots)
    if labels == () and not has_redop and st.legacy_2017:
        # v1.x (2017) shipped all_gather, all_reduce, broadcast, reduce, reduce_scatter: only all_gather has no op/root column
        return 'all_gather', 'inferred from the 2017 column layout (no op or root column)'
    if labels == () and not has_redop:
        # pre-2.13 layout without redop/root: all_gather, sendrecv or hypercube
        if ratio is not None and ratio < 0.995:
            return 'all_gather', 'inferred from rows (no redop column, busbw/algbw < 1)'
        return None, None
    if has_redop and not rooted and ratio is not None:
        if ratio > 1.005:
            return 'all_reduce', 'inferred from rows (redop, busbw/algbw > 1)'
        if ratio < 0.995:
            return 'reduce_scatter', 'inferred from rows (redop, busbw/algbw < 1)'
        # busbw = algbw with an op and no root: all_reduce at 2 ranks (2(n-1)/n = 1), or sendrecv, which prints an op
        # too. sendrecv never checks its in-place half (src/sendrecv.cu: reportErrors = in_place ? 0 : 1, v2.11.0 on),
        # so an in-place #wrong that was checked tells all_reduce; the header must list exactly 2 ranks (reduce_scatter
        # at ~200+ ranks also comes near 1, (n-1)/n, but never with 2).
        inplace_checked = any(r['in_place'] and r['in_place']['wrong'] is not None for r in rows)
        lo, _hi = _era_bounds(st)
        if len(st.devices) == 2 and inplace_checked and lo >= (2, 11, 0):
            return 'all_reduce', ('inferred from rows (redop, no root, busbw/algbw = 1 at the 2 ranks the header lists, '
                                  'in-place #wrong checked: sendrecv prints N/A there)')
    if has_redop and rooted and labels != ('redop',):
        return 'reduce', 'inferred from rows (redop and root)'
    if not has_redop and not rooted and ratio is not None and ratio < 0.995 and labels != ('root',):
        # all_gather or alltoall; alltoall in-place #wrong is always N/A (2022-09 on)
        # Only where the layout dates the run: alltoall printed an in-place count until v2.13.1 (NVIDIA/nccl-tests a0a1491,
        # "Display N/A for error count in AlltoAll in-place test"), and alltoallv (v2.19.0, c466505) prints what alltoall does.
        inplace_checked = any(r['in_place'] and r['in_place']['wrong'] is not None for r in rows)
        oop_checked = any(r['out_of_place'] and r['out_of_place']['wrong'] is not None for r in rows)
        _lo, hi = _era_bounds(st)
        if oop_checked and not inplace_checked and hi is not None and hi <= (2, 19, 0):
            return 'alltoall', 'inferred from rows (in-place #wrong N/A, busbw/algbw < 1, layout before 2.19)'
        # Known gap (unverified either way): a v2.13.0 alltoall log, the one release that printed an in-place count, reads as all_gather.
        if inplace_checked:
            return 'all_gather', 'inferred from rows (busbw/algbw < 1, in-place #wrong checked)'
    return None, None


def _era_bounds(st):
    """(lowest, highest or None) nccl-tests version the layout allows, from the features that date it (section 5.2)."""
    if st.version_line:
        m = re.match(r'(\d+)\.(\d+)\.(\d+)', st.version_line)
        if m:
            ver = tuple(int(x) for x in m.groups())
            return ver, ver
    lo, hi = (1, 0, 0), None
    if st.time_fmt_new and not st.time_fmt_old:
        lo = max(lo, (2, 17, 3))
    elif st.time_fmt_old and not st.time_fmt_new:
        hi = (2, 17, 3)
    if st.nthread_has_unalign:
        lo = max(lo, (2, 18, 2))
    if any(d['group'] is not None for d in st.devices):
        lo = max(lo, (2, 13, 4))
    if any(d['device_id'].startswith('0x') for d in st.devices):
        hi = (2, 14, 1) if hi is None else min(hi, (2, 14, 1))
    return lo, hi


def _bw_ratio(rows):
    """busbw/algbw of the row with the largest algbw (the most precise one)."""
    best = None
    for r in rows:
        h = r['out_of_place'] or r['in_place']
        if not h or not h['algbw'] or h['busbw'] is None:
            continue
        if best is None or h['algbw'] > best['algbw']:
            best = h
    if best is None or best['algbw'] < 0.1 or best['busbw'] == 0:
        return None     # busbw 0: one rank, where every collective's factor is 0 or 1 and tells nothing
    return best['busbw'] / best['algbw']


def _ranks_from_factor(rows, coll):
    """Rank count from busbw = S/t * factor(n), intersecting the rounding intervals of several rows."""
    if coll not in _FACTOR:
        return None
    lo_n, hi_n = 1.0, float('inf')
    used = 0
    cand = sorted((r for r in rows if r['size'] > 0), key=lambda r: -r['size'])
    for r in cand[:8]:
        for half in (r['out_of_place'], r['in_place']):
            if not half or not half['time_us'] or half['busbw'] is None or half['busbw'] < 0.5:
                continue
            tok_b = '%.2f' % half['busbw']
            eb = _half_ulp(tok_b)
            t = half['time_us']
            et = max(_half_ulp('%.2f' % t), t * 1e-6) if t < 100 else (0.5 if t < 10000 else 0.5 * 10 ** max(0, len('%d' % t) - 5))
            alg_hi = r['size'] / max(t - et, 1e-9) / 1e3
            alg_lo = r['size'] / (t + et) / 1e3
            rlo = (half['busbw'] - eb) / alg_hi
            rhi = (half['busbw'] + eb) / alg_lo
            nlo, nhi = _n_range(coll, rlo, rhi)
            if nlo is None:
                continue
            lo_n = max(lo_n, nlo)
            hi_n = min(hi_n, nhi)
            used += 1
    if not used or hi_n == float('inf'):
        return None
    cands = list(range(max(2, math.ceil(lo_n - 1e-9)), int(math.floor(hi_n + 1e-9)) + 1))
    if len(cands) == 1:
        return cands[0]
    return None


def _n_range(coll, rlo, rhi):
    # invert factor(n): all_reduce r = 2(n-1)/n -> n = 2/(2-r); others r = (n-1)/n -> n = 1/(1-r)
    top = 2.0 if coll == 'all_reduce' else 1.0
    if rlo >= top:
        return None, None
    nlo = top / (top - rlo) if rlo > 0 else 1.0
    nhi = top / (top - rhi) if rhi < top else float('inf')
    return nlo, nhi


def _counts(st, res, coll):
    ranks = None
    nodes = None
    gpn = None
    src = []
    devs = st.devices
    complete_list = False
    if devs:
        listed = sorted({d['rank'] for d in devs})
        last_list = [d for d in devs if d['list'] == st.device_lists] if st.device_lists else devs
        if listed[0] == 0 and len(listed) == listed[-1] + 1:
            complete_list = True
            ranks = len(listed)
            src.append('device list')
        elif st.device_list_closed or st.rows or st.header_seen:
            # devices print in rank order, so the last line before the table is the last rank
            ranks = max(d['rank'] for d in last_list) + 1
            src.append('last device line is Rank %d' % (ranks - 1))
    comm_n = {c[1] for c in st.comm}
    if ranks is None and len(comm_n) == 1:
        ranks = comm_n.pop()
        src.append('"nranks %d" in NCCL INFO lines' % ranks)
    fac = _ranks_from_factor(st.rows, coll) if st.rows else None
    if ranks is None and fac:
        ranks = fac
        src.append('busbw/algbw factor of %s' % coll)
    elif ranks is not None and fac and fac != ranks:
        st.warnings.append('rank count %d from the log disagrees with %d from busbw/algbw' % (ranks, fac))
    if complete_list:
        hosts = {}
        for d in devs:
            hosts.setdefault(d['host'], set()).add(d['rank'])
        nodes = len(hosts)
        sizes = {len(v) for v in hosts.values()}
        if len(sizes) == 1:
            gpn = sizes.pop()
    else:
        obs = [(d['rank'], d['device'], d['host']) for d in devs]
        obs += [(c[0], c[2], c[3]) for c in st.comm]
        gpn = _gpus_per_node_from_blocks(obs, ranks)
        if gpn:
            nodes = ranks // gpn
            src.append('ranks placed in blocks of %d per host (rank - device index)' % int(gpn))
        elif len(st.hosts) >= 2:
            nodes = len(st.hosts)
            src.append('distinct hosts in NCCL debug lines')
            if ranks and ranks % nodes == 0:
                gpn = ranks // nodes
    res['ranks'] = ranks
    res['nodes'] = nodes
    res['gpus_per_node'] = gpn
    res['counts_source'] = '; '.join(src) if src else None


def _gpus_per_node_from_blocks(obs, ranks):
    """nccl-tests numbers devices by local rank, so rank r on device d starts its host's block at r - d."""
    if not obs or not ranks:
        return None
    max_dev = max(o[1] for o in obs)
    if max_dev < 1:
        return None
    g = ranks
    for r, d, _h in obs:
        if r - d < 0:
            return None
        g = math.gcd(g, r - d)
    cands = [c for c in range(max_dev + 1, g + 1) if g % c == 0 and ranks % c == 0]
    good = []
    for c in cands:
        hosts = {}
        ok = True
        for r, _d, h in obs:
            if h is None:
                continue
            blk = r // c
            if hosts.setdefault(h, blk) != blk:
                ok = False
                break
        if ok:
            good.append(c)
    return good[0] if len(good) == 1 else None


def _transport(st, res):  # noqa: C901
    """Transport and GDR from NCCL_DEBUG=INFO lines only (section 8, rules 1-3)."""
    evidence = []
    ports = {kind for _dev, kind in st.ib_ports}
    nets = st.net_channels
    cls = 'unknown'
    net_names = set(nets)
    socket_channels = any(n.lower().startswith('socket') for n in net_names)
    ib_channels = 'IB' in net_names
    efa = (st.efa_provider or '').lower().startswith('efa')
    libfabric = any('libfabric' in n.lower() or n.lower().startswith('ofi') for n in net_names) or \
        any('libfabric' in n.lower() or n.upper() == 'EFA' for n in st.nets)
    if socket_channels:
        cls = 'Socket'
        evidence.append('channels via NET/Socket')
    elif ib_channels or (st.net_ib_dataplane and not net_names):
        if ports == {'IB'}:
            cls = 'IB'
        elif ports == {'RoCE'}:
            cls = 'RoCE'
        else:
            cls = _IB_VERBS
        evidence.append('channels via NET/IB' if ib_channels else 'NET/IB data path errors')
        if ports:
            evidence.append('NET/IB ports: ' + ', '.join('%s/%s' % p for p in st.ib_ports[:8]))
    elif net_names and libfabric and efa:
        cls = 'EFA'
        evidence.append('channels via NET/%s, OFI provider %s' % (sorted(net_names)[0], st.efa_provider))
    elif net_names:
        evidence.append('channels via NET/%s' % ', NET/'.join(sorted(net_names)))
    elif st.intra_channels and not net_names:
        single = res.get('nodes') == 1 or (len(st.hosts) == 1 and res.get('nodes') in (None, 1))
        if single:
            cls = 'NVLink-only'
            evidence.append('only P2P/SHM channels on one node')
    if cls == 'unknown' and not net_names:
        if 'Socket' in st.nets:
            cls = 'Socket'
            evidence.append('Using network Socket')
            if st.ib_no_device:
                evidence.append('NET/IB : No device found')
        elif efa and (libfabric or any('libfabric' in n.lower() for n in st.nets)):
            cls = 'EFA'
            evidence.append('OFI provider efa, Using network %s' % (st.nets[0] if st.nets else 'AWS Libfabric'))
    res['transport_class'] = cls
    res['transport'] = cls if cls in TRANSPORTS else 'unknown'
    res['transport_evidence'] = evidence
    res['network'] = st.nets[0] if st.nets else None

    # GDR (rule 3)
    gdr = 'unknown'
    gev = []
    n_net = sum(v[0] for v in nets.values())
    n_gdr = sum(v[1] for v in nets.values())
    if n_net:
        gdr = n_gdr == n_net
        gev.append('%d of %d network channel lines carry /GDRDMA' % (n_gdr, n_net))
    elif st.gdr_summary[0] or st.gdr_summary[1]:
        gdr = st.gdr_summary[1] == 0
        gev.append('"use ring PXN .. GDR %d"' % (1 if gdr else 0))
    elif st.gdr_path[0] or st.gdr_path[1]:
        gdr = st.gdr_path[1] == 0
        gev.append('per GPU-NIC path GPU Direct RDMA %s' % ('Enabled' if gdr else 'Disabled'))
    elif st.gdr_hca[1] and not st.gdr_hca[0]:
        gdr = False
        gev.append('GPU Direct RDMA Disabled for every HCA')
    if gdr == 'unknown':
        if cls == 'Socket':
            gdr = False
            gev.append('socket transport: no RDMA')
        elif st.no_verbs:
            gdr = False
            gev.append('libibverbs missing: no RDMA')
    if st.gdr_summary[1] and gdr is True:
        gdr = False
        gev.append('"GDR 0" on some communicator')
    res['gdr_active'] = gdr
    res['gdr_evidence'] = gev


# ---------------------------------------------------------------------------
# JSON output (-J), section 5.4

_JSON_VERSION_MAX = 3   # src/util.cu '#define JSON_FILE_VERSION 3' (v2.19.6 line 52; 1 from v2.17.3 to v2.19.0)


def _parse_json_doc(doc):
    st = _State()
    cfg = doc.get('config') if isinstance(doc.get('config'), dict) else {}
    st.header_wrong = 'count'
    st.header_labels = ('redop', 'root')
    st.header_seen = 1
    st.anything_before_table = True
    for dev in cfg.get('devices') or []:
        if not isinstance(dev, dict):
            continue
        try:
            st.devices.append({
                'rank': int(dev.get('rank')), 'group': dev.get('group'), 'pid': dev.get('pid'), 'host': str(dev.get('hostname')),
                'device': int(dev.get('device')), 'device_id': str(dev.get('device_hex') or ''),
                'name': str(dev.get('device_info') or '').strip(), 'list': 1,
            })
        except (TypeError, ValueError):
            continue
    if st.devices:
        st.device_lists = 1
        st.device_list_closed = True
    if cfg:
        st.nthread = {
            'nThread': cfg.get('nthreads'), 'nGpus': cfg.get('ngpus'), 'minBytes': cfg.get('minimum_bytes'),
            'maxBytes': cfg.get('maximum_bytes'), 'iters': cfg.get('iterations'), 'warmup iters': cfg.get('warmup_iters'),
            'validation': cfg.get('validation'), 'graph': cfg.get('graph'),
        }
        if cfg.get('step_factor'):
            st.nthread['step'], st.nthread['step_kind'] = cfg.get('step_factor'), 'factor'
        elif cfg.get('step_bytes'):
            st.nthread['step'], st.nthread['step_kind'] = cfg.get('step_bytes'), 'bytes'
        st.nthread_has_agg = True
    args = doc.get('args')
    if isinstance(args, list) and args:
        name = V.collective_name(str(args[0]))
        if name:
            st.start_names.append(name)
    if doc.get('nccl_version') is not None:
        st.nccl_library = doc.get('nccl_version') if isinstance(doc.get('nccl_version'), int) else None
    for idx, item in enumerate(doc.get('results') or []):
        row = _json_row(item)
        if row is None:
            st.partial_rows += 1
            continue
        row['run'] = 1
        row['line'] = idx + 1
        st.rows.append(row)
    oob = doc.get('out_of_bounds')
    if isinstance(oob, dict) and 'count' in oob:
        okay = _json_okay(oob.get('okay'))
        if okay is None:
            st.failures.append('out_of_bounds.okay is %r, not "true" or "false" as nccl-tests writes it' % (oob.get('okay'),))
        st.oob = '%s %s' % (oob.get('count'), 'OK' if okay is True else 'FAILED')
        if okay is not True:
            st.error('Out of bounds values : ' + st.oob)
    avg = doc.get('average_bus_bandwidth')
    if isinstance(avg, dict) and 'bandwidth' in avg:
        bw = avg['bandwidth']
        st.avg = '%g' % bw if isinstance(bw, (int, float)) and not isinstance(bw, bool) else str(bw)
        okay = _json_okay(avg.get('okay'), unchecked=True)
        if okay is None:
            st.failures.append('average_bus_bandwidth.okay is %r, not "true", "false" or "unchecked" as nccl-tests writes it' % (
                avg.get('okay'),))
        st.avg_status = None if okay == 'unchecked' else ('OK' if okay is True else 'FAILED')
        if okay is False:
            # NCCL_TESTS_MIN_BW set and the average below 0.9 x it (src/util.cu writeResultFooter, v2.19.6 line 791)
            st.error('Avg bus bandwidth : %s FAILED' % st.avg)
            st.failures.append('average_bus_bandwidth: %s FAILED (okay "false": below 0.9 x NCCL_TESTS_MIN_BW)' % st.avg)
    for err in doc.get('errors') or []:
        if err:
            st.error('error: %s' % err)
            st.failures.append('error: %s' % err)
    version = doc.get('version')
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= _JSON_VERSION_MAX:
        why = 'JSON file version %r: this parser reads versions 1 to %d (nccl-tests v2.17.3 to v2.19.6 src/util.cu ' \
              'JSON_FILE_VERSION)' % (version, _JSON_VERSION_MAX)
        st.error(why)
        st.failures.append(why)
    res = _finish(st)
    res['format'] = 'json'
    res['nccl_tests_version_inferred'] = '>=2.17.3' if res['nccl_tests_version'] is None else None
    res['json_version'] = doc.get('version')
    if 'end_time' not in doc and 'the JSON file has no end_time (cut or still running)' not in res['truncated_reasons']:
        res['truncated_reasons'].append('the JSON file has no end_time (cut or still running)')
        res['truncated'] = True
        res['complete'] = False
    return res


def _json_okay(value, unchecked=False):
    """An ``okay`` flag of a -J file: nccl-tests writes booleans as the strings "true"/"false" (src/util.cu jsonBool,
    v2.19.6 lines 273-274, through jsonStr) and "unchecked" for an average without NCCL_TESTS_MIN_BW (line 791).
    A JSON boolean (a file another tool rewrote) means the same; anything else is None: not recognised, never a pass."""
    if value is True or value == 'true':
        return True
    if value is False or value == 'false':
        return False
    if unchecked and value == 'unchecked':
        return 'unchecked'
    return None


def _json_row(item):
    if not isinstance(item, dict):
        return None
    try:
        size = int(item.get('size'))
        count = int(item.get('count'))
    except (TypeError, ValueError):
        return None
    root = item.get('root')
    try:
        root = int(str(root).strip())
    except ValueError:
        root = None
    halves = []
    for key in ('out_of_place', 'in_place'):
        h = item.get(key)
        if not isinstance(h, dict):
            halves.append(None)
            continue
        t = h.get('time', h.get('cpu_time'))
        nwrong = h.get('nwrong')
        half = {'time_us': _num(t), 'algbw': _num(h.get('alg_bw')), 'busbw': _num(h.get('bus_bw')),
                'wrong': int(nwrong) if _num(nwrong) is not None else None, 'max_delta': None}
        per = item.get(key + '_per_iter')
        if isinstance(per, dict):
            half['i_min_us'] = _num(per.get('min_us'))
            half['i_max_us'] = _num(per.get('max_us'))
            half['i_p99_us'] = _num(per.get('p99_us'))
            half['i_cv_pct'] = _num(per.get('cv_pct'))
        halves.append(half)
    return {'size': size, 'count': count, 'type': str(item.get('type')), 'redop': item.get('redop'), 'root': root,
            'out_of_place': halves[0], 'in_place': halves[1], 'timestamp': None}


# ---------------------------------------------------------------------------
# launches: every form a playbook holds

def load_launch(item, path: str) -> dict:
    """One launch for ``compare``: a raw log string, an nccl_result result, a registered command result
    (``stdout``), a slurp result (``content`` + ``encoding: base64``) or an nccl-tests ``-J`` document.
    Raises ValueError naming ``path``."""
    if isinstance(item, (str, bytes)):
        return parse(item)
    if not isinstance(item, dict):
        raise ValueError('%s: %s is not a log or an nccl_result result' % (path, type(item).__name__))
    if 'rows' in item:
        rows = item['rows']
        if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get('size'), int) for r in rows):
            raise ValueError('%s.rows: not the rows of an nccl_result result' % path)
        return item
    if isinstance(item.get('stdout'), str):
        return parse(item['stdout'])
    if isinstance(item.get('content'), str):
        if item.get('encoding') == 'base64':
            import base64
            import binascii
            try:
                return parse(base64.b64decode(item['content']))
            except (binascii.Error, ValueError) as exc:
                raise ValueError('%s.content: not base64: %s' % (path, exc)) from None
        return parse(item['content'])
    if 'results' in item or 'config' in item:
        return parse(json.dumps(item))
    raise ValueError('%s: a mapping without rows, stdout or content is not an nccl_result result' % path)
