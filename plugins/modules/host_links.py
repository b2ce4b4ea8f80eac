#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: sysfs reading and the LLDP parsers are plugins/module_utils/_hosts/_links.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: host_links
short_description: What each RDMA NIC of a GPU host sees on its cable - LLDP neighbour, link state, speed - read-only
version_added: 0.1.0
description:
  - Runs on the GPU host. For each NIC of O(nics) returns one end of the cabling check (docs/hosts.md, "Links and LLDP") - the link's
    operational state and speed from sysfs, the InfiniBand width for an InfiniBand-link port, the NIC's own netdev and
    MAC, and the LLDP neighbours the host's LLDP agent heard on that netdev.
  - "Ethernet (RoCE) NICs: C(/sys/class/net/<netdev>/operstate) and C(speed) (Mb/s). InfiniBand-link ports:
    C(/sys/class/infiniband/<dev>/ports/1/state) (C(4: ACTIVE)) and C(rate) (for example 400 Gb/sec, 4X NDR)."
  - "LLDP: lldpd (C(lldpctl -f json <netdevs>)), lldpad (C(lldptool -t -n -i <netdev>)), or none. Output in a form the
    module does not know fails the task with the tool and the form it expected; it never reports an empty neighbour list
    for output it could not read."
  - Firmware LLDP of ConnectX NICs (C(mlxconfig) C(LLDP_NB_*)) is not read - see docs/hosts.md.
  - Never changes the host; the task never reports a change.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.posix
options:
  nics:
    description:
      - The NICs to read, each a mapping with C(name) (the RDMA device, like V(mlx5_0); the key of RV(ends)) and optionally
        C(netdev) (like V(eth2); without it the netdev is found under C(/sys/class/infiniband/<name>/device/net)).
      - Other keys are ignored, so the host's C(lossless_fabric_device.nics) or its plan's C(nics) can be passed as they are.
    type: list
    elements: dict
    required: true
  lldp:
    description:
      - Which LLDP agent to ask. V(auto) takes lldpd when C(lldpctl) is installed, else lldpad when C(lldptool) is, else none.
      - V(none) reads no LLDP (every RV(ends) entry has C(neighbors=[])); use it when the host runs no LLDP agent and say
        so to the cabling check, which then cannot prove the peer of a host NIC from this side.
    type: str
    choices: [auto, lldpd, lldptool, none]
    default: auto
  root:
    description: Lab and test option only - the directory C(/sys) is found under. Real hosts keep the default.
    type: path
    default: /
  bin_dir:
    description: Lab and test option only - a directory searched for C(lldpctl) and C(lldptool) before C(PATH).
    type: path
notes:
  - lldpd keeps a neighbour until its TTL runs out, so a cable pulled a minute ago may still show its old neighbour
    while RV(ends) says C(oper=down).
seealso:
  - module: lossless.fabric.nic_counters
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: What the GPU host's NICs see
  lossless.fabric.host_links:
    nics:
      - {name: mlx5_0, netdev: eth2}
      - {name: mlx5_1, netdev: eth3}
  register: host_links

- name: Only sysfs, no LLDP agent on this host
  lossless.fabric.host_links:
    nics:
      - {name: mlx5_0, netdev: eth2, speed: 400G, rail: 0}   # lossless_fabric_device.nics entries as they are
    lldp: none
"""

RETURN = r"""
ends:
  description: Per NIC name, what that end of the cable sees (the observation shape of the cabling check).
  returned: success
  type: dict
  sample:
    mlx5_0:
      oper: up
      speed: 400G
      width: null
      neighbors: [{system: leaf1, port: swp1, port_id_subtype: ifname, port_descr: swp1, chassis_id: "44:38:39:00:00:01"}]
      self: {netdev: eth2, mac: "02:1a:2b:3c:4d:5e"}
lldp_source:
  description: The LLDP agent asked (V(lldpd), V(lldptool) or V(none)).
  returned: success
  type: str
commands:
  description: The commands run.
  returned: success
  type: list
  elements: str
"""

import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _links as _host_links  # noqa: E402

ARGUMENT_SPEC = {
    "nics": {"type": "list", "elements": "dict", "required": True},
    "lldp": {"type": "str", "default": "auto", "choices": list(_host_links.LLDP_CHOICES)},
    "root": {"type": "path", "default": "/"},
    "bin_dir": {"type": "path"},
}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    root, bin_dir = module.params["root"] or "/", module.params.get("bin_dir")

    def under(rel: str) -> str:
        return os.path.join(root, rel.lstrip("/"))

    def read(rel: str):
        try:
            with open(under(rel), encoding="utf-8") as handle:
                return handle.read()
        except OSError:  # absent, or EINVAL (speed of a link that is down)
            return None

    def read_dir(rel: str) -> list:
        try:
            return sorted(os.listdir(under(rel)))
        except OSError:
            return []

    def which(name: str):
        if bin_dir and os.access(os.path.join(bin_dir, name), os.X_OK):
            return os.path.join(bin_dir, name)
        return module.get_bin_path(name)

    def run(argv: list) -> tuple:
        path = which(argv[0])
        if path is None:
            raise _host_links.HostLinksError("%s: not installed on this host (lldp=%s)" % (argv[0], module.params["lldp"]))
        return module.run_command([path, *argv[1:]], environ_update={"LC_ALL": "C"})

    try:
        result = _host_links.run_host_links(module.params, read, read_dir, run, which)
    except _host_links.HostLinksError as exc:
        module.fail_json(msg=str(exc), changed=False)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
