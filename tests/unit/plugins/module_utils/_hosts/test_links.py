# SPDX-License-Identifier: GPL-3.0-or-later
"""host_links parsers on real published output (fixtures/host_links/SOURCES.md) and the task on a fake sysfs."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _links as hl

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "host_links")


def fixture(name: str) -> str:
    with open(os.path.join(FIX, name), encoding="utf-8") as handle:
        return handle.read()


# --- lldpctl -f json / json0 ---------------------------------------------------------


def test_json_one_interface_lldpd_test():
    got = hl.parse_lldpctl_json(fixture("lldpctl_json_lldpd_test.json"))
    assert got == {"eth0": [{"system": "ns-2.example.com", "port": "00:00:00:00:00:02", "port_id_subtype": "mac",
                             "port_descr": "eth1", "chassis_id": "00:00:00:00:00:02"}]}


def test_json0_same_neighbour_same_result():
    assert hl.parse_lldpctl_json(fixture("lldpctl_json0_lldpd_test.json")) == hl.parse_lldpctl_json(fixture("lldpctl_json_lldpd_test.json"))


def test_json_issue369_mgmt_ip_list():
    got = hl.parse_lldpctl_json(fixture("lldpctl_json_issue369.json"))
    assert got["ens1"][0]["system"] == "my-pc" and got["ens1"][0]["port_descr"] == "eth10"
    assert got["ens1"][0]["port_id_subtype"] == "mac"


def test_json_list_form_old_ttl_in_chassis():
    got = hl.parse_lldpctl_json(fixture("lldpctl_json_suzieq259_trimmed.json"))
    assert got == {"eth0": [{"system": "c6500-vxlan", "port": "Gi3/36", "port_id_subtype": "ifname",
                             "port_descr": "GigabitEthernet3/36", "chassis_id": "00:1c:0f:5f:c7:c0"}]}


def test_json0_gpu_host_five_nics_local_port_ids():
    got = hl.parse_lldpctl_json(fixture("lldpctl_json0_unifabric_gpu.json"))
    assert sorted(got) == ["ens108np0", "ens110np0", "ens1np0", "ens841np0", "ens842np0"]
    assert got["ens841np0"] == [{"system": "LEAF03", "port": "Ethernet184", "port_id_subtype": "local",
                                 "port_descr": "Ethernet184", "chassis_id": "70:06:92:6e:32:1c"}]


def test_json_several_interfaces_and_two_neighbours_on_one():
    # json_writer.c cleanup: several entries -> a list of {IF: {...}}; an interface repeats per neighbour.
    text = json.dumps({"lldp": {"interface": [
        {"eth2": {"via": "LLDP", "chassis": {"leaf1": {"id": {"type": "mac", "value": "44:38:39:00:00:01"}}},
                  "port": {"id": {"type": "ifname", "value": "swp1"}, "descr": "swp1"}}},
        {"eth2": {"via": "LLDP", "chassis": {"leaf9": {"id": {"type": "mac", "value": "44:38:39:00:00:09"}}},
                  "port": {"id": {"type": "ifname", "value": "swp9"}}}},
        {"eth3": {"via": "LLDP", "chassis": {"id": {"type": "mac", "value": "00:11:22:33:44:55"}},
                  "port": {"id": {"type": "local", "value": "526"}, "descr": "et-0/0/1"}}},
    ]}})
    got = hl.parse_lldpctl_json(text)
    assert [n["system"] for n in got["eth2"]] == ["leaf1", "leaf9"]
    assert got["eth3"] == [{"system": None, "port": "526", "port_id_subtype": "local", "port_descr": "et-0/0/1", "chassis_id": "00:11:22:33:44:55"}]


@pytest.mark.parametrize("text", ['{"lldp": {}}', '{"lldp": [{}]}'])
def test_json_no_neighbour(text):
    assert hl.parse_lldpctl_json(text) == {}


@pytest.mark.parametrize("text, words", [
    ("-------------------------------------------------------------------------------\nLLDP neighbors:\n", "not JSON"),
    ('{"lldp": {"neighbors": []}}', "'lldp' has neighbors"),
    ('{"lldp-interfaces": {}}', "not {'lldp'"),
    ('{"lldp": {"interface": {"eth0": {"foo": 1}}}}', "no chassis/port"),
    ('{"lldp": [{"interface": [{"via": "LLDP"}]}]}', "without a name"),
    ('{"lldp": {"interface": {"eth0": {"via": "LLDP", "chassis": {"a": {}, "b": {}}, "port": {}}}}}', "neither an 'id'"),
])
def test_json_refuses_unknown_forms(text, words):
    with pytest.raises(hl.HostLinksError) as err:
        hl.parse_lldpctl_json(text)
    assert words in str(err.value) and "lldpctl -f json" in str(err.value)


# --- lldptool ------------------------------------------------------------------------


def test_lldptool_real_listing():
    assert hl.parse_lldptool(fixture("lldptool_openlldp_issue39.txt"), "ens2f0") == [
        {"system": "HB1-BJ1-BigData-002", "port": "ens2f0", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": "70:57:bf:fa:ab:20"}]


def test_lldptool_no_neighbour_is_empty():
    assert hl.parse_lldptool("", "eth2") == []


def test_lldptool_refuses_single_tlv_query():
    with pytest.raises(hl.HostLinksError, match="not 'Chassis ID TLV'"):
        hl.parse_lldptool(fixture("lldptool_openlldp_issue39_mac.txt"), "ens2f0")


@pytest.mark.parametrize("text, words", [
    ("Device not found or inactive eth9\n", "Device not found or inactive"),
    ("Agent instance for device not found eth2\n", "Agent instance"),
    ("Chassis ID TLV\n\tMAC: 00:11:22:33:44:55\nPort ID TLV\n\tWeird: x\n", "Port ID 'Weird: x'"),
    ("\tMAC: 00:11:22:33:44:55\n", "before any TLV name"),
])
def test_lldptool_refuses(text, words):
    with pytest.raises(hl.HostLinksError, match="lldptool -t -n -i eth2") as err:
        hl.parse_lldptool(text, "eth2")
    assert words in str(err.value)


# --- sysfs ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [("400000\n", "400G"), ("25000", "25G"), ("2500", "2.5G"), ("-1", None), (None, None)])
def test_net_speed(text, want):
    assert hl.parse_net_speed(text, "eth2") == want


def test_operstate_and_refusal():
    assert hl.parse_operstate("up\n", "eth2") == "up"
    assert hl.parse_operstate("lowerlayerdown", "eth2") == "down"
    assert hl.parse_operstate("unknown", "eth2") is None
    with pytest.raises(hl.HostLinksError, match="operstate"):
        hl.parse_operstate("sideways", "eth2")


@pytest.mark.parametrize("text, want", [
    ("400 Gb/sec (4X NDR)\n", ("400G", "4X")),
    ("200 Gb/sec (2X NDR)", ("200G", "2X")),      # ibstatus paste of a ConnectX-7 on a split QM9700 port (docs/hosts.md)
    ("56 Gb/sec (4X FDR)", ("56G", "4X")),
    ("2.5 Gb/sec (1X SDR)", ("2.5G", "1X")),
    ("10 Gb/sec (4X)", ("10G", "4X")),            # SDR with the pre-NDR kernels' empty speed name
])
def test_ib_rate(text, want):
    assert hl.parse_ib_rate(text, "mlx5_0") == want


def test_ib_state_and_refusals():
    assert hl.parse_ib_state("4: ACTIVE\n", "mlx5_0") == "up"
    assert hl.parse_ib_state("1: DOWN", "mlx5_0") == "down"
    with pytest.raises(hl.HostLinksError, match="state"):
        hl.parse_ib_state("ACTIVE", "mlx5_0")
    with pytest.raises(hl.HostLinksError, match="rate"):
        hl.parse_ib_rate("400G", "mlx5_0")


# --- the task -------------------------------------------------------------------------


def _sys(files: dict):
    dirs: dict[str, list] = {}
    for path in files:
        parts = path.split("/")
        for i in range(1, len(parts)):
            dirs.setdefault("/".join(parts[:i]), set()).add(parts[i])
    return files.get, (lambda rel: sorted(dirs.get(rel, [])))


ETH = {
    "/sys/class/infiniband/mlx5_0/ports/1/link_layer": "Ethernet\n",
    "/sys/class/infiniband/mlx5_0/device/net/eth2/ifindex": "5\n",
    "/sys/class/net/eth2/operstate": "up\n", "/sys/class/net/eth2/speed": "400000\n", "/sys/class/net/eth2/address": "02:AA:bb:cc:dd:ee\n",
    "/sys/class/infiniband/mlx5_1/ports/1/link_layer": "Ethernet\n",
    "/sys/class/net/eth3/operstate": "down\n", "/sys/class/net/eth3/address": "02:00:00:00:00:03\n",
    "/sys/class/infiniband/mlx5_2/ports/1/link_layer": "InfiniBand\n",
    "/sys/class/infiniband/mlx5_2/ports/1/state": "4: ACTIVE\n", "/sys/class/infiniband/mlx5_2/ports/1/rate": "200 Gb/sec (4X HDR)\n",
    "/sys/class/infiniband/mlx5_2/device/net/ib0/ifindex": "7\n",
    "/sys/class/net/ib0/address": "00:00:10:29:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:01:00:01\n",  # IPoIB: 20 bytes, no MAC
}
NEIGHBOUR = {"lldp": {"interface": {"eth2": {"via": "LLDP", "chassis": {"leaf1": {"id": {"type": "mac", "value": "44:38:39:00:00:01"}}},
                                             "port": {"id": {"type": "ifname", "value": "swp1"}, "descr": "swp1"}}}}}


def test_task_lldpd_and_sysfs():
    read, read_dir = _sys(ETH)
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, json.dumps(NEIGHBOUR), ""

    result = hl.run_host_links({"nics": [{"name": "mlx5_0"}, {"name": "mlx5_1", "netdev": "eth3"}, {"name": "mlx5_2"}], "lldp": "lldpd"},
                               read, read_dir, run, lambda _n: "/usr/sbin/lldpctl")
    assert calls == [["lldpctl", "-f", "json", "eth2", "eth3"]]
    ends = result["ends"]
    assert ends["mlx5_0"] == {"oper": "up", "speed": "400G", "width": None, "self": {"netdev": "eth2", "mac": "02:aa:bb:cc:dd:ee"},
                              "neighbors": [{"system": "leaf1", "port": "swp1", "port_id_subtype": "ifname", "port_descr": "swp1",
                                             "chassis_id": "44:38:39:00:00:01"}]}
    assert ends["mlx5_1"]["oper"] == "down" and ends["mlx5_1"]["speed"] is None and ends["mlx5_1"]["neighbors"] == []
    assert ends["mlx5_2"] == {"oper": "up", "speed": "200G", "width": "4X", "neighbors": [], "self": {"netdev": "ib0", "mac": None}}
    assert result["lldp_source"] == "lldpd" and result["changed"] is False


def test_task_auto_picks_lldptool_then_none():
    read, read_dir = _sys(ETH)
    seen = []

    def run(argv):
        seen.append(argv)
        return 0, "", ""

    result = hl.run_host_links({"nics": [{"name": "mlx5_0"}], "lldp": "auto"}, read, read_dir, run, lambda n: n == "lldptool")
    assert result["lldp_source"] == "lldptool" and seen == [["lldptool", "-t", "-n", "-i", "eth2"]]
    result = hl.run_host_links({"nics": [{"name": "mlx5_0"}], "lldp": "auto"}, read, read_dir, run, lambda n: None)
    assert result["lldp_source"] == "none" and result["commands"] == []


def test_task_failing_lldpctl_names_the_command():
    read, read_dir = _sys(ETH)
    with pytest.raises(hl.HostLinksError, match=r"lldpctl -f json eth2 failed \(rc 1\): unable to connect"):
        hl.run_host_links({"nics": [{"name": "mlx5_0"}], "lldp": "lldpd"}, read, read_dir,
                          lambda argv: (1, "", "unable to connect to socket /run/lldpd.socket"), lambda n: "x")


@pytest.mark.parametrize("nics, words", [
    ([], "non-empty list"),
    ([{"netdev": "eth2"}], "needs a name"),
    ([{"name": "mlx5_0", "netdev": "eth2; reboot"}], "nics[0].netdev"),
    ([{"name": "mlx5_0"}, {"name": "mlx5_0"}], "listed twice"),
])
def test_task_bad_nics(nics, words):
    read, read_dir = _sys({})
    with pytest.raises(hl.HostLinksError) as err:
        hl.run_host_links({"nics": nics}, read, read_dir, lambda a: (0, "", ""), lambda n: None)
    assert words in str(err.value)
