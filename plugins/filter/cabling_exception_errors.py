# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.cabling_exception_errors: thin adapter over _cabling.check_exceptions (the role's preflight)."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._cabling import _compare as _cabling

DOCUMENTATION = r"""
name: cabling_exception_errors
short_description: The errors of a list of cabling exceptions, before any device is read
version_added: 0.1.0
description:
  - Checks the exceptions the cabling check takes (M(lossless.fabric.cabling_verify) O(lossless.fabric.cabling_verify#module:exceptions))
    - each C(end) (V(<host>:<port or NIC>) or V(<host>)), C(finding) (a bad finding kind) and C(reason) (one line), no
    other key - and lists every problem, naming the entry, the key and the value. The role C(lossless.fabric.cabling) calls
    it in its preflight so a typo fails before any switch is logged into.
options:
  _input:
    description: The exceptions.
    type: list
    elements: raw
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Preflight - the cabling exceptions
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: "{{ cabling_exceptions | lossless.fabric.cabling_exception_errors }}"
"""

RETURN = r"""
_value:
  description: One line per problem, for example C(exceptions[0].finding - 'slow' is not a finding ...) with a colon after the
    key; empty when every exception is fine.
  type: list
  elements: str
"""


def cabling_exception_errors(exceptions):
    return _cabling.check_exceptions(exceptions)[1]


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"cabling_exception_errors": cabling_exception_errors}
