# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's performance model (tests/lab/nccl/perfmodel.py): fault validation, which jobs each fault slows, ECMP and
flaps per launch, noise, the nccl-tests text read back by the collection's parser and gate, the launcher's perf.json,
the mpirun/srun shims and k8sim's MPIJob launcher log in model mode, and no change without the knob."""
from __future__ import annotations

import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
sys.path.insert(0, str(ROOT / ".deps" / "self"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
import wiring  # noqa: E402
from k8sim.sim import Simulator  # noqa: E402
from nccl import perfmodel as pm  # noqa: E402
from nccl import replay  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse  # noqa: E402

BIN = ROOT / "tests" / "lab" / "nccl" / "bin"
LINE = 50.0 * pm.EFFICIENCY  # one 400G rail, healthy, no noise


def cable(a, b, speed="400G", up=True):
    def end(text):
        dev, name = text.split(":", 1)
        return [dev, "nic" if name.startswith("mlx5") else "port", name]
    return [end(a), end(b), speed, up]


# Two leaves (rail-optimised: mlx5_0 on leaf1, mlx5_1 on leaf2), two spines, each leaf with one uplink per spine;
# hosts gpu1..gpu4. Cross-leaf paths go through one of two uplinks: ECMP.
CABLES = [cable("gpu%d:mlx5_%d" % (h, r), "leaf%d:swp%d" % (r + 1, h)) for h in range(1, 5) for r in range(2)] + [
    cable("leaf1:swp31", "spine1:Ethernet1/1"), cable("leaf1:swp32", "spine2:Ethernet1/1"),
    cable("leaf2:swp31", "spine1:Ethernet2/1"), cable("leaf2:swp32", "spine2:Ethernet2/1")]


def fabric(*faults, noise=0.0, seed=1):
    return pm.Fabric(CABLES, list(faults), noise, seed)


def pair(a, b, rail=0, nic_b=None):
    return [("gpu%d" % a, "mlx5_%d" % rail), ("gpu%d" % b, nic_b or "mlx5_%d" % rail)]


def ratio(f, nics, launch=0):
    return f.job_busbw(nics, launch) / (LINE * (len(nics) // len({h for h, _n in nics})))


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("faults, message", [
    ([{"bogus": "gpu1"}], "lab_perf_faults[0]: {'bogus': 'gpu1'} is not one of nic, host, link, uplink, flap, leaf"),
    ([{"nic": "gpu1:mlx5_0", "host": "gpu1", "factor": 0.5}], "lab_perf_faults[0]: "),
    ([{"nic": "gpu1:mlx5_0", "factor": 0.5}, {"nic": "gpu9:mlx5_0", "factor": 0.5}],
     "lab_perf_faults[1].nic: 'gpu9:mlx5_0' names no host NIC of the lab wiring"),
    ([{"nic": "gpu1mlx5_0", "factor": 0.5}], "lab_perf_faults[0].nic: 'gpu1mlx5_0' is not '<device>:<port or NIC>'"),
    ([{"host": "gpu7", "factor": 0.5}], "lab_perf_faults[0].host: 'gpu7' is no host of the lab wiring"),
    ([{"leaf": "leaf9", "factor": 0.5}], "lab_perf_faults[0].leaf: 'leaf9' is no switch of the lab wiring"),
    ([{"link": "leaf1:swp99", "factor": 0.5}], "lab_perf_faults[0].link: 'leaf1:swp99' names no cable end"),
    ([{"link": "leaf1:swp31", "factor": 0.5}], "lab_perf_faults[0].link: 'leaf1:swp31' is on a switch-switch cable"),
    ([{"uplink": "gpu1:mlx5_0", "factor": 0.5}], "lab_perf_faults[0].uplink: 'gpu1:mlx5_0' is on a host cable"),
    ([{"nic": "gpu1:mlx5_0", "factor": 1.5}], "lab_perf_faults[0].factor: 1.5 is not a number in (0, 1]"),
    ([{"nic": "gpu1:mlx5_0", "factor": 0}], "lab_perf_faults[0].factor: 0 is not a number in (0, 1]"),
    ([{"nic": "gpu1:mlx5_0"}], "lab_perf_faults[0].factor: None is not a number in (0, 1]"),
    ([{"nic": "gpu1:mlx5_0", "factor": True}], "lab_perf_faults[0].factor: True is not a number in (0, 1]"),
    ([{"flap": "gpu1:mlx5_0", "rate": 0, "factor": 0.3}], "lab_perf_faults[0].rate: 0 is not a number in (0, 1]"),
    ([{"flap": "gpu1:mlx5_0", "rate": 1.2, "factor": 0.3}], "lab_perf_faults[0].rate: 1.2 is not a number in (0, 1]"),
    ([{"nic": "gpu1:mlx5_0", "factor": 0.5, "rate": 0.5}], "lab_perf_faults[0]: unknown key 'rate' for a nic fault"),
    ({"nic": "gpu1:mlx5_0"}, "lab_perf_faults: {'nic': 'gpu1:mlx5_0'} is not a list of faults"),
])
def test_bad_faults_name_the_item_and_the_value(faults, message):
    with pytest.raises(pm.PerfModelError) as exc:
        pm.Fabric(CABLES, faults)
    assert str(exc.value).startswith(message)


@pytest.mark.parametrize("noise, seed, message", [
    (-0.1, 1, "lab_perf_noise: -0.1 is not a number >= 0"), ("x", 1, "lab_perf_noise: 'x'"),
    (0.02, 1.5, "lab_perf_seed: 1.5 is not an integer"), (0.02, True, "lab_perf_seed: True is not an integer")])
def test_bad_noise_or_seed(noise, seed, message):
    with pytest.raises(pm.PerfModelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pm.Fabric(CABLES, [], noise, seed)


# ------------------------------------------------------------------ paths and names

def test_path_within_a_leaf_and_across_leaves():
    f = fabric()
    assert f.path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_0")) == [
        ("host", "gpu1"), ("nic", "gpu1:mlx5_0"), ("link", "gpu1:mlx5_0~leaf1:swp1"), ("leaf", "leaf1"),
        ("link", "gpu2:mlx5_0~leaf1:swp2"), ("nic", "gpu2:mlx5_0"), ("host", "gpu2")]
    cross = f.path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_1"), 0)
    assert cross[:4] == [("host", "gpu1"), ("nic", "gpu1:mlx5_0"), ("link", "gpu1:mlx5_0~leaf1:swp1"), ("leaf", "leaf1")]
    assert cross[4][0] == "uplink" and cross[5][0] == "spine" and cross[6][0] == "uplink"
    spine = cross[5][1]
    assert cross[4][1].startswith("leaf1:") and cross[4][1].endswith("~%s:Ethernet1/1" % spine)  # lower tier first
    assert cross[6][1].startswith("leaf2:") and cross[6][1].endswith("~%s:Ethernet2/1" % spine)  # same spine
    assert cross[7:] == [("leaf", "leaf2"), ("link", "gpu2:mlx5_1~leaf2:swp2"), ("nic", "gpu2:mlx5_1"), ("host", "gpu2")]


def test_ecmp_choice_is_per_launch_deterministic_and_uses_every_uplink():
    f = fabric()
    spines = {f.path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_1"), launch)[5][1] for launch in range(40)}
    assert spines == {"spine1", "spine2"}
    for launch in range(10):
        assert f.path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_1"), launch) == fabric().path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_1"), launch)
        # both directions of a ring edge take one path
        forward = f.path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_1"), launch)
        assert f.path(("gpu2", "mlx5_1"), ("gpu1", "mlx5_0"), launch) == forward[::-1]


def test_line_rate_from_the_cable_speed():
    assert pm.line_rate("400G") == 50.0 and pm.line_rate("200G") == 25.0 and pm.line_rate("1.6T") == 200.0
    slow = [c if c[0] != ["gpu1", "nic", "mlx5_0"] else c[:2] + ["200G", True] for c in CABLES]
    assert pm.Fabric(slow, [], 0.0).job_busbw(pair(1, 2), 0) == pytest.approx(25.0 * pm.EFFICIENCY)


# ------------------------------------------------------------------ each fault slows exactly the right jobs

def test_healthy_job_busbw_is_rails_times_line_rate_times_efficiency():
    f = fabric()
    assert f.job_busbw(pair(1, 2), 0) == pytest.approx(LINE)
    two_rails = pair(1, 2) + pair(1, 2, 1)
    assert f.job_busbw(sorted(two_rails), 0) == pytest.approx(2 * LINE)


def test_nic_fault_slows_only_jobs_through_that_nic_and_loopback_sees_it():
    f = fabric({"nic": "gpu1:mlx5_1", "factor": 0.5})
    assert ratio(f, pair(1, 2, 1)) == pytest.approx(0.5)
    assert ratio(f, pair(3, 1, 1)) == pytest.approx(0.5)
    assert ratio(f, pair(1, 2, 0)) == pytest.approx(1.0)      # the other NIC of the same host
    assert ratio(f, pair(2, 3, 1)) == pytest.approx(1.0)      # same rail, other hosts
    assert f.loopback_gbps("gpu1", "mlx5_1", 0) == pytest.approx(25.0)
    assert f.loopback_gbps("gpu1", "mlx5_0", 0) == pytest.approx(50.0)
    # a job over both rails of gpu1 runs at its slowest rail on every rail
    both = [("gpu1", "mlx5_0"), ("gpu1", "mlx5_1"), ("gpu2", "mlx5_0"), ("gpu2", "mlx5_1")]
    assert f.job_busbw(both, 0) == pytest.approx(2 * LINE * 0.5)


def test_host_fault_slows_every_nic_of_the_host_and_loopback_sees_it():
    f = fabric({"host": "gpu2", "factor": 0.6})
    for rail in (0, 1):
        assert ratio(f, pair(1, 2, rail)) == pytest.approx(0.6)
        assert ratio(f, pair(1, 3, rail)) == pytest.approx(1.0)
        assert f.loopback_gbps("gpu2", "mlx5_%d" % rail, 0) == pytest.approx(30.0)


def test_link_fault_named_by_either_end_is_not_seen_by_loopback():
    for end in ("leaf1:swp1", "gpu1:mlx5_0"):
        f = fabric({"link": end, "factor": 0.5})
        assert ratio(f, pair(1, 2, 0)) == pytest.approx(0.5)
        assert ratio(f, pair(1, 2, 1)) == pytest.approx(1.0)
        assert ratio(f, pair(2, 3, 0)) == pytest.approx(1.0)
        assert f.loopback_gbps("gpu1", "mlx5_0", 0) == pytest.approx(50.0)
        assert f.faults[0]["component"] == ("link", "gpu1:mlx5_0~leaf1:swp1")


def test_uplink_fault_slows_cross_leaf_jobs_whose_ecmp_path_takes_it():
    f = fabric({"uplink": "spine2:Ethernet1/1", "factor": 0.5})
    assert f.faults[0]["component"] == ("uplink", "leaf1:swp32~spine2:Ethernet1/1")
    assert ratio(f, pair(1, 2, 0)) == pytest.approx(1.0)      # within a leaf: no uplink
    slow = fast = 0
    for launch in range(40):
        path = f.path(("gpu1", "mlx5_0"), ("gpu2", "mlx5_1"), launch)
        got = f.job_busbw(pair(1, 2, 0, "mlx5_1"), launch) / LINE
        assert got == pytest.approx(0.5 if ("uplink", "leaf1:swp32~spine2:Ethernet1/1") in path else 1.0)
        slow, fast = slow + (got < 0.9), fast + (got > 0.9)
    assert slow and fast
    assert f.loopback_gbps("gpu1", "mlx5_0", 0) == pytest.approx(50.0)


def test_flap_runs_slow_in_about_rate_of_the_launches_and_only_on_its_cable():
    f = fabric({"flap": "gpu1:mlx5_0", "rate": 0.3, "factor": 0.3})
    got = [ratio(f, pair(1, 2, 0), launch) for launch in range(400)]
    assert set(round(g, 6) for g in got) == {0.3, 1.0}
    assert 0.2 < sum(1 for g in got if g < 0.5) / len(got) < 0.4
    assert all(ratio(f, pair(1, 2, 1), launch) == pytest.approx(1.0) for launch in range(50))
    assert all(f.loopback_gbps("gpu1", "mlx5_0", launch) == pytest.approx(50.0) for launch in range(50))
    always = fabric({"flap": "gpu1:mlx5_0", "rate": 1, "factor": 0.3})
    assert all(ratio(always, pair(1, 2, 0), launch) == pytest.approx(0.3) for launch in range(20))


def test_leaf_fault_slows_every_job_through_the_switch():
    f = fabric({"leaf": "leaf2", "factor": 0.7})
    assert ratio(f, pair(1, 2, 1)) == pytest.approx(0.7)
    assert ratio(f, pair(1, 2, 0)) == pytest.approx(1.0)
    assert f.job_busbw(pair(1, 2, 0, "mlx5_1"), 0) / LINE == pytest.approx(0.7)   # cross-leaf into leaf2
    assert f.loopback_gbps("gpu1", "mlx5_1", 0) == pytest.approx(50.0)
    spine = fabric({"leaf": "spine1", "factor": 0.5})
    assert spine.faults[0]["component"] == ("spine", "spine1")


def test_two_faults_at_once_each_slow_their_jobs_and_the_worst_wins_on_a_shared_path():
    f = fabric({"nic": "gpu1:mlx5_1", "factor": 0.5}, {"host": "gpu3", "factor": 0.8})
    assert ratio(f, pair(1, 2, 1)) == pytest.approx(0.5)
    assert ratio(f, pair(3, 4, 0)) == pytest.approx(0.8)
    assert ratio(f, pair(1, 3, 1)) == pytest.approx(0.5)
    assert ratio(f, pair(2, 4, 0)) == pytest.approx(1.0)


# ------------------------------------------------------------------ noise and determinism

def test_same_seed_and_launch_same_numbers_other_launches_and_seeds_differ():
    a, b = fabric(noise=0.02, seed=7), fabric(noise=0.02, seed=7)
    assert [a.job_busbw(pair(1, 2), n) for n in range(5)] == [b.job_busbw(pair(1, 2), n) for n in range(5)]
    assert len({a.job_busbw(pair(1, 2), n) for n in range(5)}) == 5
    assert a.job_busbw(pair(1, 2), 3) != fabric(noise=0.02, seed=8).job_busbw(pair(1, 2), 3)
    assert a.job_busbw(pair(1, 2), "r1-j0") == b.job_busbw(pair(1, 2), "r1-j0")  # any hashable key


def test_noise_is_lognormal_with_the_given_sigma():
    f = fabric(noise=0.05)
    logs = [math.log(f.job_busbw(pair(1, 2), n) / LINE) for n in range(2000)]
    assert abs(statistics.mean(logs)) < 0.005
    assert 0.045 < statistics.pstdev(logs) < 0.055
    assert fabric(noise=0.0).job_busbw(pair(1, 2), 5) == pytest.approx(LINE)


def test_busbw_curve_is_latency_bound_small_and_bandwidth_bound_from_1_gib():
    assert pm.Fabric.busbw_curve(46.5, 2 ** 30) > 0.99 * 46.5
    assert pm.Fabric.busbw_curve(46.5, 8) < 0.01
    sizes = [2 ** k for k in range(3, 34)]
    values = [pm.Fabric.busbw_curve(46.5, s) for s in sizes]
    assert values == sorted(values)


# ------------------------------------------------------------------ NCCL_IB_HCA

@pytest.mark.parametrize("hca, expected", [
    (None, ["mlx5_0", "mlx5_1", "mlx5_10"]), ("", ["mlx5_0", "mlx5_1", "mlx5_10"]),
    ("=mlx5_1", ["mlx5_1"]), ("mlx5_1", ["mlx5_1", "mlx5_10"]), ("=mlx5_0:1,mlx5_10:1", ["mlx5_0", "mlx5_10"]),
    ("^=mlx5_1", ["mlx5_0", "mlx5_10"]), ("^mlx5_1", ["mlx5_0"]), ("mlx5", ["mlx5_0", "mlx5_1", "mlx5_10"])])
def test_nccl_ib_hca_selects_as_nccl_documents(hca, expected):
    assert pm.select_nics(["mlx5_0", "mlx5_1", "mlx5_10"], hca) == expected


# ------------------------------------------------------------------ nccl-tests text through the parser and the gate

ARGS = "-b 8 -e 8G -f 2 -n 20 -w 5 -g 1".split()


def text_for(f, hosts=("gpu1", "gpu2"), procs=1, env=None, args=ARGS, collective="all_reduce", launch=0):
    return pm.nccl_tests_text(f, collective, list(hosts), {h: procs for h in hosts}, pm.parse_test_args(args),
                              env or {}, launch)


def gate(result, min_busbw):
    return _nccl_gate.gate(result, [{"min_size": 2 ** 30, "max_size": None, "min_busbw": min_busbw}],
                           require_transport="RoCE", require_gdr=False)


def test_text_parses_cleanly_and_the_gate_sees_the_model_busbw():
    f = fabric({"nic": "gpu1:mlx5_0", "factor": 0.5}, noise=0.02)
    text = text_for(f, env={"NCCL_IB_HCA": "=mlx5_0"}, launch=4)
    res = _nccl_parse.parse(text)
    assert res["errors"] == [] and res["damaged_rows"] == [] and res["complete"] is True
    assert (res["collective"], res["ranks"], res["nodes"], res["gpus_per_node"]) == ("all_reduce", 2, 2, 1)
    assert (res["transport"], res["gdr_active"]) == ("RoCE", False)
    assert [r["size"] for r in res["rows"]] == [2 ** k for k in range(3, 34)]
    want = f.job_busbw(pair(1, 2), 4)
    big = [h["busbw"] for r in res["rows"] if r["size"] >= 2 ** 30 for h in (r["out_of_place"], r["in_place"])]
    assert all(abs(b / want - 1) < 0.03 for b in big)
    assert gate(res, round(want * 0.9, 2)) == []
    assert gate(res, round(want * 1.2, 2))  # a target above what the model measured fails
    cells = [h["busbw"] for r in res["rows"] for h in (r["out_of_place"], r["in_place"])]
    assert float(res["avg_bus_bandwidth"]) == pytest.approx(statistics.mean(cells), abs=0.01)  # the mean of every cell


def test_text_has_the_forms_of_the_real_log():
    text = text_for(fabric(), env={"NCCL_IB_HCA": "=mlx5_0"})
    lines = text.splitlines()
    assert lines[0].startswith("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20")
    assert lines[2] == "# Using devices"
    assert lines[3].startswith("#  Rank  0 Group  0 Pid ") and lines[3].endswith(" on       gpu1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3")
    assert any(line.endswith("NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>") for line in lines)
    vias = [line for line in lines if " via " in line]
    assert vias and all(line.split(" via ")[1].startswith("NET/IB/") and "GDRDMA" not in line for line in vias)
    assert text.endswith("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %s \n#\n\n" % lines[-3].split(": ")[1].strip())
    # the column header is the real log's, byte for byte
    real = (ROOT / "tests" / "lab" / "nccl" / "replays" / "cci_moc_h100_2node_roce_allreduce_nogdr.txt").read_text().splitlines()
    header = [line for line in real if line.startswith("#  ") and ("size" in line or "(B)" in line or "out-of-place" in line)]
    assert header and all(line in lines for line in header)


# what the parser infers from the rows alone (broadcast and sendrecv rows do not tell: busbw = algbw, rootless or not)
INFERRED = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
            "broadcast": None, "reduce": "reduce", "sendrecv": None}


@pytest.mark.parametrize("collective, factor", [
    ("all_reduce", 2 * 15 / 16), ("all_gather", 15 / 16), ("reduce_scatter", 15 / 16),
    ("broadcast", 1.0), ("reduce", 1.0), ("sendrecv", 1.0)])
def test_every_collective_parses_with_its_busbw_factor(collective, factor):
    f = fabric(noise=0.02)
    res = _nccl_parse.parse(text_for(f, procs=8, env={}, collective=collective, args="-b 1M -e 2G -f 4 -g 1".split()))
    assert res["errors"] == [] and res["damaged_rows"] == [] and res["complete"] is True
    assert res["ranks"] == 16 and res["nodes"] == 2
    row = res["rows"][-1]["out_of_place"]
    assert row["busbw"] == pytest.approx(row["algbw"] * factor, abs=0.011)
    assert res["collective"] == INFERRED[collective]  # the parser infers it from the rows (docs/benchmark.md)


def test_fewer_gpus_than_nics_use_the_nics_of_their_rails():
    f = fabric({"nic": "gpu1:mlx5_1", "factor": 0.5})
    one_gpu = _nccl_parse.parse(text_for(f, procs=1))             # GPU 0 -> mlx5_0: the bad NIC is not used
    eight = _nccl_parse.parse(text_for(f, procs=8))               # both rails
    pinned = _nccl_parse.parse(text_for(f, procs=1, env={"NCCL_IB_HCA": "=mlx5_1"}))
    assert one_gpu["oop_busbw_at_largest_size"] > 0.95 * LINE
    assert eight["oop_busbw_at_largest_size"] == pytest.approx(LINE, rel=0.03)   # 2 rails x half speed
    assert pinned["oop_busbw_at_largest_size"] == pytest.approx(LINE * 0.5, rel=0.03)
    visible = _nccl_parse.parse(text_for(f, procs=1, env={"CUDA_VISIBLE_DEVICES": "1"}))
    assert visible["oop_busbw_at_largest_size"] == pytest.approx(LINE * 0.5, rel=0.03)


def test_model_refuses_what_it_does_not_model():
    with pytest.raises(pm.PerfModelError, match="alltoall"):
        text_for(fabric(), collective="alltoall")
    with pytest.raises(pm.PerfModelError, match="NCCL_TESTS_SPLIT"):
        text_for(fabric(), env={"NCCL_TESTS_SPLIT": "MOD 8"})
    with pytest.raises(pm.PerfModelError, match="host 'gpu9' is no host of the lab wiring"):
        text_for(fabric(), hosts=("gpu1", "gpu9"))
    with pytest.raises(pm.PerfModelError, match="leaves no NIC on gpu1"):
        text_for(fabric(), env={"NCCL_IB_HCA": "=mlx4_0"})


# ------------------------------------------------------------------ perf.json, launch numbers, the launcher

def run_dir_with(tmp_path, faults, noise=0.0, seed=1):
    wiring.write(str(tmp_path), {"ends": [], "intended": CABLES, "links": CABLES, "faults": []})
    pm.write_perf(str(tmp_path), faults, noise, seed, CABLES)
    return tmp_path


def test_write_perf_and_from_run_dir(tmp_path):
    run_dir_with(tmp_path, [{"nic": "gpu1:mlx5_0", "factor": 0.5}], 0.03, 5)
    assert json.loads((tmp_path / "perf.json").read_text()) == {"faults": [{"nic": "gpu1:mlx5_0", "factor": 0.5}], "noise": 0.03, "seed": 5}
    f = pm.Fabric.from_run_dir(str(tmp_path))
    assert (f.noise, f.seed, f.faults[0]["component"]) == (0.03, 5, ("nic", "gpu1:mlx5_0"))
    pm.write_perf(str(tmp_path), [], None, None, CABLES)           # no faults: no file, no model
    assert not (tmp_path / "perf.json").exists() and pm.Fabric.from_run_dir(str(tmp_path)) is None
    with pytest.raises(pm.PerfModelError, match=r"lab_perf_faults\[0\]\.factor: 2"):
        pm.write_perf(str(tmp_path), [{"nic": "gpu1:mlx5_0", "factor": 2}], None, None, CABLES)


def test_launch_numbers_are_unique_under_parallel_launches(tmp_path):
    got: list[int] = []
    lock = threading.Lock()

    def draw():
        for _i in range(20):
            n = pm.next_launch(str(tmp_path))
            with lock:
                got.append(n)
    threads = [threading.Thread(target=draw) for _t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(160))


LOAD_INVENTORY = launcher.load_inventory


def lab_hostvars(**extra):
    inv = LOAD_INVENTORY(str(ROOT / "inventories" / "lab"))
    hostvars = inv["_meta"]["hostvars"]
    for hv in hostvars.values():
        hv.update(extra)
    return hostvars


def test_launcher_up_writes_perf_json_and_a_bad_knob_stops_the_start(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(launcher, "SIMULATORS", [])
    monkeypatch.setattr(launcher, "write_generated", lambda *a: calls.append(a))
    monkeypatch.setattr(launcher, "load_inventory", lambda inv, extra=None: {"_meta": {"hostvars": lab_hostvars(
        lab_perf_faults=[{"nic": "gpu1:mlx5_1", "factor": 0.5}], lab_perf_seed=3)}})
    launcher.up(str(tmp_path), str(tmp_path / "run"))
    assert json.loads((tmp_path / "run" / "perf.json").read_text()) == {
        "faults": [{"nic": "gpu1:mlx5_1", "factor": 0.5}], "noise": 0.02, "seed": 3}
    monkeypatch.setattr(launcher, "load_inventory", lambda inv, extra=None: {"_meta": {"hostvars": lab_hostvars(
        lab_perf_faults=[{"nic": "gpu1:mlx5_9", "factor": 0.5}])}})
    with pytest.raises(launcher.LabError, match=r"lab_perf_faults\[0\]\.nic: 'gpu1:mlx5_9' names no host NIC"):
        launcher.up(str(tmp_path), str(tmp_path / "run"))
    monkeypatch.setattr(launcher, "load_inventory", lambda inv, extra=None: {"_meta": {"hostvars": lab_hostvars()}})
    launcher.up(str(tmp_path), str(tmp_path / "run"))
    assert not (tmp_path / "run" / "perf.json").exists()


# ------------------------------------------------------------------ the shims and k8sim in model mode

def shim(tool, argv, tmp_path, **env):
    full = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                LAB_NCCL_RECORD=str(tmp_path / "record.jsonl"), LAB_NCCL_PYTHON=sys.executable, **env)
    full.pop("LAB_NCCL_REPLAY", None)
    return subprocess.run([str(BIN / tool)] + argv, env=full, capture_output=True, text=True, check=False, timeout=60)


def test_mpirun_shim_prints_the_model_for_its_hosts_and_nics(tmp_path):
    run_dir_with(tmp_path, [{"nic": "gpu2:mlx5_1", "factor": 0.5}])
    hostfile = tmp_path / "hosts"
    hostfile.write_text("gpu1 slots=1\ngpu2 slots=1\n")
    argv = ["-np", "2", "--hostfile", str(hostfile), "-x", "NCCL_IB_HCA", "all_reduce_perf_mpi"] + ARGS
    slow = shim("mpirun", argv, tmp_path, LAB_NCCL_RUN_DIR=str(tmp_path), NCCL_IB_HCA="=mlx5_1")
    fast = shim("mpirun", argv, tmp_path, LAB_NCCL_RUN_DIR=str(tmp_path), NCCL_IB_HCA="=mlx5_0")
    assert slow.returncode == 0 and fast.returncode == 0, slow.stderr + fast.stderr
    s, f = _nccl_parse.parse(slow.stdout), _nccl_parse.parse(fast.stdout)
    assert s["oop_busbw_at_largest_size"] == pytest.approx(0.5 * LINE, rel=0.03)
    assert f["oop_busbw_at_largest_size"] == pytest.approx(LINE, rel=0.03)
    assert {d["host"] for d in s["devices"]} == {"gpu1", "gpu2"}
    records = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    assert [(r["model"], r["launch"]) for r in records] == [(True, 0), (True, 1)]
    tagged = shim("mpirun", ["--tag-output"] + argv, tmp_path, LAB_NCCL_RUN_DIR=str(tmp_path))
    assert all(line.startswith("[1,0]<stdout>:") for line in tagged.stdout.splitlines())
    bad = shim("mpirun", ["-np", "2", "-H", "gpu1,gpu7", "all_reduce_perf_mpi"] + ARGS, tmp_path,
               LAB_NCCL_RUN_DIR=str(tmp_path))
    assert bad.returncode == 2 and "host 'gpu7' is no host of the lab wiring" in bad.stderr


def test_srun_shim_prints_the_model_for_its_nodelist(tmp_path):
    run_dir_with(tmp_path, [{"host": "gpu3", "factor": 0.6}])
    argv = ["--mpi=pmix", "--nodes=2", "--ntasks-per-node=1", "--nodelist=gpu[3-4]", "all_reduce_perf_mpi"] + ARGS
    out = shim("srun", argv, tmp_path, LAB_NCCL_RUN_DIR=str(tmp_path))
    assert out.returncode == 0, out.stderr
    res = _nccl_parse.parse(out.stdout)
    assert {d["host"] for d in res["devices"]} == {"gpu3", "gpu4"}
    assert res["oop_busbw_at_largest_size"] == pytest.approx(0.6 * LINE, rel=0.03)
    nolist = shim("srun", ["--mpi=pmix", "--nodes=2", "all_reduce_perf_mpi"] + ARGS, tmp_path, LAB_NCCL_RUN_DIR=str(tmp_path))
    assert nolist.returncode == 2 and "needs --nodelist" in nolist.stderr


def test_without_the_knob_the_shims_replay_the_recorded_log_byte_for_byte(tmp_path):
    run_dir_with(tmp_path, [])
    assert not (tmp_path / "perf.json").exists()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"replay": "cci_moc_h100_2node_roce_allreduce_nogdr", "run_dir": str(tmp_path)}))
    out = shim("mpirun", ["-np", "2", "-H", "gpu1,gpu2", "all_reduce_perf_mpi"] + ARGS, tmp_path, LAB_NCCL_CONFIG=str(config))
    assert out.returncode == 0
    assert out.stdout == pathlib.Path(replay.resolve("cci_moc_h100_2node_roce_allreduce_nogdr")[0]).read_text()
    out = shim("srun", ["--mpi=pmix", "--nodes=2", "--nodelist=gpu1,gpu2", "all_reduce_perf_mpi"] + ARGS, tmp_path,
               LAB_NCCL_CONFIG=str(config))
    assert out.stdout == pathlib.Path(replay.resolve("cci_moc_h100_2node_roce_allreduce_nogdr")[0]).read_text()


