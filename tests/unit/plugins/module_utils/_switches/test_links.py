# SPDX-License-Identifier: GPL-3.0-or-later
"""module_utils/_switches/_links.py: the task around the drivers' link readers (no device: connect is faked)."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _links as _switch_links

STATUS = '{"interfaceStatuses": {"Ethernet1/1": {"linkStatus": "connected", "bandwidth": 400000000000}}}'
LLDP = '{"lldpNeighbors": {"Ethernet1/1": {"lldpNeighborInfo": [{"systemName": "leaf1", "chassisId": "x", "neighborInterfaceInfo": ' \
    '{"interfaceIdType": "interfaceName", "interfaceId": "\\"swp31\\"", "interfaceDescription": "swp31"}}]}}}'


class _Conn:
    def disconnect(self):
        pass


@pytest.fixture
def fake_eos(monkeypatch):
    answers = {}

    def read(self, commands):
        return {command: answers[command] for command in commands}

    monkeypatch.setattr(_switch_links, "connect", lambda cls, device, args: _Conn())
    monkeypatch.setattr(eos.Driver, "prepare", lambda self: None)
    monkeypatch.setattr(eos.Driver, "read_counters", read)
    return answers


def test_reads_and_keeps_asked_ports(fake_eos):
    fake_eos.update({"show lldp neighbors detail | json": LLDP, "show interfaces status | json": STATUS})
    result = _switch_links.run({"platform": "eos", "host": "127.0.0.1", "ports": ["Ethernet1/1", "Ethernet2/1"]}, "spine1")
    assert result["changed"] is False and not result.get("failed")
    assert result["commands"] == ["show lldp neighbors detail | json", "show interfaces status | json"]
    assert result["ends"]["Ethernet1/1"]["neighbors"][0]["port"] == "swp31"
    assert result["ends"]["Ethernet1/1"]["speed"] == "400G"
    assert result["ends"]["Ethernet2/1"] == {"oper": None, "speed": None, "width": None, "neighbors": []}
    assert "Ethernet2/1" in result["warnings"][0]


def test_unknown_output_fails_naming_device_platform_command(fake_eos):
    fake_eos.update({"show lldp neighbors detail | json": "Port  Neighbor Device ID", "show interfaces status | json": STATUS})
    result = _switch_links.run({"platform": "eos", "host": "127.0.0.1"}, "spine1")
    assert result["failed"] and "ends" not in result
    assert result["msg"].startswith("spine1: eos: 'show lldp neighbors detail | json'")
    assert result["device_said"] == "Port  Neighbor Device ID"


def test_bad_input_fails_before_any_connection(monkeypatch):
    monkeypatch.setattr(_switch_links, "connect", lambda *a: pytest.fail("connected"))
    assert "platform" in _switch_links.run({"host": "h"}, "sw")["msg"]
    assert "ports" in _switch_links.run({"platform": "junos", "host": "h"}, "sw")["msg"]
    assert "not a Junos interface name" in _switch_links.run({"platform": "junos", "host": "h", "ports": ["et-0/0/1;reboot"]}, "sw")["msg"]


def test_fabric_mode_names_each_failed_switch(fake_eos):
    fake_eos.update({"show lldp neighbors detail | json": LLDP, "show interfaces status | json": STATUS})
    result = _switch_links.run_fabric({"spine1": {"platform": "eos", "host": "h"}, "leaf2": {"platform": "junos", "host": "h"}}, 4)
    assert result["switches"]["spine1"]["ends"]["Ethernet1/1"]["oper"] == "up"
    assert result["failed"] and "leaf2" in result["msg"]
