# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_intent/: helpers, derivations, plans, docs examples.

Per-rule validation tests live in test_intent_rules.py.
"""

from __future__ import annotations

import copy
import json
import os
import re

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _files as _ib_files
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _derive, _plan, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as _nccl_vocab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
DOC = os.path.join(ROOT, "docs", "intent.md")
KIB = 1024


def roce_fabric():
    intent = {
        "name": "lab",
        "transport": "roce",
        "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 180}]}},
    }
    devices = {
        "leaf1": {
            "kind": "switch",
            "platform": "eos",
            "ports": {
                "Ethernet10": {"speed": "100G", "cable_length_m": 40, "description": "uplink spine1"},
                "Ethernet2/1": {"speed": "400G"},
            },
        },
        "leaf2": {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1:0": {"speed": "200G", "cable_length_m": 100}}},
        "gpu1": {
            "kind": "host",
            "gpus": 8,
            "nics": [{"name": "mlx5_1", "netdev": "eth3", "speed": "400G"}, {"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}],
        },
        "gpu2": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]},
        "bastion": None,
    }
    return intent, devices


def ib_fabric():
    intent = {"name": "ib-lab", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}}}
    devices = {
        "sm1": {"kind": "subnet_manager", "role": "master"},
        "sm2": {"kind": "subnet_manager", "role": "standby"},
        "gpu1": {"kind": "host", "gpus": 4, "nics": [{"name": "mlx5_0", "speed": "400G", "guid": "0x0000000000100001"}]},
        "gpu2": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "ib0", "speed": "400G"}, {"name": "mlx5_1", "speed": "400G"}]},
    }
    return intent, devices


# --- parse helpers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (8, 8),
        ("8", 8),
        ("1K", 1024),
        ("1k", 1024),
        ("1M", 1024**2),
        ("1G", 1024**3),
        ("1GiB", 1024**3),
        ("16G", 16 * 1024**3),
        ("256M", 256 * 1024**2),
        (0, 0),
    ],
)
def test_parse_size(value, expected):
    assert _nccl_vocab.parse_size(value) == expected


@pytest.mark.parametrize("value", ["1T", "1GB", "1.5G", "-1", "", "G", True, 1.0, None, -8])
def test_parse_size_rejects(value):
    with pytest.raises(ValueError):
        _nccl_vocab.parse_size(value)


@pytest.mark.parametrize("value, expected", [("400G", 400), ("10G", 10), ("800G", 800), ("100g", 100)])
def test_parse_speed(value, expected):
    assert _derive.parse_speed(value) == expected


@pytest.mark.parametrize("value", ["3G", "400", 400, "400Gb", "1G", None])
def test_parse_speed_rejects(value):
    with pytest.raises(ValueError, match="is not a link speed"):
        _derive.parse_speed(value)


@pytest.mark.parametrize("dscp, tos", [(26, 106), (0, 2), (24, 98), (48, 194), (63, 254)])
def test_roce_tos(dscp, tos):
    assert _derive.roce_tos(dscp) == tos


@pytest.mark.parametrize("dscp", [-1, 64, True, "26"])
def test_roce_tos_rejects(dscp):
    with pytest.raises(ValueError):
        _derive.roce_tos(dscp)


# --- headroom: the worked table of switch reference 7.1 ------------------------------------------

WORKED = [
    (100, 5, 106, 124),
    (100, 40, 119, 137),
    (100, 100, 141, 159),
    (200, 5, 119, 137),
    (200, 40, 145, 163),
    (200, 100, 189, 207),
    (400, 5, 208, 226),
    (400, 40, 259, 277),
    (400, 100, 348, 366),
]


@pytest.mark.parametrize("speed, length, xoff_kib, size_kib", WORKED)
def test_headroom_worked_table(speed, length, xoff_kib, size_kib):
    result = _derive.headroom(speed, length, port_mtu=9100)
    assert result["xoff_bytes"] == xoff_kib * KIB
    assert result["xon_bytes"] == 18 * KIB
    assert result["size_bytes"] == size_kib * KIB


@pytest.mark.parametrize("speed, length, xoff_kib, size_kib", WORKED)
def test_headroom_worked_table_with_sonic_mac_phy(speed, length, xoff_kib, size_kib):
    # SONiC's ASIC table says 0.8 KB and the lua multiplies by 1024: 819 B gives the same table.
    result = _derive.headroom(speed, length, mac_phy_delay_bytes=819)
    assert (result["xoff_bytes"], result["size_bytes"]) == (xoff_kib * KIB, size_kib * KIB)


def test_headroom_intermediates_100g():
    result = _derive.headroom(100, 5)
    assert result["peer_response_bytes"] == 25216
    assert result["cable_bytes"] == 632  # 631.3 B round trip, rounded up for display
    assert result["worst_case_factor"] == 3
    assert result["cell_occupancy_percent"] == 300
    assert _derive.headroom(400, 5)["peer_response_bytes"] == 57920


def test_headroom_half_small_packets_follows_current_lua():
    # Reference says "about 108 KiB"; the byte-weighted blend gives 108 KiB and
    # sonic-swss #4757 adds 2 KiB compensation without a shared headroom pool.
    result = _derive.headroom(400, 40, small_packet_percent=50)
    assert result["xoff_bytes"] == 110 * KIB
    assert result["small_packet_compensated"] is True
    assert result["size_bytes"] == 128 * KIB
    shared = _derive.headroom(400, 40, small_packet_percent=50, shared_headroom_pool=True)
    assert shared["xoff_bytes"] == 108 * KIB
    assert shared["size_bytes"] == 18 * KIB


def test_headroom_zero_small_packets():
    # The lua's "by byte" share is 64 / mean packet size, 6.25 % even with no small packets:
    # occupancy 1.125 -> 1024 + 88022 x 1.125 -> 98 KiB, +2 KiB compensation.
    result = _derive.headroom(400, 40, small_packet_percent=0)
    assert result["cell_occupancy_percent"] == 113  # 112.5 rounded up for display
    assert result["xoff_bytes"] == 100 * KIB


def test_headroom_small_cell_factor_is_two():
    # Spectrum-1: 96 B cells -> ceil(2*96/97) = 2, as in the lua.
    result = _derive.headroom(100, 5, cell_bytes=96)
    assert result["worst_case_factor"] == 2
    assert result["xoff_bytes"] == _derive._ceil_kib(1024 + 2 * (9100 + 631.3131313131313 + 800 + 25216))


def test_headroom_eight_lane_and_extras():
    base = _derive.headroom(400, 5)
    eight = _derive.headroom(400, 5, eight_lane=True)
    assert eight["xon_bytes"] == 36 * KIB
    assert eight["size_bytes"] == _derive._ceil_kib(base["xoff_bytes"] + 36 * KIB + 9100)
    assert _derive.headroom(400, 5, xoff_extra_bytes=18 * KIB)["xoff_bytes"] == base["xoff_bytes"] + 18 * KIB
    tile = _derive.headroom(400, 5, tile_bytes=400 * 120 // 8)
    assert tile["xoff_bytes"] > base["xoff_bytes"]


def test_headroom_gearbox_counts_twice():
    assert _derive.headroom(100, 5, gearbox_bytes=1000)["propagation_bytes"] == _derive.headroom(100, 5)["propagation_bytes"] + 2000


@pytest.mark.parametrize("args", [(300, 5), (400, -1), (True, 5), (400, 5.5)])
def test_headroom_rejects(args):
    with pytest.raises(ValueError):
        _derive.headroom(*args)


def test_headroom_rejects_small_packet_percent():
    with pytest.raises(ValueError, match="small_packet_percent"):
        _derive.headroom(400, 5, small_packet_percent=101)


# --- ECN -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "speed, kmin, kmax",
    [(10, 15000, 150000), (25, 37500, 375000), (100, 150000, 1500000), (200, 300000, 3000000), (400, 600000, 6000000), (800, 1200000, 12000000)],
)
def test_ecn_defaults_scale_linearly(speed, kmin, kmax):
    assert _derive.ecn_defaults(speed, "eos") == {"min_threshold_bytes": kmin, "max_threshold_bytes": kmax, "max_probability_percent": 20}


def test_ecn_defaults_junos_has_no_byte_table():
    # Juniper publishes fill levels in percent of the queue buffer, not bytes per speed.
    with pytest.raises(ValueError, match=r"junos: no ECN byte defaults for 400G: .*55-90 %"):
        _derive.ecn_defaults(400, "junos")


def test_junos_plan_section_and_jvd_ecn_defaults():
    intent, devices = roce_fabric()
    leaf2 = _plan.build_plan(intent, devices)["devices"]["leaf2"]
    # JVD drop profile 55-90 % of the 12,000,000-byte queue buffer, drop-probability 100 %
    assert leaf2["ports"]["et-0/0/1:0"]["ecn"] == {"min_threshold_bytes": 6600000, "max_threshold_bytes": 10800000, "max_probability_percent": 100}
    junos = leaf2["junos"]
    assert junos["scheduling"] == "port" and junos["model"] is None and junos["dcbx"] == "no-auto-negotiation"
    assert junos["media_mtu"] == 9216
    assert junos["shared_buffer"] == {"ingress": {"lossless": 66, "lossless-headroom": 24, "lossy": 10}, "egress": {"lossless": 66, "lossy": 10}}
    # every queue a port uses gets a share; strict CNP queue capped at 5 %; the sum is 100
    assert junos["transmit_percent"] == {"0": 42, "3": 43, "6": 5, "7": 5, "8": 5}
    assert sum(junos["transmit_percent"].values()) == 100
    assert "junos" not in _plan.build_plan(intent, devices)["devices"]["leaf1"]


def test_junos_ets_groups():
    intent, devices = roce_fabric()
    devices["leaf2"].update(model="qfx5100")
    junos = _plan.build_plan(intent, devices)["devices"]["leaf2"]["junos"]
    assert junos["scheduling"] == "ets"
    assert junos["group_percent"] == {"unicast": 95, "mcast": 5}
    assert junos["transmit_percent"] == {"0": 45, "3": 45, "6": 5, "7": 5, "8": 100}


def test_junos_evo_model_renders_no_dcbx_by_default():
    intent, devices = roce_fabric()
    devices["leaf2"].update(model="qfx5240")
    junos = _plan.build_plan(intent, devices)["devices"]["leaf2"]["junos"]
    assert (junos["dcbx"], junos["scheduling"]) == ("auto", "port")


def test_explicit_mtu_kept_without_junos():
    intent, devices = roce_fabric()
    del devices["leaf2"]
    assert _plan.build_plan(intent, devices)["devices"]["leaf1"]["mtu"] == 9214


def test_ecn_defaults_rejects():
    with pytest.raises(ValueError):
        _derive.ecn_defaults(0, "eos")


def test_ecn_intent_values_override_per_port():
    intent, devices = roce_fabric()
    intent["roce"] = {"ecn": {"max_probability_percent": 5, "min_threshold_bytes": 100000}}
    plan = _plan.build_plan(intent, devices)
    port = plan["devices"]["leaf1"]["ports"]["Ethernet2/1"]
    assert port["ecn"] == {"min_threshold_bytes": 100000, "max_threshold_bytes": 6000000, "max_probability_percent": 5}


# --- IntentError -----------------------------------------------------------------------------------


def test_intent_error_lists_every_error():
    exc = _tables.IntentError(["a: one", "b: two"])
    assert isinstance(exc, ValueError)
    assert exc.errors == ["a: one", "b: two"]
    assert str(exc) == "a: one\nb: two"


def test_build_plan_raises_with_all_errors():
    intent, devices = roce_fabric()
    intent["roce"] = {"data": {"dscp": 64}, "cnp": {"priority": 9}}
    with pytest.raises(_tables.IntentError) as info:
        _plan.build_plan(intent, devices)
    assert len(info.value.errors) == 2
    assert "lossless_fabric.roce.data.dscp: 64 is not a DSCP (0-63)" in info.value.errors


def test_five_mistakes_give_five_errors():
    intent = {
        "name": "lab",
        "transport": "roce",
        "roce": {
            "pfc": {"priorities": [3, 9]},  # 1
            "mtu": {"host": True},  # 2
            "ecn": {"max_probability_percent": 0},  # 3
            "pcf": {},  # 4
        },
        "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": -1}]}},  # 5
    }
    errors, _warnings = _plan.validate(intent, {})
    assert len(errors) == 5, errors
    assert errors == [
        "lossless_fabric.roce.pcf: unknown key (did you mean 'pfc'?)",
        "lossless_fabric.roce.pfc.priorities[1]: 9 is not a priority (0-7)",
        "lossless_fabric.roce.ecn.max_probability_percent: 0 is not a percentage (1-100)",
        "lossless_fabric.roce.mtu.host: True is not a host MTU (1280-9216)",
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_busbw: -1 is not a positive bus bandwidth (GB/s > 0)",
    ]


def test_errors_across_intent_and_devices_at_once():
    intent, devices = roce_fabric()
    intent["roce"] = {"data": {"priority": 8}}
    devices["leaf1"]["ports"]["Ethernet1"] = {"speed": "3G"}
    devices["gpu1"]["gpus"] = 17
    devices["leaf2"]["platform"] = "junoss"
    errors = _plan.validate(intent, devices)[0]
    assert len(errors) == 4, errors
    assert "leaf1: lossless_fabric_device.ports[Ethernet1].speed: '3G' is not a link speed (one of 10G, 25G, 40G, 50G, 100G, 200G, 400G, 800G)" in errors
    assert "gpu1: lossless_fabric_device.gpus: 17 is not a GPU count (1-16)" in errors


# --- RoCE plan --------------------------------------------------------------------------------------


def test_roce_plan_switches():
    intent, devices = roce_fabric()
    plan = _plan.build_plan(intent, devices)
    assert sorted(plan["devices"]) == ["gpu1", "gpu2", "leaf1", "leaf2"]
    leaf1 = plan["devices"]["leaf1"]
    assert leaf1["platform"] == "eos"
    assert leaf1["trust"] == "dscp"
    assert leaf1["dscp_map"] == {"26": 3, "48": 6}
    assert leaf1["default_traffic_class"] == 0
    assert leaf1["traffic_classes"] == {
        "0": {"lossless": False, "ecn": False, "strict": False, "bandwidth_percent": 50},
        "3": {"lossless": True, "ecn": True, "strict": False, "bandwidth_percent": 50},
        "6": {"lossless": False, "ecn": False, "strict": True, "bandwidth_percent": None},
    }
    assert leaf1["pfc_priorities"] == [3]
    assert leaf1["cnp"] == {"dscp": 48, "priority": 6, "queue": 6, "strict": True}
    assert leaf1["ecn_queue"] == 3
    assert leaf1["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 400, "action": "drop"}
    # A Junos switch is in scope and mtu.switch is unset: every switch gets 9202, the largest
    # IP MTU a QFX takes (media MTU 9216 = IP MTU + 14-byte Ethernet header).
    assert leaf1["mtu"] == 9202
    # Natural interface order: Ethernet2/1 before Ethernet10.
    assert list(leaf1["ports"]) == ["Ethernet2/1", "Ethernet10"]
    assert leaf1["ports"]["Ethernet10"] == {
        "speed": "100G",
        "speed_gbps": 100,
        "cable_length_m": 40,
        "description": "uplink spine1",
        "pfc_priorities": [3],
        "ecn": {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "max_probability_percent": 20},
        "headroom": {"xoff_bytes": 119 * KIB, "xon_bytes": 18 * KIB, "size_bytes": 137 * KIB, "total_bytes": 137 * KIB},
    }
    # Port MTU in the plan is mtu.switch (9202 here, see above).
    assert leaf1["ports"]["Ethernet2/1"]["cable_length_m"] == 5
    assert leaf1["ports"]["Ethernet2/1"]["headroom"]["xoff_bytes"] == _derive.headroom(400, 5, port_mtu=9202)["xoff_bytes"]
    leaf2 = plan["devices"]["leaf2"]
    assert leaf2["platform"] == "junos"
    assert leaf2["ports"]["et-0/0/1:0"]["headroom"]["size_bytes"] == _derive.headroom(200, 100, port_mtu=9202)["size_bytes"]


def test_roce_plan_hosts_and_env():
    intent, devices = roce_fabric()
    plan = _plan.build_plan(intent, devices)
    gpu1 = plan["devices"]["gpu1"]
    assert gpu1 == {
        "kind": "host",
        "transport": "roce",
        "mode": "lossless",
        "trust": "dscp",
        "dscp_map": {"26": 3, "48": 6},
        "default_priority": 0,
        "pfc_priorities": [3],
        "pfc_bitmap": "0,0,0,1,0,0,0,0",
        "dcqcn": {"enabled": True, "priorities": [3]},
        "cnp": {"dscp": 48, "priority": 6},
        "rdma_cm_tos": 106,
        "traffic_class": 106,
        "roce_mode": "RoCE v2",
        "mtu": 9000,
        "gpus": 8,
        "nics": [
            {"name": "mlx5_1", "netdev": "eth3", "speed": "400G", "speed_gbps": 400, "guid": None, "vfs": 0, "vf_guids": [], "pci": None},
            {"name": "mlx5_0", "netdev": "eth2", "speed": "400G", "speed_gbps": 400, "guid": None, "vfs": 0, "vf_guids": [], "pci": None},
        ],
    }
    assert plan["nccl_env"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "106"}
    assert plan["warnings"] == []
    assert plan["summary"] == {
        "name": "lab",
        "transport": "roce",
        "switches": 2,
        "hosts": 2,
        "subnet_managers": 0,
        "nics": 3,
        "gpus": 16,
        "collective_targets": 1,
        "warnings": 0,
        "mode": "lossless",
        "ports": 3,
        "lossless_priorities": [3],
        "data_dscp": 26,
        "cnp_dscp": 48,
        "traffic_class": 106,
        "max_headroom_bytes": max(p["headroom"]["size_bytes"] for d in ("leaf1", "leaf2") for p in plan["devices"][d]["ports"].values()),
    }


def test_roce_normalized_intent_fills_defaults():
    intent, devices = roce_fabric()
    norm = _plan.build_plan(intent, devices)["intent"]
    assert set(norm) == {"name", "transport", "roce", "targets"}
    assert norm["roce"]["rdma_cm_tos"] == 106
    assert norm["roce"]["gid_index"] is None
    assert norm["roce"]["headroom"] == {
        "cell_bytes": 144,
        "small_packet_percent": 100,
        "lossless_mtu_bytes": 1024,
        "pipeline_latency_bytes": 18432,
        "mac_phy_delay_bytes": 800,
    }
    assert norm["targets"] == {
        "tolerance_percent": 5,
        "require_transport": "RoCE",
        "require_gdr": True,
        "collectives": {"all_reduce_perf": [{"min_size": 1024**3, "max_size": None, "min_busbw": 180}]},
        "node": [],
    }


def test_roce_custom_plan_two_lossless_priorities():
    intent, devices = roce_fabric()
    intent["roce"] = {
        "data": {"dscp": 24, "priority": 2},
        "cnp": {"dscp": 16, "priority": 3},
        "pfc": {"priorities": [4, 2]},
        "gid_index": 3,
        "dcqcn": {"enabled": False},
    }
    plan = _plan.build_plan(intent, devices)
    leaf = plan["devices"]["leaf1"]
    assert leaf["dscp_map"] == {"16": 3, "24": 2}
    assert leaf["pfc_priorities"] == [2, 4]
    # data class 2 takes the default 50 %; classes 0 and 4 split the rest; CNP class 3 is strict
    assert leaf["traffic_classes"]["4"] == {"lossless": True, "ecn": False, "strict": False, "bandwidth_percent": 25}
    assert leaf["traffic_classes"]["2"] == {"lossless": True, "ecn": True, "strict": False, "bandwidth_percent": 50}
    assert leaf["traffic_classes"]["0"]["bandwidth_percent"] == 25
    assert leaf["traffic_classes"]["3"] == {"lossless": False, "ecn": False, "strict": True, "bandwidth_percent": None}
    assert leaf["ports"]["Ethernet10"]["headroom"]["total_bytes"] == 2 * leaf["ports"]["Ethernet10"]["headroom"]["size_bytes"]
    host = plan["devices"]["gpu2"]
    assert host["pfc_bitmap"] == "0,0,1,0,1,0,0,0"
    assert host["dcqcn"] == {"enabled": False, "priorities": []}
    assert host["traffic_class"] == 98
    assert plan["nccl_env"] == {"NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "98"}


def test_nccl_env_roce_without_hosts_has_no_hca():
    intent, devices = roce_fabric()
    devices = {k: v for k, v in devices.items() if k.startswith("leaf")}
    assert _plan.build_plan(intent, devices)["nccl_env"] == {"NCCL_IB_TC": "106"}


def test_devices_none_is_an_empty_fabric():
    intent = roce_fabric()[0]
    plan = _plan.build_plan(intent, None)
    assert plan["devices"] == {}
    assert plan["summary"]["max_headroom_bytes"] == 0


# --- InfiniBand plan --------------------------------------------------------------------------------


def test_ib_plan():
    intent, devices = ib_fabric()
    plan = _plan.build_plan(intent, devices)
    assert plan["warnings"] == []
    sm1, sm2 = plan["devices"]["sm1"], plan["devices"]["sm2"]
    assert sm1["sm_priority"] == 14 and sm2["sm_priority"] == 1
    assert sm1["opensm_conf"] == {
        "lmc": "0",
        "partition_config_file": "/etc/opensm/partitions.conf",
        "qos": "TRUE",
        "qos_ca_sl2vl": "0,1,2,3,4,5,6,7,7,7,7,7,7,7,7,7",
        "qos_high_limit": "255",
        "qos_max_vls": "8",
        "qos_policy_file": "/etc/opensm/qos-policy.conf",
        "qos_swe_sl2vl": "0,1,2,3,4,5,6,7,7,7,7,7,7,7,7,7",
        "qos_vlarb_high": "0:64,3:64",
        "qos_vlarb_low": "0:64,1:64,2:64,3:64,4:64,5:64,6:64,7:64",
        "routing_engine": "minhop",
        "sm_priority": "14",
    }
    assert sm2["opensm_conf"]["sm_priority"] == "1"
    assert sm1["partitions_conf"] == (
        "# lossless.fabric: partitions of fabric ib-lab; generated, do not edit\n"
        "Default=0x7fff, ipoib : ALL=full ;\n"
        "gpu=0x8001, ipoib, mtu=5, sl=3, defmember=limited : ALL_CAS=full, SELF=full ;\n"
    )
    assert sm1["qos_policy_conf"] == (
        "# lossless.fabric: QoS policy of fabric ib-lab; generated, do not edit\n"
        "qos-levels\n"
        "    qos-level\n        name: DEFAULT\n        sl: 0\n    end-qos-level\n"
        "    qos-level\n        name: rdma\n        sl: 3\n    end-qos-level\n"
        "end-qos-levels\n\n"
        "qos-match-rules\n"
        "    qos-match-rule\n        use: partition gpu\n        pkey: 0x8001\n        qos-level-name: rdma\n    end-qos-match-rule\n"
        "end-qos-match-rules\n"
    )
    assert sm1["root_guids_conf"] == ""
    assert plan["devices"]["gpu1"] == {
        "kind": "host",
        "transport": "infiniband",
        "service_level": 3,
        "partition": "gpu",
        "pkey": "0x8001",
        "gpus": 4,
        "nics": [{"name": "mlx5_0", "netdev": None, "speed": "400G", "speed_gbps": 400, "guid": "0x0000000000100001", "vfs": 0, "vf_guids": [], "pci": None}],
    }
    assert plan["nccl_env"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_SL": "3"}
    assert plan["summary"] == {
        "name": "ib-lab",
        "transport": "infiniband",
        "switches": 0,
        "hosts": 2,
        "subnet_managers": 2,
        "nics": 3,
        "gpus": 12,
        "collective_targets": 0,
        "warnings": 0,
        "partitions": 1,
        "compute_partition": "gpu",
        "service_level": 3,
        "routing_engine": "minhop",
    }
    assert plan["intent"]["targets"]["require_transport"] == "IB"
    assert "roce" not in plan["intent"]


def test_ib_partitions_members_and_default_rule():
    intent, devices = ib_fabric()
    intent["infiniband"].update(
        {
            "partitions": [
                {
                    "name": "Default",
                    "pkey": 0x7FFF,
                    "ipoib": True,
                    "mtu": None,
                    "default_membership": "full",
                    "members": ["ALL", {"keyword": "SELF", "membership": "full"}],
                },
                {
                    "name": "storage",
                    "pkey": "0x8002",
                    "ipoib": False,
                    "mtu": 2048,
                    "rate": 7,
                    "qos_level": "storage",
                    "members": ["0x0000000000100001", {"guid": "0x00000000001000AB", "membership": "both"}],
                },
            ],
            "qos": {"levels": [{"name": "DEFAULT", "sl": 0}, {"name": "storage", "sl": 1}]},
            "compute_partition": "storage",
            "sm": {"routing_engine": ["updn", "minhop"], "root_guids": ["0x0002C90300000001"]},
        }
    )
    plan = _plan.build_plan(intent, devices)
    sm = plan["devices"]["sm1"]
    assert sm["partitions_conf"].splitlines()[1:] == [
        "Default=0x7fff, ipoib, defmember=full : ALL=full, SELF=full ;",
        "storage=0x8002, mtu=4, rate=7, defmember=limited : 0x0000000000100001=limited, 0x00000000001000ab=both ;",
    ]
    assert "qos-level-name: DEFAULT" in sm["qos_policy_conf"]
    assert "pkey: 0x7fff" in sm["qos_policy_conf"]
    assert sm["opensm_conf"]["root_guid_file"] == "/etc/opensm/root-guids.conf"
    assert sm["root_guids_conf"] == "0x0002c90300000001\n"
    assert sm["opensm_conf"]["routing_engine"] == "updn,minhop"
    # storage has no sl of its own: NCCL_IB_SL comes from its QoS level.
    assert plan["nccl_env"]["NCCL_IB_SL"] == "1"
    assert plan["warnings"] == []


def test_ib_compute_partition_defaults_to_first():
    intent, devices = ib_fabric()
    intent["infiniband"]["partitions"] = [
        {"name": "p1", "pkey": 2, "sl": 5, "members": ["ALL_CAS"]},
        {"name": "p2", "pkey": 3, "members": ["ALL_CAS"]},
    ]
    plan = _plan.build_plan(intent, devices)
    assert plan["intent"]["infiniband"]["compute_partition"] == "p1"
    # QoS is on: the policy matches p1's pkey to the default level, whose SL the SA answers with
    assert plan["nccl_env"]["NCCL_IB_SL"] == "0"
    assert any("partitions[0].sl: 5 differs from qos_level 'default' sl 0" in w for w in plan["warnings"])
    intent["infiniband"]["qos"] = {"enabled": False}
    assert _plan.build_plan(intent, devices)["nccl_env"]["NCCL_IB_SL"] == "5"


def test_ib_no_partitions_no_sl():
    intent, devices = ib_fabric()
    intent["infiniband"]["partitions"] = []
    plan = _plan.build_plan(intent, devices)
    assert "NCCL_IB_SL" not in plan["nccl_env"]
    assert plan["devices"]["sm1"]["partitions_conf"].splitlines()[1:] == ["Default=0x7fff, ipoib : ALL=full ;"]


# --- determinism and serialisation --------------------------------------------------------------


@pytest.mark.parametrize("fabric", [roce_fabric, ib_fabric])
def test_plan_is_deterministic_and_json_clean(fabric):
    intent, devices = fabric()
    first = _plan.build_plan(copy.deepcopy(intent), copy.deepcopy(devices))
    reordered = dict(reversed(list(copy.deepcopy(devices).items())))
    second = _plan.build_plan(copy.deepcopy(intent), reordered)
    dumped = json.dumps(first, sort_keys=False)
    assert dumped == json.dumps(second, sort_keys=False)
    assert json.loads(dumped) == first

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                assert isinstance(key, str)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        else:
            assert not isinstance(node, float), node
            assert node is None or isinstance(node, (str, int, bool))

    walk(first)


def test_build_plan_does_not_mutate_inputs():
    intent, devices = roce_fabric()
    before = copy.deepcopy((intent, devices))
    _plan.build_plan(intent, devices)
    assert (intent, devices) == before


# --- docs/intent.md examples ------------------------------------------------------------------------


def doc_examples():
    with open(DOC, encoding="utf-8") as handle:
        blocks = re.findall(r"```yaml\n(.*?)```", handle.read(), flags=re.S)
    examples = []
    for block in blocks:
        data = yaml.safe_load(block)
        if "lossless_fabric" in data:
            examples.append((data["lossless_fabric"], {}))
        else:
            devices = examples[-1][1]
            devices[f"{data['lossless_fabric_device']['kind']}{len(devices)}"] = data["lossless_fabric_device"]
    return examples


def test_docs_have_two_examples_covering_every_kind():
    examples = doc_examples()
    assert [intent["transport"] for intent, _devices in examples] == ["roce", "infiniband"]
    assert {d["kind"] for d in examples[0][1].values()} == {"switch", "host"}
    assert {d["kind"] for d in examples[1][1].values()} == {"subnet_manager", "host"}


@pytest.mark.parametrize("index", [0, 1])
def test_docs_examples_validate(index):
    intent, devices = doc_examples()[index]
    errors, warnings = _plan.validate(intent, devices)
    assert errors == []
    assert warnings == []
    plan = _plan.build_plan(intent, devices)
    assert plan["nccl_env"]["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1"


def test_docs_example_claims():
    roce, ib = doc_examples()
    plan = _plan.build_plan(*roce)
    port = plan["devices"]["switch0"]["ports"]["Ethernet1/1"]["headroom"]
    assert (port["xoff_bytes"], port["xon_bytes"]) == (205 * KIB, 18 * KIB)
    assert plan["nccl_env"]["NCCL_IB_TC"] == "106"
    plan = _plan.build_plan(*ib)
    sm = next(p for p in plan["devices"].values() if p["kind"] == "subnet_manager")
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    for line in sm["partitions_conf"].splitlines()[1:]:
        assert line in text
    assert plan["nccl_env"]["NCCL_IB_SL"] == "3"


def test_ib_qos_defaults_follow_max_vls():
    intent, devices = ib_fabric()
    intent["infiniband"]["qos"] = {"max_vls": 2}
    conf = _plan.build_plan(intent, devices)["devices"]["sm1"]["opensm_conf"]
    assert conf["qos_ca_sl2vl"] == "0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"
    assert conf["qos_vlarb_high"] == "0:64"
    assert conf["qos_vlarb_low"] == "0:64,1:64"


def test_ib_qos_disabled_still_plans_files():
    intent, devices = ib_fabric()
    intent["infiniband"]["qos"] = {"enabled": False}
    sm = _plan.build_plan(intent, devices)["devices"]["sm1"]
    assert sm["opensm_conf"]["qos"] == "FALSE"
    assert sm["qos_policy_conf"].startswith("# lossless.fabric")


@pytest.mark.parametrize("fabric", [roce_fabric, ib_fabric])
def test_normalized_intent_is_itself_a_valid_intent(fabric):
    # The action plugin may hand the normalised intent back to validate(): it must round-trip.
    intent, devices = fabric()
    first = _plan.build_plan(intent, devices)
    second = _plan.build_plan(first["intent"], devices)
    assert second == first


def test_a_partition_rule_longer_than_opensm_reads_goes_on_over_several_lines():
    """A tenant's VF GUIDs make long rules; OpenSM reads partitions.conf 4095 bytes a line (osm_prtn_config.c fgets),
    so the plan continues the members on further lines (a rule ends at ';'): every line fits, the members are the
    same, and a rule that fits stays on one line."""
    devices = {"sm1": {"kind": "subnet_manager", "role": "master"}}
    for host in range(1, 9):
        devices[f"gpu{host}"] = {"kind": "host", "nics": [
            {"name": f"mlx5_{n}", "speed": "400G", "guid": "0x0c42a103000%d%02x01" % (host, n), "pci": "0000:%02x:00.0" % (0x0c + n), "vfs": 16,
             "vf_guids": ["0x0c42a1030f%02x%02x%02x" % (host, n, i) for i in range(16)]} for n in range(2)]}
    intent = {"name": "f", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}},
              "tenants": [{"name": "team-a", "hosts": [f"gpu{h}" for h in range(1, 9)], "partition": {"pkey": "0x8005"}}]}
    conf = _plan.build_plan(intent, devices)["devices"]["sm1"]["partitions_conf"]
    lines = conf.splitlines()
    assert max(len(line) for line in lines) <= 4094 and len(lines) > 4
    assert _ib_files.check_partitions_conf(conf) == []
    rule = " ".join(line.strip() for line in lines if not line.startswith(("#", "gpu=")))
    default, team_a = (r.strip() for r in rule.split(";")[:2])
    assert default.startswith("Default=0x7fff, ipoib, defmember=full : ALL=full, SELF=full, 0x0c42a10300010001=limited,")
    assert team_a.count("0x0c42a103") == 8 * 2 * 17 and team_a.startswith("team-a=0x8005, ") and ": SELF=full, 0x0c42a10300010001=full," in team_a
    assert all(line.endswith((",", ";")) for line in lines[1:])
    assert _plan._rule_lines("p=0x8001 :", ["ALL=full"]) == ["p=0x8001 : ALL=full ;"]
