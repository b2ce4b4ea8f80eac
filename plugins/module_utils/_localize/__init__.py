# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Find the bad part of the fabric in a few rounds of 2-node, 1-GPU-per-node benchmarks (issue 17).

Pure logic: no Ansible, no launcher.  The caller (module ``nccl_localize``) asks
``plan_round`` for the next round, launches its jobs, hands the measured busbw to
``record`` and keeps the returned history entry; ``infer`` names the suspects.

The algorithm is ``docs/localization.md``: round 1 pairs hosts under the same
leaves (intra-leaf), round 2 pairs leaf groups across the spines (cross-leaf), or a
shifted intra-leaf matching on a single leaf group, or cross-rail pairs on a 2-host
fabric; round 3 a second cross-leaf matching where more than two leaf groups exist
and an uplink is suspected; then a verify round pairs each host-side suspect with a
known-good host (Google cluster-health-scanner's second pass).  Every job is one
rail of one pair.  Flags: robust sigma (1.4826 x MAD) and a minimum drop against
the round's reference, or an expected floor.  Inference: a greedy noise-tolerant
hitting set (slow/fast counts, ratio >= 0.6, at least 2 slow observations), then a
partial pass for ECMP uplinks and flapping links.

The package, one module per part: ``_base`` (settings, LocalizeError, topology), ``_flags`` (record,
loopback_round), ``_infer`` (infer, cost), ``_rounds`` (plan_round), ``_output`` (report_markdown, exclusion,
superbench_pairwise). Callers import the package (``_localize.X``): it re-exports every name of every part.
"""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._localize._base import (
    _CONTROL,  # noqa: F401
    _FLOAT_KEYS,  # noqa: F401
    _INT_KEYS,  # noqa: F401
    _NAME,  # noqa: F401
    DEFAULT_SETTINGS,  # noqa: F401
    KINDS,  # noqa: F401
    REASON_MAX,  # noqa: F401
    LocalizeError,  # noqa: F401
    Topology,  # noqa: F401
    _gpu_rounds,  # noqa: F401
    _natural,  # noqa: F401
    _speed_gbps,  # noqa: F401
    check_settings,  # noqa: F401
    topology,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._localize._flags import (
    _line_gbs,  # noqa: F401
    _median,  # noqa: F401
    _reference,  # noqa: F401
    _reference_of,  # noqa: F401
    _slow,  # noqa: F401
    loopback_round,  # noqa: F401
    record,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._localize._infer import (
    _describe,  # noqa: F401
    _observations,  # noqa: F401
    _verified_fast,  # noqa: F401
    cost,  # noqa: F401
    infer,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._localize._output import (
    _cell,  # noqa: F401
    _clean,  # noqa: F401
    component_text,  # noqa: F401
    exclusion,  # noqa: F401
    report_markdown,  # noqa: F401
    superbench_pairwise,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._localize._rounds import (
    _cross,  # noqa: F401
    _cross_repeats,  # noqa: F401
    _finish,  # noqa: F401
    _host_rails,  # noqa: F401
    _job,  # noqa: F401
    _number,  # noqa: F401
    _pairs_in,  # noqa: F401
    _same_rail_jobs,  # noqa: F401
    _second_round,  # noqa: F401
    _verify_jobs,  # noqa: F401
    plan_round,  # noqa: F401
)
