# SPDX-License-Identifier: GPL-3.0-or-later
"""Simulator process: loads the JSON config, serves one SSH port per switch and
a loopback HTTP/JSON control port. See README.md for the config and the API.

    python -m tests.lab.switchsim --config lab.json --state-file state.json
    python tests/lab/switchsim/server.py --config lab.json --state-file state.json
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "switchsim"  # noqa: A001
    import switchsim  # noqa: F401  # pylint: disable=unused-import  # registers the package for the relative imports below

from . import GRAMMARS, device_class  # noqa: E402
from .core import Device, SimError  # noqa: E402
from .sshserver import Listener, fingerprint  # noqa: E402

log = logging.getLogger("switchsim")


class Simulator:
    """All switches of one config, their listeners and the control server."""

    def __init__(self, config: dict, base_dir: str = ".") -> None:
        self.config = config
        self.base_dir = base_dir
        self.time_scale = float(config.get("time_scale", 1.0))
        self.stop_event = threading.Event()
        self.devices: dict[str, Device] = {}
        self.listeners: dict[str, Listener] = {}
        self.control: ThreadingHTTPServer | None = None
        self.control_thread: threading.Thread | None = None
        plats = GRAMMARS  # the one platform table (switchsim/__init__.py)
        names = set()
        for spec in config.get("switches", []):
            spec = dict(spec)
            if spec["name"] in names:
                raise SimError(f"duplicate switch name {spec['name']!r}")
            names.add(spec["name"])
            plat = spec.get("platform")
            if plat not in plats:
                raise SimError(f"switch {spec['name']}: platform must be one of {sorted(plats)}")
            hk = spec.get("host_key_file") or os.path.join(
                config.get("key_dir") or os.path.join(base_dir, "keys"), f"{spec['name']}.key")
            if not os.path.isabs(hk):
                hk = os.path.join(base_dir, hk)
            spec["host_key_file"] = hk
            self.devices[spec["name"]] = device_class(plat)(spec, self)

    # --- lifecycle --------------------------------------------------------
    def start(self, control_port: int | None = None) -> None:
        for name, dev in self.devices.items():
            self.listeners[name] = Listener(dev, self.stop_event)
        for lst in self.listeners.values():
            lst.start()
        port = self.config.get("control_port", 0) if control_port is None else control_port
        self.control = ThreadingHTTPServer(("127.0.0.1", int(port)), _make_handler(self))
        self.control.daemon_threads = True
        self.control_thread = threading.Thread(target=self.control.serve_forever,
                                               kwargs={"poll_interval": 0.2}, name="control")
        self.control_thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        for dev in self.devices.values():
            dev.cancel_timers()
        for lst in self.listeners.values():
            lst.close()
        if self.control is not None:
            self.control.shutdown()
            self.control.server_close()
        if self.control_thread is not None and self.control_thread is not threading.current_thread():
            self.control_thread.join(5)

    def state(self) -> dict:
        sw = {}
        for name, dev in self.devices.items():
            d = dev.describe()
            lst = self.listeners.get(name)
            if lst is not None:
                d["host_key_fingerprint"] = fingerprint(lst.host_key)
            sw[name] = d
        port = self.control.server_address[1] if self.control else None
        return {
            "pid": os.getpid(),
            "control": {"host": "127.0.0.1", "port": port, "url": f"http://127.0.0.1:{port}"},
            "time_scale": self.time_scale,
            "switches": sw,
        }

    # --- control operations -------------------------------------------------
    def device(self, name: str) -> Device:
        try:
            return self.devices[name]
        except KeyError:
            raise SimError(f"no switch named {name!r}") from None


def _make_handler(sim: Simulator) -> type:
    class Handler(BaseHTTPRequestHandler):
        server_version = "switchsim"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet
            return

        def _send(self, code: int, body: Any) -> None:
            data = json.dumps(body, indent=1, default=str).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict:
            n = int(self.headers.get("Content-Length") or 0)
            if not n:
                return {}
            return json.loads(self.rfile.read(n).decode() or "{}")

        def do_GET(self) -> None:  # noqa: N802
            self._dispatch("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._dispatch("POST")

        def _dispatch(self, method: str) -> None:
            try:
                parts = [p for p in urlparse(self.path).path.split("/") if p]
                body = self._body() if method == "POST" else {}
                self._send(200, route(sim, method, parts, body))
            except SimError as e:
                self._send(400, {"error": str(e)})
            except KeyError as e:
                self._send(404, {"error": f"not found: {e}"})
            except (ValueError, TypeError) as e:
                self._send(400, {"error": str(e)})

    return Handler


def route(sim: Simulator, method: str, parts: list[str], body: dict) -> Any:
    """The control API (also callable in-process)."""
    if parts == ["state"] and method == "GET":
        return sim.state()
    if parts == ["time_scale"]:
        if method == "POST":
            sim.time_scale = float(body["time_scale"])
        return {"time_scale": sim.time_scale}
    if parts == ["shutdown"] and method == "POST":
        threading.Thread(target=_request_stop, args=(sim,), daemon=True).start()
        return {"stopping": True}
    if len(parts) >= 2 and parts[0] == "switches":
        dev = sim.device(parts[1])
        what = parts[2] if len(parts) > 2 else ""
        if what == "" and method == "GET":
            return dev.describe()
        if what == "running" and method == "GET":
            return {"running": dev.running_config()}
        if what == "startup" and method == "GET":
            return {"lines": dev.startup_lines()}
        if what == "pending" and method == "GET":
            return dev.pending_state()
        if what == "counters":
            if method == "POST":
                if body.get("clear"):
                    dev.clear_counters(body.get("port"))
                elif body.get("add"):  # traffic through the port (tests/lab/traffic.py): increments
                    dev.add_counters(body["port"], body.get("counters") or {})
                else:
                    dev.set_counters(body["port"], body.get("counters") or {}, bool(body.get("replace")))
            with dev.lock:
                return {"counters": dev.counters}
        if what == "faults":
            if method == "POST":
                dev.set_faults(body.get("faults") or {}, bool(body.get("replace")))
            with dev.lock:
                return {"faults": dev.faults}
        if what == "host_key" and method == "POST":
            fp = sim.listeners[dev.name].rotate_host_key()
            return {"host_key_fingerprint": fp}
        if what == "log" and method == "GET":
            with dev.lock:
                return {"commands": list(dev.log), "events": list(dev.events)}
        if what == "load" and method == "POST":
            dev.load_lines(body["config"])  # type: ignore[attr-defined]
            return {"running": dev.running_config()}
    raise KeyError("/".join(parts))


def _request_stop(sim: Simulator) -> None:
    time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGTERM)


def load_config(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="switchsim", description="Strict SSH CLI switch simulator")
    ap.add_argument("--config", required=True, help="JSON config (see README.md)")
    ap.add_argument("--state-file", help="write chosen ports etc. here (JSON) once listening")
    ap.add_argument("--control-port", type=int, default=None)
    ap.add_argument("--time-scale", type=float, default=None)
    ap.add_argument("--log-level", default="WARNING")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    cfg = load_config(args.config)
    if args.time_scale is not None:
        cfg["time_scale"] = args.time_scale
    sim = Simulator(cfg, base_dir=os.path.dirname(os.path.abspath(args.config)))
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sim.start(args.control_port)
    state = sim.state()
    if args.state_file:
        tmp = args.state_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=1)
        os.replace(tmp, args.state_file)
    log.warning("switchsim listening: %s", {n: d["port"] for n, d in state["switches"].items()})
    try:
        while not stop.wait(0.1):
            pass
    finally:
        sim.stop()
        if args.state_file:
            try:
                os.remove(args.state_file)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
