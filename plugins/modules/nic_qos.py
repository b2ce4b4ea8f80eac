#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: discovery, parsers, plan and apply are plugins/module_utils/_hosts/_nic.py and _nic_task.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nic_qos
short_description: Lossless RoCEv2 settings on the RDMA NICs (mlx5, bnxt, ionic) of a GPU host, from the fabric plan
version_added: 0.1.0
description:
  - Brings every selected RDMA NIC of the host to the host plan of M(lossless.fabric.fabric_plan) - trust DSCP and the
    full 64-entry DSCP to priority map, PFC on the lossless priorities, 802.3x global pause off, DCQCN reaction and
    notification point on the RoCE priority, CNP DSCP and priority, the verbs traffic class, the RDMA-CM ToS and RoCE v2
    as the RDMA-CM default mode, and the MTU.
  - Finds the NICs and their netdevs in sysfs (C(/sys/class/infiniband/DEV/device/net/IF)); selects them by RDMA device or
    interface name (O(nics), default the plan's NICs) or by PCI vendor and device ID (O(pci_ids)).
  - Detects the driver stack per NIC from the driver its netdev is bound to (C(/sys/class/net/IF/device/driver)) - for
    C(mlx5_core) the NVIDIA driver (C(mlnx_qos), the C(ecn/) sysfs, C(tc/1/traffic_class)) or the upstream kernel (C(dcb)
    from iproute2, debugfs C(cc_params)); for C(bnxt_en) the Broadcom stack (C(dcb) for ETS, PFC and the DSCP map, bnxt_re
    debugfs C(cc_config) for congestion control and the CNP); for C(ionic) the AMD stack (no DCB and no congestion-control
    interface in the kernel, so those settings come back in RV(unsupported)) - and uses its tools. O(stack) (per host, from the
    inventory) overrides the detection; so does a plan NIC entry with C(stack). RDMA-CM ToS and mode go through configfs, the MTU through sysfs,
    global pause through C(ethtool -A), on all.
  - Reads every current value first; check mode and diff show what would change from those real values. Settings that
    already match are not touched.
  - A setting this host cannot take (for example the per-priority DCQCN enable on the upstream driver) is returned in
    RV(unsupported) with the reason, and as a warning; it is never skipped in silence.
  - Firmware (nvconfig) parameters are set with C(mlxconfig) or C(mstconfig) only when O(firmware) names them; they act
    after a firmware reset or reboot, which the module reports in RV(reboot_required) and never does itself.
  - O(state=restored) puts the NICs back to the values an earlier O(state=gathered) (or V(present)) run read - the change
    window's NIC rollback. The same read, compare, apply and read-back path runs, so check mode, diff and idempotence hold;
    a value that was not readable then is returned in RV(unsupported) with the reason.
  - The settings are runtime state - lost on reboot and driver reload. RV(persist) holds, per interface, the commands
    that set them again; the role lossless.fabric.nic_qos installs them as a systemd unit started by a udev rule.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.posix
  - lossless.fabric._nic
attributes:
  check_mode:
    support: full
    details:
      - Reads the real current values and reports the commands a real run would execute; writes nothing.
  diff_mode:
    support: full
    details:
      - Per NIC, the settings that differ, before (read from the host) and after (the plan).
  idempotent:
    support: full
options:
  state:
    description:
      - V(present) applies the plan; V(gathered) only reads and compares (never changes anything; RV(nics) shows what differs).
      - V(restored) writes back the values of O(restore), NIC by NIC, and reads them back.
      - O(plan) (kind V(host), transport V(roce)) is required with V(present) and V(gathered), and not used with V(restored).
        Every value of it is checked (priorities 0-7, DSCP 0-63, ...) before anything is read or written.
    type: str
    default: present
    choices: [present, gathered, restored]
  restore:
    description:
      - With O(state=restored), the registered result of an earlier V(gathered) or V(present) run on this host (or its RV(nics)).
        Each NIC's C(before) values are put back; its C(netdev) and C(stack) must still match.
      - Every value is checked before anything is written (a bad bit, an unknown setting, a name with a newline fail the task).
      - Only the NICs of that result are touched (O(nics) may narrow them; O(pci_ids) and O(firmware) are refused).
    type: dict
  stack:
    description:
      - The driver stack; V(auto) picks it per NIC from the bound driver - V(bnxt) for C(bnxt_en), V(ionic) for C(ionic), and
        for C(mlx5_core) V(mlnx) when C(/sys/class/net/IF/qos/trust) and C(/sys/class/net/IF/ecn) exist, else V(upstream).
    type: str
    default: auto
    choices: [auto, mlnx, upstream, bnxt, ionic]
  firmware:
    description:
      - Firmware (nvconfig) parameters to set per NIC, for example C(ROCE_CC_PRIO_MASK_P1), C(CNP_DSCP_P1),
        C(CNP_802P_PRIO_P1). Compared with the value the card boots with next; needs C(mlxconfig) or C(mstconfig).
      - A change sets RV(reboot_required); the module never resets the firmware or reboots.
    type: dict
  rollback_timer:
    description:
      - A rollback timer for the change, as a switch's commit timer - what a change window gives the NICs.
      - With O(state=present) and O(rollback_timer.confirm_timeout) - before the first write, the NICs' current values are
        saved in the timer's record (O(rollback_timer.state_dir)C(/NAME/state.json), mode 0600) and a detached process is
        started on the host; unless the timer is confirmed (M(lossless.fabric.rollback_timer) O(lossless.fabric.rollback_timer#module:state=confirmed))
        within that many seconds, it puts those values back by itself (the same path as O(state=restored)). Nothing to
        change arms no timer (RV(timer) is null).
      - With O(state=restored) (and no O(restore)) - rolls the timer back now - puts back the values it saved and settles it;
        if it already fired, changes nothing and returns C(fired=true).
      - The timer lives in one process - a reboot loses it (and the runtime NIC settings with it).
      - While such a timer is armed on the host, every other change of the NICs (O(state=present) or O(state=restored)
        without it) is refused, naming the timer - its put-back would undo that change.
    type: dict
    suboptions:
      name:
        description: The timer's id on the host (letters, digits, C(_), C(.) and C(-), at most 64). The change window uses
          C(<window name>-<inventory_hostname>-nic).
        type: str
        required: true
      confirm_timeout:
        description: Seconds until the NICs are put back unless confirmed; required with O(state=present).
        type: int
      state_dir:
        description: Where the timer's record lives; default C(var/lib/lossless-fabric/rollback-timers) under O(root).
        type: path
notes:
  - Changes (O(state=present), O(state=restored)) hold the host's NIC lock, an C(flock) of
    C(run/lossless-fabric/nic-qos.lock) under O(root); a second run changing the NICs of the host at the same time fails at
    once, naming the holder (PID, start time, what it does). The lock is free when that process ends, however it ends.
    V(gathered) only reads and takes no lock.
  - Needs root on the host (C(become)) - sysfs, configfs and debugfs writes and the DCB netlink calls are privileged.
  - Upstream kernels have no per-priority DCQCN enable and no device-wide verbs traffic class; verbs applications such as
    NCCL set the traffic class per QP (C(NCCL_IB_TC) from the plan).
  - Broadcom (bnxt) - PFC needs ETS set by the host first (the module sets it, RoCE priority in TC 1, as Broadcom's
    C(bnxt_setupcc.sh) does); congestion control is one switch per device; with the firmware LLDP agent owning DCB the
    driver refuses every DCB set. AMD (ionic) - mainline has no DCBNL and no congestion-control file; see docs/hosts.md.
  - If C(lldpad) runs, it may overwrite these settings; the vendor tool warns about it.
seealso:
  - module: lossless.fabric.nic_counters
  - module: lossless.fabric.fabric_plan
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Lossless RoCE on the NICs of the plan
  lossless.fabric.nic_qos:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"
  become: true
  register: nic

- name: Every ConnectX-7 of the host, and DCQCN on priority 3 in firmware (acts after a reboot)
  lossless.fabric.nic_qos:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"
    pci_ids: ["15b3:1021"]
    firmware:
      ROCE_CC_PRIO_MASK_P1: 8
  become: true

- name: Only read and compare (drift check); the result is also the backup for a restore
  lossless.fabric.nic_qos:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"
    state: gathered
  register: drift

- name: A change that puts itself back in 10 minutes unless confirmed (a change window's NIC change)
  lossless.fabric.nic_qos:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"
    rollback_timer: {name: window-1-nic, confirm_timeout: 600}
  become: true

- name: Keep it
  lossless.fabric.rollback_timer:
    name: window-1-nic
    state: confirmed
    state_dir: /var/lib/lossless-fabric/rollback-timers
  become: true

- name: Put the NICs back to what that earlier gathered run read
  lossless.fabric.nic_qos:
    state: restored
    restore: "{{ drift }}"
  become: true
"""

RETURN = r"""
timer:
  description:
    - With O(rollback_timer) - the timer as M(lossless.fabric.rollback_timer) returns it (C(name), C(status), C(pending_until),
      C(pid), C(kind) V(nic), C(state_dir), C(outcome)); null when there was nothing to change.
  returned: when O(rollback_timer) is given
  type: dict
pending_until:
  description: With O(state=present) and O(rollback_timer) - when the NICs go back unless confirmed (UTC ISO 8601).
  returned: when a timer was armed
  type: str
fired:
  description: With O(state=restored) and O(rollback_timer) - the timer had already put the NICs back by itself.
  returned: when O(rollback_timer) is given with O(state=restored)
  type: bool
nics:
  description: Per RDMA device, what was found and compared.
  returned: always
  type: dict
  sample:
    mlx5_0:
      name: mlx5_0
      netdev: eth2
      pci: "0000:3b:00.0"
      stack: mlnx
      changes: [pfc]
      before: {pfc: [0, 0, 0, 0, 0, 0, 0, 0]}
      after: {pfc: [0, 0, 0, 1, 0, 0, 0, 0]}
      unsupported: []
      commands: ["mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0"]
  contains:
    stack:
      description: V(mlnx), V(upstream), V(bnxt) or V(ionic).
      type: str
    driver:
      description: The kernel driver the stack speaks to (V(mlx5_core), V(bnxt_en), V(ionic)).
      type: str
    changes:
      description: The settings that differed from the plan (V(trust), V(dscp_map), V(ets) (bnxt), V(pfc), V(global_pause), V(dcqcn),
        V(cnp), V(traffic_class), V(rdma_cm_tos), V(roce_mode), V(mtu)).
      type: list
      elements: str
    before:
      description: Every supported setting as read from the host.
      type: dict
    after:
      description: Every supported setting as the plan wants it (with O(state=restored), as O(restore) had it).
      type: dict
    unsupported:
      description: Settings this host cannot take, each with C(setting) and C(reason).
      type: list
      elements: dict
    commands:
      description: The commands (shell form) that were run, or would run in check mode.
      type: list
      elements: str
unsupported:
  description: Every unsupported setting of every NIC, each with C(nic), C(setting) and C(reason).
  returned: always
  type: list
  elements: dict
  sample: [{"nic": "mlx5_0", "setting": "traffic_class", "reason": "no device-wide verbs traffic class on this driver ..."}]
commands:
  description: All commands of all NICs in order (and the firmware C(set), if any).
  returned: always
  type: list
  elements: str
persist:
  description: Per interface, the commands that set every supported value again, for a boot-time or NIC-appears hook.
  returned: always
  type: dict
  sample: {"eth2": ["mlnx_qos -i eth2 --trust dscp", "echo 9000 > /sys/class/net/eth2/mtu"]}
drivers:
  description: Per interface, the kernel driver of its stack; the role's udev rule matches it (C(DRIVERS==)).
  returned: always
  type: dict
  sample: {"eth2": "mlx5_core", "eth4": "bnxt_en"}
peer_memory:
  description: GPUDirect RDMA prerequisite - whether a GPU peer-memory module is loaded (C(present), C(module), C(nv_mem_version)).
  returned: always
  type: dict
  sample: {"present": true, "module": "nvidia_peermem", "nv_mem_version": null}
firmware:
  description: Per RDMA device, the asked firmware parameters - C(before) (next boot), C(current), C(changes), C(reboot_required).
  returned: always
  type: dict
reboot_required:
  description: A firmware parameter was set (or is pending) that acts only after a firmware reset or reboot.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic_task  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import NicError  # noqa: E402

ARGUMENT_SPEC = dict(_nic_task.QOS_ARGUMENT_SPEC)


def main() -> None:
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=_nic_task.NIC_MUTUALLY_EXCLUSIVE,
        required_if=[("state", "present", ["plan"]), ("state", "gathered", ["plan"]), ("state", "restored", ["restore", "rollback_timer"], True)],
        supports_check_mode=True,
    )
    run, which = _nic_task.tool_runner(module)
    try:
        result = _nic_task.run_qos(module.params, run, which, module.check_mode)
    except NicError as exc:
        module.fail_json(msg=str(exc))
    for item in result["unsupported"]:
        module.warn("%s: %s: %s" % (item["nic"], item["setting"], item["reason"]))
    if not module._diff:  # pylint: disable=protected-access
        result.pop("diff", None)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
