# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.counters_delta: thin adapter over _snapshot.delta."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import delta

DOCUMENTATION = r"""
name: counters_delta
short_description: What the counters of a device did between two snapshots (post minus pre)
version_added: 0.1.0
description:
  - Subtracts a pre snapshot from a post snapshot of the same device (from M(lossless.fabric.switch_counters), or any
    module returning the same shape) and returns the differences in the same shape.
  - A counter that went down between the snapshots (cleared, or wrapped) is not reported as a negative number - it is
    listed in RV(_value.resets) and its difference is its post value, what was counted since the reset.
  - Ports, counters and indexes present in one snapshot only are listed in RV(_value.only_in_pre) or
    RV(_value.only_in_post) and left out of RV(_value.ports).
  - Values that are not counters (C(watchdog_status)) are taken from post.
positional: pre
options:
  _input:
    description: The post snapshot (C(counters) of the registered result, or the registered result itself).
    type: dict
    required: true
  pre:
    description: The pre snapshot of the same device.
    type: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: No drop and no PFC watchdog storm on the RoCE queue during the test
  vars:
    change: "{{ post.counters | lossless.fabric.counters_delta(pre.counters) }}"
  ansible.builtin.assert:
    that:
      - change.ports[item].queue_drops['3'] == 0
      - change.ports[item].watchdog_storms['3'] | default(0) == 0
    fail_msg: "{{ item }}: {{ change.ports[item] }}; counters reset meanwhile: {{ change.resets }}"
  loop: "{{ post.counters.ports | list }}"

- name: ECN marked packets per port during the benchmark
  ansible.builtin.debug:
    msg: "{{ (post | lossless.fabric.counters_delta(pre)).ports | dict2items | map(attribute='value.ecn_marked_total', default=0) | list }}"
"""

RETURN = r"""
_value:
  description: The differences, in the snapshot shape.
  type: dict
  contains:
    device:
      description: The device of both snapshots.
      type: str
    kind:
      description: The kind of both snapshots (V(switch), V(nic)).
      type: str
    platform:
      description: The platform of the post snapshot.
      type: str
    taken_at:
      description: When the post snapshot was taken.
      type: str
    since:
      description: When the pre snapshot was taken.
      type: str
    interval_s:
      description: Seconds between the snapshots (null when a time is missing).
      type: float
    ports:
      description: Port -> counter -> post minus pre (per index for counters kept per priority or queue).
      type: dict
      sample: {"Ethernet1": {"pfc_rx_frames": {"3": 120}, "queue_drops": {"3": 0}, "in_discards": 0}}
    resets:
      description: Counters that went down; each names C(port), C(counter), C(index) (per-index counters) and the C(pre) and C(post) values.
      type: list
      elements: dict
      sample: [{"port": "Ethernet1", "counter": "pfc_rx_frames", "index": "3", "pre": 900, "post": 12}]
    only_in_pre:
      description: Ports, counters or indexes only the pre snapshot has (C(port), with C(counter) and C(index) when narrower).
      type: list
      elements: dict
    only_in_post:
      description: Ports, counters or indexes only the post snapshot has.
      type: list
      elements: dict
    not_available:
      description: Counter names either snapshot lacks on every port.
      type: list
      elements: str
    raw:
      description: Always empty; the raw text stays in the snapshots.
      type: dict
"""


def counters_delta(post, pre):
    try:
        return delta(post, pre)
    except ValueError as exc:
        raise AnsibleFilterError("counters_delta: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"counters_delta": counters_delta}
