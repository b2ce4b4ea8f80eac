#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: parsing is module_utils/_ib/_facts.py (parse_ibnetdiscover), naming and the ends module_utils/_ib/_links.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: ib_links
short_description: The InfiniBand fabric's links as ibnetdiscover finds them, per inventory name - read-only
version_added: 0.1.0
description:
  - Runs C(ibnetdiscover) on a host attached to the fabric (typically the subnet manager host) and returns, per switch and
    per GPU host, one end of the cabling check for every port - the peer (system and port), the link width and speed
    (C(4xNDR) is width V(4X), speed V(400G)).
  - "Naming (docs/infiniband.md, \"Links: ib_links\"): a CA whose NodeDescription is C(<hostname> <device>) - rdma-ndd's
    default C(%h %d) - is NIC C(<device>) of host C(<hostname>); a switch is its NodeDescription when that is one name, or
    the C(<hostname>) of NVIDIA's C(MF0;<hostname>:<model>/U1) form; O(node_names) wins over both. Nodes it cannot name are
    listed in RV(unmapped)."
  - A switch port or CA port without a discovered peer is reported with C(oper=down) (ibnetdiscover lists only linked ports).
  - Never changes the fabric; the task never reports a change.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.posix
options:
  diag_bin:
    description:
      - Folder holding C(ibnetdiscover). Default is the C(PATH) of the remote user (and C(/usr/sbin), C(/sbin)).
      - The lab sets it to its wrappers, which run the real tool inside the simulated fabric's network namespace.
    type: path
  node_names:
    description:
      - NodeDescription or node GUID (V(0x) + hex) -> inventory name, for switches whose description is not their name
        (see EXAMPLES), or C(<host> <device>) for a CA whose description is not rdma-ndd's - better set rdma-ndd there,
        a firmware description is the same on every HCA.
    type: dict
    default: {}
  timeout:
    description: Seconds C(ibnetdiscover) may take.
    type: int
    default: 60
notes:
  - C(ibnetdiscover) sends SMPs, which need the rights of the C(umad) device (root on real hosts).
  - The lab's ibsim 0.10 knows link speeds up to HDR (no NDR); see docs/infiniband.md.
seealso:
  - module: lossless.fabric.ib_fabric_facts
  - module: lossless.fabric.host_links
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: The fabric's links, from the subnet manager host
  lossless.fabric.ib_links:
  register: ib_links

- name: NVIDIA switches whose description is not their inventory name
  lossless.fabric.ib_links:
    node_names:
      "MF0;ib-leaf-01:MQM9700/U1": leaf1
      "0x0c42a10300a1b2c0": spine1
"""

RETURN = r"""
devices:
  description: Inventory name -> its ends (switch port number or NIC name -> what that end sees).
  returned: success
  type: dict
  sample:
    leaf1:
      "1": {oper: up, speed: 400G, width: 4X, neighbors: [{system: gpu1, port: mlx5_0, port_id_subtype: null, port_descr: null,
             chassis_id: "0x0c42a10300010000"}]}
      "2": {oper: down, speed: null, width: null, neighbors: []}
    gpu1:
      mlx5_0: {oper: up, speed: 400G, width: 4X, neighbors: [{system: leaf1, port: "1", port_id_subtype: null, port_descr: null,
               chassis_id: "0x0008f18f2f1bf300"}], self: {netdev: null, mac: null, guid: "0x0c42a10300010001"}}
unmapped:
  description: Nodes that could not be named, as C(<type> <node GUID> '<NodeDescription>').
  returned: success
  type: list
  elements: str
commands:
  description: The commands run.
  returned: success
  type: list
  elements: str
"""

import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _links as _ib_links  # noqa: E402

ARGUMENT_SPEC = {
    "diag_bin": {"type": "path"},
    "node_names": {"type": "dict", "default": {}},
    "timeout": {"type": "int", "default": 60},
}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    diag_bin = module.params["diag_bin"]

    # The command running of ib_fabric_facts (its Diags): diag_bin first, else PATH plus the sbin folders.
    def run(argv: list) -> tuple:
        if diag_bin:
            path = os.path.join(diag_bin, argv[0])
            if not os.access(path, os.X_OK):
                module.fail_json(msg="diag_bin: %s is not an executable %s (install infiniband-diags)" % (path, argv[0]))
        else:
            path = module.get_bin_path(argv[0], opt_dirs=["/usr/sbin", "/sbin"])
            if path is None:
                module.fail_json(msg="%s not found in PATH: install infiniband-diags or set diag_bin" % argv[0])
        cmd = [path] + [str(a) for a in argv[1:]]
        try:
            return module.run_command(cmd, timeout=module.params["timeout"])
        except TypeError:  # ansible-core without run_command(timeout=)
            return module.run_command(cmd)

    try:
        result = _ib_links.run_ib_links(module.params, run)
    except _ib_links.IbLinksError as exc:
        module.fail_json(msg=str(exc), changed=False)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
