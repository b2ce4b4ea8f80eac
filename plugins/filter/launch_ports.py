# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.launch_ports: thin adapter over _evidence.launch_ports."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._common._evidence import launch_ports as _launch_ports

DOCUMENTATION = r"""
name: launch_ports
short_description: The switch ports an NCCL launch over some GPU hosts crosses, from the fabric plan's cabling
version_added: 0.1.0
description:
  - Reads the C(cabling) section of the fabric plan (C(fabric_plan_result.cabling)) and returns, per switch, the ports the
    traffic of a launch over the given hosts crosses - the leaf port of each NIC of each host and, when the hosts sit on
    more than one leaf, those leaves' uplinks (ports whose peer is a switch) and the peers' ports facing them.
  - Only switches with a switch plan count. Without a described cabling the result is empty.
  - Role C(lossless.fabric.nccl_gate) reads the counters of these switches around its launch (docs/benchmark.md,
    "Counter evidence").
positional: plans, hosts
options:
  _input:
    description: The cabling section of the plan, C(fabric_plan_result.cabling).
    type: dict
    required: true
  plans:
    description: The plans, C(fabric_plan_result.devices).
    type: dict
    required: true
  hosts:
    description: The GPU hosts of the launch (inventory names).
    type: list
    elements: str
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: The switches and ports of a launch over gpu1 and gpu2
  ansible.builtin.debug:
    msg: "{{ fabric_plan_result.cabling | lossless.fabric.launch_ports(fabric_plan_result.devices, ['gpu1', 'gpu2']) }}"
"""

RETURN = r"""
_value:
  description: Switch -> its ports the launch crosses (sorted naturally).
  type: dict
  sample: {leaf1: [swp1, swp2, swp31], leaf2: [et-0/0/1, et-0/0/2, et-0/0/31], spine1: [Ethernet1/1, Ethernet2/1]}
"""


def launch_ports(cabling, plans, hosts):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("launch_ports: hosts must be a list of inventory names, got %s" % type(hosts).__name__)
    try:
        return _launch_ports(dict(cabling or {}), dict(plans or {}), [str(h) for h in hosts])
    except (ValueError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError("launch_ports: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"launch_ports": launch_ports}
