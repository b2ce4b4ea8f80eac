# SPDX-License-Identifier: GPL-3.0-or-later
"""_snapshot and _counters: snapshot selection, counters_delta (resets, one-sided entries),
the parsing helpers, and the task's failures that need no device."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.filter.counters_delta import FilterModule, counters_delta
from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _counters


def snap(ports, taken_at="2025-06-01T12:00:00+00:00", device="leaf1", kind="switch"):
    return _snapshot.snapshot(device, "eos", ports, {"show x": "text"}, taken_at=taken_at, kind=kind)


PRE = snap(
    {
        "Ethernet1": {
            "pfc_rx_frames": {"3": 1204, "6": 5},
            "pfc_tx_frames": {"3": 57},
            "queue_drops": {"3": 0},
            "watchdog_status": {"3": "OK"},
            "in_discards": 7,
        },
        "Ethernet2": {"pfc_rx_frames": {"3": 900}, "in_discards": 1},
    }
)
POST = snap(
    {
        "Ethernet1": {
            "pfc_rx_frames": {"3": 1304, "6": 5},
            "pfc_tx_frames": {"3": 97},
            "queue_drops": {"3": 2},
            "watchdog_status": {"3": "DEADLOCK"},
            "in_discards": 8,
        },
        "Ethernet2": {"pfc_rx_frames": {"3": 12}, "in_discards": 0},
    },
    taken_at="2025-06-01T12:01:30.5+00:00",
)


def test_snapshot_shape_and_not_available():
    assert set(PRE) == {"device", "kind", "platform", "taken_at", "ports", "not_available", "raw"}
    assert "pfc_rx_frames" not in PRE["not_available"] and "cnp_packets" in PRE["not_available"]
    assert PRE["not_available"] == sorted(PRE["not_available"])


def test_delta_is_post_minus_pre():
    out = _snapshot.delta(POST, PRE)
    assert out["ports"]["Ethernet1"] == {
        "in_discards": 1,
        "pfc_rx_frames": {"3": 100, "6": 0},
        "pfc_tx_frames": {"3": 40},
        "queue_drops": {"3": 2},
        "watchdog_status": {"3": "DEADLOCK"},  # not a counter: post's value
    }
    assert out["device"] == "leaf1" and out["kind"] == "switch" and out["platform"] == "eos"
    assert out["taken_at"] == POST["taken_at"] and out["since"] == PRE["taken_at"] and out["interval_s"] == 90.5
    assert out["raw"] == {}


def test_a_counter_that_went_down_is_a_reset_and_its_delta_is_the_post_value():
    out = _snapshot.delta(POST, PRE)
    assert out["ports"]["Ethernet2"] == {"pfc_rx_frames": {"3": 12}, "in_discards": 0}
    assert out["resets"] == [
        {"port": "Ethernet2", "counter": "in_discards", "pre": 1, "post": 0},
        {"port": "Ethernet2", "counter": "pfc_rx_frames", "index": "3", "pre": 900, "post": 12},
    ]


def test_one_sided_ports_counters_and_indexes_are_reported_and_left_out():
    post = copy.deepcopy(POST)
    pre = copy.deepcopy(PRE)
    del post["ports"]["Ethernet2"]
    post["ports"]["Ethernet3"] = {"in_discards": 0}
    del post["ports"]["Ethernet1"]["pfc_tx_frames"]
    post["ports"]["Ethernet1"]["out_discards"] = 4
    post["ports"]["Ethernet1"]["pfc_rx_frames"]["4"] = 9
    del pre["ports"]["Ethernet1"]["pfc_rx_frames"]["6"]
    out = _snapshot.delta(post, pre)
    assert out["only_in_pre"] == [{"port": "Ethernet1", "counter": "pfc_tx_frames"}, {"port": "Ethernet2"}]
    assert out["only_in_post"] == [
        {"port": "Ethernet1", "counter": "out_discards"},
        {"port": "Ethernet1", "counter": "pfc_rx_frames", "index": "4"},
        {"port": "Ethernet1", "counter": "pfc_rx_frames", "index": "6"},
        {"port": "Ethernet3"},
    ]
    assert sorted(out["ports"]) == ["Ethernet1"]
    assert out["ports"]["Ethernet1"]["pfc_rx_frames"] == {"3": 100}
    assert "out_discards" not in out["ports"]["Ethernet1"]


def test_delta_takes_registered_results_and_refuses_two_devices_or_non_snapshots():
    assert _snapshot.delta({"changed": False, "counters": POST}, {"counters": PRE}) == _snapshot.delta(POST, PRE)
    with pytest.raises(ValueError, match="device 'leaf1', post of device 'leaf2'"):
        _snapshot.delta(snap({}, device="leaf2"), PRE)
    with pytest.raises(ValueError, match="kind"):
        _snapshot.delta(snap({}, kind="nic"), PRE)
    with pytest.raises(ValueError, match="pre: not a counters snapshot"):
        _snapshot.delta(POST, {"ports": None})
    bad = copy.deepcopy(POST)
    bad["ports"]["Ethernet1"]["in_discards"] = {"0": 1}
    with pytest.raises(ValueError, match="per-index counter on one side"):
        _snapshot.delta(bad, PRE)


def test_filter_wraps_value_errors():
    assert FilterModule().filters()["counters_delta"] is counters_delta
    assert counters_delta(POST, PRE)["ports"]["Ethernet1"]["in_discards"] == 1
    with pytest.raises(AnsibleFilterError, match="counters_delta: post: not a counters snapshot"):
        counters_delta("nope", PRE)


def test_delta_of_equal_snapshots_is_all_zero_and_interval_unknown_without_times():
    pre = snap({"swp1": {"pfc_rx_frames": {"3": 5}}}, taken_at=None)
    pre["taken_at"] = None
    out = _snapshot.delta(pre, pre)
    assert out["ports"] == {"swp1": {"pfc_rx_frames": {"3": 0}}} and out["resets"] == [] and out["interval_s"] is None


def test_select_keeps_the_asked_ports_and_priorities_in_natural_order():
    ports = {
        "Ethernet10": {"pfc_rx_frames": {"3": 1, "4": 2}, "in_discards": 0},
        "Ethernet2": {"pfc_rx_frames": {"0": 1, "3": 5}, "ecn_marked_total": 3},
        "Ethernet1": {},
    }
    assert list(_snapshot.select(ports, None, [3])) == ["Ethernet1", "Ethernet2", "Ethernet10"]
    out = _snapshot.select(ports, ["Ethernet10", "Ethernet2"], [3])
    assert out == {"Ethernet2": {"ecn_marked_total": 3, "pfc_rx_frames": {"3": 5}}, "Ethernet10": {"in_discards": 0, "pfc_rx_frames": {"3": 1}}}


@pytest.mark.parametrize(
    ("value", "want"),
    [(5, 5), ("1204", 1204), ("1,204", 1204), (" 7 ", 7), ("-", None), ("n/a", None), ("Not", None), (True, None), (2.0, 2), (None, None)],
)
def test_count(value, want):
    assert _snapshot.count(value) == want


def test_human_count_and_index_key_and_json_document():
    assert _snapshot.human_count("0 Bytes") == 0 and _snapshot.human_count("146.48 KB") == 149996
    assert _snapshot.human_count("12") == 12 and _snapshot.human_count("lots") is None
    assert [_snapshot.index_key(k) for k in ("TC3", "UC7", "3", 6, "PG0", "x", "TC")] == ["3", "7", "3", "6", "0", None, None]
    assert _snapshot.json_document('junk\n{"a": 1}\nprompt') == {"a": 1}
    assert _snapshot.json_document("% Invalid input") is None and _snapshot.json_document('{"a": ') is None


def test_text_tables_cut_columns_at_the_dashes():
    text = (
        "traffic-class  tx-frames  tx-bytes     tx-uc-buffer-discards  wred-discards\n"
        "-------------  ---------  -----------  ---------------------  -------------\n"
        "0              91233      88.02 MB     0 Bytes                0\n"
        "3              5512009    21.43 GB     1.5 KB                 4\n"
        "\n"
        "PFC WD Status\n"
        "===========================\n"
        "    traffic-class  status    deadlock-count\n"
        "    -------------  --------  --------------\n"
        "    3              DEADLOCK  2\n"
    )
    first, second = _snapshot.text_tables(text)
    assert first[1] == {"traffic-class": "3", "tx-frames": "5512009", "tx-bytes": "21.43 GB", "tx-uc-buffer-discards": "1.5 KB", "wred-discards": "4"}
    assert second == [{"traffic-class": "3", "status": "DEADLOCK", "deadlock-count": "2"}]


def _args(**extra):
    args = {key: spec.get("default") for key, spec in _counters.ARGUMENT_SPEC.items()}
    args.update(extra)
    return args


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (_args(), "leaf1: platform: not given"),
        (_args(platform="ios"), "has no switch driver"),
        (_args(platform="eos", priorities=[3, 9]), "priorities: 9 not in 0-7"),
        (_args(platform="nvue"), "NVUE shows counters per interface; give the ports"),
        (_args(platform="junos", ports=["et-0/0/0; rm"]), "is not a Junos interface name"),
        (_args(platform="nvue", ports=["swp1 && reboot"]), "is not an NVUE interface name"),
        (_args(platform="eos"), "host: not given"),
    ],
)
def test_run_fails_before_connecting(args, message):
    result = _counters.run(args, "leaf1")
    assert result["failed"] and message in result["msg"] and result["changed"] is False


def test_argument_spec_has_the_connection_options():
    assert {"host", "port", "username", "password", "timeout"} <= set(_counters.ARGUMENT_SPEC)
    assert _counters.ARGUMENT_SPEC["priorities"]["default"] == list(range(8))
