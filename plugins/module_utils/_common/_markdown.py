# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Markdown table cells and tables for the collection's reports (NCCL benchmark, change window)."""
from __future__ import annotations


def md_cell(value, fmt=None) -> str:
    """value as one Markdown table cell: '-' for None, yes/no for booleans, line breaks and '|' made harmless.
    Every report table goes through it (_change_report's too), so one escaping rule holds for all."""
    if value is None:
        return '-'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    text = (fmt % value) if fmt and isinstance(value, (int, float)) else str(value)
    return text.replace('\r', ' ').replace('\n', ' ').replace('|', '\\|')


def md_table(header, rows) -> list:
    """The lines of a Markdown table; the cells already escaped (md_cell)."""
    out = ['| %s |' % ' | '.join(header), '|%s' % ('---|' * len(header))]
    out.extend('| %s |' % ' | '.join(row) for row in rows)
    return out
