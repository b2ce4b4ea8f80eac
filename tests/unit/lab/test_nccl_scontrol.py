# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's strict scontrol shim (tests/lab/nccl/scontrol.py): what role localize sends is accepted and kept,
what Slurm refuses is refused with scontrol's words."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

SHIM = pathlib.Path(__file__).resolve().parents[2] / "lab" / "nccl" / "bin" / "scontrol"


@pytest.fixture
def lab(tmp_path):
    (tmp_path / "nccl").mkdir()
    config = tmp_path / "nccl" / "config.json"
    config.write_text(json.dumps({"run_dir": str(tmp_path), "slurm_nodes": ["gpu1", "gpu2"]}))

    def call(*argv):
        env = {"LAB_NCCL_CONFIG": str(config), "LAB_NCCL_PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}
        return subprocess.run([str(SHIM), *argv], capture_output=True, text=True, env=env, check=False)

    def nodes():
        path = tmp_path / "nccl" / "slurm_nodes.json"
        return json.loads(path.read_text()) if path.exists() else {}
    return call, nodes


def test_drain_then_resume_keywords_in_any_case(lab):
    call, nodes = lab
    out = call("update", "nodename=gpu2", "state=drain", "reason=lossless.fabric localize suspect (nic gpu2:mlx5_0)")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert nodes() == {"gpu2": {"state": "IDLE+DRAIN", "reason": "lossless.fabric localize suspect (nic gpu2:mlx5_0)"}}
    assert call("update", "NodeName=gpu2", "State=RESUME").returncode == 0
    assert nodes()["gpu2"] == {"state": "IDLE", "reason": None}


@pytest.mark.parametrize("argv, text, rc", [
    (["update", "nodename=gpu1", "state=drain"], "You must specify a reason when DOWNING or DRAINING a node. Request denied", 1),
    (["update", "nodename=gpu9", "state=drain", "reason=x"], "slurm_update error: Invalid node name specified", 1),
    (["update", "nodename=gpu1", "state=drain", "reason=x", "weight=5"], "lab scontrol: keyword 'weight' is not emulated", 2),
    (["show", "node", "gpu1"], "lab scontrol: only 'scontrol update", 2),
])
def test_what_slurm_refuses_is_refused_and_nothing_changes(lab, argv, text, rc):
    call, nodes = lab
    out = call(*argv)
    assert out.returncode == rc and text in out.stderr, out.stderr
    assert nodes() == {}
