# SPDX-License-Identifier: GPL-3.0-or-later
"""Control-channel client and a process launcher for tests and the lab launcher.

    with SimProcess(config, workdir) as sim:          # starts python -m ... in a subprocess
        port = sim.port("leaf1")
        sim.set_counters("leaf1", "Ethernet1", {"pfc_rx": {"3": 1204}})
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(PKG_DIR))

import labproc  # noqa: E402  # pylint: disable=wrong-import-position


def write_known_hosts(path: str, state: dict) -> str:
    """A known_hosts file for every switch in a simulator state, so clients
    can check host keys as they would against real switches."""
    import paramiko  # pylint: disable=import-outside-toplevel  # only callers that check keys need it

    with open(path, "w", encoding="utf-8") as handle:
        for info in state["switches"].values():
            key = paramiko.ECDSAKey.from_private_key_file(info["host_key_file"])
            handle.write("[%s]:%d %s %s\n" % (info["host"], info["port"], key.get_name(), key.get_base64()))
    return path


class ControlClient(labproc.ControlClient):
    def running(self, sw: str) -> str:
        return self._call("GET", f"/switches/{sw}/running")["running"]

    def startup(self, sw: str) -> list[str]:
        return self._call("GET", f"/switches/{sw}/startup")["lines"]

    def pending(self, sw: str) -> dict:
        return self._call("GET", f"/switches/{sw}/pending")

    def set_counters(self, sw: str, port: str, counters: dict, replace: bool = False) -> dict:
        return self._call("POST", f"/switches/{sw}/counters",
                          {"port": port, "counters": counters, "replace": replace})

    def clear_counters(self, sw: str, port: str | None = None) -> dict:
        return self._call("POST", f"/switches/{sw}/counters", {"clear": True, "port": port})

    def counters(self, sw: str) -> dict:
        return self._call("GET", f"/switches/{sw}/counters")["counters"]

    def set_faults(self, sw: str, faults: dict, replace: bool = False) -> dict:
        return self._call("POST", f"/switches/{sw}/faults", {"faults": faults, "replace": replace})

    def rotate_host_key(self, sw: str) -> str:
        return self._call("POST", f"/switches/{sw}/host_key")["host_key_fingerprint"]

    def log(self, sw: str) -> dict:
        return self._call("GET", f"/switches/{sw}/log")

    def load(self, sw: str, config: str | list) -> str:
        return self._call("POST", f"/switches/{sw}/load", {"config": config})["running"]


class SimProcess(ControlClient):
    """Start the simulator as a subprocess; stop it (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, config: dict, workdir: str, python: str | None = None,
                 start_timeout: float = 20.0) -> None:
        self.config = config
        self.workdir = workdir
        self.python = python or sys.executable
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.state_data: dict = {}
        super().__init__("http://127.0.0.1:0")

    def __enter__(self) -> SimProcess:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        os.makedirs(self.workdir, exist_ok=True)
        self.log_path = os.path.join(self.workdir, "switchsim.log")
        self.proc, self.state_data = labproc.start(
            [self.python, os.path.join(PKG_DIR, "server.py")], self.config, os.path.join(self.workdir, "switchsim.json"),
            os.path.join(self.workdir, "switchsim.state.json"), self.log_path, self.start_timeout)
        self.control_url = self.state_data["control"]["url"]

    def port(self, sw: str) -> int:
        return int(self.state_data["switches"][sw]["port"])

    def stop(self) -> int | None:
        rc = labproc.stop(self.proc)
        self.proc = None
        return rc
