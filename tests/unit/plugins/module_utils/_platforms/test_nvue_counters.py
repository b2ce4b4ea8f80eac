# SPDX-License-Identifier: GPL-3.0-or-later
"""NVUE counters: per-port nv show commands and their parsing, as JSON and as
the text tables of the switch reference section 3.9.1 (numbers invented)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue


def cmd(port, view):
    return "nv show interface %s %s -o json" % (port, view)


JSON = {
    cmd("swp1", "counters qos pfc-stats"): json.dumps(
        {
            str(p): {
                "rx-pause-frames": 1204 if p == 3 else 0,
                "rx-pause-duration": 8831 if p == 3 else 0,
                "tx-pause-frames": 57 if p == 3 else 0,
                "tx-pause-duration": 0,
            }
            for p in range(8)
        }
    ),
    cmd("swp1", "counters qos egress-queue-stats"): json.dumps(
        {str(q): {"tx-frames": 10, "tx-bytes": 1000, "tx-uc-buffer-discards": 2 if q == 3 else 0, "wred-discards": 3 if q == 3 else 0} for q in range(8)}
    ),
    cmd("swp1", "counters qos ingress-buffer-stats"): json.dumps(
        {str(pg): {"rx-frames": 1, "rx-buffer-discards": 4 if pg == 3 else 0, "rx-shared-buffer-discards": 0} for pg in range(8)}
    ),
    cmd("swp1", "counters qos port-stats"): json.dumps({"rx-stats": {"pause-frames": 1204}, "tx-stats": {"ecn-marked-packets": 812334, "pause-frames": 57}}),
    cmd("swp1", "qos pfc-watchdog"): json.dumps(
        {"state": "enabled", "status": {"3": {"status": "OK", "deadlock-count": 1}, "6": {"status": "DEADLOCK", "deadlock-count": 2}}}
    ),
    cmd("swp1", "qos roce counters"): json.dumps({"tx-stats": {"tx-cnp-stats": {"cnp-packets": 42}, "tx-ecn-stats": {"ecn-marked-packets": 812334}}}),
}

TEXT = {
    cmd("swp2", "counters qos pfc-stats"): """\
switch-priority  rx-pause-frames  rx-pause-duration  tx-pause-frames  tx-pause-duration
---------------  ---------------  -----------------  ---------------  -----------------
0                0                0                  0                0
3                1204             8831               57               402
""",
    cmd("swp2", "counters qos egress-queue-stats"): """\
traffic-class  tx-frames  tx-bytes     tx-uc-buffer-discards  wred-discards
-------------  ---------  -----------  ---------------------  -------------
0              91233      88.02 MB     0 Bytes                0
3              5512009    21.43 GB     0 Bytes                7
""",
    cmd("swp2", "counters qos port-stats"): """\
Counter             Receive  Transmit
------------------  -------  --------
ECN Marked Packets  n/a      812334
MC Buffer Discards  n/a      0
Pause Frames        1204     57
""",
    cmd("swp2", "qos pfc-watchdog"): """\
                 operational  applied
---------------  -----------  -------
state            enabled      enabled

PFC WD Status
===========================
    traffic-class  status    deadlock-count
    -------------  --------  --------------
    3              OK        0
    6              OK        3
""",
    cmd("swp2", "qos roce counters"): """\
                               operational   applied  description
-----------------------------  ------------  -------  ---------------------------------
tx-stats
  tx-cnp-stats
    cnp-packets                42                     Tx CNP packets
  tx-ecn-stats
    ecn-marked-packets         812334                 Tx ECN marked packets
""",
    cmd("swp2", "counters qos ingress-buffer-stats"): "Error: The requested item does not exist: interface swp2 counters qos ingress-buffer-stats",
}


def test_commands_per_port_and_port_names_checked():
    commands = nvue.Driver.counter_commands(["swp1", "swp2"])
    assert len(commands) == 12 and commands[0] == "nv show interface swp1 counters qos pfc-stats -o json"
    with pytest.raises(ValueError, match="give the ports"):
        nvue.Driver.counter_commands(None)
    with pytest.raises(ValueError, match="not an NVUE interface name"):
        nvue.Driver.counter_commands(["swp1;reboot"])


def test_parse_json():
    ports, errors = nvue.Driver.parse_counters(JSON)
    assert errors == {}
    one = ports["swp1"]
    assert one["pfc_rx_frames"]["3"] == 1204 and one["pfc_tx_frames"]["3"] == 57 and one["pfc_rx_duration"]["3"] == 8831
    assert one["queue_drops"]["3"] == 5 and one["wred_drops"]["3"] == 3 and one["queue_drops"]["0"] == 0
    assert one["pg_discards"]["3"] == 4 and one["ecn_marked_total"] == 812334 and one["cnp_packets"] == 42
    assert one["watchdog_storms"] == {"3": 1, "6": 2} and one["watchdog_status"] == {"3": "OK", "6": "DEADLOCK"}
    assert "ecn_marked" not in one  # no per-queue ECN column in this release


def test_parse_text_tables_and_errors():
    ports, errors = nvue.Driver.parse_counters(TEXT)
    two = ports["swp2"]
    assert two["pfc_rx_frames"] == {"0": 0, "3": 1204} and two["pfc_tx_duration"]["3"] == 402
    assert two["queue_drops"] == {"0": 0, "3": 7} and two["ecn_marked_total"] == 812334 and two["cnp_packets"] == 42
    assert two["watchdog_storms"] == {"3": 0, "6": 3}
    assert list(errors) == [cmd("swp2", "counters qos ingress-buffer-stats")]


def test_per_queue_ecn_where_egress_stats_print_it():
    outputs = {cmd("swp1", "counters qos egress-queue-stats"): json.dumps({"3": {"ecn-marked-frames": 9, "tx-uc-buffer-discards": 0, "wred-discards": 0}})}
    ports, _errors = nvue.Driver.parse_counters(outputs)
    assert ports["swp1"]["ecn_marked"] == {"3": 9}


def test_watchdog_off_gives_no_storms():
    ports, errors = nvue.Driver.parse_counters({cmd("swp1", "qos pfc-watchdog"): json.dumps({"state": "disabled", "status": {}})})
    assert ports["swp1"]["watchdog_storms"] == {} and errors == {}


class _FakeNvue(nvue.Driver):
    chunk_bytes = 200

    def __init__(self):
        super().__init__(None, "sw1")
        self.sent = []

    def _exchange(self, commands, timeout):
        self.sent.append(list(commands))
        return [JSON.get(c, "") for c in commands]


def test_read_counters_types_ahead_in_chunks():
    driver = _FakeNvue()
    commands = nvue.Driver.counter_commands(["swp1"])
    outputs = driver.read_counters(commands)
    assert list(outputs) == commands and 1 < len(driver.sent) < len(commands)


# nv show interface swp1 qos pfc-watchdog as the 5.14 QoS page prints it: a blank line
# between the ruler and the rows (fixtures/nvue/SOURCES.md).
def _watchdog_doc():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "nvue", "show_interface_qos_pfc_watchdog.txt")
    with open(path, encoding="utf-8") as handle:
        return handle.read().split("\n", 1)[1]


def test_watchdog_text_with_blank_line_after_ruler():
    ports, errors = nvue.Driver.parse_counters({"nv show interface swp1 qos pfc-watchdog -o json": _watchdog_doc()})
    assert errors == {}
    assert ports["swp1"]["watchdog_storms"] == {"0": 0, "1": 3, "2": 2, "3": 0, "4": 0, "5": 0, "6": 0, "7": 3}
    assert ports["swp1"]["watchdog_status"]["2"] == "DEADLOCK"
