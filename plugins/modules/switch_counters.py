#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/switch_counters.py; this
# file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: switch_counters
short_description: Snapshot a switch's lossless counters (PFC, ECN, drops, PFC watchdog), read-only
version_added: 0.1.0
description:
  - Reads, per port, the counters a lossless RoCEv2 pre/post check compares - PFC pause frames received and sent per
    priority, ECN-marked packets, drops per queue, ingress priority-group discards, PFC watchdog storms - over one SSH
    connection (netmiko, in the controller's worker), and returns them as one structured snapshot in RV(counters).
  - The snapshot has a device-agnostic shape (the same for every switch OS, and for NIC counters); the filter
    P(lossless.fabric.counters_delta#filter) subtracts a pre snapshot from a post one and reports counters that went down.
  - The text each show command printed is kept in RV(counters.raw) for reports.
  - "EOS: six C(| json) show commands that cover every port, in one round trip. NVUE: six C(nv show interface X ... -o json)
    per port, typed ahead in as few chunks as the terminal takes. Junos: C(show interfaces X extensive) and C(show interfaces
    queue X) per port, all in one write."
  - Never changes the device; the task never reports a change.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._switch_connection
  # The platform option and attribute, written from the platform registry (the choices are every driven platform).
  - lossless.fabric._switch_platform
attributes:
  action:
    description: Runs on the controller; netmiko connects from the worker process.
    support: full
options:
  ports:
    description:
      - Ports to report.
      - Defaults to the ports of C(lossless_fabric_device.ports); without them, every port the switch shows (EOS only; NVUE
        and Junos show counters per port and need the names).
      - A port the switch reports nothing for fails the task (the snapshot of the others is still returned).
    type: list
    elements: str
  priorities:
    description:
      - Priorities (and, by the plan's convention queue = traffic class = priority, queues and priority groups) whose
        per-index counters are reported.
    type: list
    elements: int
    default: [0, 1, 2, 3, 4, 5, 6, 7]
  fabric:
    description:
      - Fabric-wide mode. Read every listed inventory host from this one task (run it once, e.g. in a play on localhost,
        or with C(run_once)), each switch over its own connection from a pool of O(workers) threads, with that host's
        connection variables, platform and C(lossless_fabric_device.ports) (O(ports) and O(priorities), when given, apply
        to every switch). The result holds one result per switch in RV(switches), each what a per-host task returns; the
        task fails when any switch fails, naming each, and still returns the snapshots of the others.
      - Saves Ansible's per-host task start-up, which dominates a snapshot of many switches.
    type: list
    elements: str
  workers:
    description:
      - Threads of the fabric-wide mode.
    type: int
    default: 32
notes:
  - Counters a platform does not show are absent from the ports and listed in RV(counters.not_available) (for example
    Junos has no PFC watchdog counters, NVUE no per-queue ECN marks before the releases that print them).
  - A show command the switch refuses (for example C(show interfaces counters queue drops) on an EOS switch without VOQs)
    is reported in RV(command_errors) and as a warning; the other counters are still returned.
seealso:
  - module: lossless.fabric.switch_config
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Counters before the change
  lossless.fabric.switch_counters:
  register: pre

- name: Only the RoCE and CNP priorities of two ports
  lossless.fabric.switch_counters:
    ports: [Ethernet1, Ethernet2]
    priorities: [3, 6]
  register: post

- name: Fail on any drop on the RoCE queue between the snapshots
  vars:
    change: "{{ post.counters | lossless.fabric.counters_delta(pre.counters) }}"
  ansible.builtin.assert:
    that:
      - change.ports[item].queue_drops['3'] == 0
      - change.resets | length == 0
  loop: [Ethernet1, Ethernet2]

- name: Counters of every switch from one task (fabric-wide), before a change
  lossless.fabric.switch_counters:
    fabric: "{{ groups['switches'] }}"
  run_once: true
  register: pre_all

- name: The same after the change
  lossless.fabric.switch_counters:
    fabric: "{{ groups['switches'] }}"
  run_once: true
  register: post_all

- name: What leaf1 counted in between
  ansible.builtin.debug:
    msg: "{{ (post_all.switches.leaf1.counters | lossless.fabric.counters_delta(pre_all.switches.leaf1.counters)).ports }}"
  run_once: true

- name: Read a Junos switch that is not in the plan
  lossless.fabric.switch_counters:
    platform: junos
    ports: [et-0/0/0, et-0/0/1]
"""

RETURN = r"""
counters:
  description:
    - The snapshot. Counters keyed by priority, queue or priority group use string keys V("0") to V("7"); values are
      integers except C(watchdog_status).
    - "Per-port counter names: C(pfc_rx_frames), C(pfc_tx_frames), C(pfc_rx_duration), C(pfc_tx_duration) (per priority);
      C(ecn_marked), C(queue_tx_packets) and C(queue_tx_bytes) (what the egress queue transmitted: which queue carried
      the traffic), C(queue_drops) (tail/buffer and WRED), C(wred_drops), C(voq_drops), C(watchdog_storms),
      C(watchdog_restores), C(watchdog_status) (per queue); C(pg_discards) (per priority group); C(ecn_marked_total),
      C(in_discards), C(out_discards), C(cnp_packets), and C(pfc_rx_frames_total) / C(pfc_tx_frames_total) where the
      switch shows no per-priority split."
  returned: when the switch answered
  type: dict
  contains:
    device:
      description: The inventory host name.
      type: str
      sample: leaf1
    kind:
      description: V(switch) (the NIC counters module returns V(nic) in the same shape).
      type: str
      sample: switch
    platform:
      description: The switch OS.
      type: str
      sample: eos
    taken_at:
      description: UTC time (ISO 8601) just before the show commands were sent.
      type: str
      sample: "2025-06-01T12:00:00.123456+00:00"
    ports:
      description: Port name -> counter name -> value, or index -> value.
      type: dict
      sample:
        Ethernet1:
          pfc_rx_frames: {"3": 1204}
          pfc_tx_frames: {"3": 57}
          ecn_marked: {"3": 81234}
          ecn_marked_total: 81234
          queue_drops: {"3": 0}
          watchdog_storms: {"3": 0}
          in_discards: 0
          out_discards: 0
    not_available:
      description: Counter names no port of this switch reported.
      type: list
      elements: str
      sample: [cnp_packets, pg_discards]
    raw:
      description: Each show command sent -> the text the switch printed.
      type: dict
commands:
  description: The show commands sent, in order.
  returned: when the platform and ports are known
  type: list
  elements: str
command_errors:
  description: Show commands the switch refused or answered with nothing usable -> what it printed.
  returned: when the switch answered
  type: dict
missing_ports:
  description: Asked ports the switch reported no counters for.
  returned: when one is missing (the task fails)
  type: list
  elements: str
device_said:
  description: What the switch answered when reading failed.
  returned: on device failure
  type: str
switches:
  description:
    - Fabric-wide mode (O(fabric)), inventory host name -> that switch's result, with the keys a per-host task returns
      (RV(counters), RV(commands), RV(command_errors), and C(failed), C(msg), RV(missing_ports), RV(device_said) when it
      failed). Warnings are raised on the task, each naming its switch.
  returned: with O(fabric)
  type: dict
  sample:
    leaf1:
      changed: false
      command_errors: {}
      counters: {device: leaf1, kind: switch, platform: eos, ports: {}}
"""
