# SPDX-License-Identifier: GPL-3.0-or-later
"""The intent's targets.node (issue 35): the node baseline's targets per GPU model, validated by the one targets validator."""
from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets


def test_node_targets_normalized():
    section, errors = _targets.validate_targets({"node": [{"gpu_model": " NVIDIA H100 80GB HBM3 ", "min_size": "1G", "min_busbw": 460}]})
    assert errors == []
    assert section["node"] == [{"gpu_model": "NVIDIA H100 80GB HBM3", "min_size": 1 << 30, "max_size": None, "min_busbw": 460}]
    assert _targets.validate_targets({})[0]["node"] == []


def test_node_target_errors_named():
    _section, errors = _targets.validate_targets({"node": [{"min_size": "1G", "min_busbw": 0, "gpus": 8}]})
    assert any("targets.node[0]" in e and "gpu_model" in e for e in errors)
    assert any("targets.node[0].min_busbw" in e for e in errors)
    assert any("gpus" in e for e in errors)
    _section, errors = _targets.validate_targets({"node": {"gpu_model": "x"}})
    assert any("targets.node" in e and "not a list" in e for e in errors)
