# SPDX-License-Identifier: GPL-3.0-or-later
"""The NX-OS link and counter readers (_platforms/nxos/_show.py) on real published NX-OS outputs
(fixtures/nxos/SOURCES.md), exact values, and every refusal."""

from __future__ import annotations

import inspect
import pathlib
import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _show as _nxos_show

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "nxos"
LLDP, STATUS = _nxos_show.LLDP, _nxos_show.STATUS
DETAIL, SUMMARY = _nxos_show.PFC_DETAIL, _nxos_show.PFC_SUMMARY
Q51 = "show queuing interface Ethernet1/51"


def fixture(name):
    return (FIXTURES / name).read_text()


def test_the_readers_keep_the_base_driver_signatures():
    for name in ("link_commands", "parse_links", "counter_commands", "parse_counters"):
        assert list(inspect.signature(getattr(_nxos_show, name)).parameters) == list(inspect.signature(getattr(_base.Driver, name)).parameters)


# --- links ---------------------------------------------------------------------------------------


def test_link_commands():
    assert _nxos_show.link_commands(["Ethernet1/1"]) == ["show lldp neighbors detail", "show interface status"]
    assert _nxos_show.link_commands(None) == _nxos_show.link_commands(["Ethernet1/1"])


def test_links_from_published_lldp_and_status():
    ends = _nxos_show.parse_links({LLDP: fixture("show_lldp_neighbors_detail_ntc1.txt"), STATUS: fixture("show_interface_status_ntc_tunnel.txt")})
    # 'Local Port id: Eth1/1' and the status table's 'Eth1/1' are one port, spelled as the configuration does
    assert ends["Ethernet1/1"] == {
        "oper": "up",
        "speed": "10G",  # 'a-10G': autonegotiated 10G
        "width": None,
        "neighbors": [
            {"system": "n9k2.company.com", "port": "Ethernet1/1", "port_id_subtype": None, "port_descr": "Ethernet1/1", "chassis_id": "5087.89a1.d8d6"}
        ],
    }
    assert ends["mgmt0"]["speed"] == "1G" and ends["mgmt0"]["neighbors"][0]["system"] == "Switch.cisco.com"  # 'a-1000' is Mb/s
    assert ends["Ethernet1/3"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}  # disabled
    # a neighbour on a port the status table does not list: its oper state is not known
    assert ends["Ethernet2/2"]["oper"] is None and ends["Ethernet2/2"]["neighbors"][0]["port"] == "Ethernet1/49"
    # the tunnel table after the blank line has other columns and is not read
    assert not [port for port in ends if port.startswith("Tunnel")]


def test_lldp_not_advertised_and_a_fex_port():
    ends = _nxos_show.parse_links({LLDP: fixture("show_lldp_neighbors_detail_ntc2.txt")})
    assert ends["Ethernet101/1/10"]["neighbors"] == [
        {"system": "pure-storage", "port": "1a51.4800.0001", "port_id_subtype": None, "port_descr": "eth0", "chassis_id": "24a9.3700.0001"}
    ]
    assert ends["Ethernet1/52"]["neighbors"][0]["system"] == "SW-NEXUS"


def test_status_forms_of_several_releases():
    ntc = _nxos_show.parse_links({LLDP: "Total entries displayed: 0", STATUS: fixture("show_interface_status_ntc.txt")})
    assert ntc["Ethernet1/3"]["oper"] == "down"  # xcvrAbsen
    assert ntc["mgmt0"] == {"oper": "up", "speed": None, "width": None, "neighbors": []}  # 100 Mb/s: below the contract's whole G
    ntc3 = _nxos_show.parse_links({LLDP: "Total entries displayed: 0", STATUS: fixture("show_interface_status_ntc3.txt")})
    assert ntc3["Ethernet1/1"]["oper"] == "up" and ntc3["Ethernet1/1"]["speed"] == "10G"  # a name that runs into Status
    assert ntc3["Ethernet1/9"]["oper"] == "down"  # channelDo
    assert ntc3["Ethernet1/39"]["speed"] == "10G"  # a quoted name, a type with spaces
    tab = _nxos_show.parse_links({LLDP: "Total entries displayed: 0", STATUS: fixture("show_interface_status_ntc1.txt")})
    assert tab["Ethernet1/1"] == {"oper": "up", "speed": "10G", "width": None, "neighbors": []}  # a tab in the name
    genie = _nxos_show.parse_links({LLDP: "Total entries displayed: 0", STATUS: fixture("show_interface_status_genie4.txt")})
    assert genie["Ethernet1/3"]["oper"] == "up" and genie["Ethernet1/4"]["oper"] == "down"  # 'bil-bca-ds01, Eth1'; sfpAbsent


