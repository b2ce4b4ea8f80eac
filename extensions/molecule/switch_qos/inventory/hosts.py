#!/usr/bin/env python
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scenario's switches, an Ansible inventory script (``--list``, ``--host NAME``): one host ``mol-<platform>``
for every tested platform (tests/lab/switch_platforms.py: a driver and a simulator grammar), with the ports of
the platform's grammar (``LAB_PORTS`` in tests/lab/switchsim/<platform>.py), the lines a lab switch of it starts
with (the grammar's ``PREPARED``) and, where the platform's record takes ECN thresholds in percent of the queue
buffer (Junos), a queue buffer size. A new platform gets its host here with no edit (docs/adding-a-platform.md).
The group ``switches`` takes the rest from group_vars/ beside this file."""

from __future__ import annotations

import json
import os
import sys

# realpath: Molecule reads this file through a link to the inventory folder in its own scenario directory.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))))
for _path in (os.path.join(ROOT, "tests", "lab"), os.path.join(ROOT, ".deps", "self")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import switchsim  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from switch_platforms import SWITCH_PLATFORMS  # noqa: E402  # pylint: disable=wrong-import-position,import-error

# A queue buffer for a platform that needs one (the RoCE queue's buffer of a QFX5240-class switch, as the lab's Junos switch).
QUEUE_BUFFER_BYTES = 12000000


def _needs_queue_buffer(platform: str) -> bool:
    try:
        from ansible_collections.lossless.fabric.plugins.module_utils._platforms._records import registry  # pylint: disable=import-outside-toplevel
    except ImportError:  # the collection is not importable (no make setup): every platform gets one, as the tests' labs do
        return True
    return registry()[platform].ecn_in_percent_of_queue_buffer


def hostvars(platform: str) -> dict:
    device = {"kind": "switch", "platform": platform}
    if _needs_queue_buffer(platform):
        device["queue_buffer_bytes"] = QUEUE_BUFFER_BYTES
    device["ports"] = switchsim.lab_ports(platform)
    found = {"lossless_fabric_device": device}
    if switchsim.prepared(platform):
        # Prepared as an operator prepares a real switch (NX-OS: the driver's SCP needs the SCP server).
        found["lab_switch_initial_config"] = switchsim.prepared(platform)
    return found


def inventory() -> dict:
    hosts = {"mol-" + platform: hostvars(platform) for platform in SWITCH_PLATFORMS}
    return {"switches": {"hosts": sorted(hosts)}, "_meta": {"hostvars": hosts}}


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--list"]:
        print(json.dumps(inventory()))
        return 0
    if argv[1:2] == ["--host"] and len(argv) == 3:
        print(json.dumps(inventory()["_meta"]["hostvars"].get(argv[2], {})))
        return 0
    print("usage: hosts.py --list | --host NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
