# SPDX-License-Identifier: GPL-3.0-or-later
"""One test per validation rule of plugins/module_utils/_intent/.

Each case mutates a valid fabric in one place and expects exactly one error
(or warning) naming the key path and the value: one mistake, one message.
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._common import _text
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _devices, _plan, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base


def roce_base():
    intent = {"name": "lab", "transport": "roce"}
    devices = {
        "leaf1": {"kind": "switch", "platform": "eos", "ports": {"Ethernet1": {"speed": "100G"}}},
        "gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]},
    }
    return intent, devices


def ib_base():
    intent = {"name": "lab", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}}}
    devices = {
        "sm1": {"kind": "subnet_manager", "role": "master"},
        "gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "400G"}]},
    }
    return intent, devices


def put(tree, dotted, value):
    """Set ``a.b.c`` in nested dicts, creating the dicts on the way."""
    keys = dotted.split(".")
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})
    tree[keys[-1]] = value


def apply(base, intent_changes=None, device_changes=None):
    intent, devices = base()
    for dotted, value in (intent_changes or {}).items():
        if dotted == "":
            intent = value
        else:
            put(intent, dotted, value)
    for dotted, value in (device_changes or {}).items():
        if dotted == "":
            devices = value
        else:
            put(devices, dotted, value)
    return intent, devices


def bad_partitions(*extra):
    return [{"name": "gpu", "pkey": "0x8001", "sl": 3, "qos_level": "rdma", "members": ["ALL_CAS"]}, *extra]


# (id, base, intent changes, device changes, the single expected error)
ERROR_CASES = [
    # --- top level
    ("intent-missing", roce_base, {"": None}, None, "lossless_fabric: required (the fabric intent is not defined)"),
    ("intent-not-mapping", roce_base, {"": ["lab"]}, None, "lossless_fabric: a list is not a mapping"),
    ("name-missing", roce_base, {"name": None}, None, "lossless_fabric.name: required"),
    (
        "name-pattern",
        roce_base,
        {"name": "-lab"},
        None,
        "lossless_fabric.name: '-lab' is not a valid name (a letter or digit, then up to 62 of A-Z a-z 0-9 . _ -)",
    ),
    (
        "name-too-long",
        roce_base,
        {"name": "a" * 64},
        None,
        f"lossless_fabric.name: {'a' * 64!r} is not a valid name (a letter or digit, then up to 62 of A-Z a-z 0-9 . _ -)",
    ),
    ("transport-missing", roce_base, {"transport": None}, None, "lossless_fabric.transport: required"),
    ("transport-unknown", roce_base, {"transport": "rocev2"}, None, "lossless_fabric.transport: 'rocev2' is not a transport (did you mean 'roce'?)"),
    ("unknown-top-key", roce_base, {"transprot": "roce"}, None, "lossless_fabric.transprot: unknown key (did you mean 'transport'?)"),
    ("other-transport-section", roce_base, {"infiniband": {}}, None, "lossless_fabric.infiniband: present but transport is 'roce' (remove the section)"),
    ("other-transport-section-ib", ib_base, {"roce": {"data": {}}}, None, "lossless_fabric.roce: present but transport is 'infiniband' (remove the section)"),
    # --- roce scalars
    ("unknown-roce-key", roce_base, {"roce.pcf": {}}, None, "lossless_fabric.roce.pcf: unknown key (did you mean 'pfc'?)"),
    ("trust", roce_base, {"roce.trust": "pcp"}, None, "lossless_fabric.roce.trust: 'pcp' is not a trust mode (one of dscp)"),
    ("data-dscp-range", roce_base, {"roce.data.dscp": 64}, None, "lossless_fabric.roce.data.dscp: 64 is not a DSCP (0-63)"),
    ("data-dscp-string", roce_base, {"roce.data.dscp": "26"}, None, "lossless_fabric.roce.data.dscp: '26' is not a DSCP (0-63)"),
    ("data-priority-bool", roce_base, {"roce.data.priority": True}, None, "lossless_fabric.roce.data.priority: True is not a priority (0-7)"),
    ("cnp-dscp-range", roce_base, {"roce.cnp.dscp": -1}, None, "lossless_fabric.roce.cnp.dscp: -1 is not a DSCP (0-63)"),
    ("cnp-strict-type", roce_base, {"roce.cnp.strict": "yes"}, None, "lossless_fabric.roce.cnp.strict: 'yes' is not a boolean (true or false)"),
    ("pfc-priority-range", roce_base, {"roce.pfc.priorities": [3, 9]}, None, "lossless_fabric.roce.pfc.priorities[1]: 9 is not a priority (0-7)"),
    ("pfc-priority-duplicate", roce_base, {"roce.pfc.priorities": [3, 3]}, None, "lossless_fabric.roce.pfc.priorities[1]: 3 is listed twice"),
    ("pfc-priorities-empty", roce_base, {"roce.pfc.priorities": []}, None, "lossless_fabric.roce.pfc.priorities: a list of 0 entries (need 1-8)"),
    ("pfc-priorities-type", roce_base, {"roce.pfc.priorities": 3}, None, "lossless_fabric.roce.pfc.priorities: 3 is not a list"),
    (
        "watchdog-detection",
        roce_base,
        {"roce.pfc.watchdog.detection_time_ms": 50},
        None,
        "lossless_fabric.roce.pfc.watchdog.detection_time_ms: 50 is not a detection time in ms (100-5000)",
    ),
    (
        "watchdog-restoration",
        roce_base,
        {"roce.pfc.watchdog.restoration_time_ms": 60001},
        None,
        "lossless_fabric.roce.pfc.watchdog.restoration_time_ms: 60001 is not a restoration time in ms (100-60000)",
    ),
    (
        "watchdog-action",
        roce_base,
        {"roce.pfc.watchdog.action": "drops"},
        None,
        "lossless_fabric.roce.pfc.watchdog.action: 'drops' is not a watchdog action (did you mean 'drop'?)",
    ),
    (
        "ecn-probability-low",
        roce_base,
        {"roce.ecn.max_probability_percent": 0},
        None,
        "lossless_fabric.roce.ecn.max_probability_percent: 0 is not a percentage (1-100)",
    ),
    (
        "ecn-probability-high",
        roce_base,
        {"roce.ecn.max_probability_percent": 101},
        None,
        "lossless_fabric.roce.ecn.max_probability_percent: 101 is not a percentage (1-100)",
    ),
    (
        "ecn-threshold-type",
        roce_base,
        {"roce.ecn.min_threshold_bytes": "150K"},
        None,
        "lossless_fabric.roce.ecn.min_threshold_bytes: '150K' is not a threshold in bytes (1-4294967295)",
    ),
    ("mtu-switch", roce_base, {"roce.mtu.switch": 9217}, None, "lossless_fabric.roce.mtu.switch: 9217 is not a switch MTU (1500-9216)"),
    ("mtu-host", roce_base, {"roce.mtu.host": 1000}, None, "lossless_fabric.roce.mtu.host: 1000 is not a host MTU (1280-9216)"),
    ("rdma-cm-tos", roce_base, {"roce.rdma_cm_tos": 256}, None, "lossless_fabric.roce.rdma_cm_tos: 256 is not a ToS byte (0-255)"),
    ("gid-index", roce_base, {"roce.gid_index": -1}, None, "lossless_fabric.roce.gid_index: -1 is not a GID index (0-255)"),
    ("cable-length", roce_base, {"roce.cable_length_m": 0}, None, "lossless_fabric.roce.cable_length_m: 0 is not a cable length in metres (1-10000)"),
    (
        "headroom-small-packets",
        roce_base,
        {"roce.headroom.small_packet_percent": 101},
        None,
        "lossless_fabric.roce.headroom.small_packet_percent: 101 is not a percentage (0-100)",
    ),
    (
        "headroom-unknown-key",
        roce_base,
        {"roce.headroom.cell_size": 144},
        None,
        "lossless_fabric.roce.headroom.cell_size: unknown key (did you mean 'cell_bytes'?)",
    ),
    # --- roce cross-field rules
    (
        "ecn-min-not-below-max",
        roce_base,
        {"roce.ecn": {"min_threshold_bytes": 2000000, "max_threshold_bytes": 1000000}},
        None,
        "lossless_fabric.roce.ecn.min_threshold_bytes: 2000000 is not below max_threshold_bytes (1000000)",
    ),
    (
        "ecn-min-equal-max",
        roce_base,
        {"roce.ecn": {"min_threshold_bytes": 1000000, "max_threshold_bytes": 1000000}},
        None,
        "lossless_fabric.roce.ecn.min_threshold_bytes: 1000000 is not below max_threshold_bytes (1000000)",
    ),
    (
        "ecn-min-above-derived-max",
        roce_base,
        {"roce.ecn.min_threshold_bytes": 2000000},
        None,
        "leaf1: lossless_fabric_device.ports[Ethernet1].speed: '100G' derives ECN max_threshold_bytes 1500000, "
        "not above lossless_fabric.roce.ecn.min_threshold_bytes 2000000: set max_threshold_bytes too",
    ),
    (
        "ecn-max-below-derived-min",
        roce_base,
        {"roce.ecn.max_threshold_bytes": 100000},
        None,
        "leaf1: lossless_fabric_device.ports[Ethernet1].speed: '100G' derives ECN min_threshold_bytes 150000, "
        "not below lossless_fabric.roce.ecn.max_threshold_bytes 100000: set min_threshold_bytes too",
    ),
    (
        "cnp-priority-equals-data",
        roce_base,
        {"roce.cnp.priority": 3},
        None,
        "lossless_fabric.roce.cnp.priority: 3 equals data.priority: CNPs must not share the lossless data class",
    ),
    (
        "cnp-priority-in-pfc",
        roce_base,
        {"roce.pfc.priorities": [3, 6]},
        None,
        "lossless_fabric.roce.cnp.priority: 6 is in pfc.priorities [3, 6]: CNPs must stay lossy, a paused CNP cannot slow a sender",
    ),
    (
        "data-priority-not-in-pfc",
        roce_base,
        {"roce.pfc.priorities": [4]},
        None,
        "lossless_fabric.roce.data.priority: 3 is not in pfc.priorities [4]: RoCE data would be lossy",
    ),
    ("dscp-two-classes", roce_base, {"roce.cnp.dscp": 26}, None, "lossless_fabric.roce.cnp.dscp: 26 equals data.dscp: one DSCP mapped to two classes"),
    (
        "host-mtu-above-switch",
        roce_base,
        {"roce.mtu": {"switch": 9214, "host": 9214}},
        None,
        "lossless_fabric.roce.mtu.host: 9214 exceeds mtu.switch 9214 - 18 (Ethernet + 802.1Q header) = 9196",
    ),
    (
        "host-mtu-one-above",
        roce_base,
        {"roce.mtu": {"switch": 1500, "host": 1483}},
        None,
        "lossless_fabric.roce.mtu.host: 1483 exceeds mtu.switch 1500 - 18 (Ethernet + 802.1Q header) = 1482",
    ),
    # --- targets
    (
        "target-unknown-collective",
        roce_base,
        {"targets.collectives": {"allreduce_perf": [{"min_size": 8, "min_busbw": 1}]}},
        None,
        "lossless_fabric.targets.collectives.allreduce_perf: unknown collective (did you mean 'all_reduce_perf'?)",
    ),
    (
        "target-busbw-zero",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 0}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_busbw: 0 is not a positive bus bandwidth (GB/s > 0)",
    ),
    (
        "target-busbw-bool",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": True}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_busbw: True is not a positive bus bandwidth (GB/s > 0)",
    ),
    (
        "target-busbw-missing",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": "1G"}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_busbw: required",
    ),
    (
        "target-min-above-max",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": "2G", "max_size": "1G", "min_busbw": 1}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_size: '2G' is above max_size '1G'",
    ),
    (
        "target-size-suffix",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": "1T", "min_busbw": 1}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_size: '1T' is not a size "
        "(digits with an optional K, M or G suffix, powers of 1024, e.g. '64M', '1G', '1GiB')",
    ),
    (
        "target-size-zero",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": 0, "min_busbw": 1}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_size: 0 is not a size above 0",
    ),
    (
        "target-entry-key",
        roce_base,
        {"targets.collectives": {"all_reduce_perf": [{"min_size": 8, "min_busbw": 1, "min_busbwx": 1}]}},
        None,
        "lossless_fabric.targets.collectives.all_reduce_perf[0].min_busbwx: unknown key (did you mean 'min_busbw'?)",
    ),
    (
        "target-tolerance-zero",
        roce_base,
        {"targets.tolerance_percent": 0},
        None,
        "lossless_fabric.targets.tolerance_percent: 0 is not a tolerance (0 < x < 100 percent)",
    ),
    (
        "target-tolerance-100",
        roce_base,
        {"targets.tolerance_percent": 100.0},
        None,
        "lossless_fabric.targets.tolerance_percent: 100.0 is not a tolerance (0 < x < 100 percent)",
    ),
    (
        "target-transport",
        roce_base,
        {"targets.require_transport": "ib"},
        None,
        "lossless_fabric.targets.require_transport: 'ib' is not an NCCL transport (one of IB, RoCE, Socket, EFA, NVLink-only)",
    ),
    ("target-gdr", roce_base, {"targets.require_gdr": "true"}, None, "lossless_fabric.targets.require_gdr: 'true' is not a boolean (true or false)"),
    # --- devices
    ("devices-not-mapping", roce_base, None, {"": ["leaf1"]}, "devices: a list is not a mapping of inventory host to lossless_fabric_device"),
    ("device-not-mapping", roce_base, None, {"leaf1": "switch"}, "leaf1: lossless_fabric_device: a string is not a mapping"),
    ("kind-missing", roce_base, None, {"leaf1": {"platform": "eos"}}, "leaf1: lossless_fabric_device.kind: required (one of switch, host, subnet_manager)"),
    ("kind-unknown", roce_base, None, {"gpu1.kind": "hots"}, "gpu1: lossless_fabric_device.kind: 'hots' is not a device kind (did you mean 'host'?)"),
    ("device-unknown-key", roce_base, None, {"leaf1.port": {}}, "leaf1: lossless_fabric_device.port: unknown key (did you mean 'ports'?)"),
    ("platform-unknown", roce_base, None, {"leaf1.platform": "eoss"}, "leaf1: lossless_fabric_device.platform: 'eoss' is not a platform (did you mean 'eos'?)"),
    ("platform-far", roce_base, None, {"leaf1.platform": "ios"}, "leaf1: lossless_fabric_device.platform: 'ios' is not a platform (did you mean 'eos'?)"),
    (
        "platform-mtu-above-max",
        roce_base,
        {"roce.mtu": {"switch": 9216, "host": 9000}},
        None,
        "leaf1: lossless_fabric_device.platform: eos takes an interface MTU up to 9214; lossless_fabric.roce.mtu.switch is 9216",
    ),
    (
        "junos-needs-queue-buffer",
        roce_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "junos", "ports": {"et-0/0/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.queue_buffer_bytes: required for junos: it sets ECN thresholds as a percent of the RoCE queue's buffer,"
        " so give that buffer in bytes",
    ),
    (
        "queue-buffer-below-ecn-max",
        roce_base,
        {"roce.ecn": {"max_threshold_bytes": 1500000}},
        {"leaf1": {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 1000000, "ports": {"et-0/0/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.queue_buffer_bytes: 1000000 is not above the ECN max threshold of et-0/0/1 (1500000 bytes)",
    ),
    (
        "junos-mtu-is-ip-mtu",
        roce_base,
        {"roce.mtu": {"switch": 9214, "host": 9000}},
        {"leaf1": {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.platform: junos takes an interface MTU up to 9202 (mtu.switch is the IP MTU; Junos' media MTU adds the"
        " 14-byte Ethernet header and QFX takes at most 9216); lossless_fabric.roce.mtu.switch is 9214",
    ),
    (
        "junos-model-unknown",
        roce_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "junos", "model": "qfx5250", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.model: 'qfx5250' is not a Junos model we have a scheduling form for (did you mean 'qfx5240'?)",
    ),
    (
        "junos-ets-on-port-only-model",
        roce_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "junos", "model": "qfx5210", "scheduling": "ets", "queue_buffer_bytes": 12000000,
                   "ports": {"et-0/0/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.scheduling: 'ets': qfx5210 takes port scheduling",
    ),
    (
        "junos-dcbx-mode",
        roce_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "junos", "dcbx": "off", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.dcbx: 'off' is not a DCBX PFC mode (one of no-auto-negotiation, auto)",
    ),
    (
        "junos-key-on-eos",
        roce_base,
        None,
        {"leaf1.scheduling": "ets"},
        "leaf1: lossless_fabric_device.scheduling: is a junos key; platform is eos",
    ),
    (
        "bandwidth-leaves-nothing",
        roce_base,
        {"roce.data": {"bandwidth_percent": 99}, "roce.pfc": {"priorities": [3, 4]}},
        None,
        "lossless_fabric.roce.data.bandwidth_percent: 99 leaves 1 % for 2 other weighted classes: each needs at least 1 %",
    ),
    ("platform-missing", roce_base, None, {"leaf1.platform": None},
     "leaf1: lossless_fabric_device.platform: required (one of %s)" % ", ".join(sorted(_tables.PLATFORMS))),
    (
        "port-speed",
        roce_base,
        None,
        {"leaf1.ports": {"Ethernet1": {"speed": "3G"}}},
        "leaf1: lossless_fabric_device.ports[Ethernet1].speed: '3G' is not a link speed (one of 10G, 25G, 40G, 50G, 100G, 200G, 400G, 800G)",
    ),
    (
        "port-speed-missing",
        roce_base,
        None,
        {"leaf1.ports": {"Ethernet1": {"cable_length_m": 3}}},
        "leaf1: lossless_fabric_device.ports[Ethernet1].speed: required",
    ),
    (
        "port-cable",
        roce_base,
        None,
        {"leaf1.ports": {"Ethernet1": {"speed": "100G", "cable_length_m": 10001}}},
        "leaf1: lossless_fabric_device.ports[Ethernet1].cable_length_m: 10001 is not a cable length in metres (1-10000)",
    ),
    (
        "port-unknown-key",
        roce_base,
        None,
        {"leaf1.ports": {"Ethernet1": {"speed": "100G", "descr": "x"}}},
        "leaf1: lossless_fabric_device.ports[Ethernet1].descr: unknown key (did you mean 'description'?)",
    ),
    (
        "port-name-eos",
        roce_base,
        None,
        {"leaf1.ports": {"swp1": {"speed": "100G"}}},
        "leaf1: lossless_fabric_device.ports[swp1]: 'swp1' is not a eos interface name (like Ethernet1/1)",
    ),
    (
        "port-name-nvue",
        roce_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "nvue", "ports": {"swp1s0x": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.ports[swp1s0x]: 'swp1s0x' is not a nvue interface name (like swp1s0)",
    ),
    (
        "port-name-junos",
        roce_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1/1": {"speed": "100G"}}}},
        "leaf1: lossless_fabric_device.ports[et-0/0/1/1]: 'et-0/0/1/1' is not a junos interface name (like et-0/0/1:0)",
    ),
    (
        "port-description-charset",
        roce_base,
        None,
        {"leaf1.ports": {"Ethernet1": {"speed": "100G", "description": "50% link"}}},
        "leaf1: lossless_fabric_device.ports[Ethernet1].description: '50% link' is not a valid description (letters, digits, space and ._,:/()@+=- only)",
    ),
    (
        "port-description-long",
        roce_base,
        None,
        {"leaf1.ports": {"Ethernet1": {"speed": "100G", "description": "x" * 241}}},
        f"leaf1: lossless_fabric_device.ports[Ethernet1].description: {'x' * 40!r}... is 241 characters long (at most 240)",
    ),
    (
        "ports-not-mapping",
        roce_base,
        None,
        {"leaf1.ports": ["Ethernet1"]},
        "leaf1: lossless_fabric_device.ports: a list is not a mapping of interface name to port",
    ),
    ("host-gpus", roce_base, None, {"gpu1.gpus": 0}, "gpu1: lossless_fabric_device.gpus: 0 is not a GPU count (1-16)"),
    ("host-nics-missing", roce_base, None, {"gpu1.nics": None}, "gpu1: lossless_fabric_device.nics: required (a list of RDMA NICs)"),
    ("host-nics-empty", roce_base, None, {"gpu1.nics": []}, "gpu1: lossless_fabric_device.nics: a list of 0 entries (need at least 1)"),
    (
        "host-duplicate-nic",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_0", "netdev": "eth3", "speed": "400G"}]},
        "gpu1: lossless_fabric_device.nics[1].name: 'mlx5_0' duplicates nics[0].name",
    ),
    (
        "host-duplicate-netdev",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_1", "netdev": "eth2", "speed": "400G"}]},
        "gpu1: lossless_fabric_device.nics[1].netdev: 'eth2' duplicates nics[0].netdev",
    ),
    (
        "host-netdev-required-roce",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "speed": "400G"}]},
        "gpu1: lossless_fabric_device.nics[0].netdev: required",
    ),
    (
        "host-netdev-too-long",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "netdev": "enp1s0f0np0abcde", "speed": "400G"}]},
        "gpu1: lossless_fabric_device.nics[0].netdev: 'enp1s0f0np0abcde' is not a network interface name (at most 15 of A-Z a-z 0-9 . _ -)",
    ),
    (
        "host-nic-speed",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": 400}]},
        "gpu1: lossless_fabric_device.nics[0].speed: 400 is not a link speed (one of 10G, 25G, 40G, 50G, 100G, 200G, 400G, 800G)",
    ),
    (
        "host-nic-guid",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G", "guid": "0x123"}]},
        "gpu1: lossless_fabric_device.nics[0].guid: '0x123' is not a GUID (0x followed by 16 hex digits)",
    ),
    (
        "host-nic-key",
        roce_base,
        None,
        {"gpu1.nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G", "ndev": "x"}]},
        "gpu1: lossless_fabric_device.nics[0].ndev: unknown key (did you mean 'netdev'?)",
    ),
    (
        "sm-on-roce",
        roce_base,
        None,
        {"sm1": {"kind": "subnet_manager", "role": "master"}},
        "sm1: lossless_fabric_device.kind: 'subnet_manager' but transport is 'roce': a RoCE fabric has no subnet manager",
    ),
    (
        "switch-on-ib",
        ib_base,
        None,
        {"leaf1": {"kind": "switch", "platform": "eos", "ports": {}}},
        "leaf1: lossless_fabric_device.kind: 'switch' but transport is 'infiniband': "
        "InfiniBand switches are managed by the subnet manager, not by this collection",
    ),
    ("sm-role", ib_base, None, {"sm1.role": "primary"}, "sm1: lossless_fabric_device.role: 'primary' is not an SM role (one of master, standby)"),
    ("sm-role-missing", ib_base, None, {"sm1.role": None}, "sm1: lossless_fabric_device.role: required (one of master, standby)"),
    # --- infiniband
    ("ib-unknown-key", ib_base, {"infiniband.partition": []}, None, "lossless_fabric.infiniband.partition: unknown key (did you mean 'partitions'?)"),
    ("sm-priority", ib_base, {"infiniband.sm.priority": 16}, None, "lossless_fabric.infiniband.sm.priority: 16 is not an SM priority (0-15)"),
    (
        "sm-standby-not-below",
        ib_base,
        {"infiniband.sm": {"priority": 5, "standby_priority": 5, "routing_engine": "minhop"}},
        None,
        "lossless_fabric.infiniband.sm.standby_priority: 5 is not below sm.priority (5): the standby could win the election",
    ),
    (
        "sm-engine",
        ib_base,
        {"infiniband.sm.routing_engine": ["ftre"]},
        None,
        "lossless_fabric.infiniband.sm.routing_engine[0]: 'ftre' is not an OpenSM 3.3.23 routing engine (did you mean 'ftree'?)",
    ),
    (
        "sm-engine-ar",
        ib_base,
        {"infiniband.sm.routing_engine": "ar_updn"},
        None,
        "lossless_fabric.infiniband.sm.routing_engine[0]: 'ar_updn' is not an OpenSM 3.3.23 routing engine (did you mean 'updn'?)",
    ),
    (
        "sm-engine-duplicate",
        ib_base,
        {"infiniband.sm.routing_engine": ["minhop", "minhop"]},
        None,
        "lossless_fabric.infiniband.sm.routing_engine[1]: 'minhop' is listed twice",
    ),
    ("sm-lmc", ib_base, {"infiniband.sm.lmc": 8}, None, "lossless_fabric.infiniband.sm.lmc: 8 is not an LMC (0-7)"),
    (
        "sm-root-guid",
        ib_base,
        {"infiniband.sm.root_guids": ["0002c90300000001"]},
        None,
        "lossless_fabric.infiniband.sm.root_guids[0]: '0002c90300000001' is not a GUID (0x followed by 16 hex digits)",
    ),
    ("qos-max-vls", ib_base, {"infiniband.qos.max_vls": 16}, None, "lossless_fabric.infiniband.qos.max_vls: 16 is not a VL count (1-15)"),
    ("qos-high-limit", ib_base, {"infiniband.qos.high_limit": 256}, None, "lossless_fabric.infiniband.qos.high_limit: 256 is not a high limit (0-255)"),
    (
        "vlarb-weight",
        ib_base,
        {"infiniband.qos.vlarb_high": [{"vl": 0, "weight": 256}]},
        None,
        "lossless_fabric.infiniband.qos.vlarb_high[0].weight: 256 is not a weight (0-255)",
    ),
    (
        "vlarb-vl",
        ib_base,
        {"infiniband.qos.vlarb_low": [{"vl": 15, "weight": 4}]},
        None,
        "lossless_fabric.infiniband.qos.vlarb_low[0].vl: 15 is not a data VL (0-14)",
    ),
    (
        "vlarb-vl-above-max",
        ib_base,
        {"infiniband.qos.vlarb_low": [{"vl": 8, "weight": 4}]},
        None,
        "lossless_fabric.infiniband.qos.vlarb_low[0].vl: 8 is not below qos.max_vls 8",
    ),
    ("vlarb-missing-weight", ib_base, {"infiniband.qos.vlarb_low": [{"vl": 1}]}, None, "lossless_fabric.infiniband.qos.vlarb_low[0].weight: required"),
    (
        "sl2vl-length",
        ib_base,
        {"infiniband.qos.sl2vl.ca": list(range(15))},
        None,
        "lossless_fabric.infiniband.qos.sl2vl.ca: an SL2VL map of the wrong length (15 entries; need exactly 16, one VL per SL 0-15)",
    ),
    ("sl2vl-value", ib_base, {"infiniband.qos.sl2vl.switch": [0] * 15 + [16]}, None, "lossless_fabric.infiniband.qos.sl2vl.switch[15]: 16 is not a VL (0-15)"),
    (
        "sl2vl-above-max-vls",
        ib_base,
        {"infiniband.qos.max_vls": 4, "infiniband.qos.sl2vl.ca": [0, 1, 2, 3, 4] + [0] * 11},
        None,
        "lossless_fabric.infiniband.qos.sl2vl.ca[4]: VL 4 is not below qos.max_vls 4 (use 15 to drop an SL)",
    ),
    (
        "sl2vl-drops-compute-sl",
        ib_base,
        {"infiniband.qos.sl2vl.ca": [0, 1, 2, 15] + [0] * 12},
        None,
        "lossless_fabric.infiniband.qos.sl2vl.ca[3]: 15 drops SL 3, the service level of compute_partition 'gpu'",
    ),
    (
        "levels-no-default",
        ib_base,
        {"infiniband.qos.levels": [{"name": "rdma", "sl": 3}]},
        None,
        "lossless_fabric.infiniband.qos.levels: no 'default' level: OpenSM requires a DEFAULT QoS level",
    ),
    (
        "levels-duplicate",
        ib_base,
        {"infiniband.qos.levels": [{"name": "default", "sl": 0}, {"name": "rdma", "sl": 3}, {"name": "RDMA", "sl": 4}]},
        None,
        "lossless_fabric.infiniband.qos.levels[2].name: 'RDMA' duplicates levels[1]",
    ),
    (
        "level-sl",
        ib_base,
        {"infiniband.qos.levels": [{"name": "default", "sl": 0}, {"name": "rdma", "sl": 16}]},
        None,
        "lossless_fabric.infiniband.qos.levels[1].sl: 16 is not a service level (0-15)",
    ),
    (
        "pkey-duplicate-masked",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "gpu2", "pkey": "0x0001", "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].pkey: '0x0001' duplicates partitions[0] pkey '0x8001' (bit 15 is the membership bit, not part of the key)",
    ),
    (
        "pkey-duplicate-int",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "gpu2", "pkey": 0x8001, "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].pkey: 32769 duplicates partitions[0] pkey '0x8001' (bit 15 is the membership bit, not part of the key)",
    ),
    (
        "partition-name-duplicate",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "gpu", "pkey": "0x8002", "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].name: 'gpu' duplicates partitions[0]",
    ),
    (
        "pkey-zero-after-mask",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": "0x8000", "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].pkey: '0x8000' is not a P_Key (an integer or '0x' hex string, 0x0001-0x7fff after masking bit 15)",
    ),
    (
        "pkey-not-hex",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": "8002", "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].pkey: '8002' is not a P_Key (an integer or '0x' hex string, 0x0001-0x7fff after masking bit 15)",
    ),
    (
        "pkey-too-big",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 0x10002, "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].pkey: 65538 is not a P_Key (an integer or '0x' hex string, 0x0001-0x7fff after masking bit 15)",
    ),
    (
        "partition-mtu",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "mtu": 9000, "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].mtu: 9000 is not an IB MTU (one of 256, 512, 1024, 2048, 4096)",
    ),
    (
        "partition-rate",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "rate": 1, "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].rate: 1 is not an IBTA rate code (2-22)",
    ),
    (
        "partition-sl",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "sl": 16, "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].sl: 16 is not a service level (0-15)",
    ),
    (
        "partition-qos-level",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "qos_level": "rdmaa", "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].qos_level: 'rdmaa' is not a defined QoS level (did you mean 'rdma'?)",
    ),
    (
        "partition-membership",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "default_membership": "partial", "members": ["ALL"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].default_membership: 'partial' is not a membership (one of full, limited, both)",
    ),
    (
        "partition-members-empty",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": []})},
        None,
        "lossless_fabric.infiniband.partitions[1].members: a list of 0 entries (need at least 1)",
    ),
    (
        "partition-members-missing",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2})},
        None,
        "lossless_fabric.infiniband.partitions[1].members: required",
    ),
    (
        "member-keyword",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": [{"keyword": "ALLCAS", "membership": "full"}]})},
        None,
        "lossless_fabric.infiniband.partitions[1].members[0].keyword: 'ALLCAS' is not a member keyword (did you mean 'ALL_CAS'?)",
    ),
    (
        "member-guid",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": [{"guid": "0x12345", "membership": "full"}]})},
        None,
        "lossless_fabric.infiniband.partitions[1].members[0].guid: '0x12345' is not a GUID (0x followed by 16 hex digits)",
    ),
    (
        "member-guid-string",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": ["0x00000000001000zz"]})},
        None,
        "lossless_fabric.infiniband.partitions[1].members[0].guid: '0x00000000001000zz' is not a GUID (0x followed by 16 hex digits)",
    ),
    (
        "member-both",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": [{"guid": "0x0000000000100001", "keyword": "ALL"}]})},
        None,
        "lossless_fabric.infiniband.partitions[1].members[0]: {'guid': '0x0000000000100001', 'keyword': 'ALL'} needs exactly one of guid or keyword",
    ),
    (
        "member-null",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": [None]})},
        None,
        "lossless_fabric.infiniband.partitions[1].members[0]: None is not a member (a GUID, a keyword, or a mapping with guid or keyword and membership)",
    ),
    (
        "member-membership",
        ib_base,
        {"infiniband.partitions": bad_partitions({"name": "p", "pkey": 2, "members": [{"keyword": "ALL", "membership": "ful"}]})},
        None,
        "lossless_fabric.infiniband.partitions[1].members[0].membership: 'ful' is not a membership (did you mean 'full'?)",
    ),
    (
        "compute-partition-unknown",
        ib_base,
        {"infiniband.compute_partition": "gpus"},
        None,
        "lossless_fabric.infiniband.compute_partition: 'gpus' is not a defined partition (did you mean 'gpu'?)",
    ),
    ("compute-partition-type", ib_base, {"infiniband.compute_partition": 1}, None, "lossless_fabric.infiniband.compute_partition: 1 is not a partition name"),
]


@pytest.mark.parametrize("base, intent_changes, device_changes, expected", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_rule(base, intent_changes, device_changes, expected):
    intent, devices = apply(base, intent_changes, device_changes)
    errors, _warnings = _plan.validate(intent, devices)
    assert errors == [expected]
    with pytest.raises(_tables.IntentError) as info:
        _plan.build_plan(intent, devices)
    assert info.value.errors == [expected]


@pytest.mark.parametrize("base", [roce_base, ib_base])
def test_bases_are_valid(base):
    intent, devices = base()
    assert _plan.validate(intent, devices) == ([], [])


def test_a_planned_platform_is_refused_as_not_supported_yet(monkeypatch):
    # No platform is planned today (nxos got its driver, issue 19): a planned record is put in the registry
    # the intent reads (_tables.PLATFORMS, which _tables.platforms() returns at call time) for the refusal.
    planned = _base.Platform("planned", r"Ethernet[0-9]+", "Ethernet1", supported=False)
    monkeypatch.setattr(_tables, "PLATFORMS", {**_tables.PLATFORMS, "planned": planned})
    intent, devices = apply(roce_base, None, {"leaf1.platform": "planned"})
    supported = ", ".join(sorted(name for name, record in _tables.PLATFORMS.items() if record.supported))  # the registry's (a new platform's too)
    expected = "leaf1: lossless_fabric_device.platform: 'planned' is not supported yet (supported: %s)" % supported
    assert _plan.validate(intent, devices)[0] == [expected]
    with pytest.raises(_tables.IntentError) as info:
        _plan.build_plan(intent, devices)
    assert info.value.errors == [expected]


def test_nxos_is_supported():
    intent, devices = apply(roce_base, None, {"leaf1": {"kind": "switch", "platform": "nxos", "ports": {"Ethernet1/1": {"speed": "400G"}}}})
    errors, warnings = _plan.validate(intent, devices)
    # issue 31: the NX-OS watchdog is switched on/off only; its times have no sourced syntax (docs/vendor-nxos.md)
    assert errors == [] and len(warnings) == 1 and warnings[0].startswith("leaf1: platform nxos: the PFC watchdog is switched on or off only")


def test_error_case_ids_are_unique():
    ids = [c[0] for c in ERROR_CASES]
    assert len(ids) == len(set(ids))


# --- injection ------------------------------------------------------------------------------------

INJECTIONS = [
    ("a\nb", "a newline"),
    ("a\r", "a newline"),
    ("x;reboot", "';', which could start a second command or a comment"),
    ("$(reboot)", "'$', which could start a second command or a comment"),
    ("bell\x07", "a control character ('\\x07')"),
    ("tab\there", "a control character ('\\t')"),
    ("a`id`", "'`', which could start a second command or a comment"),
    ("a|b", "'|', which could start a second command or a comment"),
    ("a && b", "'&', which could start a second command or a comment"),
    ("x # y", "'#', which could start a second command or a comment"),
    ("quote'd", '"\'", which could start a second command or a comment'),
    ("a\\b", "'\\\\', which could start a second command or a comment"),
    ("{{ x }}", "'{', which could start a second command or a comment"),
    ("a>b", "'>', which could start a second command or a comment"),
    ("a!b", "'!', which could start a second command or a comment"),
    ("ls\u2028x", "a newline"),
]

# (field, builds (intent, devices) around the value, path of the error)
FIELDS = [
    ("fabric-name", lambda v: apply(roce_base, {"name": v}), "lossless_fabric.name"),
    (
        "description",
        lambda v: apply(roce_base, None, {"leaf1.ports": {"Ethernet1": {"speed": "100G", "description": v}}}),
        "leaf1: lossless_fabric_device.ports[Ethernet1].description",
    ),
    (
        "nic-name",
        lambda v: apply(roce_base, None, {"gpu1.nics": [{"name": v, "netdev": "eth2", "speed": "400G"}]}),
        "gpu1: lossless_fabric_device.nics[0].name",
    ),
    (
        "netdev",
        lambda v: apply(roce_base, None, {"gpu1.nics": [{"name": "mlx5_0", "netdev": v, "speed": "400G"}]}),
        "gpu1: lossless_fabric_device.nics[0].netdev",
    ),
    (
        "partition-name",
        lambda v: apply(ib_base, {"infiniband.partitions": [{"name": v, "pkey": 2, "members": ["ALL"]}]}),
        "lossless_fabric.infiniband.partitions[0].name",
    ),
    (
        "qos-level-name",
        lambda v: apply(ib_base, {"infiniband.qos.levels": [{"name": "default", "sl": 0}, {"name": v, "sl": 3}], "infiniband.partitions": []}),
        "lossless_fabric.infiniband.qos.levels[1].name",
    ),
]


@pytest.mark.parametrize("value, reason", INJECTIONS, ids=[repr(v) for v, _reason in INJECTIONS])
@pytest.mark.parametrize("field, build, path", FIELDS, ids=[f[0] for f in FIELDS])
def test_injection_rejected(field, build, path, value, reason):
    intent, devices = build(value)
    errors = _plan.validate(intent, devices)[0]
    assert errors == [f"{path}: {value!r} contains {reason}"]


@pytest.mark.parametrize("value, reason", INJECTIONS, ids=[repr(v) for v, _reason in INJECTIONS])
def test_injection_in_interface_name(value, reason):
    intent, devices = apply(roce_base, None, {"leaf1.ports": {value: {"speed": "100G"}}})
    errors = _plan.validate(intent, devices)[0]
    assert errors == [f"leaf1: lossless_fabric_device.ports[{value!r}]: interface name {value!r} contains {reason}"]
    assert "\n" not in errors[0]


def test_error_messages_never_contain_raw_control_characters():
    intent = {"name": "a\nb", "transport": "roce", "roce\n": 1, "roce": {"data": {"dscp": "\x1b[2J"}}}
    errors = _plan.validate(intent, {"h\x07": {"kind": "switch", "platform": "eos", "ports": {"Eth\nernet1": {"speed": "1\n00G"}}}})[0]
    # The bad port's speed is not checked: its name already failed.
    assert len(errors) == 4, errors
    for error in errors:
        assert error.isprintable(), error
    assert errors[-1].startswith("'h\\x07': lossless_fabric_device.ports['Eth\\nernet1']: ")


# --- unknown keys -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"roce.pcf": {}}, "lossless_fabric.roce.pcf: unknown key (did you mean 'pfc'?)"),
        ({"roce.ecn.kmax": 1}, "lossless_fabric.roce.ecn.kmax: unknown key (one of min_threshold_bytes, max_threshold_bytes, max_probability_percent)"),
        ({"roce.pfc.watchdog.detection_ms": 200}, "lossless_fabric.roce.pfc.watchdog.detection_ms: unknown key (did you mean 'detection_time_ms'?)"),
        ({"roce.data.prio": 3}, "lossless_fabric.roce.data.prio: unknown key (did you mean 'priority'?)"),
        ({"targets.colectives": {}}, "lossless_fabric.targets.colectives: unknown key (did you mean 'collectives'?)"),
    ],
)
def test_unknown_key_suggestion(changes, expected):
    intent, devices = apply(roce_base, changes)
    errors = _plan.validate(intent, devices)[0]
    assert errors == [expected]


# --- warnings -------------------------------------------------------------------------------------

WARNING_CASES = [
    (
        "three-pfc-priorities",
        roce_base,
        {"roce.pfc.priorities": [2, 3, 4]},
        None,
        "lossless_fabric.roce.pfc.priorities: [2, 3, 4]: 3 lossless priorities; headroom is reserved per priority on every port, keep one (at most two)",
    ),
    (
        "rdma-cm-tos-zero",
        roce_base,
        {"roce.rdma_cm_tos": 0},
        None,
        "lossless_fabric.roce.rdma_cm_tos: 0: RDMA-CM traffic (rping, NVMe-oF, some MPIs) runs outside the lossless priority",
    ),
    (
        "rdma-cm-tos-other-dscp",
        roce_base,
        {"roce.rdma_cm_tos": 98},
        None,
        "lossless_fabric.roce.rdma_cm_tos: 98 carries DSCP 24, not data.dscp 26: RDMA-CM traffic runs outside the lossless priority",
    ),
    (
        "watchdog-disabled",
        roce_base,
        {"roce.pfc.watchdog.enabled": False},
        None,
        "lossless_fabric.roce.pfc.watchdog.enabled: false: a PFC storm or deadlock can freeze the lossless class fabric-wide",
    ),
    (
        "cnp-not-strict",
        roce_base,
        {"roce.cnp.strict": False},
        None,
        "lossless_fabric.roce.cnp.strict: false: CNPs queue behind other traffic and DCQCN reacts late",
    ),
    (
        "data-priority-zero",
        roce_base,
        {"roce.data.priority": 0, "roce.pfc.priorities": [0]},
        None,
        "lossless_fabric.roce.data.priority: 0 is also the class of every unmapped DSCP: all that traffic becomes lossless",
    ),
    (
        "cnp-priority-zero",
        roce_base,
        {"roce.cnp.priority": 0},
        None,
        "lossless_fabric.roce.cnp.priority: 0 is also the class of every unmapped DSCP: CNPs lose their own queue",
    ),
    (
        "updn-without-roots",
        ib_base,
        {"infiniband.sm.routing_engine": ["updn", "minhop"]},
        None,
        "lossless_fabric.infiniband.sm.routing_engine: 'updn' without root_guids: OpenSM must detect the roots itself; "
        "when it cannot, updn silently becomes minhop",
    ),
    (
        "ftree-without-roots",
        ib_base,
        {"infiniband.sm.routing_engine": "ftree"},
        None,
        "lossless_fabric.infiniband.sm.routing_engine: 'ftree' without root_guids: OpenSM must detect the roots itself; "
        "when it cannot, ftree falls back to the next engine in the list",
    ),
    (
        "partition-sl-vs-level",
        ib_base,
        {"infiniband.partitions": [{"name": "gpu", "pkey": 1, "sl": 4, "qos_level": "rdma", "members": ["ALL"]}]},
        None,
        "lossless_fabric.infiniband.partitions[0].sl: 4 differs from qos_level 'rdma' sl 3: with qos enabled PathRecords and NCCL_IB_SL use 3",
    ),
    (
        "partition-sl-vs-level-qos-off",
        ib_base,
        {"infiniband.partitions": [{"name": "gpu", "pkey": 1, "sl": 4, "qos_level": "rdma", "members": ["ALL"]}], "infiniband.qos.enabled": False},
        None,
        "lossless_fabric.infiniband.partitions[0].sl: 4 differs from qos_level 'rdma' sl 3: PathRecords and NCCL_IB_SL use 4",
    ),
    ("no-subnet-manager", ib_base, None, {"sm1": None}, "devices: no device of kind subnet_manager: no OpenSM configuration will be planned"),
    (
        "two-masters",
        ib_base,
        None,
        {"sm2": {"kind": "subnet_manager", "role": "master"}},
        "devices: 2 subnet managers with role master share one priority: the election falls back to the lowest port GUID",
    ),
]


@pytest.mark.parametrize("base, intent_changes, device_changes, expected", [c[1:] for c in WARNING_CASES], ids=[c[0] for c in WARNING_CASES])
def test_warning(base, intent_changes, device_changes, expected):
    intent, devices = apply(base, intent_changes, device_changes)
    errors, warnings = _plan.validate(intent, devices)
    assert errors == []
    assert warnings == [expected]
    plan = _plan.build_plan(intent, devices)
    assert plan["warnings"] == [expected]
    assert plan["summary"]["warnings"] == 1


def test_sonic_is_supported_and_warns_about_config_qos_reload():
    intent, devices = apply(roce_base, None, {"leaf1": {"kind": "switch", "platform": "sonic", "ports": {"Ethernet0": {"speed": "400G"}}}})
    errors, warnings = _plan.validate(intent, devices)
    assert errors == []
    assert warnings == [
        "leaf1: platform sonic: the stock DSCP_TO_TC_MAP|AZURE puts DSCP 26 in a lossy traffic class (its lossless TCs 3 and 4 are fed by DSCP 3 and 4); "
        "the plan installs an explicit map, but 'config qos reload' restores the stock one and silently makes priority 3 traffic lossy"
    ]


def test_no_warnings_on_defaults():
    for base in (roce_base, ib_base):
        intent, devices = base()
        assert _plan.validate(intent, copy.deepcopy(devices))[1] == []


@pytest.mark.parametrize("value, reason", [*INJECTIONS, ("mlx5_0", None), ("Uplink to spine1/Ethernet1", None)])
def test_unsafe_reason_is_the_rule_other_module_utils_share(value, reason):
    # public: _nccl_launch refuses launcher arguments by the same rule
    assert _text.unsafe_reason(value) == reason


# --- port and NIC names: one spelling per port, ASCII digits only ---------------------------------

SAME_PORT_TWICE = [
    ("eos", {"Ethernet1": {"speed": "100G"}, "Ethernet01": {"speed": "100G"}}, "Ethernet01", "Ethernet1", "Ethernet1"),
    ("eos", {"Ethernet1/1": {"speed": "100G"}, "Ethernet1/001": {"speed": "100G"}}, "Ethernet1/001", "Ethernet1/1", "Ethernet1/1"),
    ("nvue", {"swp1": {"speed": "100G"}, "swp01": {"speed": "100G"}}, "swp01", "swp1", "swp1"),
    ("nvue", {"swp1s0": {"speed": "100G"}, "swp1s00": {"speed": "100G"}}, "swp1s00", "swp1s0", "swp1s0"),
    ("junos", {"et-0/0/1": {"speed": "100G"}, "et-0/0/01": {"speed": "100G"}}, "et-0/0/01", "et-0/0/1", "et-0/0/1"),
]


def _switch(platform, ports):
    device = {"kind": "switch", "platform": platform, "ports": ports}
    if platform == "junos":
        device["queue_buffer_bytes"] = 12000000
    return device


@pytest.mark.parametrize("platform, ports, second, first, canonical", SAME_PORT_TWICE, ids=[c[2] for c in SAME_PORT_TWICE])
def test_the_same_port_under_two_spellings_is_refused_naming_both(platform, ports, second, first, canonical):
    intent, devices = apply(roce_base, None, {"leaf1": _switch(platform, ports)})
    errors = _plan.validate(intent, devices)[0]
    assert errors == [f"leaf1: lossless_fabric_device.ports[{second}]: {second!r} is the same port as {first!r} ({canonical}): give each port once"]


@pytest.mark.parametrize(
    "platform, given, canonical",
    [("eos", "Ethernet01", "Ethernet1"), ("eos", "Ethernet1/01/2", "Ethernet1/1/2"),
     ("nvue", "swp007s01", "swp7s1"), ("junos", "xe-0/00/10:02", "xe-0/0/10:2")],
)
def test_a_port_name_reaches_the_plan_in_its_one_spelling(platform, given, canonical):
    intent, devices = apply(roce_base, None, {"leaf1": _switch(platform, {given: {"speed": "100G"}})})
    plan = _plan.build_plan(intent, devices)
    assert list(plan["devices"]["leaf1"]["ports"]) == [canonical]


# Arabic-Indic one, fullwidth one, Devanagari one, superscript one: str.isdigit() and \d accept the first three.
NON_ASCII_DIGITS = ["\u0661", "\uff11", "\u0967", "\u00b9"]


@pytest.mark.parametrize("digit", NON_ASCII_DIGITS, ids=[ascii(d) for d in NON_ASCII_DIGITS])
@pytest.mark.parametrize("platform, template", [("eos", "Ethernet{}"), ("eos", "Ethernet1/{}"), ("nvue", "swp{}"), ("nvue", "swp1s{}"), ("junos", "et-0/0/{}")])
def test_port_names_with_non_ascii_digits_are_refused(platform, template, digit):
    name = template.format(digit)
    intent, devices = apply(roce_base, None, {"leaf1": _switch(platform, {name: {"speed": "100G"}})})
    errors = _plan.validate(intent, devices)[0]
    example = _tables.PLATFORMS[platform].interface_example
    assert errors == [f"leaf1: lossless_fabric_device.ports[{name}]: {name!r} is not a {platform} interface name (like {example})"]


@pytest.mark.parametrize("digit", NON_ASCII_DIGITS, ids=[ascii(d) for d in NON_ASCII_DIGITS])
@pytest.mark.parametrize("key, template", [("name", "mlx5_{}"), ("netdev", "eth{}")])
def test_nic_names_with_non_ascii_digits_are_refused(key, template, digit):
    value = template.format(digit)
    intent, devices = apply(roce_base, None, {"gpu1.nics": [dict({"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, **{key: value})]})
    errors = _plan.validate(intent, devices)[0]
    assert len(errors) == 1 and errors[0].startswith(f"gpu1: lossless_fabric_device.nics[0].{key}: {value!r} is not "), errors


def test_nic_names_are_exact_kernel_names_and_duplicates_are_refused():
    # Linux device names are compared as strings: eth01 and eth1 are two interfaces, so only exact repeats are refused.
    nics = [{"name": "mlx5_0", "netdev": "eth1", "speed": "400G"}, {"name": "mlx5_00", "netdev": "eth01", "speed": "400G"},
            {"name": "mlx5_0", "netdev": "eth1", "speed": "400G"}]
    intent, devices = apply(roce_base, None, {"gpu1.nics": nics})
    errors = _plan.validate(intent, devices)[0]
    assert errors == ["gpu1: lossless_fabric_device.nics[2].name: 'mlx5_0' duplicates nics[0].name",
                      "gpu1: lossless_fabric_device.nics[2].netdev: 'eth1' duplicates nics[0].netdev"]


def test_canonical_port_is_ascii_only():
    eos = _tables.PLATFORMS["eos"]
    assert _devices.canonical_port(eos, "Ethernet010/02") == "Ethernet10/2"
    assert _devices.canonical_port(eos, "Ethernet\u0661") is None
    assert _devices.canonical_port(eos, "Ethernet1\n") is None
