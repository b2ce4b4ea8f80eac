# SPDX-License-Identifier: GPL-3.0-or-later
"""Start and stop a lab server from a test: write its config, start it in its
own session, wait for the state file it writes once ready, and stop it with
SIGTERM (SIGKILL after a grace period); ControlClient, the base of each
simulator's control-API client; wait_for, the tests' poll of a simulator.
Shared by the simulators' clients and the tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


def call_json(url: str, method: str, path: str, body: dict | None = None) -> Any:
    """One JSON request to a simulator's control API; an HTTP error raises RuntimeError with its body."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read().decode())
    except urllib.error.HTTPError as exc:
        raise RuntimeError("%s %s: %s %s" % (method, path, exc.code, exc.read().decode())) from None


def wait_for(pred: Callable[[], Any], what: str = "condition", timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Poll pred until it returns something truthy and return that; fail the test naming what it waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(interval)
    raise AssertionError("timed out after %s s waiting for %s" % (timeout, what))


class ControlClient:
    """What every simulator's control API answers (GET /state, POST /time_scale); subclasses add their own calls."""

    def __init__(self, control_url: str) -> None:
        self.control_url = control_url.rstrip("/")

    def _call(self, method: str, path: str, body: dict | None = None) -> Any:
        return call_json(self.control_url, method, path, body)

    def state(self) -> dict:
        return self._call("GET", "/state")

    def set_time_scale(self, scale: float) -> float:
        return self._call("POST", "/time_scale", {"time_scale": scale})["time_scale"]


def start(argv: list[str], config: dict, config_path: str, state_path: str, log_path: str, timeout: float) -> tuple[subprocess.Popen, dict]:
    """Start argv + ['--config', config_path, '--state-file', state_path]; return (process, state)."""
    if os.path.exists(state_path):
        os.remove(state_path)
    with open(config_path, "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=1)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(  # pylint: disable=consider-using-with  # stopped by stop()
            [*argv, "--config", config_path, "--state-file", state_path],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(state_path):
            with open(state_path, encoding="utf-8") as handle:
                return proc, json.load(handle)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    stop(proc)
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        raise RuntimeError("%s did not start:\n%s" % (os.path.basename(argv[-1]), handle.read()[-3000:]))


def stop(proc: subprocess.Popen | None, grace: float = 10.0) -> int | None:
    """SIGTERM, then SIGKILL after grace seconds; the exit code (None if no process)."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    return proc.returncode
