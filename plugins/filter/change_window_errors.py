# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.change_window_errors: thin adapter over _change_window.setting_errors."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._window._change_window import setting_errors

DOCUMENTATION = r"""
name: change_window_errors
short_description: What is wrong with a change window's settings, one message per setting
version_added: 0.1.0
description:
  - Checks every C(change_window_*) setting that reaches a file, a command line or a name with a full match - the
    window id (letters, digits, C(.), C(_) and C(-), at most 61; a trailing newline is refused), the folders (no newline
    or other control character; the timer and tool folders absolute), the hosts named (inventory hosts), the minutes and
    seconds (whole numbers in range), and, given the plan's O(devices), that the window is no longer than every switch's
    OS can hold a commit timer (the window hands its remaining time to each switch as its timer; NX-OS takes at most 3600 s).
  - Returns the list of messages, each naming the setting and its value; empty when every setting is good.
positional: hosts
options:
  _input:
    description: The settings, C({change_window_id - ..., change_window_max_minutes - ..., ...}).
    type: dict
    required: true
  hosts:
    description: The inventory's hosts (C(groups['all'])).
    type: list
    elements: str
    required: true
  devices:
    description: The plan's devices (C(fabric_plan_result.devices)); each switch's platform bounds O(_input.change_window_max_minutes).
    type: dict
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: The window's settings
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors | join('; ') }}"
  vars:
    errors: "{{ {'change_window_id': change_window_id} | lossless.fabric.change_window_errors(groups['all']) }}"

- name: The window's length against every switch's commit timer
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors | join('; ') }}"
  vars:
    errors: "{{ {'change_window_max_minutes': 90} | lossless.fabric.change_window_errors(groups['all'], fabric_plan_result.devices) }}"
"""

RETURN = r"""
_value:
  description: One message per bad setting.
  type: list
  elements: str
"""


def change_window_errors(settings, hosts, devices=None):
    if not isinstance(settings, dict):
        raise AnsibleFilterError("change_window_errors: the settings are a dict, got %r" % (settings,))
    return setting_errors(dict(settings), list(hosts or []), dict(devices or {}))


class FilterModule:
    def filters(self):
        return {"change_window_errors": change_window_errors}