def test_an_unknown_status_word_is_not_guessed():
    text = fixture("show_interface_status_ntc1.txt").replace("Eth1/8        interface8\t connected", "Eth1/8        interface8\t fooStatus")
    ends = _nxos_show.parse_links({LLDP: "Total entries displayed: 0", STATUS: text})
    assert ends["Ethernet1/8"] == {"oper": None, "speed": None, "width": None, "neighbors": []}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "% Invalid command at '^' marker.",
        fixture("show_lldp_neighbors_detail_ntc1.txt"),  # another command's output
        (FIXTURES.parent / "sonic" / "show_interfaces_status.txt").read_text(),  # another platform's output
    ],
)
def test_status_refuses_what_it_does_not_read(text):
    with pytest.raises(_base.LinkFormError, match=r"^nxos: 'show interface status': not a form this parser reads; expected the table under 'Port  Name"):
        _nxos_show.parse_links({LLDP: fixture("show_lldp_neighbors_detail_ntc1.txt"), STATUS: text})


def test_status_refuses_a_row_it_does_not_read():
    text = fixture("show_interface_status_ntc1.txt") + "Eth1/9        half a row\n"
    with pytest.raises(_base.LinkFormError, match="a row it does not read: 'Eth1/9        half a row'"):
        _nxos_show.parse_links({LLDP: "Total entries displayed: 0", STATUS: text})


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "expected 'Chassis id:' blocks"),
        ("% Invalid command at '^' marker.", "expected 'Chassis id:' blocks"),
        (fixture("show_interface_status_ntc.txt"), "expected 'Chassis id:' blocks"),  # another command's output
        (fixture("show_lldp_neighbors_detail_ntc1.txt").split("Local Port id: Eth2/2")[0], r"without 'Local Port id:': cut short\?"),
        (re.sub(r"Chassis id: 5087.89a1.d8d7.*?Vlan ID: 1\n", "", fixture("show_lldp_neighbors_detail_ntc1.txt"), flags=re.S), "it says 4 entries and shows 3"),
        ((FIXTURES.parent / "sonic" / "show_lldp_table.txt").read_text(), "expected 'Chassis id:' blocks"),  # another platform's output
        (fixture("show_lldp_neighbors_detail_ntc2.txt").split("Local Port id: Eth101/1/10")[0], r"without 'Local Port id:': cut short\?"),
        ("Port id: Ethernet1/1\nLocal Port id: Eth1/1\n", "before any 'Chassis id:'"),
    ],
)
def test_lldp_refuses_what_it_does_not_read(text, why):
    with pytest.raises(_base.LinkFormError, match=r"^nxos: 'show lldp neighbors detail': not a form this parser reads; .*" + why):
        _nxos_show.parse_links({LLDP: text, STATUS: fixture("show_interface_status_ntc1.txt")})


def test_links_need_the_lldp_output():
    with pytest.raises(_base.LinkFormError, match="the command was not run"):
        _nxos_show.parse_links({STATUS: fixture("show_interface_status_ntc1.txt")})


def test_no_neighbours_is_an_empty_list_not_an_error():
    header = fixture("show_lldp_neighbors_detail_ntc1.txt").split("Chassis id:")[0] + "Total entries displayed: 0\n"
    ends = _nxos_show.parse_links({LLDP: header, STATUS: fixture("show_interface_status_ntc1.txt")})
    assert all(end["neighbors"] == [] for end in ends.values()) and len(ends) == 9  # mgmt0, Eth1/1..8


# --- counters ------------------------------------------------------------------------------------


def test_counter_commands_per_port():
    assert _nxos_show.counter_commands(["Ethernet1/51", "Ethernet1/1/2"]) == [
        "show interface priority-flow-control detail",
        "show queuing interface Ethernet1/51",
        "show queuing interface Ethernet1/1/2",
    ]


@pytest.mark.parametrize("ports, why", [(None, "give the ports"), ([], "give the ports"), (["Eth1/1"], "'Eth1/1' is not an NX-OS"),
                                        (["swp1"], "'swp1'"), (["Ethernet1/1; reload"], "not an NX-OS"), ([7], "7 is not")])
