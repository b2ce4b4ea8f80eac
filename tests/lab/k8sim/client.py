# SPDX-License-Identifier: GPL-3.0-or-later
"""Control-API client and a process launcher for tests.

    with K8sSim(config, workdir) as sim:     # starts server.py in a subprocess on free ports
        sim.kubeconfig, sim.url
        sim.set_replay("tests/data/nccl-corpus/x.txt")
        sim.next_mpijob("fail")
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(PKG_DIR))

import labproc  # noqa: E402  # pylint: disable=wrong-import-position


class ControlClient(labproc.ControlClient):
    def objects(self) -> dict:
        return self._call("GET", "/objects")

    def set_delays(self, **delays: float) -> dict:
        return self._call("POST", "/delays", delays)["delays"]

    def set_replay(self, path: str | list[str] | None = None, text: str | None = None, job: str | None = None,
                   selector: dict | None = None) -> dict:
        """The launcher log of later MPIJobs: the default, one job's ("ns/name"), or those whose labels match selector."""
        body: dict = {"path": path} if text is None else {"text": text}
        if job:
            body["job"] = job
        if selector:
            body["selector"] = selector
        return self._call("POST", "/replay", body)

    def next_mpijob(self, outcome: str, count: int = 1, default: bool = False) -> dict:
        return self._call("POST", "/mpijob", {"outcome": outcome, "count": count, "default": default})

    def set_log_max_size(self, size: int) -> dict:
        """kubelet containerLogMaxSize in bytes (0: never rotated) for later plain pod-log reads."""
        return self._call("POST", "/kubelet", {"container_log_max_size": size})

    def break_rdma(self, node: str, broken: bool = True) -> dict:
        return self._call("POST", "/nodes/%s" % node, {"rdma_broken": broken})


class K8sSim(ControlClient):
    """Start server.py as a subprocess; stop it (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, config: dict, workdir: str, python: str | None = None, start_timeout: float = 20.0) -> None:
        self.config = config
        self.workdir = workdir
        self.python = python or sys.executable
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}
        self.log_path = os.path.join(workdir, "k8sim.log")
        super().__init__("http://127.0.0.1:0/_k8sim")

    @property
    def url(self) -> str:
        return self.info["url"]

    @property
    def kubeconfig(self) -> str:
        return self.info["kubeconfig"]

    def __enter__(self) -> K8sSim:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        os.makedirs(self.workdir, exist_ok=True)
        self.proc, self.info = labproc.start(
            [self.python, os.path.join(PKG_DIR, "server.py")], self.config, os.path.join(self.workdir, "k8sim.json"),
            os.path.join(self.workdir, "k8sim.state.json"), self.log_path, self.start_timeout)
        self.control_url = self.info["control"]

    def stop(self, grace: float = 10.0) -> int | None:
        rc = labproc.stop(self.proc, grace)
        self.proc = None
        return rc
