#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/fabric_plan.py; this
# file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_plan
short_description: Validate the fabric intent and derive the plan every device gets
version_added: 0.1.0
description:
  - Reads the fabric intent (the inventory variable C(lossless_fabric)) and the per-device data
    (the host variable C(lossless_fabric_device) of every inventory host), validates them, and
    derives what they imply - PFC headroom per lossless port, ECN thresholds per link speed, the
    NCCL environment of benchmarks, and the plan each role applies to a switch, a GPU host or a
    subnet manager.
  - Validation reports every error at once, each naming the key path and the value, before any
    device is touched. A string that could carry a newline or a second command to a device CLI is
    an error.
  - One intent for the whole fabric - every host of O(hosts) that defines C(lossless_fabric) must see the same value as
    the host the task runs for. A value overridden in one group (C(group_vars/gpu_hosts)) would plan the NICs from one
    intent and the switches from another; that fails, naming each version's hosts and groups and the keys that differ.
  - Runs on the controller and never contacts a device; it never reports C(changed).
  - The intent is documented key by key in C(docs/intent.md) of the collection.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.controller
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
options:
  intent:
    description:
      - The fabric intent. Defaults to the value of the variable C(lossless_fabric).
    type: dict
  hosts:
    description:
      - Inventory hosts whose C(lossless_fabric_device) variable is planned.
      - Defaults to every host in the inventory; hosts without C(lossless_fabric_device) are skipped.
    type: list
    elements: str
  device_var:
    description:
      - Name of the host variable that holds a host's device data.
    type: str
    default: lossless_fabric_device
  fail_on_warnings:
    description:
      - Fail when the intent validates but carries warnings (known traps such as RDMA-CM ToS 0).
    type: bool
    default: false
  lock:
    description:
      - Take the fabric's controller lock for this run (one lock per C(lossless_fabric.name)) - a second run on the same
        fabric from this controller (a change window, a site run) fails at once, naming the holder - its PID, start time
        and playbook.
      - The holder is the run's C(ansible-playbook) process; the lock is free as soon as that process is gone, however
        it ended (success, failure, Ctrl-C, C(kill -9)). The same run may take it again (each play plans the fabric).
      - In check mode no lock is taken; a run holding it is only warned about.
    type: bool
    default: true
  lock_dir:
    description:
      - Folder of the lock files (C(<fabric>.lock), mode 0600). Every run that must see the others' locks needs the same
        folder - on a controller shared by several users, a folder they can all write.
    type: str
    default: ~/.ansible/lossless-fabric/locks
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Validate the intent and derive the plan
  lossless.fabric.fabric_plan:
  register: fabric
  run_once: true
  delegate_to: localhost

- name: Show the NCCL environment the intent implies
  ansible.builtin.debug:
    var: fabric.nccl_env

- name: Plan a subset of the inventory with an explicit intent, strict about warnings
  lossless.fabric.fabric_plan:
    intent: "{{ lossless_fabric }}"
    hosts: "{{ groups['leaves'] + groups['gpu_hosts'] }}"
    fail_on_warnings: true
"""

RETURN = r"""
intent:
  description: The validated intent with every default filled in.
  returned: success
  type: dict
devices:
  description:
    - The plan per inventory host, keyed by inventory hostname. Its shape depends on the device's C(kind)
      (C(switch), C(host) or C(subnet_manager)); C(docs/intent.md) documents each.
  returned: success
  type: dict
  sample:
    leaf1:
      kind: switch
      platform: eos
      pfc_priorities: [3]
      dscp_map: {"26": 3, "48": 6}
lock:
  description: The fabric's controller lock this run holds - C(path) and C(holder) (C(pid), C(pid_start), C(playbook), C(started_at)).
  returned: when O(lock) is true and not in check mode
  type: dict
lock_holder:
  description: The run that holds the fabric's lock, when the task failed because of it.
  returned: failure
  type: dict
tenants:
  description:
    - The tenants sharing the fabric (C(lossless_fabric.tenants)), keyed by tenant name - C(hosts) (inventory hosts, a
      C(host_group) resolved), C(namespace), C(kubeconfig), C(vlan) (RoCE), C(partition) (InfiniBand - C(name), C(pkey),
      C(membership), C(ipoib), C(sl) the SL its PathRecords carry) and C(qos_level). Empty without tenants.
      C(docs/tenants.md) documents the model.
  returned: success
  type: dict
  sample: {"team-a": {"hosts": ["gpu1", "gpu2"], "namespace": "team-a", "kubeconfig": null, "vlan": null,
           "partition": {"name": "team-a", "pkey": "0x8001", "membership": "full", "ipoib": true, "sl": 3}, "qos_level": "rdma"}}
nccl_env:
  description: The NCCL environment variables the intent implies for benchmarks.
  returned: success
  type: dict
  sample: {"NCCL_IB_TC": "106", "NCCL_IB_HCA": "=mlx5_0,mlx5_1"}
cabling:
  description:
    - The links the intent describes (by hand in C(lossless_fabric_device) or generated from C(lossless_fabric.topology)),
      each once with both ends, rail and speed; per host its NICs by rail and C(nccl_ib_hca) in rail order; per switch
      the ports in scope with their expected neighbour; for InfiniBand the topology file text (null elsewhere). Empty when the
      intent describes no links. C(docs/intent.md) section Cabling documents the shape.
  returned: success
  type: dict
  sample: {"links": [], "hosts": {}, "switches": {}, "ib_topology": null}
summary:
  description: A short summary for people (counts and the key values).
  returned: success
  type: dict
design:
  description:
    - The design check of the derived plan (C(docs/design-check.md)), one entry per rule with C(rule), C(text),
      C(status) (ok, warning or not_applicable; an error fails the task and is listed in C(errors)), C(checked)
      (how many classes, ports and maps it read), C(source) and, where a rule could not check everything, C(notes).
  returned: success
  type: list
  elements: dict
  sample: [{"rule": "headroom", "text": "headroom covers each port's cable length and speed", "status": "ok", "checked": 3,
            "source": "reference switch-lossless-cli 7.1; sonic-net/sonic-swss cfgmgr/buffer_headroom_mellanox.lua"}]
fabric_warnings:
  description: Known traps found in the intent and the design check's warnings; they are printed as warnings too.
  returned: always
  type: list
  elements: str
errors:
  description: Every validation error, each naming the key path and the value; the design check's errors start with C(design <rule>).
  returned: failed
  type: list
  elements: str
"""
