# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.change_findings: thin adapter over _findings.counter_findings."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._window._findings import counter_findings

DOCUMENTATION = r"""
name: change_findings
short_description: Findings in the switch, NIC and InfiniBand counters of one phase of a change window
version_added: 0.1.0
description:
  - Takes the snapshots of every switch in scope at the end of a phase and at its start, subtracts them
    (as C(lossless.fabric.counters_delta) does) and returns what a change window must not ignore.
  - Blocking - C(lossless_drop) (a queue or priority group of a lossless priority dropped packets),
    C(watchdog_storm) (the PFC watchdog detected a storm, or a queue is in DEADLOCK), C(ecn_without_cnp)
    (ECN-marked packets while the CNP counters that are available saw none) and C(no_counters) (a device in scope
    has no snapshot).
  - Warnings - C(ecn_cnp_unknown) (ECN marks, but nothing in scope counts CNPs), C(lossy_pause) (PFC pause frames on
    a priority the plan does not make lossless), C(counter_reset) (a counter went down between the snapshots) and
    C(no_nic_counters) (a GPU host's NIC snapshot is missing, so its CNPs are not counted).
  - The switch-port, NIC and ECN/CNP rules are the evidence rules of the nccl gate (one copy, docs/benchmark.md,
    "Counter evidence"), by the plans' C(mode) - C(lossless) (default), C(ecn_only) or C(pfc_only). Blocking also
    C(pause_without_ecn) (a switch paused a lossless priority and marked nothing on that queue), C(cnp_off_priority)
    (a NIC's CNPs left on another priority), in C(ecn_only) C(pause_in_ecn_only) (any pause frame), C(roce_drops) and
    C(retransmissions) (above the bound O(evidence.max_drops); C(info) below it), in C(pfc_only) C(ecn_in_pfc_only)
    (any ECN mark; missing CNPs are no finding there).
  - With O(evidence) (a phase that ran a benchmark) the traffic rules run too - blocking C(roce_off_queue) (a switch
    port sent less than the share of its bytes on the RoCE queue) and C(roce_off_priority) (a NIC sent less than the
    share on the RoCE priority), warning C(no_traffic).
  - Queue, traffic class and PFC priority are the same number in the plan, so the lossless queues are the plan's
    C(pfc_priorities) and the RoCE queue its C(ecn_queue).
  - InfiniBand (O(ib_before), O(ib_after)) - blocking C(ib_error) (an error counter of any port went up -
    C(SymbolErrorCounter), C(LinkErrorRecoveryCounter), C(LinkDownedCounter), C(PortRcvErrors),
    C(PortRcvRemotePhysicalErrors), C(PortRcvSwitchRelayErrors), C(PortXmitDiscards), C(PortXmitConstraintErrors),
    C(PortRcvConstraintErrors), C(LocalLinkIntegrityErrors), C(ExcessiveBufferOverrunErrors), C(VL15Dropped)) and
    C(no_ib_counters) (a snapshot of the phase is missing or failed); warnings C(ib_port_unread) (a port read at the start
    was not read at the end) and C(counter_reset); informational C(ib_xmit_wait) (C(PortXmitWait) grew - congestion, not
    an error).
positional: before, plans, phase, nic_before, nic_after, ib_before, ib_after, evidence, baseline_mode
options:
  _input:
    description:
      - Inventory hostname -> the snapshot at the end of the phase (M(lossless.fabric.switch_counters) result or its
        C(counters)), with a key for every switch in scope; a null, failed or skipped value is a C(no_counters) finding.
    type: dict
    required: true
  before:
    description: Inventory hostname -> the snapshot at the start of the phase.
    type: dict
    required: true
  plans:
    description: The plans, C(fabric_plan_result.devices) (the lossless priorities and RoCE queue of each switch).
    type: dict
    required: true
  phase:
    description: V(pre) (the baseline benchmark) or V(post) (the change and the benchmark after it).
    type: str
    required: true
    choices: [pre, post]
  nic_before:
    description: Host NIC snapshots at the start of the phase (their CNP counters count as CNP evidence).
    type: dict
  nic_after:
    description: Host NIC snapshots at the end of the phase.
    type: dict
  ib_before:
    description:
      - The InfiniBand fabric's counters at the start of the phase - a M(lossless.fabric.ib_fabric_facts) result (section
        C(counters)) or its C(ib_fabric). Null (with O(ib_after) null) - no InfiniBand fabric in scope.
    type: dict
  ib_after:
    description: The InfiniBand fabric's counters at the end of the phase.
    type: dict
  evidence:
    description:
      - The evidence settings when the phase ran a benchmark - C(share) (of the bytes on the RoCE priority; a fraction, or
        a percent above 1; default 0.95), C(min_bytes) (below this a port or NIC is not judged; default 1000000000) and
        C(max_drops) (the C(ecn_only) bound; default 1000). Null - no benchmark, no traffic rules.
    type: dict
  baseline_mode:
    description:
      - The fabric mode (C(lossless), C(ecn_only), C(pfc_only)) the fabric runs before the change, when the change moves it
        to the plans' mode. The V(pre) phase was counted before anything changed, so it is judged in this mode (no PFC
        priorities in C(ecn_only); the plan's, or its RoCE priority, otherwise); V(post) in the plans' own. Null - the
        plans' mode for both.
    type: str
    choices: [lossless, ecn_only, pfc_only]
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Fail on drops on the lossless queue, PFC watchdog storms and ECN marks nobody answered
  vars:
    findings: "{{ counters_after | lossless.fabric.change_findings(counters_before, fabric_plan_result.devices, 'post') }}"
  ansible.builtin.assert:
    that: findings | selectattr('severity', 'equalto', 'blocking') | list | length == 0
    fail_msg: "{{ findings | map(attribute='message') | list }}"

- name: The same on an InfiniBand fabric (ib_fabric_facts results with the counters section, before and after)
  vars:
    findings: "{{ {} | lossless.fabric.change_findings({}, fabric_plan_result.devices, 'post', {}, {}, ib_before, ib_after) }}"
  ansible.builtin.assert:
    that: findings | selectattr('severity', 'equalto', 'blocking') | list | length == 0
    fail_msg: "{{ findings | map(attribute='message') | list }}"
"""

