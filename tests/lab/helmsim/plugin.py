# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab-launcher plug-in for the helm shim (duck-typed like launcher.Simulator).

Wanted with k8sim (a ``kubernetes`` group, or ``lab_kubernetes: true``): helm
needs a cluster to keep its releases in. It starts no process: it writes
``<run_dir>/helm/bin/helm``, a wrapper that runs tests/lab/helmsim/helm.py with
the launcher's Python (which has the ``kubernetes`` client), and returns
``lab_helm_bin`` (that folder) for the inventory. The release state lives in
the cluster (Secrets), so it survives lab restarts with k8sim's objects.
"""
from __future__ import annotations

import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from k8sim.plugin import Kubernetes  # noqa: E402  # pylint: disable=wrong-import-position


def write_bin(bin_dir: str, python: str) -> str:
    """Write the ``helm`` wrapper into bin_dir; return bin_dir."""
    os.makedirs(bin_dir, exist_ok=True)
    path = os.path.join(bin_dir, "helm")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n# Written by tests/lab/helmsim/plugin.py: the lab's strict helm shim.\n"
                     "exec %s %s \"$@\"\n" % (shlex.quote(python), shlex.quote(os.path.join(HERE, "helm.py"))))
    os.chmod(path, 0o755)
    return bin_dir


class Helm:
    name = "helmsim"

    def wanted(self, ctx) -> bool:  # type: ignore[no-untyped-def]
        return Kubernetes().wanted(ctx)  # the same inventories: helm keeps its releases in that cluster

    def start(self, ctx) -> dict:  # type: ignore[no-untyped-def]
        return {"all": {"lab_helm_bin": write_bin(os.path.join(ctx.run_dir, "helm", "bin"), ctx.python)}}

    def before_stop(self, run_dir: str) -> None:
        """Nothing runs between launches."""