def test_counter_commands_refuse_other_names(ports, why):
    with pytest.raises(ValueError, match="^ports: .*" + why):
        _nxos_show.counter_commands(ports)


def test_pfc_detail_per_priority():
    ports, errors = _nxos_show.parse_counters({DETAIL: fixture("show_interface_priority-flow-control_detail.txt")})
    assert errors == {}
    assert sorted(ports) == ["Ethernet1/51", "Ethernet1/52", "Ethernet1/53", "Ethernet1/54"]
    assert ports["Ethernet1/51"] == {"pfc_rx_frames": {str(p): 0 for p in range(8)}, "pfc_tx_frames": {**{str(p): 0 for p in range(8)}, "5": 150}}
    assert ports["Ethernet1/52"]["pfc_tx_frames"]["5"] == 143 and ports["Ethernet1/53"]["pfc_tx_frames"]["5"] == 101
    assert ports["Ethernet1/54"]["pfc_tx_frames"]["5"] == 4


@pytest.mark.parametrize(
    "name, values",
    [
        ("show_interface_priority-flow-control_ucs_fi.txt", {"Ethernet1/2": (2, 0), "Ethernet1/1/1": (0, 0), "Vethernet9547": (0, 0)}),
        ("show_interface_priority-flow-control_ucs_fi_2.txt", {"Br-Ethernet1/17/1": (373112640, 5422273), "Ethernet7/1/33": (0, 0)}),
        ("show_interface_priority-flow-control_n5k.txt", {"Ethernet1/47": (7316, 762946), "Ethernet1/48": (7428, 761362), "Ethernet4/16": (0, 0)}),
    ],
)
def test_pfc_summary_gives_totals_only(name, values):
    ports, errors = _nxos_show.parse_counters({SUMMARY: fixture(name)})
    assert errors == {}
    for port, (rx, tx) in values.items():
        assert ports[port] == {"pfc_rx_frames_total": rx, "pfc_tx_frames_total": tx}


def test_queuing_egress_queue_drops_unicast():
    ports, errors = _nxos_show.parse_counters({Q51: fixture("show_queuing_interface_e1_51_qos_group_5.txt")})
    assert errors == {}
    # QOS GROUP 6's header only: nothing for 6; Tx Pkts / Tx Byts: what queue 5 transmitted (Unicast column)
    assert ports == {"Ethernet1/51": {"queue_drops": {"5": 0}, "queue_tx_packets": {"5": 202328436}, "queue_tx_bytes": {"5": 203884632744}}}


def test_queuing_pfc_statistics_per_cos():
    ports, errors = _nxos_show.parse_counters({Q51: fixture("show_queuing_interface_e1_51_ingress.txt")})
    assert errors == {}
    assert ports["Ethernet1/51"] == {"pfc_tx_frames": {**{str(c): 0 for c in range(8)}, "5": 150}, "pfc_rx_frames": {str(c): 0 for c in range(8)}}


def test_pfc_detail_wins_over_the_queuing_table():
    detail = fixture("show_interface_priority-flow-control_detail.txt").replace("|150          |", "|151          |")
    ports, errors = _nxos_show.parse_counters({Q51: fixture("show_queuing_interface_e1_51_ingress.txt"), DETAIL: detail})
    assert errors == {} and ports["Ethernet1/51"]["pfc_tx_frames"]["5"] == 151


def test_one_snapshot_and_what_nxos_does_not_print_is_not_available():
    outputs = {
        DETAIL: fixture("show_interface_priority-flow-control_detail.txt"),
        Q51: fixture("show_queuing_interface_e1_51_qos_group_5.txt") + fixture("show_queuing_interface_e1_51_ingress.txt"),
    }
    ports, errors = _nxos_show.parse_counters(outputs)
    assert errors == {}
    assert ports["Ethernet1/51"]["queue_drops"] == {"5": 0} and ports["Ethernet1/51"]["pfc_tx_frames"]["5"] == 150
    snap = _snapshot.snapshot("leaf4", "nxos", _snapshot.select(ports, ["Ethernet1/51"], [3, 5]), outputs, "2026-01-01T00:00:00+00:00")
    assert snap["ports"]["Ethernet1/51"] == {"pfc_rx_frames": {"3": 0, "5": 0}, "pfc_tx_frames": {"3": 0, "5": 150}, "queue_drops": {"5": 0},
                                             "queue_tx_bytes": {"5": 203884632744}, "queue_tx_packets": {"5": 202328436}}
    for key in ("ecn_marked", "ecn_marked_total", "wred_drops", "watchdog_storms", "watchdog_status", "pfc_rx_frames_total"):
        assert key in snap["not_available"]
    assert not [key for port in ports.values() for key in port if key not in _snapshot.COUNTERS]


