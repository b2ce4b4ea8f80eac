# SPDX-License-Identifier: GPL-3.0-or-later
"""A small lab per test: switch simulators on free ports and an inventory
that points at them, so playbooks run exactly as users run them.
(The switch_lab fixture is in conftest.py.)"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, ansible_env, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

import switchsim  # noqa: E402  # pylint: disable=wrong-import-position
from switch_platforms import SWITCH_PLATFORMS  # noqa: E402  # pylint: disable=wrong-import-position
from switchsim.client import SimProcess, write_known_hosts  # noqa: E402  # pylint: disable=wrong-import-position

PASSWORD = "lab-Secret-7f3a"  # asserted absent from every output
# The platforms every switch test runs on (tests/lab/switch_platforms.py: a driver and a simulator grammar).
PLATFORMS = list(SWITCH_PLATFORMS)
# Two ports per platform for the small labs: the names of its grammar's LAB_PORTS (tests/lab/switchsim/<platform>.py).
PORTS = {platform: list(switchsim.lab_ports(platform)) for platform in PLATFORMS}
# What a switch is prepared with before a test (as an operator prepares a real one): its grammar's PREPARED
# (NX-OS takes the target configuration by SCP, which needs its SCP server: 'feature scp-server').
PREPARED = {platform: switchsim.prepared(platform) for platform in PLATFORMS}
INTENT = {
    "name": "itest",
    "transport": "roce",
    "roce": {"pfc": {"priorities": [3]}},
    "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 100}]}},
}


class SwitchLab:
    """Simulated switches + an inventory directory + a playbook runner."""

    def __init__(self, tmp_path, switches, time_scale):
        self.tmp = tmp_path
        self.switches = switches  # name -> platform
        self.control_dir = None  # network_cli's socket folder for peer playbooks (playbook)
        cfg = {
            "time_scale": time_scale,
            "switches": [
                {"name": name, "platform": platform, "port": 0, "username": "admin", "password": PASSWORD,
                 "host_key_file": str(tmp_path / "keys" / (name + ".key")), "ports": PORTS[platform],
                 "initial_config": list(PREPARED.get(platform, []))}
                for name, platform in switches.items()
            ],
        }
        (tmp_path / "keys").mkdir()
        self.sim = SimProcess(cfg, str(tmp_path / "sim"))
        self.inventory = tmp_path / "inventory"

    def start(self):
        self.sim.start()
        self.known_hosts = write_known_hosts(str(self.tmp / "known_hosts"), self.sim.state_data)
        self.write_inventory()
        return self

    def write_inventory(self, intent=None):
        hosts = {}
        for name, platform in self.switches.items():
            hosts[name] = {
                "ansible_host": "127.0.0.1",
                "ansible_port": self.sim.port(name),
                "ansible_user": "admin",
                "ansible_password": PASSWORD,
                "lossless_fabric_known_hosts": str(self.known_hosts),
                "lossless_fabric_device": {
                    "kind": "switch",
                    "platform": platform,
                    "queue_buffer_bytes": 12000000,
                    "ports": {p: {"speed": "400G", "cable_length_m": 3, "description": "itest " + p} for p in PORTS[platform]},
                },
            }
        self.inventory.mkdir(exist_ok=True)
        data = {"all": {"vars": {"lossless_fabric": intent or INTENT}, "children": {"switches": {"hosts": hosts}}}}
        (self.inventory / "hosts.yml").write_text(yaml.safe_dump(data))

    def peer_inventory(self, network_os, **host_vars):
        """An inventory a user of a vendor's own collection would write for these switches
        (ansible.netcommon.network_cli, `network_os` such as 'cisco.nxos.nxos'); returns its directory.
        Host keys are checked, by paramiko: libssh reads the known_hosts of the account's home from the
        password database, whatever HOME says, and netcommon passes it no other file; paramiko reads
        ~/.ssh/known_hosts, so a playbook run on this inventory gets a HOME of its own holding the lab's keys."""
        ssh = self.tmp / "peer_home" / ".ssh"
        ssh.mkdir(parents=True, exist_ok=True)
        (ssh / "known_hosts").write_text(open(self.known_hosts, encoding="utf-8").read())
        hosts = {name: {"ansible_host": "127.0.0.1", "ansible_port": self.sim.port(name), **host_vars} for name in self.switches}
        common = {"ansible_connection": "ansible.netcommon.network_cli", "ansible_network_os": network_os,
                  "ansible_user": "admin", "ansible_password": PASSWORD, "ansible_host_key_checking": True,
                  "ansible_network_cli_ssh_type": "paramiko"}
        where = self.tmp / "peer_inventory"
        where.mkdir(exist_ok=True)
        (where / "hosts.yml").write_text(yaml.safe_dump({"all": {"vars": common, "hosts": hosts}}))
        return where

    def playbook(self, body, *args, check=True, inventory=None):
        """Run a playbook (a list of plays) against this lab (or `inventory`: peer_inventory's, run with
        its own HOME); returns the CompletedProcess."""
        path = self.tmp / "play.yml"
        path.write_text(yaml.safe_dump(body, sort_keys=False))
        env = ansible_env(ANSIBLE_STDOUT_CALLBACK="default")
        if inventory is not None:
            # network_cli's persistent connection listens on a unix socket under this folder; a socket path is at most
            # 107 bytes, which the test's tmp path under pytest-xdist exceeds ("AF_UNIX path too long")
            if self.control_dir is None:
                self.control_dir = tempfile.mkdtemp(prefix="lf-pc-")
            env.update(HOME=str(self.tmp / "peer_home"), ANSIBLE_ASYNC_DIR=str(self.tmp / "peer_home" / ".ansible_async"),
                       ANSIBLE_PERSISTENT_CONTROL_PATH_DIR=self.control_dir)
        out = run([os.path.join(BIN, "ansible-playbook"), "-i", str(inventory or self.inventory), str(path), *args], env=env)
        text = out.stdout + out.stderr
        assert PASSWORD not in text, "the switch password leaked into ansible-playbook output"
        if check:
            assert out.returncode == 0, text
        return out

    def running(self, name):
        return self.sim.running(name)

    def stop(self):
        self.sim.stop()
        if self.control_dir:
            shutil.rmtree(self.control_dir, ignore_errors=True)


def recap(out):
    """host -> {ok, changed, failed, ...} from the PLAY RECAP."""
    found = {}
    for line in out.stdout.splitlines():
        if ": ok=" in line:
            host, _sep, rest = line.partition(":")
            found[host.strip()] = {k: int(v) for k, v in (item.split("=") for item in rest.split())}
    return found


def results(out):
    """Registered results printed by a debug task as msg "RESULT <json>", in output order."""
    found = []
    for line in out.stdout.splitlines():
        if '"msg": "RESULT ' in line:
            text = json.loads(line.split('"msg": ', 1)[1].rstrip(","))
            found.append(json.loads(text[len("RESULT "):]))
    return found
