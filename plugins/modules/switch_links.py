#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/switch_links.py; this
# file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: switch_links
short_description: Read a switch's LLDP neighbours, link state and speed per port (read-only)
version_added: 0.1.0
description:
  - Reads, per port, what the switch itself sees on its cables - the LLDP neighbours (system name, port ID and its
    subtype, port description, chassis ID, each as the neighbour sent it), the operational state and the negotiated
    speed - over one SSH connection (netmiko, in the controller's worker), and returns it in RV(ends), the shape every
    cabling reader of the collection returns (switches, GPU hosts, InfiniBand) for M(lossless.fabric.cabling_verify).
  - "EOS: C(show lldp neighbors detail | json) and C(show interfaces status | json), one round trip for every port.
    NVUE: C(nv show interface -o json), one command for every interface. Junos: per port
    C(show lldp neighbors interface X | display xml) and C(show interfaces X), all in one write."
  - It reports, it does not compare. A Junos neighbour may send its port ID as a locally assigned number (its SNMP
    ifIndex) with the interface name in the port description; a Linux host running lldpd sends its MAC address as
    port ID and the netdev name as port description. Both are returned exactly as sent.
  - Output the parser does not recognise fails the task, naming the switch, the platform, the command and the form
    expected; it never turns into an empty success.
  - Never changes the device; the task never reports a change, in check mode or not.
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
      - Defaults to the ports of C(lossless_fabric_device.ports); without them, every port the switch shows (EOS and
        NVUE; Junos reads per port and needs the names).
      - An asked port the switch says nothing about is returned with state and speed null and no neighbours,
        and raises a warning.
    type: list
    elements: str
  fabric:
    description:
      - Fabric-wide mode. Read every listed inventory host from this one task (run it once, e.g. with C(run_once)),
        each switch over its own connection from a pool of O(workers) threads, with that host's connection variables,
        platform and C(lossless_fabric_device.ports). The result holds one result per switch in RV(switches), each
        what a per-host task returns; the task fails when any switch fails, naming each.
    type: list
    elements: str
  workers:
    description:
      - Threads of the fabric-wide mode.
    type: int
    default: 32
notes:
  - The speed is reported only for a port that is up (EOS and Junos print the configured speed on a down port too).
  - The commands and output forms, with their sources, are in the collection's docs/vendor-eos.md, docs/vendor-nvue.md, docs/vendor-sonic.md and
    docs/vendor-junos.md, section "LLDP and link state".
seealso:
  - module: lossless.fabric.switch_counters
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: What leaf1 sees on its cabled ports
  lossless.fabric.switch_links:
  register: links

- name: Every switch from one task, for the cabling check
  lossless.fabric.switch_links:
    fabric: "{{ groups['switches'] }}"
  run_once: true
  register: switch_links

- name: The neighbour on one port
  ansible.builtin.debug:
    msg: "{{ links.ends['swp1'].neighbors }}"

- name: A Junos switch that is not in the plan
  lossless.fabric.switch_links:
    platform: junos
    ports: [et-0/0/1, et-0/0/2]
"""

RETURN = r"""
device:
  description: The inventory host name.
  returned: always
  type: str
  sample: leaf1
platform:
  description: The switch OS.
  returned: when known
  type: str
  sample: nvue
commands:
  description: The show commands sent, in order.
  returned: when the platform and ports are known
  type: list
  elements: str
  sample: ["nv show interface -o json"]
ends:
  description:
    - Port name -> what the switch sees on it. C(oper) is V(up), V(down) or null (the switch did not say); C(speed) the
      negotiated speed in whole G (V(400G)) or null; C(width) is always null on Ethernet; C(neighbors) the LLDP
      neighbours, each with C(system), C(port) (the port ID as sent), C(port_id_subtype) (V(ifname), V(local), V(mac),
      ... or null), C(port_descr) and C(chassis_id) (null when not sent).
  returned: when the switch answered in a form the parser reads
  type: dict
  sample:
    swp1:
      oper: up
      speed: 400G
      width: null
      neighbors:
        - {system: gpu1, port: "02:4f:1a:00:3b:7c", port_id_subtype: mac, port_descr: eth2, chassis_id: "02:4f:1a:00:3b:7c"}
    swp2: {oper: down, speed: null, width: null, neighbors: []}
raw:
  description: Each show command sent -> the text the switch printed.
  returned: when the switch answered
  type: dict
device_said:
  description: What the switch printed for the command that failed.
  returned: on failure, when there is one
  type: str
switches:
  description:
    - Fabric-wide mode (O(fabric)), inventory host name -> that switch's result, with the keys a per-host task returns.
  returned: with O(fabric)
  type: dict
"""
