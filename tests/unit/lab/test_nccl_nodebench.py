# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's node-baseline binaries (tests/lab/nccl/nodebench.py, issue 35): nccl-tests' single-node form from the node
model, the slow-host knob, one GPU, nccl-tests' refusals; parsed and gated by the collection's own parser."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from hostsim import plugin as hostsim_plugin  # noqa: E402
from nccl import nodebench  # noqa: E402

GIB = 1 << 30
TARGET = [{"min_size": GIB, "max_size": None, "min_busbw": 400, "gpu_model": "NVIDIA H100 80GB HBM3"}]


def _run(capsys, argv, host="gpu1", run_dir=None, program="all_reduce_perf"):
    rc = nodebench.main(program, argv, host=host, run_dir=run_dir)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def run_dir(tmp_path):
    (tmp_path / "perf.json").write_text(json.dumps({"faults": [{"host": "gpu2", "factor": 0.5}], "noise": 0.02, "seed": 1}))
    return str(tmp_path)


def test_healthy_and_slow_node(capsys, run_dir):
    rc, out, _err = _run(capsys, ["-b", "1G", "-e", "4G", "-f", "2", "-g", "8"], "gpu1", run_dir)
    healthy = _nccl_parse.parse(out)
    assert rc == 0 and healthy["complete"] and (healthy["ranks"], healthy["nodes"]) == (8, 1)
    assert healthy["nccl_tests_version"] == "2.19.6" and healthy["collective"] == "all_reduce"
    assert _nccl_gate.gate(healthy, TARGET) == []
    rc, out, _err = _run(capsys, ["-b", "1G", "-e", "4G", "-f", "2", "-g", "8"], "gpu2", run_dir)
    slow = _nccl_parse.parse(out)
    assert rc == 0 and slow["oop_busbw_at_largest_size"] < 0.6 * healthy["oop_busbw_at_largest_size"]
    assert _nccl_gate.gate(slow, TARGET)
    # node launches are counted apart from the fabric launches (perfmodel's perf-launches/)
    assert sorted(p.name for p in pathlib.Path(run_dir, "node-launches").iterdir()) == ["0", "1"]
    assert not pathlib.Path(run_dir, "perf-launches").exists()


def test_one_gpu_all_reduce_prints_zero_busbw_and_broadcast_a_real_one(capsys):
    _rc, out, _err = _run(capsys, ["-b", "1G", "-e", "1G", "-g", "1"])
    res = _nccl_parse.parse(out)
    assert res["single_rank"] is True and res["rows"][0]["out_of_place"]["busbw"] == 0
    assert "busbw is 0 by definition" in _nccl_gate.gate(res, TARGET)[0]
    _rc, out, _err = _run(capsys, ["-b", "1G", "-e", "1G", "-g", "1"], program="broadcast_perf")
    res = _nccl_parse.parse(out)
    assert res["collective"] == "broadcast" and res["rows"][0]["out_of_place"]["busbw"] > 400


def test_too_many_gpus_and_bad_options_as_nccl_tests_says(capsys):
    rc, out, err = _run(capsys, ["-g", "9"])
    assert rc == 5 and "Invalid number of GPUs: 9 requested but only 8 were found." in err
    assert _nccl_parse.parse(out + err)["failures"]
    rc, out, _err = _run(capsys, ["-Q", "1"])
    assert rc == 0 and "invalid option" in out and "USAGE" in out


def test_hostsim_writes_each_hosts_binaries(tmp_path, run_dir):
    hostsim_plugin.write_node_bench(str(tmp_path / "bin"), "gpu2", run_dir, sys.executable)
    binary = tmp_path / "bin" / "all_reduce_perf"
    done = subprocess.run([str(binary), "-b", "1G", "-e", "1G", "-g", "8"], capture_output=True, text=True, check=False)
    res = _nccl_parse.parse(done.stdout)
    assert done.returncode == 0 and res["devices"][0]["host"] == "gpu2"
    assert res["oop_busbw_at_largest_size"] < 300      # gpu2's slow-host fault of the run
