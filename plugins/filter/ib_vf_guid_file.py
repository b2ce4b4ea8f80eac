# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.ib_vf_guid_file: thin adapter over _intent/_infiniband.vf_guid_file."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _infiniband

DOCUMENTATION = r"""
name: ib_vf_guid_file
short_description: The SR-IOV network operator's static VF GUID file of an InfiniBand host, from its plan
version_added: 0.1.0
description:
  - Renders C(/etc/sriov-operator/infiniband/guids), the file from which the SR-IOV network operator gives VF i of a PF the
    i-th GUID listed for it, from a host plan's C(nics[].pci) and C(nics[].vf_guids) (docs/tenants.md, "InfiniBand").
  - One entry per NIC with VF GUIDs, with the keys C(pciAddress) (the NIC's PCI address) and C(guids) (its VFs' GUIDs in VF order),
    the keys the operator's code reads (C(pkg/host/internal/infiniband/ib_guid_config.go)); GUIDs as colon-separated octets,
    lower case (C(0c:42:a1:03:0f:01:00:00)).
  - An empty string when the host has no VF GUIDs.
options:
  _input:
    description: A host plan, C(fabric_plan_result.devices[inventory_hostname]).
    type: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: The VF GUID file
  ansible.builtin.copy:
    content: "{{ fabric_plan_result.devices[inventory_hostname] | lossless.fabric.ib_vf_guid_file }}"
    dest: /etc/sriov-operator/infiniband/guids
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The file's JSON text with a final newline, or an empty string when the host has no VF GUIDs.
  type: str
"""


def ib_vf_guid_file(plan):
    try:
        return _infiniband.vf_guid_file(plan)
    except ValueError as exc:
        raise AnsibleFilterError("ib_vf_guid_file: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"ib_vf_guid_file": ib_vf_guid_file}
