# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict lab ``scontrol`` (Slurm) for what role localize sends: ``scontrol update NodeName=<n> State=<s> Reason=<r>``.

Keywords are case-insensitive, ``key=value`` one word each, as scontrol(1) documents them (NodeName, State,
Reason). The answers are scontrol's own: a DRAIN/DOWN without a reason is refused with "You must specify a
reason when DOWNING or DRAINING a node. Request denied" (exit 1), a name the cluster does not have with
"slurm_update error: Invalid node name specified" (exit 1) - the texts of SchedMD/slurm
src/scontrol/update_node.c and slurm_perror. Anything else (other subcommands, other keywords, node lists in
bracket form) is refused with a lab message rather than faked. The nodes are the lab's GPU hosts; their state is
kept in ``<run_dir>/nccl/slurm_nodes.json`` (``{"gpu1": {"state": "IDLE+DRAIN", "reason": "..."}}``), which
tests read. Config: ``LAB_NCCL_CONFIG`` (the plug-in's config.json: ``run_dir``, ``slurm_nodes``).
"""
from __future__ import annotations

import fcntl
import json
import os
import sys

STATES = ("DRAIN", "DOWN", "RESUME", "UNDRAIN", "IDLE")


def _fail(text: str, rc: int = 1) -> int:
    sys.stderr.write(text + "\n")
    return rc


def main(argv: list[str]) -> int:
    config_path = os.environ.get("LAB_NCCL_CONFIG")
    if not config_path:
        return _fail("lab scontrol: LAB_NCCL_CONFIG is not set (run it through the lab's wrapper)", 2)
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    if not argv or argv[0].lower() != "update":
        return _fail("lab scontrol: only 'scontrol update NodeName=... State=... Reason=...' is emulated, got %r" % " ".join(argv), 2)
    spec: dict[str, str] = {}
    for word in argv[1:]:
        key, sep, value = word.partition("=")
        if not sep:
            return _fail("lab scontrol: %r is not key=value" % word, 2)
        key = key.lower()
        if key not in ("nodename", "state", "reason"):
            return _fail("lab scontrol: keyword %r is not emulated (NodeName, State, Reason)" % key, 2)
        spec[key] = value
    if "nodename" not in spec:
        return _fail("lab scontrol: no NodeName", 2)
    state = spec.get("state", "").upper()
    if state and state not in STATES:
        return _fail("lab scontrol: State=%s is not emulated (%s)" % (state, ", ".join(STATES)), 2)
    if state in ("DRAIN", "DOWN") and not spec.get("reason"):
        return _fail("You must specify a reason when DOWNING or DRAINING a node. Request denied")
    known = set(config.get("slurm_nodes") or [])
    name = spec["nodename"]
    if name not in known:
        return _fail("slurm_update error: Invalid node name specified")
    path = os.path.join(config["run_dir"], "nccl", "slurm_nodes.json")
    with open(path + ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path, encoding="utf-8") as handle:
                nodes = json.load(handle)
        except FileNotFoundError:
            nodes = {}
        node = nodes.setdefault(name, {"state": "IDLE", "reason": None})
        if state in ("DRAIN", "DOWN"):
            node.update(state="IDLE+DRAIN" if state == "DRAIN" else "DOWN", reason=spec["reason"])
        elif state in ("RESUME", "UNDRAIN", "IDLE"):
            node.update(state="IDLE", reason=None)
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(nodes, handle, indent=1, sort_keys=True)
        os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
