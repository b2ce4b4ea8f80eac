# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SSH connection options of the switch modules (spec: module_utils/_platforms/_connection.py)."""

from __future__ import annotations


class ModuleDocFragment:
    """Connection options; each defaults to the usual inventory variable."""

    DOCUMENTATION = r"""
options:
  host:
    description:
      - Address of the switch. Defaults to C(ansible_host), then the inventory hostname.
    type: str
  port:
    description:
      - SSH port. Defaults to C(ansible_port), then 22.
    type: int
  username:
    description:
      - SSH user. Defaults to C(ansible_user).
    type: str
  password:
    description:
      - SSH password. Defaults to C(ansible_password). Never logged or returned.
    type: str
  secret:
    description:
      - Enable secret where the platform asks for one. Defaults to C(ansible_become_password). Never logged or returned.
    type: str
  host_key_checking:
    description:
      - Check the switch's SSH host key against O(known_hosts_file) and refuse unknown or changed keys.
      - Defaults to C(ansible_host_key_checking), then V(true). Turn it off only in the inventory, deliberately.
    type: bool
  known_hosts_file:
    description:
      - Known hosts file used when O(host_key_checking) is on. Defaults to C(lossless_fabric_known_hosts), then C(~/.ssh/known_hosts).
    type: path
  timeout:
    description:
      - Seconds to wait for the TCP connection, for authentication, for the first prompt after login, and for each read
        netmiko itself makes (netmiko's C(read_timeout_override)).
      - A switch that accepts the SSH session and then never shows a prompt fails the task after this long, naming the
        device; it is left unchanged.
    type: int
    default: 30
"""
