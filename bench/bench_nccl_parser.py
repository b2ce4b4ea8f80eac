# SPDX-License-Identifier: GPL-3.0-or-later
"""Throughput of the nccl-tests parser (plugins/module_utils/_nccl/_parse.py) on a large NCCL_DEBUG=INFO log.

Builds a log of the requested size (default 200 MB) by repeating the real
lines of the corpus (tests/data/nccl-corpus, mostly the NCCL INFO heavy
awsefaeks paste) in a temporary directory, parses it a few times on one
core and prints one JSON line with the median MB/s.  The temp dir is deleted
afterwards.  Not a test: nothing here asserts a time.

    .venv/bin/python bench/bench_nccl_parser.py [--size-mb 200] [--repeats 3]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _import_parser():
    sys.path.insert(0, os.path.join(ROOT, '.deps', 'self'))
    from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse  # pylint: disable=import-outside-toplevel
    return _nccl_parse


def build_log(path, size_bytes, corpus, mix='info'):
    """Write a log of about size_bytes by repeating real corpus text.

    mix='info': the corpus files that are NCCL_DEBUG=INFO logs (they contain
    NCCL INFO lines, tables included), i.e. what a real debug run looks like.
    mix='all': every corpus file, so table rows are over-represented (a worst
    case for the row parser).
    """
    chunks = []
    for name in sorted(glob.glob(os.path.join(corpus, '*.txt'))):
        with open(name, encoding='utf-8') as fh:
            text = fh.read()
        if mix == 'info' and 'NCCL INFO' not in text:
            continue
        chunks.append(text if text.endswith('\n') else text + '\n')
    block = ''.join(chunks).encode('utf-8')
    if not block:
        raise SystemExit('no corpus text found in %s' % corpus)
    written = 0
    with open(path, 'wb') as fh:
        while written < size_bytes:
            fh.write(block)
            written += len(block)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--size-mb', type=float, default=200.0, help='log size in MB (default 200)')
    ap.add_argument('--repeats', type=int, default=3, help='timed parses (median is reported)')
    ap.add_argument('--mix', choices=('info', 'all'), default='info', help='info: NCCL_DEBUG=INFO logs of the corpus; all: every file')
    ap.add_argument('--corpus', default=os.path.join(ROOT, 'tests', 'data', 'nccl-corpus'))
    args = ap.parse_args(argv)
    if hasattr(os, 'sched_setaffinity'):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})    # one core
    nccl = _import_parser()
    tmp = tempfile.mkdtemp(prefix='bench_nccl_')
    try:
        path = os.path.join(tmp, 'nccl_debug_info.log')
        size = build_log(path, int(args.size_mb * 1e6), args.corpus, args.mix)
        rates = []
        cpu_rates = []
        rows = None
        for _repeat in range(max(1, args.repeats)):
            with open(path, encoding='utf-8') as fh:
                text = fh.read()
            start = time.perf_counter()
            cpu = time.process_time()
            res = nccl.parse(text)
            cpu = time.process_time() - cpu
            elapsed = time.perf_counter() - start
            rows = res['size_rows']
            del text, res
            rates.append(size / 1e6 / elapsed)
            cpu_rates.append(size / 1e6 / max(cpu, 1e-9))
        # wall-clock MB/s is the headline; CPU-time MB/s shows what the parser does when the machine is shared
        out = {'bench': 'nccl_parser', 'mix': args.mix, 'bytes': size, 'repeats': len(rates),
               'mb_per_s_median': round(statistics.median(rates), 1), 'mb_per_s_all': [round(r, 1) for r in rates],
               'cpu_mb_per_s_median': round(statistics.median(cpu_rates), 1),
               'rows_parsed': rows, 'python': sys.version.split()[0]}
        print(json.dumps(out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
