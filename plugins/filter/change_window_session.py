# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.change_window_session: thin adapter over _change_window.session_name."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._window._change_window import session_name

DOCUMENTATION = r"""
name: change_window_session
short_description: The switch session name of one switch in one run of a change window
version_added: 0.1.0
description:
  - Returns C(<window name>-<10 hex digits>) (64 characters at most, letters, digits, C(-) and C(_)), the hex digits
    a SHA-1 of the window name, the window's start time and the host.
  - The change window names each switch's session before the push, so its settle and its rescue confirm or roll
    back only the commit this run made, never another run's pending one.
positional: window, started_at
options:
  _input:
    description: The inventory hostname.
    type: str
    required: true
  window:
    description: The window's name, C(change-window-<id>).
    type: str
    required: true
  started_at:
    description: When this run of the window started (any one-line text that differs between runs).
    type: str
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: The session of this switch in the window
  ansible.builtin.debug:
    msg: "{{ inventory_hostname | lossless.fabric.change_window_session('change-window-w1', '2026-12-01T19:00:00+00:00') }}"
"""

RETURN = r"""
_value:
  description: The session name.
  type: str
"""


def change_window_session(host, window_name, started_at):
    try:
        return session_name(str(window_name), str(started_at), str(host))
    except ValueError as exc:
        raise AnsibleFilterError("change_window_session: %s" % exc) from exc


class FilterModule:
    def filters(self):
        return {"change_window_session": change_window_session}
