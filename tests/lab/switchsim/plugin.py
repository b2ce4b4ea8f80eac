# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab launcher plug-in: the switches of an inventory, one tests/lab/switchsim process.

Duck-typed like ``launcher.Simulator`` (name, wanted, start, before_stop) and registered in
tests/lab/launcher.py's ``SIMULATORS`` as the other simulators are. Wanted when the inventory
has a ``lossless_fabric_device`` of kind ``switch``; the platform of each comes from that
device (a key of switchsim.GRAMMARS). LLDP and link state follow ``<run_dir>/wiring.json``
(tests/lab/wiring.py, written by the launcher before any plug-in starts).
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

import wiring  # noqa: E402  # pylint: disable=wrong-import-position


class Switches:
    """Every inventory host whose lossless_fabric_device is a switch, served by
    one tests/lab/switchsim process (one SSH port each, picked free)."""

    name = "switchsim"

    def wanted(self, ctx) -> bool:
        return bool(ctx.devices("switch"))

    def start(self, ctx) -> dict:
        keys = os.path.join(ctx.run_dir, "keys")
        os.makedirs(keys, exist_ok=True)
        switches = []
        for host, hvars in ctx.devices("switch").items():
            device = hvars["lossless_fabric_device"]
            switches.append({
                # What the switch saved in an earlier lab run, else what the inventory prepared it with
                # (lab_switch_initial_config: e.g. NX-OS 'feature scp-server', which the driver's SCP needs).
                "initial_config": _load_startup(ctx.run_dir, host, device.get("platform")) or list(hvars.get("lab_switch_initial_config") or []),
                "name": host,
                "platform": device.get("platform"),
                "port": 0,
                "username": hvars.get("ansible_user", "admin"),
                "password": hvars.get("ansible_password", ""),
                "host_key_file": os.path.join(keys, host + ".key"),
                "ports": sorted(device.get("ports") or {}),
                # The model / release the inventory names is the one the simulator emulates (eos and
                # junos: model; nvue: the Cumulus Linux release), so the lab follows its host_vars.
                **({"model": device["model"]} if device.get("model") else {}),
                **({"version": str(device["release"])} if device.get("release") else {}),
                # sonic: the hardware SKU (show version HwSKU, DEVICE_METADATA hwsku; GCU's validators key on it)
                **({"hwsku": str(device["hwsku"])} if device.get("hwsku") else {}),
            })
        first = next(iter(ctx.devices("switch").values()))
        config = {"time_scale": float(first.get("lab_switch_time_scale", 1.0)), "control_port": 0, "switches": switches,
                  # LLDP and link state come from the cables as they are (tests/lab/wiring.py), read on every command.
                  "wiring_file": os.path.join(ctx.run_dir, wiring.FILE)}
        config_path = os.path.join(ctx.run_dir, "switchsim.json")
        state_path = os.path.join(ctx.run_dir, "switchsim.state.json")
        # The config holds the lab's switch passwords: readable by us only.
        fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        server = os.path.join(HERE, "server.py")
        state = ctx.start_server(self.name, [ctx.python, server, "--config", config_path, "--state-file", state_path], state_path)
        from switchsim.client import write_known_hosts  # pylint: disable=import-outside-toplevel

        known_hosts = write_known_hosts(os.path.join(ctx.run_dir, "known_hosts"), state)
        hosts = {
            host: {"ansible_host": info["host"], "ansible_port": info["port"], "lossless_fabric_known_hosts": known_hosts}
            for host, info in sorted(state["switches"].items())
        }
        return {"all": {"lab_switchsim_control": state["control"]["url"]}, "hosts": hosts}

    def before_stop(self, run_dir: str) -> None:
        """Keep each switch's saved configuration for the next lab run, as a
        real switch keeps its startup config across a reboot: a second
        `make lab` then finds the fabric configured and changes nothing."""
        state_path = os.path.join(run_dir, "switchsim.state.json")
        if not os.path.exists(state_path):
            return
        with open(state_path, encoding="utf-8") as handle:
            state = json.load(handle)
        from switchsim.client import ControlClient  # pylint: disable=import-outside-toplevel

        client = ControlClient(state["control"]["url"])
        os.makedirs(os.path.join(run_dir, "startup"), exist_ok=True)
        for host, info in state["switches"].items():
            with open(os.path.join(run_dir, "startup", host + ".json"), "w", encoding="utf-8") as handle:
                json.dump({"platform": info["platform"], "lines": client.startup(host)}, handle)


def _load_startup(run_dir: str, host: str, platform: str | None) -> list[str]:
    """The startup config a switch saved in an earlier lab run (none if its platform changed)."""
    path = os.path.join(run_dir, "startup", host + ".json")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        saved = json.load(handle)
    return saved["lines"] if saved.get("platform") == platform else []
