# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-queue transmit counters (queue_tx_packets, queue_tx_bytes; issue 34): which egress queue carried the
traffic, read by each platform's counter reader from the vendor's own output. The outputs are the published
ones in fixtures/<platform> (SOURCES.md there names each source); the few lines written here say so."""

from __future__ import annotations

import io
import json
import pathlib

import textfsm

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _readers as eos_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _driver as junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _show as nxos_show
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _driver as sonic

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
TX = ("queue_tx_packets", "queue_tx_bytes")


def fixture(platform: str, name: str) -> str:
    return (FIXTURES / platform / name).read_text()


def test_the_names_are_per_queue_counters_of_the_snapshot():
    for name in TX:
        assert name in _snapshot.QUEUE_COUNTERS and name in _snapshot.INDEXED
    # a snapshot without them lists them as not available, never as 0
    snap = _snapshot.snapshot("sw1", "eos", {"Ethernet1": {"queue_drops": {"3": 0}}}, {}, "2026-01-01T00:00:00+00:00")
    assert set(TX) <= set(snap["not_available"])


def test_select_keeps_the_asked_queues_and_delta_moves_per_queue():
    pre = {"Ethernet1": {"queue_tx_packets": {"0": 5, "3": 100}, "queue_tx_bytes": {"0": 500, "3": 10000}}}
    post = {"Ethernet1": {"queue_tx_packets": {"0": 5, "3": 160}, "queue_tx_bytes": {"0": 500, "3": 16000}}}
    a = _snapshot.snapshot("sw1", "eos", _snapshot.select(pre, None, [3]), {}, "2026-01-01T00:00:00+00:00")
    b = _snapshot.snapshot("sw1", "eos", _snapshot.select(post, None, [0, 3]), {}, "2026-01-01T00:00:01+00:00")
    assert a["ports"]["Ethernet1"]["queue_tx_packets"] == {"3": 100}
    change = _snapshot.delta(b, a)
    assert change["ports"]["Ethernet1"] == {"queue_tx_packets": {"3": 60}, "queue_tx_bytes": {"3": 6000}}
    assert {"port": "Ethernet1", "counter": "queue_tx_packets", "index": "0"} in change["only_in_post"]
    # a cleared queue counter is a reset, its delta the post value
    cleared = _snapshot.snapshot("sw1", "eos", {"Ethernet1": {"queue_tx_packets": {"3": 7}}}, {}, "2026-01-01T00:00:02+00:00")
    again = _snapshot.delta(cleared, b)
    assert again["ports"]["Ethernet1"]["queue_tx_packets"] == {"3": 7}
    assert {"port": "Ethernet1", "counter": "queue_tx_packets", "index": "3", "pre": 160, "post": 7} in again["resets"]


# --- SONiC: scripts/queuestat (sonic-utilities tests/queue_counter_test.py show_queue_counters) -------------------


def test_sonic_counter_pkts_and_bytes_of_the_unicast_queues():
    ports, errors = sonic.Driver.parse_counters({"show queue counters": fixture("sonic", "show_queue_counters.txt")})
    assert errors == {}
    e0 = ports["Ethernet0"]
    assert e0["queue_tx_packets"]["1"] == 60 and e0["queue_tx_bytes"]["1"] == 43
    assert e0["queue_tx_packets"]["3"] == 52 and e0["queue_tx_bytes"]["3"] == 70
    assert ports["Ethernet4"]["queue_tx_packets"]["3"] == 60 and ports["Ethernet4"]["queue_tx_bytes"]["3"] == 89
    # MC10.. (multicast) and ALL20.. (N/A) rows: not a unicast queue, not read; never a 0 for N/A
    assert not [q for q in e0["queue_tx_packets"] if int(q) >= 10]


def test_sonic_a_queue_table_without_the_counter_columns_is_refused():
    text = ("     Port    TxQ    Drop/pkts    Drop/bytes\n"
            "---------  -----  -----------  ------------\n"
            "Ethernet0    UC3           19            76\n")
    ports, errors = sonic.Driver.parse_counters({"show queue counters": text})
    assert ports == {} and "Counter/pkts" in errors["show queue counters"]


# --- EOS: 'show interfaces counters queue detail' ----------------------------------------------------------------


def test_eos_jericho_text_outenqpkts_and_octets_per_traffic_class():
    """ntc-templates' real Jericho output (fixtures/eos SOURCES.md): OutEnqPkts / OutEnqOctets per TC."""
    ports = eos_readers.parse_counter_text("show interfaces counters queue detail", fixture("eos", "show_interfaces_counters_queue_detail_jericho.txt"))
    assert ports["Ethernet3/1/1"]["queue_tx_packets"] == {"1": 67521, "7": 633860}
    assert ports["Ethernet3/1/1"]["queue_tx_bytes"] == {"1": 7523778, "7": 72078388}