def test_counters_of_a_command_not_read_are_refused():
    ports, errors = _nxos_show.parse_counters({"show interface counters": "Port  InOctets\nEth1/1  1"})
    assert ports == {} and list(errors) == ["show interface counters"]
    assert errors["show interface counters"].startswith("nxos: not a counter command this parser reads")


@pytest.mark.parametrize(
    "command, text, why",
    [
        (DETAIL, "", "expected per-interface blocks"),
        (DETAIL, "% Invalid command at '^' marker.", "a line it does not read"),
        (DETAIL, fixture("show_interface_priority-flow-control_ucs_fi.txt"), "a line it does not read"),  # the summary form
        (DETAIL, fixture("show_interface_priority-flow-control_detail.txt").rsplit("    Tx  |", 1)[0], r"Ethernet1/54 has no Tx row: cut short\?"),
        (DETAIL, fixture("show_interface_priority-flow-control_detail.txt").replace("|150          |0            |0", "|150"), "a row it does not read"),
        (SUMMARY, "", "expected the table under 'Port  Mode Oper"),
        (SUMMARY, fixture("show_interface_priority-flow-control_detail.txt"), "expected the table under 'Port  Mode Oper"),
        (SUMMARY, fixture("show_interface_priority-flow-control_n5k.txt") + "Ethernet4/17       Auto Off           0\n", "a row it does not read"),
        (Q51, "", "expected the egress 'QOS GROUP <n>' tables"),
        (Q51, "% Invalid interface format at '^' marker.", "expected the egress 'QOS GROUP <n>' tables"),
        (Q51, fixture("show_interface_priority-flow-control_n5k.txt"), "expected the egress 'QOS GROUP <n>' tables"),
        (Q51, fixture("show_queuing_interface_e1_51_ingress.txt").replace("Ethernet1/51", "Ethernet1/52"), "it shows Ethernet1/52, not Ethernet1/51"),
        (Q51, fixture("show_queuing_interface_e1_51_ingress.txt").split("      6         0  Inactive")[0], "cut short"),
        (Q51, fixture("show_queuing_interface_e1_51_ingress.txt").replace("PFC_COS QOS_Group", "COS QOS Group PG"), "after 'PFC Statistics'"),
        (Q51, fixture("show_queuing_interface_e1_51_qos_group_5.txt").replace("|       202328436|", "|    n/a|"), "a QOS GROUP 5 row it does not read"),
    ],
)
def test_counters_refuse_a_form_they_do_not_read(command, text, why):
    ports, errors = _nxos_show.parse_counters({command: text})
    assert list(errors) == [command] and ports == {}
    assert errors[command].startswith("nxos: %r: expected" % command)
    assert re.search(why, errors[command]), errors[command]


def test_one_refused_command_keeps_the_others():
    ports, errors = _nxos_show.parse_counters({DETAIL: fixture("show_interface_priority-flow-control_detail.txt"), Q51: "% Invalid command"})
    assert list(errors) == [Q51] and ports["Ethernet1/51"]["pfc_tx_frames"]["5"] == 150


@pytest.mark.parametrize("text", ["%% this is not output of any known form\nfoo bar 1 2 3\n", ""])
def test_what_the_contract_suite_sends_is_refused(text):
    # test_contract.py feeds every driver's commands this text; the NX-OS driver delegates to these readers
    with pytest.raises(_base.LinkFormError) as caught:
        _nxos_show.parse_links({command: text for command in _nxos_show.link_commands(["Ethernet1/1"])})
    assert caught.value.platform == "nxos" and str(caught.value).startswith("nxos: ")
    commands = _nxos_show.counter_commands(["Ethernet1/1"])
    ports, errors = _nxos_show.parse_counters({command: text for command in commands})
    assert ports == {} and sorted(errors) == sorted(commands)
