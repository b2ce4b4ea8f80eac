# SPDX-License-Identifier: GPL-3.0-or-later
"""switch_counters and the counters_delta filter through ansible-playbook
against the strict switch simulator, on all three platforms: counters set
over the simulator's control API come back per port and priority, a pre/post
delta gives exactly the increments, and a cleared counter is reported."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchlab import PLATFORMS, PORTS, results  # noqa: E402  # pylint: disable=import-error,wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._platforms._drivers import driver_class  # noqa: E402  # pylint: disable=wrong-import-position

# What every platform shows (the simulator's counter names); what each one
# cannot show is left out per platform below.
PRE = {
    "pfc_rx": {"3": 1204, "6": 5},
    "pfc_tx": {"3": 57},
    "ecn_marked": {"3": 81234},
    "queue_drops": {"3": 2, "0": 1},
    "wred_drops": {"3": 3},
    "watchdog_storms": {"3": 1},
    "in_discards": 7,
    "out_discards": 9,
    # which egress queue carried the traffic (issue 34): queue_tx_packets / queue_tx_bytes on every platform
    "tx_packets": {"3": 5000, "0": 10},
    "tx_bytes": {"3": 5000000, "0": 1000},
}
STEP = {
    "pfc_rx": {"3": 1204 + 100, "6": 5 + 1},
    "pfc_tx": {"3": 57 + 40},
    "ecn_marked": {"3": 81234 + 5000},
    "queue_drops": {"3": 2 + 10, "0": 1},
    "wred_drops": {"3": 3 + 4},
    "watchdog_storms": {"3": 1 + 2},
    "in_discards": 7 + 1,
    "out_discards": 9 + 3,
    "tx_packets": {"3": 5000 + 700, "0": 10},
    "tx_bytes": {"3": 5000000 + 700000, "0": 1000},
}


def _snap(tag, **args):
    return [
        {"name": "read " + tag, "lossless.fabric.switch_counters": args, "register": tag},
        {"name": "show " + tag, "ansible.builtin.debug": {"msg": "RESULT {{ %s | to_json }}" % tag}},
    ]


def _play(tasks, check=False):
    return [{"name": "counters", "hosts": "switches", "gather_facts": False, "check_mode": check, "tasks": tasks}]


def _delta_task():
    return [{"name": "delta", "ansible.builtin.debug": {"msg": "RESULT {{ post.counters | lossless.fabric.counters_delta(pre) | to_json }}"}}]


def _pre_vars(lab, pre):
    """The pre result as the extra variable 'pre' of the next playbook run (a later run of the play)."""
    path = lab.tmp / "pre.json"
    path.write_text(json.dumps({"pre": pre}))
    return "-e", "@%s" % path


def _watchdog_on(lab, platform):
    """NVUE lists watchdog counters only for ports with the watchdog on."""
    if platform == "nvue":
        lines = ["nv set interface %s qos pfc-watchdog state enable" % port for port in PORTS["nvue"]]
        lab.sim.load("sw1", lines)


# Counters a platform's show commands print no count of (docs/vendor-<platform>.md): its driver's
# counters_not_available (Junos no watchdog storms; NX-OS no ECN-marked count, no watchdog statistics).
NOT_AVAILABLE = {platform: driver_class(platform).counters_not_available for platform in PLATFORMS}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_snapshot_then_delta_gives_the_increments_and_reports_a_reset(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    _watchdog_on(lab, platform)
    port, other = PORTS[platform]
    lab.sim.set_counters("sw1", port, PRE)
    lab.sim.set_counters("sw1", other, {"pfc_rx": {"3": 50}})
    if platform == "eos":
        # EOS counts ECN marks only on a tx-queue with 'random-detect ecn count' (reference 1.8).
        lab.sim.load("sw1", ["interface %s" % port, "tx-queue 3", "random-detect ecn count"])

    first = lab.playbook(_play(_snap("pre")))
    pre = results(first)[0]
    assert not pre.get("failed") and pre["changed"] is False, pre
    snap = pre["counters"]
    assert snap["device"] == "sw1" and snap["kind"] == "switch" and snap["platform"] == platform
    assert snap["taken_at"] and sorted(snap["ports"]) == sorted(PORTS[platform])
    assert snap["raw"] and set(snap["raw"]) == set(pre["commands"])
    have = snap["ports"][port]
    assert have["pfc_rx_frames"]["3"] == 1204 and have["pfc_rx_frames"]["6"] == 5 and have["pfc_tx_frames"]["3"] == 57
    assert have["queue_drops"]["3"] == 5 and have["queue_drops"]["0"] == 1  # tail + WRED
    for counter in NOT_AVAILABLE.get(platform, ()):
        # what the platform prints no count of is listed, never reported as 0
        assert counter in snap["not_available"] and counter not in have, (counter, have)
    if "ecn_marked_total" not in NOT_AVAILABLE.get(platform, ()):
        assert have["ecn_marked_total"] == 81234
    if platform != "nvue" and "ecn_marked" not in NOT_AVAILABLE.get(platform, ()):
        assert have["ecn_marked"]["3"] == 81234
    if "watchdog_storms" not in NOT_AVAILABLE.get(platform, ()):
        assert have["watchdog_storms"]["3"] == 1
    if platform == "eos":
        assert have["in_discards"] == 7 and have["out_discards"] == 9
    assert have["queue_tx_packets"]["3"] == 5000 and have["queue_tx_packets"]["0"] == 10 and have["queue_tx_bytes"]["3"] == 5000000
    assert snap["ports"][other]["pfc_rx_frames"]["3"] == 50

    lab.sim.set_counters("sw1", port, STEP)
    lab.sim.set_counters("sw1", other, {"pfc_rx": {"3": 4}})  # cleared, then 4 counted: a reset

    out = lab.playbook(_play(_snap("post") + _delta_task(), check=True), *_pre_vars(lab, pre))
    post, change = results(out)
    assert post["changed"] is False and not post.get("failed"), post
    moved = change["ports"][port]
    assert moved["pfc_rx_frames"] == {"0": 0, "1": 0, "2": 0, "3": 100, "4": 0, "5": 0, "6": 1, "7": 0}
    assert moved["pfc_tx_frames"]["3"] == 40
    assert moved["queue_drops"]["3"] == 14 and moved["queue_drops"]["0"] == 0
    if "ecn_marked_total" not in NOT_AVAILABLE.get(platform, ()):
        assert moved["ecn_marked_total"] == 5000
    if platform != "nvue" and "ecn_marked" not in NOT_AVAILABLE.get(platform, ()):
        assert moved["ecn_marked"]["3"] == 5000
    if "watchdog_storms" not in NOT_AVAILABLE.get(platform, ()):
        assert moved["watchdog_storms"]["3"] == 2
    if platform == "eos":
        assert moved["in_discards"] == 1 and moved["out_discards"] == 3
    # the benchmark's traffic moved queue 3 (RoCE's), not queue 0
    assert moved["queue_tx_packets"]["3"] == 700 and moved["queue_tx_packets"]["0"] == 0 and moved["queue_tx_bytes"]["3"] == 700000
    assert change["ports"][other]["pfc_rx_frames"]["3"] == 4
    assert change["resets"] == [{"port": other, "counter": "pfc_rx_frames", "index": "3", "pre": 50, "post": 4}]
    assert change["only_in_pre"] == [] and change["only_in_post"] == []
    assert change["since"] == snap["taken_at"] and change["interval_s"] > 0


@pytest.mark.parametrize("platform", PLATFORMS)
def test_cleared_counter_is_reported_not_negative_and_ports_and_priorities_are_selected(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    port, other = PORTS[platform]
    lab.sim.set_counters("sw1", port, {"pfc_rx": {"3": 900, "4": 8}, "pfc_tx": {"3": 30}})
    body = _snap("pre", ports=[port], priorities=[3])
    first = results(lab.playbook(_play(body)))[0]
    assert sorted(first["counters"]["ports"]) == [port]
    assert first["counters"]["ports"][port]["pfc_rx_frames"] == {"3": 900}

    lab.sim.clear_counters("sw1", port)
    lab.sim.set_counters("sw1", port, {"pfc_rx": {"3": 12}, "pfc_tx": {"3": 31}})
    out = lab.playbook(_play(_snap("post", ports=[port, other], priorities=[3]) + _delta_task()), *_pre_vars(lab, first))
    _post, change = results(out)
    assert change["ports"][port]["pfc_rx_frames"] == {"3": 12}
    assert change["ports"][port]["pfc_tx_frames"] == {"3": 1}
    assert {"port": port, "counter": "pfc_rx_frames", "index": "3", "pre": 900, "post": 12} in change["resets"]
    assert change["only_in_post"] == [{"port": other}]


@pytest.mark.parametrize("platform", ["nvue", "junos"])
def test_unknown_port_fails_naming_it(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    name = "swp99" if platform == "nvue" else "et-0/0/99"
    out = lab.playbook(
        _play(
            [
                {"lossless.fabric.switch_counters": {"ports": [PORTS[platform][0], name]}, "register": "r", "ignore_errors": True},
                {"ansible.builtin.debug": {"msg": "RESULT {{ r | to_json }}"}},
            ]
        )
    )
    res = results(out)[0]
    assert res["failed"] and name in res["msg"] and res["missing_ports"] == [name], res
    assert PORTS[platform][0] in res["counters"]["ports"]


def test_delta_of_two_devices_fails_with_a_filter_error(switch_lab):
    lab = switch_lab({"sw1": "eos", "sw2": "eos"})
    out = lab.playbook(
        _play(
            _snap("pre")
            + [
                {"name": "delta", "ansible.builtin.debug": {"msg": "{{ hostvars['sw1'].pre | lossless.fabric.counters_delta(hostvars['sw2'].pre) }}"}},
            ]
        ),
        check=False,
    )
    assert out.returncode != 0
    assert "counters_delta: pre is of device 'sw2', post of device 'sw1'" in out.stdout


def test_fabric_wide_reads_every_switch_from_one_task_and_names_the_one_that_failed(switch_lab):
    """One task on localhost, a result per switch (each platform's own ports from its inventory), the same
    snapshot a per-host task returns; a switch that does not answer fails the task naming it, the others'
    snapshots still come back."""
    lab = switch_lab({"sw1": "eos", "sw2": "nvue", "sw3": "junos"})
    for name, platform in (("sw1", "eos"), ("sw2", "nvue"), ("sw3", "junos")):
        lab.sim.set_counters(name, PORTS[platform][0], {"pfc_rx": {"3": 100 + int(name[-1])}})
    fabric_play = [{"name": "fabric", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "all switches", "lossless.fabric.switch_counters": {"fabric": "{{ groups['switches'] }}", "priorities": [3], "workers": 2},
         "register": "all", "ignore_errors": True},
        {"ansible.builtin.debug": {"msg": "RESULT {{ all | to_json }}"}},
    ]}]
    res = results(lab.playbook(fabric_play + _play(_snap("one"))))
    fabric, per_host = res[0], res[1:]
    assert not fabric.get("failed") and fabric["changed"] is False, fabric
    assert sorted(fabric["switches"]) == ["sw1", "sw2", "sw3"]
    for name, platform in (("sw1", "eos"), ("sw2", "nvue"), ("sw3", "junos")):
        one = fabric["switches"][name]
        snap = one["counters"]
        assert snap["device"] == name and snap["platform"] == platform and sorted(snap["ports"]) == sorted(PORTS[platform])
        assert snap["ports"][PORTS[platform][0]]["pfc_rx_frames"] == {"3": 100 + int(name[-1])}
    # The same shape as a per-host task's result (its keys; the values differ only in time).
    by_host = {r["counters"]["device"]: r for r in per_host}
    for name in ("sw1", "sw2", "sw3"):
        assert set(fabric["switches"][name]) == set(by_host[name]) - {"failed"} | {"changed"}
        assert fabric["switches"][name]["commands"] == by_host[name]["commands"]

    # sw2's host key changes: it is refused before any command, the task fails naming it, sw1 and sw3 still answer.
    lab.sim.rotate_host_key("sw2")
    failed = results(lab.playbook(fabric_play))[0]
    assert failed["failed"] and failed["msg"].startswith("1 of 3 switches failed:"), failed
    assert "sw2 (127.0.0.1:%d): HOST KEY CHANGED" % lab.sim.port("sw2") in failed["msg"]
    assert failed["switches"]["sw2"]["failed"] and "counters" not in failed["switches"]["sw2"]
    assert [n for n in ("sw1", "sw3") if failed["switches"][n].get("failed") or not failed["switches"][n]["counters"]["ports"]] == []