def test_eos_jericho_text_agrees_with_the_2018_ntc_template():
    """The judge: ntc-templates' template for this output (commit 7ac19cf12e89, templates/
    arista_eos_show_interfaces_counters_queue_detail_grep_egress.template, copied to fixtures/eos; no longer shipped
    in 9.3.0, so it is run here with textfsm) gives the same OUT_ENQ_PKTS / OUT_ENQ_OCTETS per port and TC."""
    template = fixture("eos", "ntc_7ac19cf_show_interfaces_counters_queue_detail_grep_egress.template")
    text = fixture("eos", "show_interfaces_counters_queue_detail_jericho.txt")
    fsm = textfsm.TextFSM(io.StringIO(template))
    records = [dict(zip(fsm.header, row)) for row in fsm.ParseText(text)]
    ours = eos_readers.parse_counter_text("show interfaces counters queue detail", text)
    want: dict = {}
    for rec in records:
        port = "Ethernet" + rec["PORT"][2:]
        tc = rec["TRAFFIC_CLASS"][2:]
        slot = want.setdefault(port, {"queue_tx_packets": {}, "queue_tx_bytes": {}})
        slot["queue_tx_packets"][tc] = slot["queue_tx_packets"].get(tc, 0) + int(rec["OUT_ENQ_PKTS"])
        slot["queue_tx_bytes"][tc] = slot["queue_tx_bytes"].get(tc, 0) + int(rec["OUT_ENQ_OCTETS"])
    assert records and {port: {k: ours[port][k] for k in TX} for port in ours} == want


def test_eos_strata_text_counter_columns_of_unicast_queues():
    ports = eos_readers.parse_counter_text("show interfaces counters queue detail",
                                           fixture("eos", "constructed_show_interfaces_counters_queue_detail_strata.txt"))
    for port, counters in ports.items():
        assert set(counters["queue_tx_packets"]) == set(counters["queue_drops"]), port  # UC queues only, as the drops


def test_eos_json_enqueued_leaves_summed_over_uc_mc_and_drop_precedences():
    doc = {"egressQueueCounters": {"interfaces": {"Ethernet1": {
        "ucastQueues": {"trafficClasses": {"TC3": {"dropPrecedences": {
            "DP0": {"enqueuedPackets": 100, "enqueuedBytes": 10000, "droppedPackets": 1, "droppedBytes": 0},
            "DP1": {"enqueuedPackets": 5, "enqueuedBytes": 500, "droppedPackets": 0, "droppedBytes": 0}}}}},
        "mcastQueues": {"trafficClasses": {"TC3": {"dropPrecedences": {
            "DP0": {"enqueuedPackets": 2, "enqueuedBytes": 200, "droppedPackets": 0, "droppedBytes": 0}}}}}}}}}
    ports, errors = eos.Driver.parse_counters({"show interfaces counters queue detail | json": json.dumps(doc)})
    assert errors == {}
    assert ports["Ethernet1"]["queue_tx_packets"] == {"3": 107} and ports["Ethernet1"]["queue_tx_bytes"] == {"3": 10700}
    assert ports["Ethernet1"]["queue_drops"] == {"3": 1}


def test_eos_json_without_enqueued_leaves_gives_no_tx_counter_not_a_zero():
    """ANTA's data for this command carries droppedPackets only: no queue_tx_* then (not available)."""
    anta = fixture("eos", "anta_show_interfaces_counters_queue_detail.json")
    ports, errors = eos.Driver.parse_counters({"show interfaces counters queue detail | json": anta})
    assert errors == {} and ports
    assert not [port for port, counters in ports.items() if set(TX) & set(counters)]


# --- NVUE: counters qos egress-queue-stats -------------------------------------------------------------------


