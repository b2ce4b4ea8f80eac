# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Compatibility re-export of the NCCL benchmark modules; import from them instead.

The parser, the gate and the statistics live in ``_nccl_parse``, ``_nccl_gate`` and
``_nccl_stats``; the shared names (collectives, transports, sizes) in ``_nccl_vocab``.
This file only keeps importers on other branches working until they move; nothing in
the collection imports it any more.
"""
from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._nccl_gate import (  # noqa: F401
    GATE_ARG_SPEC,
    gate,
    gate_label,
    gate_report,
    gate_settings,
    size_option,
)
from ansible_collections.lossless.fabric.plugins.module_utils._nccl_parse import load_launch, parse  # noqa: F401
from ansible_collections.lossless.fabric.plugins.module_utils._nccl_stats import (  # noqa: F401
    compare,
    compare_report,
    hodges_lehmann_ratio,
    mann_whitney_less,
    median_result,
)
from ansible_collections.lossless.fabric.plugins.module_utils._nccl_vocab import (  # noqa: F401
    BINARIES,
    COLLECTIVES,
    PLACEMENTS,
    TRANSPORTS,
    collective_name,
    human_size,
    parse_size,
)

GATE_TRANSPORTS = TRANSPORTS
