# SPDX-License-Identifier: GPL-3.0-or-later
"""_nic: parsers of real tool output shapes (reference host-ib-k8s a.1, a.2,
a.6, a.8), plan validation, NIC discovery and selection, the wanted values."""

from __future__ import annotations

import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "nic")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def lab_plan(**roce):
    intent = {"name": "t", "transport": "roce", "roce": roce}
    device = {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_1", "netdev": "eth3", "speed": "400G"}]}
    return _plan.build_plan(intent, {"gpu1": device})["devices"]["gpu1"]


# ---------------------------------------------------------------------------
# parsers
# ---------------------------------------------------------------------------


def test_mlnx_qos_trust_dscp_with_map_buffer_and_tcs():
    qos = _nic.parse_mlnx_qos(fixture("mlnx_qos_dscp.txt"))
    assert qos["trust"] == "dscp"
    assert qos["dcbx"] == "os"
    assert qos["dscp_map"] == {d: d >> 3 for d in range(64)}  # the firmware default d>>3
    assert qos["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert qos["buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert qos["cable_len"] == 7
    assert qos["tcs"][0] == {"ratelimit": "unlimited", "tsa": "vendor", "bw": None, "priorities": [1]}
    assert qos["tcs"][3]["tsa"] == "ets" and qos["tcs"][3]["bw"] == 50
    assert qos["tcs"][6]["tsa"] == "strict"
    assert qos["warnings"] and "lldpad" in qos["warnings"][0]


def test_mlnx_qos_trust_pcp_prints_no_map():
    qos = _nic.parse_mlnx_qos(fixture("mlnx_qos_pcp.txt"))
    assert qos["trust"] == "pcp" and qos["dscp_map"] is None and qos["dcbx"] == "firmware"
    assert qos["pfc"] == [0] * 8


def test_mlnx_qos_map_wraps_every_eight_values():
    text = (
        "Priority trust state: dscp\ndscp2prio mapping:\n\tprio:0 dscp:07,06,05,04,03,02,01,00,\n"
        "\t\tprio:0 dscp:15,14,13,12,11,10,09,08,\n\tprio:3 dscp:26,\n"
    )
    assert _nic.parse_mlnx_qos(text)["dscp_map"] == {**{d: 0 for d in range(16)}, 26: 3}


def test_dcb_pfc_show_man_page_shape():
    text = "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n"
    assert _nic.parse_dcb_pfc(text) == {"pfc": [0, 0, 0, 1, 0, 0, 0, 0], "pfc_cap": 8, "delay": 0}


def test_dcb_pfc_show_rejects_garbage():
    with pytest.raises(_nic.NicError, match="cannot read '3:maybe'"):
        _nic.parse_dcb_pfc("prio-pfc 3:maybe\n")


@pytest.mark.parametrize(
    "text, table",
    [
        ("dscp-prio 24:3 26:3 48:6\n", {24: [3], 26: [3], 48: [6]}),
        ("dscp-prio CS3:3 AF31:3 CS6:6 EF:5\n", {24: [3], 26: [3], 48: [6], 46: [5]}),
        ("dscp-prio 26:3 26:5\n", {26: [3, 5]}),
        ("", {}),
    ],
    ids=["numeric", "symbolic", "two-priorities", "empty"],
)
def test_dcb_app_show(text, table):
    assert _nic.parse_dcb_app(text) == table


def test_ethtool_stats_and_counters_shape():
    stats = _nic.parse_ethtool_stats(fixture("ethtool_S.txt"))
    assert stats["rx_prio3_pause"] == 1204 and stats["ch0_arm"] == 5
    counters = _nic.nic_counters(stats, {"rp_cnp_handled": 88, "out_of_sequence": 0}, [3, 6])
    assert counters["pfc_rx_frames"] == {"3": 1204}
    assert counters["pfc_tx_duration"] == {"3": 12}
    assert counters["rx_prio_packets"] == {"3": 1792000, "6": 4410}
    assert counters["rx_prio_marked"] == {"3": 17}
    assert counters["rx_discards_phy"] == 0 and counters["link_down_events_phy"] == 1
    assert counters["rp_cnp_handled"] == 88 and counters["out_of_sequence"] == 0
    assert "ch0_arm" not in counters  # only the counters the reference lists


def test_ethtool_pause():
    text = "Pause parameters for eth2:\nAutonegotiate:\ton\nRX:\t\toff\nTX:\t\ton\nRX negotiated: off\n"
    assert _nic.parse_ethtool_pause(text) == {"autoneg": "on", "rx": "off", "tx": "on"}


@pytest.mark.parametrize("text, value", [("Global tclass=106", 106), ("106", 106), ("Global tclass=-1", None), (None, None), ("", None)])
def test_traffic_class(text, value):
    assert _nic.parse_traffic_class(text) == value


def test_mlxconfig_query_four_columns():
    params = _nic.parse_mlxconfig(fixture("mlxconfig_e_q.txt"))
    assert sorted(params) == ["CNP_DSCP_P1", "LINK_TYPE_P1", "ROCE_CC_PRIO_MASK_P1", "ROCE_CONTROL"]
    assert params["ROCE_CC_PRIO_MASK_P1"] == {"default": "255", "current": "255", "next": "8"}
    assert params["LINK_TYPE_P1"]["next"] == "ETH(2)"


@pytest.mark.parametrize("have, want, same", [("ETH(2)", "2", True), ("ETH(2)", "ETH", True), ("True(1)", "1", True), ("255", "8", False), (None, "1", False)])
def test_firmware_values_compare_by_name_or_number(have, want, same):
    assert _nic.fw_value_matches(have, want) is same


# ---------------------------------------------------------------------------
# plan validation and wanted values
# ---------------------------------------------------------------------------


def test_wanted_from_the_lab_plan():
    want = _nic.wanted(lab_plan())
    assert want["trust"] == "dscp"
    assert len(want["dscp_map"]) == 64 and want["dscp_map"][26] == 3 and want["dscp_map"][48] == 6 and want["dscp_map"][24] == 0
    assert want["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert want["dcqcn"] == {"np": {"3": 1}, "rp": {"3": 1}}
    assert want["cnp"] == {"dscp": 48, "priority": 6}
    assert want["traffic_class"] == 106 and want["rdma_cm_tos"] == 106 and want["roce_mode"] == "RoCE v2"
    assert want["global_pause"] == {"autoneg": "off", "rx": "off", "tx": "off"}
    assert want["mtu"] == 9000


def test_wanted_dcqcn_disabled_turns_it_off_on_the_lossless_priorities():
    assert _nic.wanted(lab_plan(dcqcn={"enabled": False}))["dcqcn"] == {"np": {"3": 0}, "rp": {"3": 0}}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda p: p.update(pfc_priorities=[3, 9]), "plan.pfc_priorities[1]: 9 is not a priority (0-7)"),
        (lambda p: p["cnp"].update(dscp=64), "plan.cnp.dscp: 64 is not a DSCP (0-63)"),
        (lambda p: p["dscp_map"].update({"26": 8}), "plan.dscp_map[26]: 8 is not a priority"),
        (lambda p: p.update(roce_mode="RoCE v3"), "plan.roce_mode: 'RoCE v3'"),
        (lambda p: p.update(mtu="9000"), "plan.mtu: '9000' is not an MTU"),
        (lambda p: p.pop("cnp"), "plan.cnp: missing"),
        (lambda p: p.update(transport="infiniband"), "needs the plan of a RoCE host"),
    ],
)
def test_validate_plan_names_key_and_value(mutate, message):
    plan = lab_plan()
    mutate(plan)
    with pytest.raises(_nic.NicError) as err:
        _nic.validate_plan(plan)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "firmware, message",
    [
        ({"roce_cc": 1}, "'roce_cc' is not an nvconfig parameter name"),
        ({"ROCE_CC_PRIO_MASK_P1": "8; reboot"}, "firmware.ROCE_CC_PRIO_MASK_P1: '8; reboot'"),
        ({"ROCE_CC_PRIO_MASK_P1": "8\nreboot"}, "is not a value mlxconfig takes"),
        ({"ROCE_CC_PRIO_MASK_P1": True}, "is not a value mlxconfig takes"),
    ],
)
def test_firmware_values_that_could_carry_a_command_are_refused(firmware, message):
    with pytest.raises(_nic.NicError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _nic.validate_firmware(firmware)


# ---------------------------------------------------------------------------
# discovery and selection (a minimal sysfs tree)
# ---------------------------------------------------------------------------


def sysfs(tmp_path, nics):
    root = tmp_path / "root"
    for name, netdev, pci, device in nics:
        pci_dir = root / "sys/devices/pci0000:00" / pci
        (pci_dir / "net" / netdev).mkdir(parents=True)
        (pci_dir / "vendor").write_text("0x15b3\n")
        (pci_dir / "device").write_text("0x%s\n" % device)
        ib = root / "sys/class/infiniband" / name
        ib.mkdir(parents=True)
        os.symlink(os.path.relpath(pci_dir, ib), ib / "device")
    return _nic.Fs(str(root))


def test_discover_maps_rdma_device_netdev_pci_and_ids(tmp_path):
    fs = sysfs(tmp_path, [("mlx5_0", "ens1f0np0", "0000:3b:00.0", "1021"), ("mlx5_1", "ens1f1np1", "0000:3b:00.1", "101d")])
    found = _nic.discover(fs)
    assert [(n["name"], n["netdev"], n["pci"], n["vendor"], n["device"]) for n in found] == [
        ("mlx5_0", "ens1f0np0", "0000:3b:00.0", "15b3", "1021"),
        ("mlx5_1", "ens1f1np1", "0000:3b:00.1", "15b3", "101d"),
    ]


def test_select_by_name_netdev_and_pci_ids(tmp_path):
    found = _nic.discover(sysfs(tmp_path, [("mlx5_0", "eth2", "0000:3b:00.0", "1021"), ("mlx5_1", "eth3", "0000:3c:00.0", "101d")]))
    plan_nics = [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}]
    assert [n["name"] for n in _nic.select(found, plan_nics)] == ["mlx5_0", "mlx5_1"]
    assert [n["name"] for n in _nic.select(found, plan_nics, names=["eth3"])] == ["mlx5_1"]
    assert [n["name"] for n in _nic.select(found, plan_nics, pci_ids=["15b3:101d"])] == ["mlx5_1"]
    assert [n["name"] for n in _nic.select(found, plan_nics, pci_ids=["0x15B3"])] == ["mlx5_0", "mlx5_1"]