def mpijob(hca="=mlx5_1"):
    script = ("PATH=x; export PATH; exec mpirun -np 2 --bind-to none --mca pml ob1 -x PATH -x NCCL_IB_HCA "
              "all_reduce_perf_mpi -b 1G -e 4G -f 2 -n 20 -w 5 -g 1")
    return {"metadata": {"namespace": "nccl-benchmark", "name": "nccl-x"},
            "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {"Launcher": {"template": {"spec": {"containers": [
                {"name": "launcher", "command": ["/bin/sh", "-c", script],
                 "env": [{"name": "NCCL_IB_HCA", "value": hca}, {"name": "NCCL_DEBUG", "value": "INFO"}]}]}}}}}}


def test_k8sim_mpijob_launcher_log_from_the_model_for_the_workers_nodes(tmp_path):
    run_dir_with(tmp_path, [{"nic": "gpu4:mlx5_1", "factor": 0.5}])
    sim = Simulator({"replay": replay.resolve("passing")[0], "perf_run_dir": str(tmp_path)})
    workers = [{"spec": {"nodeName": "gpu3"}}, {"spec": {"nodeName": "gpu4"}}]
    log, ok = sim.model_log(mpijob(), workers)
    res = _nccl_parse.parse(log.decode())
    assert ok and res["errors"] == [] and {d["host"] for d in res["devices"]} == {"gpu3", "gpu4"}
    assert res["oop_busbw_at_largest_size"] == pytest.approx(0.5 * LINE, rel=0.03)
    log, ok = sim.model_log(mpijob("=mlx5_0"), workers)
    assert _nccl_parse.parse(log.decode())["oop_busbw_at_largest_size"] == pytest.approx(LINE, rel=0.03)
    log, ok = sim.model_log(mpijob(), [{"spec": {"nodeName": "gpu3"}}, {"spec": {"nodeName": "node-x"}}])
    assert not ok and b"host 'node-x' is no host of the lab wiring" in log
    assert Simulator({"replay": replay.resolve("passing")[0]}).model_log(mpijob(), workers) is None   # no knob
    pm.write_perf(str(tmp_path), [], None, None, CABLES)
    assert sim.model_log(mpijob(), workers) is None   # perf.json without faults: the replayed log stays
    tagged = mpijob()
    command = tagged["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    command[2] = command[2].replace("exec mpirun -np 2", "exec mpirun --tag-output -np 2")
    run_dir_with(tmp_path, [{"nic": "gpu4:mlx5_1", "factor": 0.5}])
    log, ok = sim.model_log(tagged, workers)
    assert ok and all(line.startswith("[1,0]<stdout>:") for line in log.decode().splitlines())


def test_mpirun_words_of_the_collections_launcher_script():
    script = "PATH=x; export PATH; exec mpirun -np 16 --hostfile /etc/mpi/hostfile -x NCCL_IB_HCA --mca btl tcp,self " \
             "/opt/nccl-tests/build/all_gather_perf -b 1G -e 2G"
    assert pm.mpirun_words(["/bin/sh", "-c", script]) == {"np": 16, "tag_output": False, "collective": "all_gather",
                                                          "args": ["-b", "1G", "-e", "2G"]}
    with pytest.raises(pm.PerfModelError, match="runs no mpirun"):
        pm.mpirun_words(["/bin/sh", "-c", "sleep 1"])
    with pytest.raises(pm.PerfModelError, match="not an nccl-tests binary"):
        pm.mpirun_words(["mpirun", "-np", "2", "hostname"])


def test_cli_rewrites_perf_json_of_a_running_lab(tmp_path):
    run_dir_with(tmp_path, [])
    cli = [sys.executable, str(ROOT / "tests" / "lab" / "nccl" / "perfmodel.py"), str(tmp_path)]
    out = subprocess.run(cli + ['[{"leaf": "leaf2", "factor": 0.7}]', "0.01", "4"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "perf.json").read_text()) == {"faults": [{"leaf": "leaf2", "factor": 0.7}], "noise": 0.01, "seed": 4}
    bad = subprocess.run(cli + ['[{"leaf": "leaf2", "factor": 7}]'], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "lab_perf_faults[0].factor: 7 is not a number in (0, 1]" in bad.stderr
    assert subprocess.run(cli, capture_output=True, text=True, check=False).returncode == 0   # no faults: replay again
    assert not (tmp_path / "perf.json").exists()
