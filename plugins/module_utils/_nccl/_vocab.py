# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The benchmark's one vocabulary: collectives, binaries, transports, placements and sizes.

The fabric intent (``_intent``), the launcher (``_nccl_launch``), the parser
(``_nccl_parse``) and the gate (``_nccl_gate``) all take their names from here,
so a collective the intent accepts is one the gate can judge.  Pure Python
standard library; no Ansible imports.
"""
from __future__ import annotations

import re

# The collectives nccl-tests ships, one per src/<name>.cu (NVIDIA/nccl-tests src/, v2.19.6:
# all_gather, all_reduce, alltoall, alltoallv, broadcast, gather, hypercube, reduce,
# reduce_scatter, scatter, sendrecv).  The binary of each is ``<name>_perf``
# (``<name>_perf_mpi`` in some NGC images).
COLLECTIVES: tuple[str, ...] = (
    'all_reduce', 'all_gather', 'reduce_scatter', 'alltoallv', 'alltoall', 'broadcast',
    'reduce', 'sendrecv', 'scatter', 'gather', 'hypercube',
)
BINARIES: tuple[str, ...] = tuple(coll + '_perf' for coll in COLLECTIVES)

# Collectives whose in-place half nccl-tests never checks: src/sendrecv.cu, src/alltoall.cu and
# src/alltoallv.cu set ``args->reportErrors = in_place ? 0 : 1`` (v2.11.0 and v2.19.6 alike), so
# from 2.13 on the in-place #wrong cell prints N/A and before 2.13 the in-place error cell is
# not compared against any bound.
INPLACE_UNCHECKED: frozenset[str] = frozenset(('sendrecv', 'alltoall', 'alltoallv'))

# Transports the parser can prove from NCCL_DEBUG=INFO lines; a result's ``transport`` is one of
# these or 'unknown', and an intent's or gate's ``require_transport`` is one of these.
TRANSPORTS: tuple[str, ...] = ('IB', 'RoCE', 'Socket', 'EFA', 'NVLink-only')
UNKNOWN_TRANSPORT = 'unknown'

# Which half of a row a busbw target reads.
PLACEMENTS: tuple[str, ...] = ('out_of_place', 'in_place', 'both')

_SIZE_RE = re.compile(r'(\d+)(?:([KMGkmg])(iB)?)?')


def collective_name(name) -> str | None:
    """'all_reduce', 'all_reduce_perf', 'all_reduce_perf_mpi' or '/opt/nccl-tests/build/all_reduce_perf' -> 'all_reduce'.

    None for anything that is not one of COLLECTIVES.
    """
    if not name or not isinstance(name, str):
        return None
    name = name.strip().lower().rsplit('/', 1)[-1]
    for suffix in ('_mpi', '_perf'):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    return name if name in COLLECTIVES else None


def parse_size(value) -> int:
    """Return a byte count from ``8``, ``'8'``, ``'1K'``, ``'1M'``, ``'1G'`` or ``'1GiB'``.

    Multipliers are powers of 1024 and case-insensitive, as nccl-tests' ``-b``/``-e``
    parse them (reference nccl-tests section 3); like nccl-tests there is no ``T``.
    ``'1GB'`` is refused because it is ambiguous (1000 or 1024).  Raises ValueError.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{value!r} is not a size (negative)")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a size (an integer or a string such as '8', '1K', '1M', '1G', '1GiB')")
    match = _SIZE_RE.fullmatch(value.strip())
    if not match:
        raise ValueError(f"{value!r} is not a size (digits with an optional K, M or G suffix, powers of 1024, e.g. '64M', '1G', '1GiB')")
    number, unit = int(match.group(1)), (match.group(2) or '').upper()
    return number * {'': 1, 'K': 1024, 'M': 1024**2, 'G': 1024**3}[unit]


def human_size(size) -> str:
    """1073741824 -> '1 GiB' (binary units, as nccl-tests -b/-e use)."""
    if size is None:
        return '?'
    for unit, mult in (('TiB', 1 << 40), ('GiB', 1 << 30), ('MiB', 1 << 20), ('KiB', 1 << 10)):
        if size >= mult:
            val = size / mult
            return ('%d %s' % (val, unit)) if val == int(val) else ('%.2f %s' % (val, unit))
    return '%d B' % size
