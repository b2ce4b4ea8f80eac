# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The ``platform`` option and attribute of the switch modules, written from the platform registry.

The choices are the platforms with a driver (``_platforms/_records.DRIVEN``, the names the argument specs
take from ``_platforms/_drivers.DRIVERS``): ansible-doc and validate-modules read a module's documentation with
its fragments merged, so a new platform appears here with its record and needs no edit in any module
(docs/adding-a-platform.md).
"""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records

# The registry's order for the attribute; sorted for the choices, as the argument specs have them.
_NAMES = [record.name for record in _records.DRIVEN]

_ATTRIBUTE = r"""
attributes:
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: [%s]
""" % ", ".join(_NAMES)

_OPTION = r"""
options:
  platform:
    description:
      - %s
    type: str
    choices: [%s]
"""


class ModuleDocFragment:
    """``platform``: the option (two wordings of its default) and the attribute.

    DOCUMENTATION (switch_counters, switch_links: the default is the host's lossless_fabric_device.platform)
    and PLAN (switch_config: the plan's platform first) are set below the class: ansible-test's yamllint
    sanity test reads the assignments in a fragment's class body as literal strings, and these are written
    from the registry. ansible-doc, validate-modules and the unit tests (test_contract, test_examples) read
    the attributes themselves."""


_CHOICES = ", ".join(sorted(_NAMES))
ModuleDocFragment.DOCUMENTATION = _OPTION % ("Switch OS. Defaults to C(lossless_fabric_device.platform).", _CHOICES) + _ATTRIBUTE[1:]
ModuleDocFragment.PLAN = _OPTION % ("Switch OS. Defaults to the plan's C(platform), then C(lossless_fabric_device.platform).", _CHOICES) + _ATTRIBUTE[1:]
