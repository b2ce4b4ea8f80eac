# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_localize/ without the performance model: settings, topology, the
schedule's shape, flags, inference on hand-made measurements, report, exclusion, SuperBench's baseline (issue 17)."""

from __future__ import annotations

import copy
import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import localize_sim as sim  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils import _localize as L  # noqa: E402  # pylint: disable=wrong-import-position

LAB = sim.lab_cabling()
SIXTEEN = sim.rail_fabric(2, 8)


def _hosts(cabling):
    return sorted(cabling["hosts"], key=L._natural)  # pylint: disable=protected-access


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------


def test_settings_default_and_overlay():
    assert L.check_settings(None) == L.DEFAULT_SETTINGS
    cfg = L.check_settings({"repeats": 3, "expected_busbw": 42.5, "sigma_k": None})
    assert cfg["repeats"] == 3 and cfg["expected_busbw"] == 42.5 and cfg["sigma_k"] == L.DEFAULT_SETTINGS["sigma_k"]


@pytest.mark.parametrize("key,value", [("repeats", 0), ("repeats", True), ("repeats", "2"), ("sigma_k", -1), ("min_drop_pct", 95),
                                       ("accuse_ratio", 0.4), ("expected_busbw", 0), ("expected_busbw", "fast"), ("cross_rail", "yes"),
                                       ("max_rounds", 51), ("minutes_per_launch", 0)])
def test_a_bad_setting_names_its_key_and_value(key, value):
    with pytest.raises(L.LocalizeError) as err:
        L.check_settings({key: value})
    assert "settings.%s" % key in str(err.value) and repr(value) in str(err.value)


def test_an_unknown_setting_is_refused_with_its_name():
    with pytest.raises(L.LocalizeError, match="settings.repeat: unknown setting"):
        L.check_settings({"repeat": 2})
    with pytest.raises(L.LocalizeError, match="settings: expected a mapping"):
        L.check_settings([1])


# ---------------------------------------------------------------------------
# Topology
# ---------------------------------------------------------------------------


def test_the_lab_topology_names_components_as_the_contract_does():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    assert topo.rails == {"gpu1": {0: "mlx5_0", 1: "mlx5_1"}, "gpu2": {0: "mlx5_0", 1: "mlx5_1"}}
    assert topo.groups == [["gpu1", "gpu2"]]
    assert topo.uplinks == {"leaf1": [("swp31", "spine1", "Ethernet1/1")], "leaf2": [("et-0/0/31", "spine1", "Ethernet2/1")]}
    path, comps = topo.path_components("gpu1", "mlx5_1", "gpu2", "mlx5_0")
    names = {L.component_text(c) for c in comps}
    assert path == "spine"
    assert {"link gpu1:mlx5_1~leaf2:et-0/0/1", "nic gpu2:mlx5_0", "host gpu1", "leaf leaf1", "leaf leaf2",
            "uplink leaf1:swp31~spine1:Ethernet1/1", "uplink leaf2:et-0/0/31~spine1:Ethernet2/1", "spine spine1"} <= names


def test_rail_optimized_hosts_form_one_leaf_group_per_scalable_unit():
    topo = L.topology(SIXTEEN, _hosts(SIXTEEN))
    assert [len(g) for g in topo.groups] == [8, 8] and topo.groups[0][0] == "gpu1" and topo.groups[1][0] == "gpu9"
    assert len(topo.uplinks["leaf-su1-r0"]) == 4 and topo.spines_of["leaf-su1-r0"] == {"spine1", "spine2", "spine3", "spine4"}


def test_bad_cabling_and_hosts_are_refused_naming_what():
    with pytest.raises(L.LocalizeError, match="cabling: expected fabric_plan_result.cabling"):
        L.topology({"links": []}, ["gpu1", "gpu2"])
    with pytest.raises(L.LocalizeError, match="hosts: at least 2 hosts"):
        L.topology(LAB, ["gpu1"])
    with pytest.raises(L.LocalizeError, match="cabling.hosts.gpu9: no rails described"):
        L.topology(LAB, ["gpu1", "gpu9"])
    with pytest.raises(L.LocalizeError, match="hosts: gpu1 is listed twice"):
        L.topology(LAB, ["gpu1", "gpu1"])
    with pytest.raises(L.LocalizeError, match="is not a host name"):
        L.topology(LAB, ["gpu1", "gpu2\nreboot"])
    broken = copy.deepcopy(LAB)
    broken["hosts"]["gpu2"]["nics"]["mlx5_1"]["peer"] = {}
    with pytest.raises(L.LocalizeError, match="cabling.hosts.gpu2.nics.mlx5_1: no switch port as peer"):
        L.topology(broken, ["gpu1", "gpu2"])
    broken = copy.deepcopy(LAB)
    broken["hosts"]["gpu1"]["nics"]["mlx5_0"]["speed"] = "fast"
    with pytest.raises(L.LocalizeError, match="speed 'fast'"):
        L.topology(broken, ["gpu1", "gpu2"])


# ---------------------------------------------------------------------------
# The schedule
# ---------------------------------------------------------------------------


def _gpus_used_once(round_):
    for repeat in {j["repeat"] for j in round_["jobs"]}:
        used = [(h, j["gpus"][h]) for j in round_["jobs"] if j["repeat"] == repeat for h in j["hosts"]]
        assert len(used) == len(set(used)), "a GPU in two jobs of one wave"


def test_round_one_pairs_hosts_under_the_same_leaves_one_job_per_pair_and_rail():
    topo = L.topology(SIXTEEN, _hosts(SIXTEEN))
    first = L.plan_round(topo, [], {"repeats": 2})
    assert first["number"] == 1 and first["purpose"] == "intra-leaf"
    assert len(first["jobs"]) == 8 * 8 * 2 and len({j["id"] for j in first["jobs"]}) == len(first["jobs"])
    assert all(j["path"] == "leaf" and j["kind"] == "pair" and j["rail"] == j["gpu"] for j in first["jobs"])
    assert all(j["nics"] == {h: "mlx5_%d" % j["rail"] for h in j["hosts"]} for j in first["jobs"])
    _gpus_used_once(first)


def test_round_two_crosses_the_spines_with_new_partners():
    topo = L.topology(SIXTEEN, _hosts(SIXTEEN))
    first = L.plan_round(topo, [])
    history = [L.record(first, {j["id"]: 46.0 for j in first["jobs"]})]
    second = L.plan_round(topo, history)
    assert second["purpose"] == "cross-leaf" and all(j["path"] == "spine" for j in second["jobs"])
    assert not {frozenset(j["hosts"]) for j in first["jobs"]} & {frozenset(j["hosts"]) for j in second["jobs"]}
    assert any(c["kind"] == "uplink" for c in second["jobs"][0]["components"])
    assert second["prior"]["rule"] == "median"
    _gpus_used_once(second)
    history.append(L.record(second, {j["id"]: 46.0 for j in second["jobs"]}))
    assert L.plan_round(topo, history) is None  # clean: done after two rounds


def test_the_lab_second_round_is_cross_rail_through_the_spine():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    first = L.plan_round(topo, [])
    second = L.plan_round(topo, [L.record(first, {j["id"]: 46.0 for j in first["jobs"]})])
    assert second["purpose"] == "cross-rail"
    assert [(j["nics"], j["gpus"], j["gpu"]) for j in second["jobs"]] == [
        ({"gpu1": "mlx5_0", "gpu2": "mlx5_1"}, {"gpu1": 0, "gpu2": 1}, None),
        ({"gpu1": "mlx5_1", "gpu2": "mlx5_0"}, {"gpu1": 1, "gpu2": 0}, None)]
    _gpus_used_once(second)


def test_max_rounds_stops_the_schedule():
    topo = L.topology(SIXTEEN, _hosts(SIXTEEN))
    first = L.plan_round(topo, [])
    history = [L.record(first, {j["id"]: 20.0 if i == 0 else 46.0 for i, j in enumerate(first["jobs"])})]
    assert L.plan_round(topo, history, {"max_rounds": 1}) is None


# ---------------------------------------------------------------------------
# Flags and inference on hand-made numbers
# ---------------------------------------------------------------------------


def test_record_flags_by_robust_sigma_and_minimum_drop():
    topo = L.topology(SIXTEEN, _hosts(SIXTEEN))
    first = L.plan_round(topo, [])
    ids = [j["id"] for j in first["jobs"]]
    values = dict(zip(ids, itertools.cycle([46.0, 46.4, 45.6, 46.2, 45.8])))
    values[ids[0]] = 43.0   # 6.5% down: beyond 4 sigma and 5%
    values[ids[1]] = 45.0   # 2% down: within the noise
    values[ids[2]] = None   # the launch failed
    entry = L.record(first, values)
    slow = {j["id"] for j in entry["jobs"] if j["slow"]}
    assert slow == {ids[0], ids[2]}
    assert entry["reference"]["rule"] == "median" and entry["jobs"][0]["expected"] == pytest.approx(46.0)


def test_a_floor_flags_what_the_median_cannot():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    first = L.plan_round(topo, [])
    values = {j["id"]: 30.0 for j in first["jobs"]}
    assert not any(j["slow"] for j in L.record(first, values)["jobs"])
    assert all(j["slow"] for j in L.record(first, values, {"expected_busbw": 40.0})["jobs"])


def test_record_refuses_unknown_jobs_and_bad_values():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    first = L.plan_round(topo, [])
    with pytest.raises(L.LocalizeError, match="measured.r9-j0: no such job in round 1"):
        L.record(first, {"r9-j0": 1.0})
    with pytest.raises(L.LocalizeError, match="measured.r1-j0: expected busbw"):
        L.record(first, {"r1-j0": "46"})


def test_loopback_refuses_an_unknown_nic_and_bad_values():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    with pytest.raises(L.LocalizeError, match="loopback.gpu1:mlx5_7: no such host NIC"):
        L.loopback_round(topo, {"gpu1:mlx5_7": 390.0})
    with pytest.raises(L.LocalizeError, match="loopback.gpu1:mlx5_0: expected Gbit/s"):
        L.loopback_round(topo, {"gpu1:mlx5_0": -1})
    with pytest.raises(L.LocalizeError, match="loopback expected_gbps"):
        L.loopback_round(topo, {}, "400")


def test_a_slow_loopback_with_slow_pairs_is_host_side_a_fast_one_link_side():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    first = L.plan_round(topo, [])
    measured = {j["id"]: 23.0 if j["rail"] == 1 else 46.0 for j in first["jobs"]}
    for nic_slow, expect in ((True, "nic"), (False, "link")):
        loop = L.loopback_round(topo, {"gpu1:mlx5_0": 390.0, "gpu1:mlx5_1": 195.0 if nic_slow else 391.0,
                                       "gpu2:mlx5_0": 392.0, "gpu2:mlx5_1": 389.0})
        history = [loop, L.record(first, measured)]
        second = L.plan_round(topo, history)
        history.append(L.record(second, {j["id"]: 23.0 if j["nics"]["gpu1"] == "mlx5_1" else 46.0 for j in second["jobs"]}))
        result = L.infer(topo, history)
        assert result["verdict"] == "found" and result["suspects"][0]["component"]["kind"] == expect
        assert result["suspects"][0]["host"] == "gpu1" and result["suspects"][0]["rail"] == 1


def test_identical_coverage_is_one_ambiguity_group():
    topo = L.topology(LAB, ["gpu1", "gpu2"])
    first = L.plan_round(topo, [], {"repeats": 2})
    history = [L.record(first, {j["id"]: 20.0 if j["rail"] == 0 else 46.0 for j in first["jobs"]})]
    result = L.infer(topo, history, {"repeats": 2})
    assert result["verdict"] == "ambiguous"
    names = {L.component_text(c) for s in result["suspects"] for c in [s["component"]] + s["group"]}
    assert names == {"nic gpu1:mlx5_0", "nic gpu2:mlx5_0", "link gpu1:mlx5_0~leaf1:swp1", "link gpu2:mlx5_0~leaf1:swp2", "leaf leaf1"}


def test_a_single_slow_launch_accuses_nobody():
    topo = L.topology(SIXTEEN, _hosts(SIXTEEN))
    first = L.plan_round(topo, [])
    history = [L.record(first, {j["id"]: 30.0 if i == 5 else 46.0 for i, j in enumerate(first["jobs"])})]
    result = L.infer(topo, history)
    assert result["suspects"] == [] and result["verdict"] == "inconclusive" and len(result["unexplained"]) == 1


# ---------------------------------------------------------------------------
# Report, exclusion, SuperBench
# ---------------------------------------------------------------------------


def _found():
    result, _history, _model = sim.run(LAB, [{"nic": "gpu1:mlx5_1", "factor": 0.5}])
    return result


def test_report_names_the_suspect_its_evidence_and_cost():
    text = L.report_markdown(_found())
    assert text.startswith("# Localization: found")
    assert "nic gpu1:mlx5_1" in text and "leaf2:et-0/0/1" in text and "2 rounds (2 waves of launches), 4 launches, 8.0 GPU-minutes" in text
    assert "| 1 | r1-j1 | gpu1 gpu2 |" in text
    clean, _history, _model = sim.run(LAB, [])
    assert "No component is slow" in L.report_markdown(clean)


def test_exclusion_slurm_and_kubernetes():
    result = _found()
    slurm = L.exclusion(result, "slurm", "localize: slow NIC")
    assert slurm == [{"host": "gpu1", "component": {"kind": "nic", "name": "gpu1:mlx5_1"}, "rank": 1, "ambiguous": False,
                      "argv": ["scontrol", "update", "nodename=gpu1", "state=drain", "reason=localize: slow NIC (nic gpu1:mlx5_1)"]}]
    kube = L.exclusion(result, "kubernetes", "slow NIC")
    assert kube[0]["node"] == "gpu1" and kube[0]["cordon"] is True
    assert kube[0]["taint"] == {"key": "lossless.fabric/localize", "value": "suspect", "effect": "NoSchedule"}
    assert kube[0]["annotations"]["lossless.fabric/localize-reason"] == "slow NIC (nic gpu1:mlx5_1)"


@pytest.mark.parametrize("reason,match", [("bad\nscontrol reboot", "newline or control"), ("x" * 300, "at most 200"), ("", "non-empty")])
def test_exclusion_refuses_a_reason_that_could_carry_a_second_command(reason, match):
    with pytest.raises(L.LocalizeError, match=match):
        L.exclusion(_found(), "slurm", reason)


def test_exclusion_refuses_an_unknown_kind_and_drains_no_host_for_a_switch():
    with pytest.raises(L.LocalizeError, match="exclude: expected 'slurm' or 'kubernetes', got 'pbs'"):
        L.exclusion(_found(), "pbs", "r")
    leaf, _history, _model = sim.run(LAB, [{"leaf": "leaf2", "factor": 0.7}])
    assert leaf["suspects"] and L.exclusion(leaf, "slurm", "r") == []


@pytest.mark.parametrize("n", [2, 5, 16])
def test_superbench_pairwise_meets_every_pair_once_in_n_minus_one_rounds(n):
    hosts = ["h%d" % i for i in range(n)]
    rounds = L.superbench_pairwise(hosts)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    for pairs in rounds:
        flat = [h for p in pairs for h in p]
        assert len(flat) == len(set(flat)) and len(pairs) == n // 2
    met = [frozenset(p) for pairs in rounds for p in pairs]
    assert len(met) == len(set(met)) == n * (n - 1) // 2
