# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Shared ``attributes`` documentation for the modules of lossless.fabric."""

from __future__ import annotations


class ModuleDocFragment:
    """Attribute blocks every module picks from."""

    # Standard: every module declares these three.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in C(check_mode) and return changed status prediction without modifying the target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in C(check_mode)), when in diff mode.
  idempotent:
    description:
      - When run twice in a row outside check mode, with the same arguments, the second invocation indicates no change.
      - This assumes that the system controlled/queried by the module has not changed in a relevant way.
"""

    ACTIONGROUP_FABRIC = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/lossless.fabric.fabric) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - lossless.fabric.fabric
"""

    # Read-only modules: they never change anything, so check mode is exact.
    INFO_MODULE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details:
      - This action does not modify state.
  diff_mode:
    support: N/A
    details:
      - This action does not modify state.
  idempotent:
    support: full
"""

    CONTROLLER = r"""
options: {}
attributes:
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: all
"""

    # Modules that run on a POSIX target host.
    POSIX = r"""
options: {}
attributes:
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
"""