RETURN = r"""
_value:
  description: One finding per item.
  type: list
  elements: dict
  contains:
    severity:
      description: V(blocking) (the window must not keep the change), V(warning) or V(info).
      type: str
    kind:
      description:
        - C(lossless_drop), C(watchdog_storm), C(ecn_without_cnp), C(no_counters), C(ecn_cnp_unknown), C(lossy_pause),
          C(counter_reset), C(no_nic_counters), C(pause_without_ecn), C(cnp_off_priority), C(pause_in_ecn_only), C(roce_drops),
          C(retransmissions), C(ecn_in_pfc_only), C(roce_off_queue), C(roce_off_priority), C(no_traffic), C(ib_error),
          C(no_ib_counters), C(ib_port_unread) or C(ib_xmit_wait).
      type: str
    phase:
      description: V(pre) or V(post).
      type: str
    device:
      description:
        - The inventory hostname, V(fabric) for a finding across devices, or the InfiniBand node's description (like
          V(gpu1 mlx5_0)) for an InfiniBand port.
      type: str
    node:
      description: The InfiniBand node GUID, for an InfiniBand port.
      type: str
    port:
      description: The port, where one is concerned.
      type: str
    counter:
      description: The counter, where one is concerned.
      type: str
    index:
      description: The priority / queue, where one is concerned.
      type: str
    value:
      description: The delta judged.
      type: raw
    message:
      description: The finding in words, naming the device, port, counter and value.
      type: str
"""


def change_findings(after, before, plans, phase, nic_before=None, nic_after=None, ib_before=None, ib_after=None,  # pylint: disable=too-many-arguments
                    evidence=None, baseline_mode=None):
    try:
        return counter_findings(dict(before or {}), dict(after or {}), dict(plans or {}), phase, nic_before, nic_after, ib_before, ib_after,
                                dict(evidence) if evidence else None, baseline_mode or None)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError("change_findings: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"change_findings": change_findings}