@pytest.mark.parametrize(
    "kwargs, plan_nics, message",
    [
        ({"names": ["mlx5_9"]}, [], "nics[0]: 'mlx5_9' is not an RDMA NIC on this host (found: mlx5_0 (eth2, 15b3:1021))"),
        ({"names": ["eth2\nreboot"]}, [], "is not an RDMA device or interface name"),
        ({}, [{"name": "mlx5_0", "netdev": "eth5"}], "the plan gives mlx5_0 netdev 'eth5', but sysfs maps it to 'eth2'"),
        ({"pci_ids": ["15b3:101d"]}, [], "pci_ids: no RDMA NIC matches 15b3:101d"),
        ({"pci_ids": ["mellanox"]}, [], "pci_ids[0]: 'mellanox' is not a PCI ID"),
    ],
    ids=["unknown-nic", "newline", "netdev-mismatch", "no-pci-match", "bad-pci-id"],
)
def test_select_refuses(tmp_path, kwargs, plan_nics, message):
    found = _nic.discover(sysfs(tmp_path, [("mlx5_0", "eth2", "0000:3b:00.0", "1021")]))
    with pytest.raises(_nic.NicError) as err:
        _nic.select(found, plan_nics, **kwargs)
    assert message in str(err.value)


def test_action_text_is_shell_safe():
    assert _nic.Action("write", path="/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode", value="RoCE v2").text() == (
        "echo 'RoCE v2' > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode"
    )
    assert _nic.Action("run", argv=["ethtool", "-A", "eth2", "rx", "off"], also_ok=80).text() == "ethtool -A eth2 rx off || test $? -eq 80"


