# SPDX-License-Identifier: GPL-3.0-or-later
"""Junos counters: per-port show commands and their parsing, on text in the
shapes of the switch reference section 5.6.1 (numbers invented)."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _driver as junos

EXTENSIVE = """\
Physical interface: et-0/0/0, Enabled, Physical link is Up
  Interface index: 649, SNMP ifIndex: 550
  Input errors:
    Errors: 0, Drops: 7, Framing errors: 0, Runts: 0, Policed discards: 0
  Output errors:
    Carrier transitions: 1, Errors: 0, Drops: 9, Collisions: 0
  MAC statistics:                      Receive         Transmit
    Total octets                   91730012345      88200071234
    MAC pause frames                         0                0
  MAC Priority Flow Control Statistics:
    Priority :  0                             0                0
    Priority :  3                          1204               57
    Priority :  6                             5                0
    Priority :  7                             0                0
  Packet Forwarding Engine configuration:
    Priority :  9     not a PFC row
"""

QUEUE = """\
Physical interface: et-0/0/0, Enabled, Physical link is Up
  Interface index: 649, SNMP ifIndex: 550
Forwarding classes: 16 supported, 5 in use
Egress queues: 12 supported, 5 in use
Queue: 0, Forwarding classes: best-effort
  Queued:
    Packets              :                   10                    0 pps
  Transmitted:
    Packets              :                   10                    0 pps
    Tail-dropped packets :        Not Available
    RED-dropped packets  :                    1                    0 pps
     Low                 :                    1                    0 pps
Queue: 3, Forwarding classes: ROCE
  Queued:
    Packets              :              5512009                  812 pps
    Bytes                :          22980011233              3320000 bps
  Transmitted:
    Packets              :              5512009                  812 pps
    Bytes                :          22980011233              3320000 bps
    Tail-dropped packets :                    2                    0 pps
    RED-dropped packets  :                    3                    0 pps
     Low                 :                    3                    0 pps
     High                :                    0                    0 pps
    RED-dropped bytes    :                    0                    0 bps
     Low                 :                    0                    0 bps
    ECN-CE packets       :                81234                   11 pps
    ECN-CE bytes         :            338210033                45000 bps
"""


def test_commands_per_port_and_port_names_checked():
    assert junos.Driver.counter_commands(["et-0/0/0"]) == ["show interfaces et-0/0/0 extensive", "show interfaces queue et-0/0/0"]
    with pytest.raises(ValueError, match="give the ports"):
        junos.Driver.counter_commands([])
    with pytest.raises(ValueError, match="not a Junos interface name"):
        junos.Driver.counter_commands(["et-0/0/0 | save x"])


def test_parse_extensive_and_queue():
    ports, errors = junos.Driver.parse_counters({"show interfaces et-0/0/0 extensive": EXTENSIVE, "show interfaces queue et-0/0/0": QUEUE})
    assert errors == {}
    one = ports["et-0/0/0"]
    assert one["pfc_rx_frames"] == {"0": 0, "3": 1204, "6": 5, "7": 0} and one["pfc_tx_frames"]["3"] == 57
    assert one["in_discards"] == 7 and one["out_discards"] == 9
    assert one["queue_drops"] == {"0": 1, "3": 5} and one["wred_drops"] == {"0": 1, "3": 3}
    assert one["ecn_marked"] == {"3": 81234} and one["ecn_marked_total"] == 81234
    assert "watchdog_storms" not in one


def test_unknown_interface_is_an_error():
    said = "error: device et-0/0/99 not found"
    ports, errors = junos.Driver.parse_counters({"show interfaces et-0/0/99 extensive": said, "show interfaces queue et-0/0/99": said})
    assert ports == {} and len(errors) == 2


class _FakeJunos(junos.Driver):
    def __init__(self, mode):
        super().__init__(None, "sw1")
        self._mode = mode
        self.sent = []

    def _run(self, commands, state, timeout=0):
        self.sent.append(list(commands))
        return ["x"] * len(commands)


@pytest.mark.parametrize(("mode", "prefix"), [("op", ""), ("private", "run ")])
def test_read_counters_is_one_write(mode, prefix):
    driver = _FakeJunos(mode)
    commands = junos.Driver.counter_commands(["et-0/0/0", "et-0/0/1"])
    outputs = driver.read_counters(commands)
    assert driver.sent == [[prefix + c for c in commands]] and list(outputs) == commands
