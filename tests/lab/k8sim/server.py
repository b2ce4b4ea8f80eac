# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim process: a Kubernetes API on 127.0.0.1 (kmock + store.py), the
emulated cluster's controllers, and the /_k8sim/ control API on the same port.

    python tests/lab/k8sim/server.py --config k8sim.json --state-file state.json [--kubeconfig FILE]

Writes the kubeconfig (server http://127.0.0.1:PORT, dummy token), then the
state file {pid, url, port, kubeconfig, control} atomically once listening;
removes the state file on exit. SIGTERM/SIGINT stop it cleanly (exit 0).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "k8sim"  # noqa: A001
    import k8sim  # noqa: F401  # pylint: disable=unused-import  # registers the package for the relative imports

import kmock  # noqa: E402

from .auth import ADMIN_TOKEN  # noqa: E402
from .emulator import K8sEmulator  # noqa: E402
from .restore import RestoreError  # noqa: E402
from .sim import Simulator  # noqa: E402

log = logging.getLogger("k8sim")

TOKEN = ADMIN_TOKEN


def kubeconfig(url: str, token: str = TOKEN, user: str = "k8sim") -> dict:
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "k8sim", "cluster": {"server": url}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "k8sim", "context": {"cluster": "k8sim", "user": user, "namespace": "default"}}],
        "current-context": "k8sim",
    }


def _write_atomic(path: str, data: dict, mode: int = 0o644) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
    os.replace(tmp, path)


async def serve(config: dict, base_dir: str, state_file: str | None, kubeconfig_file: str | None) -> int:
    sim = Simulator(config, base_dir)
    emulator = K8sEmulator()
    emulator.attach(sim)
    sim.bootstrap()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, sim.request_stop)
    port = int(config.get("port", 0)) or None
    async with emulator, kmock.Server(emulator, host="127.0.0.1", port=port) as server:
        url = "http://127.0.0.1:%d" % server.port
        runner = asyncio.create_task(sim.run(), name="k8sim-controllers")
        if kubeconfig_file is None and state_file:
            kubeconfig_file = os.path.join(os.path.dirname(os.path.abspath(state_file)), "k8sim.kubeconfig")
        if kubeconfig_file:
            _write_atomic(kubeconfig_file, kubeconfig(url), 0o600)
        # One kubeconfig per configured user (its own token): what a tenant is handed.
        user_kubeconfigs = {}
        for index, row in enumerate(config.get("users") or []):
            if kubeconfig_file:
                path = "%s.user%d" % (kubeconfig_file, index)
                _write_atomic(path, kubeconfig(url, row["token"], row["user"]), 0o600)
                user_kubeconfigs[row["user"]] = path
        state = {"pid": os.getpid(), "url": url, "port": server.port, "kubeconfig": kubeconfig_file,
                 "control": url + "/_k8sim", "token": TOKEN, "user_kubeconfigs": user_kubeconfigs}
        if state_file:
            _write_atomic(state_file, state)
        log.warning("k8sim listening on %s (control %s/_k8sim)", url, url)
        try:
            await sim.stop_requested.wait()
        finally:
            sim.stopping.set()  # ends watch streams and the controller loop
            await asyncio.wait_for(runner, timeout=5)
            if state_file:
                try:
                    os.remove(state_file)
                except OSError:
                    pass
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="k8sim", description="Strict local Kubernetes API emulator (kmock)")
    ap.add_argument("--config", required=True, help="JSON config (see README.md)")
    ap.add_argument("--state-file", help="write {pid, url, port, kubeconfig, control} here once listening")
    ap.add_argument("--kubeconfig", help="where to write the kubeconfig (default: beside the state file)")
    ap.add_argument("--time-scale", type=float, default=None)
    ap.add_argument("--log-level", default="WARNING")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    with open(args.config, encoding="utf-8") as handle:
        config = json.load(handle)
    if args.time_scale is not None:
        config["time_scale"] = args.time_scale
    try:
        return asyncio.run(serve(config, os.path.dirname(os.path.abspath(args.config)), args.state_file, args.kubeconfig))
    except RestoreError as exc:  # the saved objects of an earlier run cannot be used: say which file and why
        print("k8sim: %s (remove the file, or make clean, to start empty)" % exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
