# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab-launcher plug-in for k8sim (duck-typed like launcher.Simulator).

Register in tests/lab/launcher.py:

    sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
    from k8sim.plugin import Kubernetes  # noqa: E402
    SIMULATORS: list[Simulator] = [Switches(), Kubernetes()]

Wanted when the inventory has a group named ``kubernetes`` or any host sees
``lab_kubernetes: true`` (either). Nodes: every host whose
``lossless_fabric_device.kind == 'host'`` (name = inventory hostname, GPUs
from ``lossless_fabric_device.gpus``, NICs from ``.nics``). Optional host or
group vars: ``lab_k8sim_time_scale`` (default 0.1), ``lab_nccl_replay`` and
``lab_nccl_replay_post`` (passing | failing | a recorded log's file name, see
tests/lab/nccl/README.md: the launcher log of every MPIJob, and of those
labelled ``lossless.fabric/phase: post``), ``lab_k8sim_replay`` (a log path,
used when ``lab_nccl_replay`` is not set), per host
``lab_k8sim_totalvfs`` (a NIC's SR-IOV totalvfs when device data ``nics[].vfs`` is 0 or absent; default 0),
``lab_k8sim_rdma_broken: true`` and ``lab_k8sim_node_labels: {...}``; ``lab_k8sim_users``
([{token, user, groups}]: the tenants' tokens, k8sim then authorizes with RBAC; their kubeconfigs come
back as ``lab_k8sim_user_kubeconfigs`` {user: path}) and ``lab_nccl_replay_tenants`` ({tenant: choice}: the
log of the MPIJobs labelled ``lossless.fabric/tenant: <tenant>``).

The cluster keeps its API objects between lab runs, as a real one does:
``before_stop`` saves every object to ``<run_dir>/k8sim.objects.json``, and
the next ``start`` passes that file as the config key ``restore`` (see
restore.py for what is kept). ``make clean`` removes ``.run`` and so forgets them.
"""
from __future__ import annotations

import json
import os
import sys
import urllib.request

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
SNAPSHOT = "k8sim.objects.json"
sys.path.insert(0, os.path.dirname(PKG_DIR))

from nccl import replay as nccl_replay  # noqa: E402  # pylint: disable=wrong-import-position


class Kubernetes:
    name = "k8sim"

    def wanted(self, ctx) -> bool:  # type: ignore[no-untyped-def]
        inventory = ctx.inventory
        if "kubernetes" in inventory:
            return True
        hostvars = inventory.get("_meta", {}).get("hostvars", {})
        return any(hv.get("lab_kubernetes") is True for hv in hostvars.values())

    @staticmethod
    def _first(ctx, key: str, default):  # type: ignore[no-untyped-def]
        for hv in ctx.inventory.get("_meta", {}).get("hostvars", {}).values():
            if key in hv:
                return hv[key]
        return default

    def config(self, ctx) -> dict:  # type: ignore[no-untyped-def]
        nodes = []
        for host, hvars in ctx.devices("host").items():
            device = hvars["lossless_fabric_device"]
            # totalvfs (the PF's sriov_totalvfs): the VFs device data asks for (contract C1 nics[].vfs: the lab's
            # host can make that many), else the lab knob lab_k8sim_totalvfs (default 0: not SR-IOV capable)
            knob = int(hvars.get("lab_k8sim_totalvfs", 0) or 0)
            nodes.append({
                "name": host,
                "gpus": int(device.get("gpus") or 0),
                "nics": [{"name": nic.get("name"), "netdev": nic.get("netdev"), "speed": nic.get("speed"),
                          "totalvfs": int(nic.get("vfs") or 0) or knob}
                         for nic in device.get("nics") or []],
                "labels": dict(hvars.get("lab_k8sim_node_labels") or {}),
                "rdma_broken": bool(hvars.get("lab_k8sim_rdma_broken", False)),
            })
        config = {"time_scale": float(self._first(ctx, "lab_k8sim_time_scale", 0.1)), "nodes": nodes}
        replay = self._first(ctx, "lab_k8sim_replay", None)
        if replay:
            config["replay"] = os.path.join(ctx.inventory_dir, replay) if not os.path.isabs(replay) else replay
        # ReplayError (a RuntimeError) names the variable and the value; the launcher reports it before anything starts
        config.update(nccl_replay.k8sim_config(self._first(ctx, "lab_nccl_replay", None),
                                               self._first(ctx, "lab_nccl_replay_post", None),
                                               self._first(ctx, "lab_nccl_replay_tenants", None)))
        # lab_k8sim_users: the tenants' tokens (auth.py); with them the emulator authorizes with RBAC
        users = self._first(ctx, "lab_k8sim_users", None)
        if users:
            config["users"] = list(users)
        # lab_perf_faults: MPIJob launcher logs come from the performance model while <run_dir>/perf.json has faults
        # (read at each MPIJob, so perfmodel.py RUN_DIR FAULTS changes them without a restart)
        config["perf_run_dir"] = ctx.run_dir
        snapshot = os.path.join(ctx.run_dir, SNAPSHOT)
        if os.path.exists(snapshot):  # the objects of the previous lab run (k8sim ignores them when the nodes differ)
            config["restore"] = snapshot
        return config

    def start(self, ctx) -> dict:  # type: ignore[no-untyped-def]
        config_path = os.path.join(ctx.run_dir, "k8sim.json")
        state_path = os.path.join(ctx.run_dir, "k8sim.state.json")
        kubeconfig = os.path.join(ctx.run_dir, "k8sim.kubeconfig")
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump(self.config(ctx), handle, indent=1)
        argv = [ctx.python, os.path.join(PKG_DIR, "server.py"), "--config", config_path,
                "--state-file", state_path, "--kubeconfig", kubeconfig]
        state = ctx.start_server(self.name, argv, state_path)
        return {"all": {"lab_kubeconfig": state["kubeconfig"], "lab_k8sim_control": state["control"],
                        "lab_k8sim_url": state["url"], "lab_k8sim_user_kubeconfigs": state.get("user_kubeconfigs") or {}}}

    def before_stop(self, run_dir: str) -> None:
        """Keep a snapshot of every object (k8sim.objects.json): for the post-mortem, and the next run starts with it."""
        state_path = os.path.join(run_dir, "k8sim.state.json")
        if not os.path.exists(state_path):
            return
        with open(state_path, encoding="utf-8") as handle:
            state = json.load(handle)
        with urllib.request.urlopen(state["control"] + "/objects", timeout=10) as resp:
            data = resp.read()
        json.loads(data)  # a cut-off answer must not replace the last good snapshot (ValueError: the launcher says so)
        path = os.path.join(run_dir, SNAPSHOT)
        with open(path + ".tmp", "wb") as handle:
            handle.write(data)
        os.replace(path + ".tmp", path)