def test_nvue_documented_table_tx_frames_and_bytes():
    command = "nv show interface swp1 counters qos egress-queue-stats -o json"
    ports, errors = nvue.Driver.parse_counters({command: fixture("nvue", "docs_counters_qos_egress_queue_stats.txt")})
    assert errors == {}
    assert ports["swp1"]["queue_tx_packets"] == {str(q): 0 for q in range(8)}
    assert ports["swp1"]["queue_tx_bytes"] == {str(q): 0 for q in range(8)}  # '0 Bytes'


def test_nvue_json_exact_and_text_humanised_bytes():
    command = "nv show interface swp1 counters qos egress-queue-stats -o json"
    doc = {"3": {"tx-frames": 5512009, "tx-bytes": 23010978201, "tx-uc-buffer-discards": 0, "wred-discards": 0}}
    ports, errors = nvue.Driver.parse_counters({command: json.dumps(doc)})
    assert errors == {} and ports["swp1"]["queue_tx_packets"] == {"3": 5512009} and ports["swp1"]["queue_tx_bytes"] == {"3": 23010978201}
    text = fixture("nvue", "docs_counters_qos_egress_queue_stats.txt").replace(
        "    3              0          0 Bytes ", "    3              812        1.50 KB ")
    ports, errors = nvue.Driver.parse_counters({command: text})
    assert errors == {} and ports["swp1"]["queue_tx_packets"]["3"] == 812 and ports["swp1"]["queue_tx_bytes"]["3"] == 1536


def test_nvue_an_egress_view_without_its_columns_is_refused():
    command = "nv show interface swp1 counters qos egress-queue-stats -o json"
    ports, errors = nvue.Driver.parse_counters({command: "queue  frames\n-----  ------\n3      10\n"})
    assert ports == {} and errors[command].startswith("nvue: %r: not a form this reader reads" % command)
    assert "tx-frames, tx-bytes" in errors[command] and "queue  frames" in errors[command]


# --- Junos: show interfaces queue <if> -------------------------------------------------------------------------


def test_junos_transmitted_packets_and_bytes_not_the_queued_ones():
    text = fixture("junos", "genie_show_interfaces_queue.txt")
    ports, errors = junos.Driver.parse_counters({"show interfaces queue ge-0/0/2": text})
    assert errors == {}
    assert ports["ge-0/0/2"]["queue_tx_packets"] == {"0": 1470816406, "1": 0, "2": 0, "3": 0, "4": 0}
    assert ports["ge-0/0/2"]["queue_tx_bytes"]["0"] == 564883280956
    # Transmitted, not Queued: a queue that queued more than it sent reports what it sent
    changed = text.replace("  Transmitted:\n    Packets              :            1470816406",
                           "  Transmitted:\n    Packets              :            1470816400", 1)
    ports, _errors = junos.Driver.parse_counters({"show interfaces queue ge-0/0/2": changed})
    assert ports["ge-0/0/2"]["queue_tx_packets"]["0"] == 1470816400


def test_junos_output_without_queue_blocks_is_refused():
    ports, errors = junos.Driver.parse_counters({"show interfaces queue ge-0/0/2": "Physical interface: ge-0/0/2, Enabled\n  Packets : 5\n"})
    assert ports == {} and "not a form this reader reads" in errors["show interfaces queue ge-0/0/2"]
    assert "'Transmitted:' Packets / Bytes" in errors["show interfaces queue ge-0/0/2"]


# --- NX-OS: show queuing interface <if> -------------------------------------------------------------------------


def test_nxos_tx_pkts_and_byts_unicast_per_qos_group():
    command = "show queuing interface Ethernet1/51"
    ports, errors = nxos_show.parse_counters({command: fixture("nxos", "show_queuing_interface_e1_51_qos_group_5.txt")})
    assert errors == {}
    assert ports["Ethernet1/51"]["queue_tx_packets"] == {"5": 202328436}
    assert ports["Ethernet1/51"]["queue_tx_bytes"] == {"5": 203884632744}


def test_nxos_a_qos_group_row_it_does_not_read_is_refused():
    command = "show queuing interface Ethernet1/51"
    text = fixture("nxos", "show_queuing_interface_e1_51_qos_group_5.txt").replace("|       202328436|", "|          lots  |")
    ports, errors = nxos_show.parse_counters({command: text})
    assert command in errors and "Tx Pkts" in errors[command]
