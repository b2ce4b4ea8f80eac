# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab-launcher plug-in for the mpirun and srun replay shims (duck-typed like launcher.Simulator).

Wanted when any host sees ``lab_nccl_replay``. It starts no process: it checks
the choice (passing | failing | a recorded log's file name), writes
``<run_dir>/nccl/config.json`` and two small wrappers
``<run_dir>/nccl/bin/{mpirun,srun,scontrol}`` that run the strict shims with that
config, and returns ``lab_nccl_bin`` (that folder) for the inventory. A choice
given with ``-e lab_nccl_replay=...`` reaches it because the launcher reads the
inventory with the command's extra variables.
"""
from __future__ import annotations

import json
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from nccl import replay  # noqa: E402  # pylint: disable=wrong-import-position


class NcclReplay:
    name = "nccl-replay"

    @staticmethod
    def _first(ctx, key: str):  # type: ignore[no-untyped-def]
        for hv in ctx.inventory.get("_meta", {}).get("hostvars", {}).values():
            if hv.get(key):
                return hv[key]
        return None

    def wanted(self, ctx) -> bool:  # type: ignore[no-untyped-def]
        return self._first(ctx, "lab_nccl_replay") is not None

    def start(self, ctx) -> dict:  # type: ignore[no-untyped-def]
        choice = self._first(ctx, "lab_nccl_replay")
        replay.resolve(choice, "lab_nccl_replay")  # fail before anything runs, naming the variable and the value
        folder = os.path.join(ctx.run_dir, "nccl")
        bin_dir = os.path.join(folder, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        config = os.path.join(folder, "config.json")
        with open(config, "w", encoding="utf-8") as handle:
            # run_dir: where the shims find perf.json (the performance model, when lab_perf_faults is set)
            # slurm_nodes: the nodes the lab's scontrol shim knows (its GPU hosts)
            hosts = sorted(h for h, hv in ctx.inventory.get("_meta", {}).get("hostvars", {}).items()
                           if (hv.get("lossless_fabric_device") or {}).get("kind") == "host")
            json.dump({"replay": choice, "run_dir": ctx.run_dir, "slurm_nodes": hosts}, handle)
        for tool in ("mpirun", "srun", "scontrol"):
            path = os.path.join(bin_dir, tool)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("#!/bin/sh\n# Written by tests/lab/nccl/plugin.py for this lab run.\n"
                             "LAB_NCCL_CONFIG=%s LAB_NCCL_PYTHON=%s exec %s \"$@\"\n"
                             % (shlex.quote(config), shlex.quote(ctx.python), shlex.quote(os.path.join(HERE, "bin", tool))))
            os.chmod(path, 0o755)
        return {"all": {"lab_nccl_bin": bin_dir}}

    def before_stop(self, run_dir: str) -> None:
        """Nothing runs between launches."""
