# SPDX-License-Identifier: GPL-3.0-or-later
"""Role variables checked whole: every rule refuses a trailing newline, a second line and non-ASCII digits."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.filter.role_var_errors import role_var_errors
from ansible_collections.lossless.fabric.plugins.module_utils._common import _role_vars

GOOD = [
    ("abs_path", "/etc/opensm/opensm.conf"), ("abs_path_or_empty", ""), ("abs_path_or_empty", "/usr/sbin"),
    ("path", "~/.kube/config"), ("path", "kubeconfig"), ("path_or_empty", ""), ("hex_byte", "0x03"), ("hex_byte", "0xFF"),
    ("k8s_version", "1.30"), ("https_url", "https://helm.ngc.nvidia.com/nvidia"), ("https_url", "https://charts.example:8443"),
    ("seconds", 1), ("seconds", "300"), ("count", 0), ("argv", ["systemctl", "kill", "--signal=HUP", "opensm"]),
]

BAD = [
    ("abs_path", "/etc/opensm/opensm.conf\n"), ("abs_path", "etc/opensm.conf"), ("abs_path", "/etc/open sm.conf"), ("abs_path", "/tmp/x;reboot"),
    ("abs_path_or_empty", "\n"), ("path", ""), ("path", "a\nb"), ("path", "$HOME/x"), ("hex_byte", "0x03\n"), ("hex_byte", "0x03\nlog_file /tmp/x"),
    ("hex_byte", "0x\u0663"), ("hex_byte", "0x100"), ("hex_byte", "3"), ("hex_byte", 3), ("k8s_version", "1.30\n"), ("k8s_version", "1.\u0663"),
    ("k8s_version", 1.3), ("https_url", "http://insecure.example"), ("https_url", "https://h.example/x\n"), ("https_url", "https://u:p@h.example"),
    ("seconds", 0), ("seconds", -5), ("seconds", True), ("seconds", "5\n"), ("seconds", "\u0665"), ("count", -1), ("count", "1.5"),
    ("argv", []), ("argv", "systemctl restart opensm"), ("argv", ["systemctl", ""]), ("argv", ["systemctl", "restart\nreboot"]), ("argv", ["kill", 1]),
]


@pytest.mark.parametrize("rule, value", GOOD, ids=[f"{r}-{v!r}" for r, v in GOOD])
def test_good_values_pass(rule, value):
    assert _role_vars.check("v", rule, value) is None


@pytest.mark.parametrize("rule, value", BAD, ids=[ascii(f"{r}-{v!r}") for r, v in BAD])
def test_bad_values_are_refused_naming_the_variable_and_the_value(rule, value):
    error = _role_vars.check("v", rule, value)
    assert error and error.startswith("v") and ": " in error and "\n" not in error
    if not isinstance(value, list):
        assert repr(value) in error


def test_the_opensm_log_flags_of_the_issue():
    assert role_var_errors({"opensm_log_flags": ["hex_byte", "0x03\nlog_file /tmp/x"], "opensm_log_file": ["abs_path", "/var/log/opensm.log"]}) == [
        "opensm_log_flags: '0x03\\nlog_file /tmp/x' is not a byte in hex (0x00-0xff, like 0x03)"]


def test_every_error_at_once_in_variable_order():
    errors = _role_vars.errors({"b": ["seconds", 0], "a": ["argv", ["ok", "x\ny"]]})
    assert errors == ["a[1]: 'x\\ny' is not a command argument (one line, no control characters)", "b: 0 is not a number of seconds above 0 (1-10000000)"]


def test_an_unknown_rule_is_a_bug_of_the_role():
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    with pytest.raises(AnsibleFilterError, match="unknown rule 'hex'"):
        role_var_errors({"x": ["hex", "0x1"]})
    with pytest.raises(AnsibleFilterError, match=r"give \[rule, value\]"):
        role_var_errors({"x": "0x1"})
