# SPDX-License-Identifier: GPL-3.0-or-later
"""switch_links parsers on real published output (fixtures/links/SOURCES.md), and their refusals."""

from __future__ import annotations

import json
import pathlib

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _driver as junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "links"
LLDP, STATUS = eos.Driver.LINK_COMMANDS


def text(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def eos_ends(lldp: str, status: str, lldp_cmd: str = LLDP, status_cmd: str = STATUS) -> dict:
    return eos.Driver.parse_links({lldp_cmd: lldp, status_cmd: status})


STATUS_JSON = text("eos_interfaces_status_notconnect.json")


# -- EOS --------------------------------------------------------------------
def test_eos_json_host_and_junos_peers():
    ends = eos_ends(text("eos_lldp_detail_napalm_issue1153.json"), STATUS_JSON)
    assert ends["Ethernet1/1"]["neighbors"] == [
        {"system": "some-server", "port": "1ce7.1003.5413", "port_id_subtype": "mac", "port_descr": "eth0", "chassis_id": "1ce7.1003.5413"}
    ]
    # an interface name EOS prints in quotes is reported without them
    assert ends["Ethernet27/1"]["neighbors"][0]["port"] == "et-0/0/20"
    assert ends["Ethernet27/1"]["neighbors"][0]["port_id_subtype"] == "ifname"
    assert ends["Ethernet23/1"]["neighbors"] == []
    assert ends["Ethernet23/1"]["oper"] is None  # not in the status output: the device did not say


def test_eos_json_interface_id_v2():
    ends = eos_ends(text("eos_lldp_detail_anta.json"), STATUS_JSON)
    assert ends["Ethernet2"]["neighbors"][0]["system"] == "DC1-SPINE2"
    assert ends["Ethernet2"]["neighbors"][0]["port"] == "Ethernet1"
    assert ends["Ethernet2"]["neighbors"][0]["port_descr"] == "P2P_LINK_TO_DC1-LEAF1A_Ethernet2"


def test_eos_status_json_speed_only_when_up():
    ends = eos_ends(text("eos_lldp_detail_anta.json"), STATUS_JSON)
    assert ends["Ethernet3"]["oper"] == "up" and ends["Ethernet3"]["speed"] == "1G"
    # notconnect still carries its configured bandwidth: not a negotiated speed
    assert ends["Ethernet8"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}


def test_eos_text_forms():
    ends = eos_ends(text("eos_lldp_detail_ntc.txt"), text("eos_interfaces_status_ntc.txt"), LLDP[:-7], STATUS[:-7])
    assert ends["Ethernet1"]["neighbors"] == [
        {"system": "spine2.company.com", "port": "Ethernet1", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": "2cc2.6081.eaf9"}
    ]
    # a Junos peer: its ifIndex as a locally assigned port ID, its interface name in the description
    assert ends["Ethernet23"]["neighbors"] == [
        {"system": "MX", "port": "527", "port_id_subtype": "local", "port_descr": "ge-1/1/1", "chassis_id": "3c8a.b089.9898"}
    ]
    assert ends["Ethernet5"]["neighbors"] == []
    assert ends["Ethernet3/1/1"]["oper"] == "up" and ends["Ethernet3/1/1"]["speed"] == "40G"
    assert ends["Ethernet3/2/1"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}
    assert ends["Ethernet3/2/2"]["oper"] == "down" and ends["Ethernet3/1/4"]["oper"] == "down"


@pytest.mark.parametrize(
    "lldp, status, words",
    [
        ('{"lldpNeighbors": [{"port": "Ethernet1", "neighborDevice": "x"}]}', STATUS_JSON, "lldpNeighbors' map"),  # the non-detail command
        ("% Invalid input", STATUS_JSON, "not an error"),
        ("Port Neighbor Device ID", STATUS_JSON, "detected <n> LLDP neighbors"),
        ('{"lldpNeighbors": {}}', '{"interfaces": {}}', "interfaceStatuses"),
        ('{"lldpNeighbors": {}}', "Port Status\nEt1 connected", "Port Name Status Vlan Duplex Speed Type"),
        ('{"lldpNeighbors": {}}', "", "Port Name Status"),
    ],
)
def test_eos_refuses_unknown_output(lldp, status, words):
    with pytest.raises(_base.LinkFormError) as info:
        eos_ends(lldp, status)
    assert str(info.value).startswith("eos: ") and words in str(info.value)


def test_eos_refuses_a_missing_command():
    with pytest.raises(_base.LinkFormError, match="eos: 'show interfaces status | json'"):
        eos.Driver.parse_links({LLDP: '{"lldpNeighbors": {}}'})


# -- NVUE -------------------------------------------------------------------
def test_nvue_interface_json():
    ends = nvue.Driver.parse_links({"nv show interface -o json": text("nvue_interface_capture.json")})
    assert ends["eth0"]["oper"] == "up" and ends["eth0"]["speed"] == "1G"
    assert ends["eth0"]["neighbors"] == [
        {"system": "rno1-m04-C10-leaf1.smn.lab1", "port": "Ethernet2", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": "fc:59:c0:3d:4c:cb"}
    ]
    assert ends["swp1"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}


def test_nvue_per_interface_lldp_json():
    lldp = json.loads(text("nvue_interface_capture.json"))["eth0"]["lldp"]
    ends = nvue.Driver.parse_links({"nv show interface -o json": text("nvue_interface_capture.json"), "nv show interface swp1 lldp -o json": json.dumps(lldp)})
    assert ends["swp1"]["neighbors"][0]["port"] == "Ethernet2"


@pytest.mark.parametrize(
    "out, words",
    [
        ("Interface  State  Speed\n---------  -----  -----\nswp1  up  1G\n", "nv show interface -o json"),
        ("Error: The requested item does not exist.", "nv show interface -o json"),
        ("{}", "interface name ->"),
        ('{"swp1": {"link": {"state": {"up": {}}}, "lldp": {"neighbor": ["x"]}}}', "lldp.neighbor"),
    ],
)
def test_nvue_refuses_unknown_output(out, words):
    with pytest.raises(_base.LinkFormError) as info:
        nvue.Driver.parse_links({"nv show interface -o json": out})
    assert str(info.value).startswith("nvue: ") and words in str(info.value)


# -- Junos ------------------------------------------------------------------
def test_junos_detail_xml_and_interface_text():
    ends = junos.Driver.parse_links({
        "show lldp neighbors interface ge-2/0/0 | display xml": text("junos_lldp_interface_napalm_ex9208.xml"),
        "show interfaces ge-2/0/0": text("junos_show_interfaces_ntc.txt"),
    })
    assert ends["ge-2/0/0"]["neighbors"] == [
        {"system": "EX9208", "port": "549", "port_id_subtype": "local", "port_descr": "ge-3/3/1", "chassis_id": "2c:21:31:a5:17:c0"}
    ]
    assert ends["ge-2/0/0"]["oper"] == "up" and ends["ge-2/0/0"]["speed"] == "10G"


def test_junos_brief_xml_without_port_id_and_rpc_reply_wrapper():
    wrapped = '<rpc-reply xmlns:junos="http://xml.juniper.net/junos/23.4R1/junos">\n%s\n</rpc-reply>' % text("junos_lldp_brief_napalm_missing_port_ids.xml")
    ends = junos.Driver.parse_links({"show lldp neighbors interface fe-0/0/2 | display xml": wrapped})
    assert ends["fe-0/0/2"]["neighbors"] == [
        {"system": "Meraki MX64", "port": None, "port_id_subtype": None, "port_descr": "lan port 0", "chassis_id": "0c:8d:db:63:62:00"}
    ]


def test_junos_down_link_has_no_speed():
    down = text("junos_show_interfaces_ntc.txt").replace("Physical link is Up", "Physical link is Down")
    ends = junos.Driver.parse_links({"show interfaces xe-0/1/0": down})
    assert ends["xe-0/1/0"]["oper"] == "down" and ends["xe-0/1/0"]["speed"] is None


@pytest.mark.parametrize(
    "command, out, words",
    [
        ("show interfaces et-0/0/1", "Interface  Admin Link Proto\net-0/0/1  up  up", "Physical link is Up|Down"),
        ("show interfaces et-0/0/1", "error: device et-0/0/1 not found", "not an error"),
        ("show lldp neighbors interface et-0/0/1 | display xml", "Local Interface    Parent Interface    Chassis Id", "display xml"),
        ("show lldp neighbors interface et-0/0/1 | display xml", "<interface-information/>", "lldp-neighbors-information"),
    ],
)
def test_junos_refuses_unknown_output(command, out, words):
    with pytest.raises(_base.LinkFormError) as info:
        junos.Driver.parse_links({command: out})
    assert str(info.value).startswith("junos: ") and words in str(info.value)


def test_junos_needs_ports():
    with pytest.raises(ValueError, match="ports"):
        junos.Driver.link_commands(None)
    assert junos.Driver.link_commands(["et-0/0/1"]) == ["show lldp neighbors interface et-0/0/1 | display xml", "show interfaces et-0/0/1"]


@pytest.mark.parametrize("value, want", [("400G", "400G"), ("a-40G", "40G"), ("100Gbps", "100G"), (400000000000, "400G"), ("1000mbps", "1G"),
                                         ("100M", None), ("auto", None), ("unconf", None), (None, None)])
def test_speed_g(value, want):
    assert _base.speed_g(value) == want


def test_nvue_text_table_from_nvidia_reference():
    ends = nvue.Driver.parse_links({"nv show interface": text("nvue_show_interface_nvidia.txt")})
    assert ends["eth0"]["oper"] == "up" and ends["eth0"]["speed"] == "1G"
    assert ends["eth0"]["neighbors"] == [{"system": "oob-mgmt-switch", "port": "swp10", "port_id_subtype": None, "port_descr": None, "chassis_id": None}]
    # NVUE shortened the server's MAC: not what the neighbour sent, so not reported as its port ID
    assert ends["swp1"]["neighbors"] == [{"system": "server01", "port": None, "port_id_subtype": None, "port_descr": None, "chassis_id": None}]
    assert ends["swp4"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}
    assert ends["BLUE"]["neighbors"] == [] and "127.0.0.1/8" not in ends


LLDP_TABLE = "Interface  Speed  Type  Remote Host      Remote Port\n---------  -----  ----  ---------------  ---\nswp1  1G  swp  server01  x\n"


def test_nvue_text_table_refuses_other_tables():
    with pytest.raises(_base.LinkFormError, match="nvue: 'nv show interface'"):
        nvue.Driver.parse_links({"nv show interface": LLDP_TABLE})


def test_junos_display_json_form():
    # Juniper's JSON rendering of the napalm EX9208 reply (leaf -> [{"data": value}]); no captured JSON sample: unverified
    doc = ('{"lldp-neighbors-information": [{"attributes": {"junos:style": "detail"}, "lldp-neighbor-information": [{'
           '"lldp-local-interface": [{"data": "ge-2/0/0"}], "lldp-remote-chassis-id": [{"data": "2c:21:31:a5:17:c0"}],'
           '"lldp-remote-port-id-subtype": [{"data": "Locally assigned"}], "lldp-remote-port-id": [{"data": "549"}],'
           '"lldp-remote-port-description": [{"data": "ge-3/3/1"}], "lldp-remote-system-name": [{"data": "EX9208"}]}]}]}')
    ends = junos.Driver.parse_links({"show lldp neighbors interface ge-2/0/0 | display json": doc})
    assert ends["ge-2/0/0"]["neighbors"] == [
        {"system": "EX9208", "port": "549", "port_id_subtype": "local", "port_descr": "ge-3/3/1", "chassis_id": "2c:21:31:a5:17:c0"}
    ]
    with pytest.raises(_base.LinkFormError, match="junos: .*lldp-neighbors-information"):
        junos.Driver.parse_links({"show lldp neighbors interface ge-2/0/0 | display json": '{"interface-information": []}'})
