# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The NIC selection and lab options nic_qos and nic_counters share (spec: NIC_ARGUMENT_SPEC in
module_utils/_hosts/_nic_task.py; tests/unit/plugins/test_examples.py keeps the two in step)."""

from __future__ import annotations


class ModuleDocFragment:
    """Which RDMA NICs of the host, and where the lab keeps sysfs and the tools."""

    DOCUMENTATION = r"""
options:
  plan:
    description:
      - The host's plan from M(lossless.fabric.fabric_plan), C(fabric_plan_result.devices[inventory_hostname]).
      - Its NICs are the ones taken when neither O(nics) nor O(pci_ids) is given.
    type: dict
  nics:
    description:
      - RDMA device names (C(mlx5_0)) or interface names (C(eth2)) to take. Defaults to the NICs of O(plan).
      - A name that is not an RDMA NIC of this host fails the task before any NIC is read or written, listing the NICs found.
      - Mutually exclusive with O(pci_ids).
    type: list
    elements: str
  pci_ids:
    description:
      - Take every RDMA NIC whose PCI IDs match, each given as V(VVVV:DDDD) or V(VVVV) in hex (V(15b3:1021) ConnectX-7,
        V(15b3:101d) ConnectX-6 Dx, V(15b3:a2dc) BlueField-3).
      - Mutually exclusive with O(nics).
    type: list
    elements: str
  root:
    description:
      - Lab and test option only - the directory C(/sys) is found under. Real hosts keep the default.
    type: path
    default: /
  bin_dir:
    description:
      - Lab and test option only - a directory searched for the NIC tools before C(PATH) (C(ethtool); for
        M(lossless.fabric.nic_qos) also C(dcb), C(mlnx_qos), C(mlxconfig), C(mstconfig)).
    type: path
"""
