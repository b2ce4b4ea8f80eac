# SPDX-License-Identifier: GPL-3.0-or-later
"""EOS 'show interfaces status' text: every column layout EOS prints (issue 32), read from real captures
(ntc-templates' arista_eos tests, fixtures/eos/SOURCES.md), and refusals of what is not one of them."""
from __future__ import annotations

import pathlib

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos

HERE = pathlib.Path(__file__).parent
EOS_FIXTURES = HERE / "fixtures" / "eos"
LINK_FIXTURES = HERE.parent / "fixtures" / "links"
LLDP, STATUS = eos.Driver.LINK_COMMANDS
NO_LLDP = "Interface Ethernet1 detected 0 LLDP neighbors:\n"


def status(text: str) -> dict:
    ends = eos.Driver.parse_links({LLDP[: -len(" | json")]: NO_LLDP, STATUS[: -len(" | json")]: text})
    return {port: (end["oper"], end["speed"]) for port, end in ends.items() if end["oper"] is not None}


def test_the_seven_column_layout_of_older_releases():
    got = status((LINK_FIXTURES / "eos_interfaces_status_ntc.txt").read_text())
    assert got["Ethernet3/1/1"] == ("up", "40G")  # Name 'I am a 40G port !! Hi', Speed 'a-40G'
    assert got["Ethernet3/2/2"] == ("down", None)  # errdisabled, Name 'I am a 10G port'
    assert got["Ethernet3/1/4"] == ("down", None)  # inactive, unconf


def test_the_flags_and_encapsulation_columns_of_current_eos():
    got = status((EOS_FIXTURES / "ntc_show_interfaces_status_encap.txt").read_text())
    assert got == {f"Ethernet{i}": ("up", "1G") for i in range(1, 8)}  # Ma1 is no link end


def test_the_flags_column_and_unaligned_rows():
    got = status((EOS_FIXTURES / "ntc_show_interfaces_status_flags.txt").read_text())
    # 'Et49 Core: drxx.yul01 notconnect in Po49 full 10G Not Present': single-spaced, a member of Po49
    assert got == {"Ethernet1": ("down", None), "Ethernet2": ("down", None), "Ethernet3": ("down", None),
                   "Ethernet49": ("down", None), "Ethernet52": ("up", "10G")}


def test_port_channel_members_and_names_with_parentheses():
    got = status((EOS_FIXTURES / "ntc_show_interfaces_status_port_channel.txt").read_text())
    assert got == {"Ethernet1": ("down", None), "Ethernet47": ("down", None), "Ethernet49": ("down", None),
                   "Ethernet52": ("up", "10G")}


def test_a_name_holding_a_status_word_does_not_shift_the_columns():
    text = ("Port       Name                Status       Vlan     Duplex Speed  Type            Flags Encapsulation\n"
            "Et1        connected to gpu1   notconnect   routed   full   400G   400GBASE-CR8\n")
    assert status(text) == {"Ethernet1": ("down", None)}


@pytest.mark.parametrize("header", [
    "Port       Name   Status       Vlan     Duplex Speed  Type            Encapsulation",
    "Port       Name   Status       Vlan     Duplex Speed  Type            Flags Encapsulation Mode",
    "Port       Status       Vlan     Duplex Speed  Type",
])
def test_an_unknown_layout_is_refused_with_the_known_ones(header):
    with pytest.raises(_base.LinkFormError) as err:
        status(header + "\nEt1               connected    1        full   1G     EbraTestPhyPort\n")
    assert "Flags Encapsulation" in str(err.value) and header.split()[-1] in str(err.value)


def test_a_row_not_of_the_table_form_is_refused():
    text = ("Port       Name   Status       Vlan     Duplex Speed  Type            Flags Encapsulation\n"
            "Et1               up           1        full   1G     EbraTestPhyPort\n")
    with pytest.raises(_base.LinkFormError) as err:
        status(text)
    assert "Et1 up 1 full 1G" in str(err.value)