def test_restore_wanted_turns_a_gathered_before_back_into_wanted_values():
    before = {"trust": "dscp", "dscp_map": {"26": 3, "48": 6}, "pfc": [0, 0, 0, 1, 0, 0, 0, 0], "cnp": {"dscp": 48, "priority": None},
              "traffic_class": None, "mtu": 9000}
    want, cannot = _nic.restore_wanted(before, "upstream")
    assert want == {"trust": "dscp", "dscp_map": {26: 3, 48: 6}, "pfc": [0, 0, 0, 1, 0, 0, 0, 0], "cnp": {"dscp": 48, "priority": None}, "mtu": 9000}
    assert cannot == [{"setting": "traffic_class", "reason": "not readable when gathered: no earlier value to put back"}]


def test_restore_wanted_says_what_a_snapshot_cannot_bring_back():
    # mlnx under trust pcp: mlnx_qos shows no map
    want, cannot = _nic.restore_wanted({"trust": "pcp", "dscp_map": None}, "mlnx")
    assert want == {"trust": "pcp"} and cannot[0]["setting"] == "dscp_map" and "trust pcp" in cannot[0]["reason"]
    # upstream, empty APP table: restored as an empty table
    assert _nic.restore_wanted({"trust": "pcp", "dscp_map": None}, "upstream") == ({"trust": "pcp", "dscp_map": {}}, [])
    # upstream, a DSCP with two APP entries has no single priority
    want, cannot = _nic.restore_wanted({"dscp_map": {"26": 3, "27": None}}, "upstream")
    assert want == {"dscp_map": {26: 3}} and "DSCP 27 had several APP entries" in cannot[0]["reason"]


@pytest.mark.parametrize(
    "snapshot, message",
    [
        ({"nics": {"mlx5_0": {"netdev": "eth2", "stack": "mlnx", "before": {"trust": "dscp; reboot"}}}}, "before.trust: 'dscp; reboot' is not pcp or dscp"),
        ({"mlx5_0": {"netdev": "eth2", "stack": "mlnx", "before": {"cnp": {"dscp": 64, "priority": 6}}}}, "before.cnp.dscp: 64 is not a DSCP"),
        ({"mlx5_0": {"netdev": "eth2", "stack": "other", "before": {}}}, "restore.nics.mlx5_0.stack: 'other'"),
        ({"mlx5_0": {"netdev": "eth2", "stack": "mlnx"}}, "restore.nics.mlx5_0: 'dict' has no before"),
        ({"mlx5 0": {"netdev": "eth2", "stack": "mlnx", "before": {}}}, "restore.nics: 'mlx5 0' is not an RDMA device name"),
        ({"mlx5_0": {"netdev": "eth2", "stack": "mlnx", "before": {"dcqcn": {"np": {"3": 2}, "rp": {}}}}}, "before.dcqcn.np[3]: 2"),
        ([], "restore: 'list' is not an earlier nic_qos result"),
    ],
)
def test_validate_snapshot_names_the_key_and_the_value(snapshot, message):
    with pytest.raises(_nic.NicError) as err:
        _nic.validate_snapshot(snapshot)
    assert message in str(err.value)
