#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: parsing and the snapshot shape are plugins/module_utils/_hosts/_nic.py, _nic_task.py and _common/_snapshot.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nic_counters
short_description: Snapshot the lossless counters of a GPU host's RDMA NICs (PFC, CNP, ECN, drops, retransmissions), read-only
version_added: 0.1.0
description:
  - Reads C(ethtool -S IF) and the RDMA C(hw_counters) of each selected NIC and returns one snapshot in the shape of
    M(lossless.fabric.switch_counters) (kind V(nic), one entry per RDMA device under C(ports)), so the filter
    P(lossless.fabric.counters_delta#filter) gives pre/post differences of NICs and switches alike.
  - "Per priority (keys V(0)-V(7)): C(pfc_rx_frames), C(pfc_tx_frames), C(pfc_rx_duration), C(pfc_tx_duration) (microseconds),
    C(pfc_rx_transitions), C(rx_prio_bytes), C(rx_prio_packets), C(tx_prio_bytes), C(tx_prio_packets), C(rx_prio_discards),
    C(rx_prio_buf_discard), C(rx_prio_cong_discard), C(rx_prio_marked) - from the C(rx_prioN_*) / C(tx_prioN_*) ethtool counters."
  - "Per NIC: C(rx_discards_phy), C(tx_discards_phy), C(tx_pause_storm_warning_events), C(tx_pause_storm_error_events),
    C(rx_out_of_buffer), physical errors, and the RDMA counters C(out_of_sequence), C(packet_seq_err), C(local_ack_timeout_err),
    C(np_ecn_marked_roce_packets), C(np_cnp_sent), C(rp_cnp_handled), C(rp_cnp_ignored), C(out_of_buffer) and the other
    retransmission and error counters."
  - "Each driver's own names are read and reported under these names: mlx5's are the names themselves; Broadcom bnxt_en /
    bnxt_re (C(rx_bytes_priN), C(rx_pfc_ena_frames_priN), C(pfc_priN_rx_duration_us), C(tx_cnp_pkts), C(oos_drop_count), ...)
    and AMD ionic (C(rx_pripause_N_1us_count), ...) are mapped as docs/hosts.md lists. A counter the driver does not have
    is in C(not_available), never 0."
  - Reads the NICs of O(nics), O(pci_ids) or O(plan); without any of the three, every RDMA NIC with a netdev.
  - Never changes the host; the task never reports a change.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.posix
  - lossless.fabric._nic
options:
  device:
    description: The name the snapshot carries in C(device) (the role passes the inventory hostname); defaults to the host's hostname.
    type: str
  priorities:
    description: Priorities whose per-priority counters are reported.
    type: list
    elements: int
    default: [0, 1, 2, 3, 4, 5, 6, 7]
notes:
  - Counters the driver does not show are absent and listed in RV(counters.not_available).
seealso:
  - module: lossless.fabric.nic_qos
  - module: lossless.fabric.switch_counters
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: NIC counters before the benchmark
  lossless.fabric.nic_counters:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"
  register: nic_pre

- name: Only the RoCE priority
  lossless.fabric.nic_counters:
    nics: [mlx5_0, mlx5_1]
    priorities: [3]
  register: nic_post

- name: No RoCE retransmission and no drop during the benchmark
  vars:
    change: "{{ nic_post.counters | lossless.fabric.counters_delta(nic_pre.counters) }}"
  ansible.builtin.assert:
    that:
      - change.ports[item].local_ack_timeout_err | default(0) == 0
      - change.ports[item].rx_discards_phy | default(0) == 0
  loop: "{{ nic_post.counters.ports | list }}"
"""

RETURN = r"""
counters:
  description: The snapshot.
  returned: success
  type: dict
  contains:
    device:
      description: The host (O(device), default the host's hostname).
      type: str
    kind:
      description: Always V(nic).
      type: str
    platform:
      description: The driver stack of the NICs read (V(mlnx), V(upstream), V(bnxt), V(ionic), or V(mixed)).
      type: str
    taken_at:
      description: When the counters were read (ISO 8601, UTC).
      type: str
    ports:
      description: RDMA device -> counter -> value (per priority for the per-priority counters).
      type: dict
      sample: {"mlx5_0": {"pfc_rx_frames": {"3": 1204}, "rx_discards_phy": 0, "rp_cnp_handled": 88}}
    not_available:
      description: Counter names no NIC reported.
      type: list
      elements: str
    raw:
      description: The C(ethtool -S) text per interface.
      type: dict
netdevs:
  description: RDMA device -> interface, as found in sysfs.
  returned: success
  type: dict
  sample: {"mlx5_0": "eth2"}
"""

import socket  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic_task  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import NicError  # noqa: E402

ARGUMENT_SPEC = dict(_nic_task.COUNTERS_ARGUMENT_SPEC)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=_nic_task.NIC_MUTUALLY_EXCLUSIVE, supports_check_mode=True)
    run, _which = _nic_task.tool_runner(module)
    try:
        result = _nic_task.run_counters(module.params, run, module.params.get("device") or socket.gethostname())
    except NicError as exc:
        module.fail_json(msg=str(exc), changed=False)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
