# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.role_var_errors: thin adapter over _role_vars.errors."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._common import _role_vars

DOCUMENTATION = r"""
name: role_var_errors
short_description: Role variables that reach a file, a command line or a name, checked whole
version_added: 0.1.0
description:
  - Checks each variable against its rule with a full match over ASCII only (a trailing newline fails; a C($) anchor would
    let it through) and lists every variable that fails, naming it and its value. The roles' preflights use it before
    anything is written.
  - Rules - V(abs_path), V(abs_path_or_empty), V(path), V(path_or_empty) (letters, digits and C(._+@/-), C(~) for V(path)),
    V(hex_byte) (C(0x00)-C(0xff)), V(k8s_version) (major.minor), V(https_url), V(seconds) (an int above 0), V(count)
    (an int, 0 or more), V(argv) (a non-empty list of one-line arguments).
options:
  _input:
    description: Variable name to C([rule, value]).
    type: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Preflight - role variables that reach opensm.conf
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ {'opensm_log_flags': ['hex_byte', opensm_log_flags]} | lossless.fabric.role_var_errors }}"
"""

RETURN = r"""
_value:
  description: One line per variable that fails its rule, for example C(opensm_log_flags - '0x03\\nx' is not a byte in hex) with a colon
    after the name; empty when every variable is fine.
  type: list
  elements: str
"""


def role_var_errors(checks):
    if not isinstance(checks, dict):
        raise AnsibleFilterError("role_var_errors: needs a mapping of variable name to [rule, value]")
    try:
        return _role_vars.errors(checks)
    except ValueError as exc:
        raise AnsibleFilterError("role_var_errors: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"role_var_errors": role_var_errors}
