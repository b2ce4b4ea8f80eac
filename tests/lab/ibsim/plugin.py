# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab launcher plug-in: the InfiniBand fabric (ibsim + OpenSM) of an inventory.

Duck-typed like ``launcher.Simulator`` (name, wanted, start, before_stop);
register it in tests/lab/launcher.py with

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ibsim.plugin import InfiniBand  # noqa: E402
    SIMULATORS = [Switches(), InfiniBand()]

Wanted when the inventory has a ``subnet_manager`` device.  The fabric comes
from the inventory: subnet managers and hosts (``lossless_fabric_device``,
NIC GUIDs from ``nics[].guid``) plus the switch layout in the lab variable
``lab_ib_fabric`` (spines, leaves, switch_ports, uplinks_per_spine, link;
optional ``opensm_options``). When the inventory describes IB links (a host
NIC's ``peer: {host: <IB switch>, port: "<n>"}``), the NICs are plugged in as
``<run_dir>/wiring.json`` says (tests/lab/wiring.py: the described links with
``lab_cabling_faults``); ibsim reads its net file once, so a fault changed
with wiring.refault needs a lab restart here.  OpenSM starts with a minimal valid
configuration -- the full default opensm.conf, ``Default=0x7fff : ALL=full ;``
and a QoS policy with only a DEFAULT level -- so the opensm role has
something to change.  The files live in ``<run_dir>/ibsim/`` and survive a
lab restart (as /etc/opensm does on a real SM host).

OpenSM runs with ``-P partitions.conf -Q -Y qos-policy.conf`` on its command
line: those paths win over ``partition_config_file`` / ``qos_policy_file``
in opensm.conf, also after SIGHUP (verified), so a role may keep the
production paths (/etc/opensm/...) inside opensm.conf and still only write
the three files into ``lab_opensm_conf_dir``.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

import wiring  # noqa: E402  # pylint: disable=wrong-import-position

from ibsim import topology as topo_mod  # noqa: E402  # pylint: disable=wrong-import-position


class IbsimLabError(RuntimeError):
    """The InfiniBand lab could not start; the launcher reports RuntimeErrors of plug-ins like its own."""


def _fabric_var(ctx) -> dict:
    """lab_ib_fabric as any host sees it (group_vars/all); {} when unset."""
    for host in sorted(ctx.inventory.get("_meta", {}).get("hostvars", {})):
        value = ctx.hostvars(host).get("lab_ib_fabric")
        if isinstance(value, dict):
            return value
    return {}


class InfiniBand:
    """ibsim + OpenSM for the inventory's subnet manager(s) and hosts."""

    name = "ibsim"

    def wanted(self, ctx) -> bool:
        return bool(ctx.devices("subnet_manager"))

    def start(self, ctx) -> dict:
        hostvars = ctx.inventory.get("_meta", {}).get("hostvars", {})
        fabric_var = _fabric_var(ctx)
        try:
            # The inventory's described IB links, as cabled (lab_cabling_faults applied): read once, at start.
            spec = topo_mod.spec_from_inventory(hostvars, fabric_var, wiring.load(ctx.run_dir))
            topology = topo_mod.build(spec)
        except topo_mod.TopologyError as exc:
            raise IbsimLabError("ibsim: the inventory does not make a fabric: %s" % exc) from None
        workdir = os.path.join(ctx.run_dir, "ibsim")
        os.makedirs(workdir, exist_ok=True)
        config = {"workdir": workdir, "topology": spec, "opensm_options": fabric_var.get("opensm_options") or {}}
        config_path = os.path.join(ctx.run_dir, "ibsim.json")
        state_path = os.path.join(ctx.run_dir, "ibsim.state.json")
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        server = os.path.join(HERE, "server.py")
        state = ctx.start_server(self.name, [ctx.python, server, "--config", config_path, "--state-file", state_path], state_path)
        files, bin_dir = state["files"], state["diag_bin"]
        all_vars = {
            "lab_ib_state_file": state_path,
            "lab_ib_diag_bin": bin_dir,
            "lab_ib_env_file": files["env"],
            "lab_ib_nodes": topology.guids(),
            "lab_opensm_conf_dir": workdir,
            "lab_opensm_conf_file": files["opensm_conf"],
            "lab_opensm_partitions_file": files["partitions"],
            "lab_opensm_qos_policy_file": files["qos_policy"],
            "lab_opensm_log_file": files["opensm_log"],
            "lab_opensm_reload_cmd": os.path.join(bin_dir, "opensm-reload"),
            "lab_opensm_restart_cmd": os.path.join(bin_dir, "opensm-restart"),
            "lab_ibsim_console_cmd": os.path.join(bin_dir, "ibsim-console"),
        }
        hosts: dict[str, dict] = {}
        for (host, _nic), nodeid in sorted(topology.ca_by_nic.items()):
            hosts.setdefault(host, {"lab_ib_sim_host": nodeid})   # first CA: where the host's diags attach
        return {"all": all_vars, "hosts": hosts}

    def before_stop(self, run_dir: str) -> None:
        """Nothing to save: OpenSM's files stay in <run_dir>/ibsim/."""
