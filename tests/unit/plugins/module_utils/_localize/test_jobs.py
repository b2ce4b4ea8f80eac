# SPDX-License-Identifier: GPL-3.0-or-later
"""_localize_jobs and the localize part of _nccl_jobs: a planned job as launch parameters and as the mpirun command /
MPIJob it becomes, busbw read from nccl-tests text, the round loop over a fake launcher that prints the lab
performance model's output (a failed launch is evidence), round 0 results in both forms."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils import _localize
from ansible_collections.lossless.fabric.plugins.module_utils._localize import _jobs as _localize_jobs
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _jobs as _nccl_jobs
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as _nccl_launch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import localize_sim  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from nccl import perfmodel  # noqa: E402  # pylint: disable=wrong-import-position,import-error  # localize_sim put tests/lab on the path

CABLING = localize_sim.lab_cabling()
BASE = {"launcher": "mpirun", "binary": "all_reduce_perf_mpi", "min_bytes": "1G", "max_bytes": "4G", "env": {"NCCL_DEBUG_FILE": "x"},
        "nccl_env": {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "106"}, "hosts": ["gpu1", "gpu2"], "algo": "Ring",
        "mpirun": {"path": "mpirun", "args": [], "hostfile_dir": None, "if_include": None}, "timeout": 60}
JOB = {"id": "r1-j1", "kind": "pair", "hosts": ["gpu1", "gpu2"], "rail": 1, "nics": {"gpu1": "mlx5_1", "gpu2": "mlx5_1"}, "gpu": 1}


def test_a_job_is_two_pinned_hosts_one_gpu_each_and_its_nic_by_exact_name():
    params = _localize_jobs.job_params(BASE, JOB)
    assert params["hosts"] == ["gpu1", "gpu2"] and params["nodes"] == 2 and params["gpus_per_node"] == 1 and params["repeats"] == 1
    assert params["env"] == {"NCCL_DEBUG_FILE": "x", "NCCL_IB_HCA": "=mlx5_1", "CUDA_VISIBLE_DEVICES": "1"}
    assert params["name_prefix"] == "nccl-localize-r1-j1" and BASE["env"] == {"NCCL_DEBUG_FILE": "x"}  # base untouched
    spec, errors = _nccl_launch.validate(params)
    assert errors == []
    rendered = _nccl_jobs.render(spec, "abc123", "/tmp", as_root=False)
    (command,) = rendered["commands"]
    # the job's env wins over the plan's NCCL_IB_HCA; one rank per host from the hostfile
    assert command["env"]["NCCL_IB_HCA"] == "=mlx5_1" and command["env"]["NCCL_IB_TC"] == "106"
    assert command["argv"][:5] == ["mpirun", "-np", "2", "--hostfile", "/tmp/nccl-localize-r1-j1-abc123.hostfile"]
    assert command["hostfile_content"] == "gpu1 slots=1\ngpu2 slots=1\n"
    assert ["-x", "CUDA_VISIBLE_DEVICES"] == command["argv"][command["argv"].index("CUDA_VISIBLE_DEVICES") - 1:][:2]
    assert command["argv"][-12:-8] == ["-b", "1G", "-e", "4G"]


def test_a_kubernetes_job_pins_the_nodes_one_worker_each_and_no_gpu_index():
    base = dict(BASE, launcher="kubernetes", kubernetes={"image": "nvcr.io/nvidia/pytorch:24.05-py3"})
    params = _localize_jobs.job_params(base, JOB)
    assert "CUDA_VISIBLE_DEVICES" not in params["env"]  # a pod sees its one GPU as device 0
    spec, errors = _nccl_launch.validate(params)
    assert errors == []
    manifest = _nccl_jobs.spread_workers(_nccl_jobs.render(spec, "abc123", "/tmp", as_root=True)["manifests"][1])
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2 and manifest["spec"]["slotsPerWorker"] == 1
    affinity = worker["template"]["spec"]["affinity"]
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0][
        "values"] == ["gpu1", "gpu2"]
    (anti,) = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti == {"labelSelector": {"matchLabels": {"training.kubeflow.org/job-name": manifest["metadata"]["name"],
                                                      "training.kubeflow.org/job-role": "worker"}},
                    "topologyKey": "kubernetes.io/hostname"}


@pytest.mark.parametrize("job, message", [
    (dict(JOB, nics={"gpu1": "mlx5_0", "gpu2": "mlx5_1"}),
     "job r1-j1: hosts gpu1, gpu2 use NICs gpu1:mlx5_0, gpu2:mlx5_1; one job pins one NIC name on both hosts"),
    (dict(JOB, nics={"gpu1": "mlx5_1;reboot", "gpu2": "mlx5_1;reboot"}), "job r1-j1: NIC 'mlx5_1;reboot' is not an HCA name"),
    (dict(JOB, hosts=["gpu1"], nics={"gpu1": "mlx5_1"}), "job r1-j1: hosts gpu1 use NICs gpu1:mlx5_1"),
])
def test_a_job_that_cannot_be_pinned_is_refused_naming_it(job, message):
    with pytest.raises(_localize_jobs.JobError, match="^" + message.replace("(", r"\(")):
        _localize_jobs.job_params(BASE, job)


def _text(fabric, params, launch):
    """What the job's two ranks print in the lab model (the shim's words), from its rendered argv and env."""
    spec, errors = _nccl_launch.validate(params)
    assert errors == []
    command = _nccl_jobs.render(spec, "abc123", "/tmp", as_root=False)["commands"][0]
    argv = command["argv"]
    program = next(i for i, word in enumerate(argv) if word.startswith("all_reduce_perf"))
    return perfmodel.nccl_tests_text(fabric, "all_reduce", params["hosts"], {h: 1 for h in params["hosts"]},
                                     perfmodel.parse_test_args(argv[program + 1:]), command["env"], launch)


def test_busbw_is_the_median_from_1_gib_up_and_none_without_rows():
    fabric = perfmodel.Fabric(localize_sim.cables(CABLING), [{"nic": "gpu1:mlx5_1", "factor": 0.5}], 0.0)
    slow = _localize_jobs.busbw(_text(fabric, _localize_jobs.job_params(BASE, JOB), 1))
    rail0 = dict(JOB, nics={"gpu1": "mlx5_0", "gpu2": "mlx5_0"}, gpu=0)
    fast = _localize_jobs.busbw(_text(fabric, _localize_jobs.job_params(BASE, rail0), 2))
    assert slow == (pytest.approx(25.0 * perfmodel.EFFICIENCY, rel=0.01), "")
    assert fast == (pytest.approx(50.0 * perfmodel.EFFICIENCY, rel=0.01), "")
    small = _localize_jobs.busbw(_text(fabric, _localize_jobs.job_params(dict(BASE, min_bytes="8", max_bytes="1M"), JOB), 3))
    assert small[0] is not None and small[0] < slow[0]  # no row from 1 GiB: the largest size's (latency-bound) value
    assert _localize_jobs.busbw("mpirun: command not found\n") == (None, "no nccl-tests output recognised (no table, header, device list, footer or NCCL line)")


def _model_launcher(fabric, fail=lambda job: False):
    calls, lock = [], threading.Lock()

    def launch(job):
        params = _localize_jobs.job_params(BASE, job)
        with lock:
            calls.append(job["id"])
            number = len(calls)
        if fail(job):
            return {"name": params["name_prefix"] + "-abc123-1", "status": "timeout", "log": "", "message": "did not finish within 60s"}
        return {"name": params["name_prefix"] + "-abc123-1", "status": "succeeded", "log": _text(fabric, params, number), "duration_s": 1.0}
    return launch, calls


def _loopback(fabric, topo):
    return {"%s:%s" % (h, n): fabric.loopback_gbps(h, n, ("loopback", h, n)) * 8 for h in topo.hosts for n in topo.rails[h].values()}


@pytest.mark.parametrize("fault, named", [
    ({"nic": "gpu1:mlx5_1", "factor": 0.5}, {("nic", "gpu1:mlx5_1")}),
    # loopback clean: the cable or the leaf, not the NICs (the lab's 2 hosts share leaf2 on rail 1)
    ({"link": "gpu1:mlx5_1", "factor": 0.5}, {("link", "gpu1:mlx5_1~leaf2:et-0/0/1"), ("link", "gpu2:mlx5_1~leaf2:et-0/0/2"),
                                              ("leaf", "leaf2")}),
])
def test_the_round_loop_names_the_fault_from_the_model_output(fault, named):
    fabric = perfmodel.Fabric(localize_sim.cables(CABLING), [fault], 0.02, 1)
    topo = _localize.topology(CABLING, ["gpu1", "gpu2"])
    settings = _localize.check_settings({"cross_rail": False, "repeats": 2})
    history = [_localize.loopback_round(topo, _loopback(fabric, topo), None, settings)]
    launch, calls = _model_launcher(fabric)
    seen = []
    result, rounds = _localize_jobs.localize(topo, history, settings, launch, 4, on_round=seen.append)
    assert localize_sim.named(result) == named and seen == rounds
    assert len(calls) == sum(len(r["jobs"]) for r in rounds) == result["jobs"]
    (first,) = [j for j in rounds[0]["jobs"] if j["rail"] == 1][:1]
    assert first["status"] == "succeeded" and first["busbw"] < 30 and first["slow"] is True and first["name"].startswith("nccl-localize-r1-")


def test_a_failed_launch_is_slow_evidence_not_an_error():
    fabric = perfmodel.Fabric(localize_sim.cables(CABLING), [{"nic": "gpu1:mlx5_1", "factor": 0.5}], 0.02, 1)
    topo = _localize.topology(CABLING, ["gpu1", "gpu2"])
    settings = _localize.check_settings({"cross_rail": False, "repeats": 2})
    history = [_localize.loopback_round(topo, _loopback(fabric, topo), None, settings)]
    launch, _calls = _model_launcher(fabric, fail=lambda job: job["nics"]["gpu1"] == "mlx5_1")
    result, rounds = _localize_jobs.localize(topo, history, settings, launch, 4)
    assert ("nic", "gpu1:mlx5_1") in localize_sim.named(result)
    hung = [j for r in rounds for j in r["jobs"] if j["status"] == "timeout"]
    assert hung and all(j["busbw"] is None and j["why"] == "did not finish within 60s" and j["slow"] for j in hung)


def test_a_plan_that_never_ends_stops_at_the_guard(monkeypatch):
    # a plan that never ends is a bug the guard stops: stand-ins for the planner and the recorder _jobs imports
    monkeypatch.setattr(_localize_jobs, "plan_round", lambda _topo, _history, _settings: {"number": 1, "purpose": "intra-leaf", "jobs": [dict(JOB)]})
    monkeypatch.setattr(_localize_jobs, "record",
                        lambda plan, measured, _settings: {"number": plan["number"], "jobs": [{"id": k, "slow": v is None} for k, v in measured.items()]})
    with pytest.raises(_localize_jobs.JobError, match="the plan did not end after 64 rounds"):
        _localize_jobs.localize(None, [], {}, lambda job: {"status": "failed", "message": "x"}, 2)


def test_loopback_results_take_both_forms_and_a_failed_host_is_slow():
    raw = {"gpu1": {"changed": False, "nics": {"mlx5_0": {"gbps": 388.1, "ok": True}, "mlx5_1": {"gbps": 190.0, "ok": False}}},
           "gpu2": {"failed": True, "msg": "ib_write_bw: not found"},
           "gpu3:mlx5_0": 391.0}
    want = {"gpu1:mlx5_0": 388.1, "gpu1:mlx5_1": 190.0, "gpu2:mlx5_0": None, "gpu2:mlx5_1": None, "gpu3:mlx5_0": 391.0}
    assert _localize_jobs.loopback_results(raw, CABLING) == want
