# SPDX-License-Identifier: GPL-3.0-or-later
"""EOS counters: the show commands and their parsing, on JSON in the shapes of
the switch reference section 1.8 (ANTA's fixtures; numbers invented)."""

from __future__ import annotations

import json

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos

PFC, WATCHDOG, ECN, QUEUE, DROPS, DISCARDS = eos.Driver.COUNTER_COMMANDS


def _tc(dropped):
    return {"TC%d" % q: {"dropPrecedences": {"DP0": {"enqueuedPackets": 10, "droppedPackets": dropped.get(q, 0)}}} for q in range(8)}


OUTPUTS = {
    PFC: json.dumps(
        {
            "interfaceCounters": {
                "Ethernet1": {
                    "rxFrames": 1209,
                    "txFrames": 57,
                    "priorities": {str(p): {"rxFrames": {3: 1204, 6: 5}.get(p, 0), "txFrames": 57 if p == 3 else 0} for p in range(8)},
                },
                "Ethernet2": {"rxFrames": 0, "txFrames": 0, "priorities": {str(p): {"rxFrames": 0, "txFrames": 0} for p in range(8)}},
            }
        },
        indent=2,
    ),
    WATCHDOG: json.dumps({"interfaces": {"Ethernet1": {"txQueues": {"3": {"stuckCount": 2, "recoveryCount": 1}}}}}),
    ECN: json.dumps(
        {
            "intfQueueCounters": {
                "Ethernet1": {"queueCounters": {"0": "-", "3": "81234", "6": "-"}},
                "Ethernet2": {"queueCounters": {"0": "-", "3": "-"}},
            }
        }
    ),
    QUEUE: json.dumps(
        {
            "egressQueueCounters": {
                "interfaces": {
                    "Ethernet1": {"ucastQueues": {"trafficClasses": _tc({3: 5})}, "mcastQueues": {"trafficClasses": _tc({3: 1})}},
                    "Ethernet2": {"ucastQueues": {"trafficClasses": _tc({})}, "mcastQueues": {"trafficClasses": _tc({})}},
                }
            }
        }
    ),
    DROPS: json.dumps(
        {
            "interfaces": {
                "Ethernet1": {
                    "trafficClasses": {
                        "TC3": {"ingressVoqCounters": {"countersSum": {"droppedPackets": 4}}, "egressQueueCounters": {"countersSum": {"droppedPackets": 6}}},
                    }
                }
            }
        }
    ),
    DISCARDS: json.dumps(
        {
            "interfaces": {"Ethernet1": {"inDiscards": 7, "outDiscards": 9}, "Ethernet2": {"inDiscards": 0, "outDiscards": 0}},
            "inDiscardsTotal": 7,
            "outDiscardsTotal": 9,
        }
    ),
}


def test_one_chunk_of_json_commands_for_every_port():
    assert eos.Driver.counter_commands(None) == eos.Driver.counter_commands(["Ethernet1"])
    assert all(command.endswith(" | json") for command in eos.Driver.counter_commands())


def test_parse_every_counter():
    ports, errors = eos.Driver.parse_counters(OUTPUTS)
    assert errors == {}
    one = ports["Ethernet1"]
    assert one["pfc_rx_frames"]["3"] == 1204 and one["pfc_rx_frames"]["6"] == 5 and one["pfc_tx_frames"]["3"] == 57
    assert len(one["pfc_rx_frames"]) == 8 and "pfc_rx_frames_total" not in one
    assert one["ecn_marked"] == {"3": 81234} and one["ecn_marked_total"] == 81234  # '-' = not counting: left out
    assert one["queue_drops"]["3"] == 6 and one["queue_drops"]["0"] == 0  # unicast + multicast
    assert one["voq_drops"] == {"3": 4}
    assert one["watchdog_storms"]["3"] == 2 and one["watchdog_restores"]["3"] == 1 and one["watchdog_storms"]["6"] == 0
    assert one["in_discards"] == 7 and one["out_discards"] == 9
    two = ports["Ethernet2"]
    assert "ecn_marked" not in two and two["watchdog_storms"] == {str(q): 0 for q in range(8)}  # absent = no event yet


def test_totals_only_without_a_per_priority_split_and_refused_commands_are_errors():
    outputs = dict(OUTPUTS)
    outputs[PFC] = json.dumps({"interfaceCounters": {"Ethernet1": {"rxFrames": 1204, "txFrames": 57}}})
    outputs[DROPS] = "% Invalid input (at token 3: 'queue')"
    del outputs[QUEUE]
    ports, errors = eos.Driver.parse_counters(outputs)
    assert ports["Ethernet1"]["pfc_rx_frames_total"] == 1204 and "pfc_rx_frames" not in ports["Ethernet1"]
    assert errors == {DROPS: "% Invalid input (at token 3: 'queue')"}
    assert "queue_drops" not in ports["Ethernet1"] and "voq_drops" not in ports["Ethernet1"]


def test_egress_sums_of_the_drops_command_stand_in_for_the_detail_command():
    outputs = dict(OUTPUTS)
    del outputs[QUEUE]
    ports, _errors = eos.Driver.parse_counters(outputs)
    assert ports["Ethernet1"]["queue_drops"] == {"3": 6}


def test_snapshot_selection_on_parsed_ports():
    ports, _errors = eos.Driver.parse_counters(OUTPUTS)
    snap = _snapshot.snapshot("leaf1", "eos", _snapshot.select(ports, ["Ethernet1"], [3]), OUTPUTS)
    assert list(snap["ports"]) == ["Ethernet1"] and snap["ports"]["Ethernet1"]["pfc_rx_frames"] == {"3": 1204}
    assert "cnp_packets" in snap["not_available"] and "voq_drops" not in snap["not_available"]


class _FakeEos(eos.Driver):
    def __init__(self):
        super().__init__(None, "leaf1")
        self.sent = []

    def _run(self, commands, state, what):
        self.sent.append(list(commands))
        return [OUTPUTS[c] for c in commands]


def test_read_counters_is_one_round_trip():
    driver = _FakeEos()
    outputs = driver.read_counters(eos.Driver.counter_commands())
    assert len(driver.sent) == 1 and outputs == OUTPUTS
