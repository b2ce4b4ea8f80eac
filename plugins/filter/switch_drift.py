# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.switch_drift: thin adapter over _switch_config.drift."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._switches._config import drift

DOCUMENTATION = r"""
name: switch_drift
short_description: Where a switch's gathered QoS configuration differs from its plan
version_added: 0.1.0
description:
  - Compares the structure M(lossless.fabric.switch_config) returns with O(state=gathered) against the switch's plan
    from M(lossless.fabric.fabric_plan) and lists every difference. Values a platform cannot read back are not judged.
positional: gathered
options:
  _input:
    description: The switch's plan, C(fabric_plan_result.devices[inventory_hostname]).
    type: dict
    required: true
  gathered:
    description: The C(gathered) return value of M(lossless.fabric.switch_config).
    type: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Fail when the switch drifted from its plan
  ansible.builtin.assert:
    that: fabric_plan_result.devices[inventory_hostname] | lossless.fabric.switch_drift(read.gathered) | length == 0
"""

RETURN = r"""
_value:
  description:
    - One line per difference, for example C(Ethernet1/1 - pfc_priorities - device has [3, 4], plan has [3]) with colons
      between the parts; empty when the device holds the plan.
  type: list
  elements: str
"""


def switch_drift(plan, gathered):
    if not isinstance(plan, dict) or not isinstance(gathered, dict):
        raise AnsibleFilterError("switch_drift: needs a switch plan (dict) and a gathered structure (dict)")
    try:
        return drift(plan, gathered)
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError("switch_drift: not a switch plan from fabric_plan (%s: %s)" % (type(exc).__name__, exc)) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"switch_drift": switch_drift}
