# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.change_window_timer: thin adapter over _change_window.timer_name."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._window._change_window import timer_name

DOCUMENTATION = r"""
name: change_window_timer
short_description: The rollback timer name of one host in one change window
version_added: 0.1.0
description:
  - Returns C(<window name>-<host>-<suffix>) - one name per window, host and kind of change (V(opensm) for a subnet
    manager's OpenSM files, V(nic) for a GPU host's NICs), the same on every run.
  - A name M(lossless.fabric.rollback_timer) would refuse (longer than 64 characters, or a host name with characters
    other than letters, digits, C(.), C(_) and C(-)) becomes the start of C(<window name>-<host>) (other characters
    made C(_)), C(-), 10 hex digits of the SHA-1 of the whole name and C(-<suffix>) - 64 characters at most, still
    one per host.
positional: window, suffix
options:
  _input:
    description: The inventory hostname.
    type: str
    required: true
  window:
    description: The window's name, C(change-window-<id>).
    type: str
    required: true
  suffix:
    description: The kind of change, 1 to 12 lowercase letters.
    type: str
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: The subnet manager's timer
  ansible.builtin.debug:
    msg: "{{ inventory_hostname | lossless.fabric.change_window_timer('change-window-w1', 'opensm') }}"
"""

RETURN = r"""
_value:
  description: The timer name.
  type: str
"""


def change_window_timer(host, window_name, suffix):
    try:
        return timer_name(str(window_name), str(host), suffix)
    except ValueError as exc:
        raise AnsibleFilterError("change_window_timer: %s" % exc) from exc


class FilterModule:
    def filters(self):
        return {"change_window_timer": change_window_timer}
