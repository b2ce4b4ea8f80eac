# SPDX-License-Identifier: GPL-3.0-or-later
"""EOS counters from the text tables EOS prints without '| json' (what users paste).

The Jericho queue table is real output (fixtures/eos/SOURCES.md); the other
fixtures are built from the header lines and row patterns public parsers of
real switches key on, and say so in SOURCES.md."""

from __future__ import annotations

import json
import pathlib

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _readers as eos_readers

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "eos"
PFC, WATCHDOG, ECN, QUEUE, DROPS, DISCARDS = eos.Driver.COUNTER_COMMANDS


def _fixture(name):
    return (FIXTURES / name).read_text()


def test_jericho_queue_detail_real_output():
    ports = eos_readers.parse_counter_text(QUEUE, _fixture("show_interfaces_counters_queue_detail_jericho.txt"))
    assert len(ports) == 18  # every port row, Et names expanded
    assert ports["Ethernet4/2/1"]["queue_drops"] == {"7": 1}
    assert ports["Ethernet3/9/1"]["queue_drops"] == {"1": 0, "7": 0}
    assert "Et3/1/1" not in ports


def test_strata_queue_detail_reads_unicast_queues_only():
    ports = eos_readers.parse_counter_text(QUEUE, _fixture("constructed_show_interfaces_counters_queue_detail_strata.txt"))
    assert ports["Ethernet1/1"]["queue_drops"] == {"0": 0, "3": 5}  # MC0's drop is not a traffic class
    assert ports["Ethernet1/2"]["queue_drops"] == {"3": 0}


def test_pfc_totals_table_and_discards_table():
    pfc = eos_readers.parse_counter_text(PFC, _fixture("constructed_show_priority_flow_control_counters.txt"))
    assert pfc["Ethernet1/1"] == {"pfc_rx_frames_total": 1204, "pfc_tx_frames_total": 57}
    discards = eos_readers.parse_counter_text(DISCARDS, _fixture("constructed_show_interfaces_counters_discards.txt"))
    assert discards["Ethernet1/1"] == {"in_discards": 7, "out_discards": 9} and discards["Ethernet1/2"]["in_discards"] == 0


def test_ecn_per_interface_blocks():
    ports = eos_readers.parse_counter_text(ECN, _fixture("constructed_show_qos_interfaces_ecn_counters_queue.txt"))
    assert ports["Ethernet1/1"] == {"ecn_marked": {"0": 0, "3": 81234}, "ecn_marked_total": 81234}  # '-' left out
    assert ports["Ethernet1/2"]["ecn_marked"] == {"3": 0}


def test_parse_counters_takes_text_under_the_plain_command_and_json_together():
    outputs = {
        "show priority-flow-control counters": _fixture("constructed_show_priority_flow_control_counters.txt"),
        "show interfaces counters queue detail": _fixture("show_interfaces_counters_queue_detail_jericho.txt"),
        ECN: json.dumps({"intfQueueCounters": {"Ethernet1/1": {"queueCounters": {"3": "12"}}}}),
    }
    ports, errors = eos.Driver.parse_counters(outputs)
    assert errors == {}
    assert ports["Ethernet1/1"]["pfc_rx_frames_total"] == 1204 and ports["Ethernet1/1"]["ecn_marked"] == {"3": 12}
    assert ports["Ethernet4/4/1"]["queue_drops"] == {"7": 1}


@pytest.mark.parametrize(
    "command, text",
    [
        (PFC, "Port   Priority  RxPfc  TxPfc\nEt1    3         5      0\n"),  # a per-priority layout nobody has published
        (DISCARDS, "Interface  In  Out\nEt1  0  0\n"),
        (QUEUE, "Port TxQ Counter/pkts Counter/bytes Drop/pkts Drop/bytes\nEt1 UC3 1 2 3\n"),  # a short row
        (ECN, "Ethernet1\n   3   12   7\n"),
        (WATCHDOG, "Port   Queue  Stuck  Recovered\nEt1    3      2      1\n"),  # no text form sourced
        (DROPS, "anything"),
        (DISCARDS, ""),
        (QUEUE, "set interfaces et-0/0/0 unit 0\n"),
    ],
)
def test_unknown_text_is_refused_naming_eos_and_the_form(command, text):
    with pytest.raises(ValueError) as err:
        eos_readers.parse_counter_text(command, text)
    message = str(err.value)
    assert message.startswith("eos: ") and "| json" in message and command.replace(" | json", "") in message
    ports, errors = eos.Driver.parse_counters({command: text})
    assert ports == {} and errors[command] == message  # reported per command, never an empty success


def test_ruler_and_header_only_table_is_an_empty_table_not_an_error():
    ports = eos_readers.parse_counter_text(DISCARDS, "Port InDiscards OutDiscards\n---- ---------- -----------\n")
    assert ports == {}


def test_anta_json_documents_parse():
    """The JSON shapes in Arista's own ANTA unit tests (fixtures/eos/anta_*.json)."""
    outputs = {
        "show priority-flow-control counters | json": _fixture("anta_show_priority_flow_control_counters.json"),
        ECN: _fixture("anta_show_qos_interfaces_ecn_counters_queue.json"),
        QUEUE: _fixture("anta_show_interfaces_counters_queue_detail.json"),
        DROPS: _fixture("anta_show_interfaces_counters_queue_drops.json"),
        DISCARDS: _fixture("anta_show_interfaces_counters_discards.json"),
    }
    ports, errors = eos.Driver.parse_counters(outputs)
    assert errors == {}
    assert ports["Ethernet3/2/1"]["pfc_tx_frames_total"] == 2 and ports["Ethernet3/1/1"]["pfc_rx_frames_total"] == 1
    assert ports["Ethernet10/3/1"]["ecn_marked"] == {"0": 0, "1": 0, "2": 0}
    assert ports["Ethernet1"]["queue_drops"] == {"0": 0, "1": 0} and ports["Ethernet1"]["in_discards"] == 0
    assert ports["Ethernet48"]["voq_drops"] == {"0": 0, "1": 0}


def test_json_of_another_shape_is_refused_not_an_empty_success():
    ports, errors = eos.Driver.parse_counters({ECN: json.dumps({"interfaceCounters": {"Ethernet1": {"rxFrames": 1}}}), WATCHDOG: '{"interfaces": {}}'})
    assert "intfQueueCounters" in errors[ECN] and errors[ECN].startswith("eos: ")
    assert WATCHDOG not in errors  # no watchdog event yet: an empty map is a real answer (TAAC)
