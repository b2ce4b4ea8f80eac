# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.nccl_localize run through main(): check mode plans round 1 and launches nothing; a real run drives
the lab's strict mpirun shim in model mode (tests/lab/nccl/perfmodel.py, a run dir with wiring.json and perf.json)
and names the injected fault; bad settings and cabling fail before anything is launched."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.lossless.fabric.plugins.modules import nccl_localize

ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "plugins" / "module_utils" / "_localize"))
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import localize_sim  # noqa: E402  # pylint: disable=wrong-import-position,import-error
import wiring  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from nccl import perfmodel  # noqa: E402  # pylint: disable=wrong-import-position,import-error

SHIM_BIN = ROOT / "tests" / "lab" / "nccl" / "bin"
CABLING = localize_sim.lab_cabling()


@pytest.fixture(autouse=True)
def _capture(monkeypatch, capsys):
    def fake_exit(code=0):
        err = SystemExit(code)
        err.result = json.loads(capsys.readouterr().out)
        raise err

    monkeypatch.setattr(sys, "exit", fake_exit)
    monkeypatch.setattr(ansible_warnings, "_global_warnings", {})
    monkeypatch.setattr(ansible_warnings, "_global_deprecations", {})


def run(args, check=False):
    if check:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            nccl_localize.main()
    return exc.value.code != 0, exc.value.result


@pytest.fixture
def lab(monkeypatch, tmp_path):
    """A lab run dir in model mode with one fault, and the strict mpirun shim first in PATH."""
    cables = localize_sim.cables(CABLING)
    wiring.write(str(tmp_path), {"ends": [], "intended": cables, "links": cables, "faults": []})
    monkeypatch.setenv("PATH", "%s:%s" % (SHIM_BIN, os.environ["PATH"]))
    monkeypatch.setenv("LAB_NCCL_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("LAB_NCCL_RECORD", str(tmp_path / "record.jsonl"))
    monkeypatch.setenv("LAB_NCCL_PYTHON", sys.executable)
    for var in ("LAB_NCCL_REPLAY", "LAB_NCCL_CONFIG", "LAB_NCCL_OUTCOME", "OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        monkeypatch.delenv(var, raising=False)

    def fault(*faults):
        perfmodel.write_perf(str(tmp_path), list(faults), 0.02, 1, cables)
        return tmp_path
    return fault


def args(tmp_path, **extra):
    out = {"launcher": "mpirun", "binary": "all_reduce_perf_mpi", "cabling": CABLING, "hosts": ["gpu1", "gpu2"],
           "nccl_env": {"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}, "algo": "Ring", "timeout": 60, "workers": 4,
           "settings": {"repeats": 2}, "mpirun": {"hostfile_dir": str(tmp_path)}}
    out.update(extra)
    return out


def loopback(tmp_path, hosts=("gpu1", "gpu2")):
    fabric = perfmodel.Fabric.from_run_dir(str(tmp_path))
    return {"%s:%s" % (h, n): fabric.loopback_gbps(h, n, ("loopback", h, n)) * 8 for h in hosts for n in ("mlx5_0", "mlx5_1")}


def records(tmp_path):
    path = tmp_path / "record.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_check_mode_plans_round_one_and_launches_nothing(lab):
    tmp_path = lab({"nic": "gpu1:mlx5_1", "factor": 0.5})
    failed, result = run(args(tmp_path), check=True)
    assert not failed, result.get("msg")
    assert result["changed"] is False and result["verdict"] == "planned" and result["rounds"] == []
    plan = result["plan"]
    assert plan["number"] == 1 and plan["purpose"] == "intra-leaf" and len(plan["jobs"]) == 4  # 2 rails x repeats 2
    job = plan["jobs"][0]
    assert job["name"].startswith("nccl-localize-%s-" % job["id"]) and job["commands"][0]["env"]["NCCL_IB_HCA"] == "=mlx5_0"
    assert job["commands"][0]["hostfile_content"] == "gpu1 slots=1\ngpu2 slots=1\n"
    assert records(tmp_path) == [] and not list(tmp_path.glob("*.hostfile"))


def test_a_run_through_the_lab_shim_names_the_slow_nic(lab):
    tmp_path = lab({"nic": "gpu1:mlx5_1", "factor": 0.5})
    failed, result = run(args(tmp_path, loopback=loopback(tmp_path), exclude="slurm"))
    assert not failed, result.get("msg")
    assert result["changed"] is True and result["verdict"] == "found"
    assert result["suspect_names"] == ["nic gpu1:mlx5_1"]
    (suspect,) = result["localization"]["suspects"]
    assert suspect["component"] == {"kind": "nic", "name": "gpu1:mlx5_1"} and suspect["leaf_port"]
    jobs = [j for r in result["rounds"] for j in r["jobs"]]
    assert all(j["status"] == "succeeded" and j["busbw"] for j in jobs)
    # every job was one launch of the shim: 2 ranks, its hosts and its NIC
    rec = records(tmp_path)
    assert len(rec) == len(jobs) and {r["np"] for r in rec} == {2} and all(r["hosts"] == {"gpu1": 1, "gpu2": 1} for r in rec)
    assert sorted({r["env"]["NCCL_IB_HCA"] for r in rec}) == ["=mlx5_0", "=mlx5_1"]
    assert "# Localization: found" in result["report"] and "nic gpu1:mlx5_1" in result["report"]
    (drain,) = result["exclusion"]
    assert drain["argv"][:3] == ["scontrol", "update", "nodename=gpu1"] and drain["argv"][3] == "state=drain"
    assert not list(tmp_path.glob("*.hostfile"))


@pytest.mark.parametrize("extra, message", [
    ({"settings": {"repeats": 0}}, "settings.repeats"),
    ({"settings": {"bogus": 1}}, "settings.bogus: unknown setting"),
    ({"hosts": ["gpu1", "gpu9"]}, "gpu9"),
    ({"loopback": {"gpu1:mlx5_9": 390.0}}, "loopback.gpu1:mlx5_9: no such host NIC in the cabling"),
    ({"workers": 0}, "workers: 0 is below 1"),
    ({"env": {"NCCL_X": "a\nb"}}, "env.NCCL_X"),
])
def test_bad_input_fails_before_anything_is_launched(lab, extra, message):
    tmp_path = lab({"nic": "gpu1:mlx5_1", "factor": 0.5})
    failed, result = run(args(tmp_path, **extra))
    assert failed and message in result["msg"], result["msg"]
    assert records(tmp_path) == []
