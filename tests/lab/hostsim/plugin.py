# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab-launcher plug-in for the GPU hosts (duck-typed like launcher.Simulator).

For every inventory host whose ``lossless_fabric_device.kind == 'host'`` with
RoCE NICs: a root tree (tree.py) and a bin/ of strict shims (tools.py), under
``<run_dir>/hosts/<host>/``. ``lab_nic_driver`` (host variable, or ``lab_nic_drivers`` {host: driver};
mlx5 (default), bnxt_re or ionic) picks the NIC vendor; for mlx5 ``lab_nic_stacks`` ({host: mlnx | upstream}, a group
variable) or host variable ``lab_nic_stack`` (default upstream) picks the driver stack; ``lab_nic_debugfs`` (default true)
whether debugfs is "mounted" on an upstream host; ``lab_nic_peermem`` (default
true) whether nvidia_peermem is loaded. No process is started.

A tree survives lab restarts (a host stays up between two lab runs, as the
switches keep their saved config); it is rebuilt when its settings change.
Returned host variables: ``lab_host_root``, ``lab_host_bin``. The NICs' sysfs link state
(operstate, speed, address) and the ``lldpctl`` shim follow ``<run_dir>/wiring.json`` (tests/lab/wiring.py).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
LAB_DIR = os.path.dirname(PKG_DIR)


# nccl-tests binaries the node baseline (nccl_benchmark launcher local) runs on a lab host: tests/lab/nccl/nodebench.py
NODE_BENCH_BINARIES = ("all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "broadcast_perf", "reduce_perf", "sendrecv_perf")


def write_node_bench(bin_dir: str, host: str, run_dir: str | None, python: str) -> None:
    """The lab host's nccl-tests binaries: one process over the host's GPUs, bandwidth from the node model of the lab
    run (its perf.json: a slow-host fault slows the node's GPUs too)."""
    os.makedirs(bin_dir, exist_ok=True)
    for tool in NODE_BENCH_BINARIES:
        path = os.path.join(bin_dir, tool)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(
                "#!%s\n# lab nccl-tests binary (tests/lab/nccl/nodebench.py) of host %s\nimport sys\nsys.path.insert(0, %r)\n"
                "from nccl.nodebench import main\nsys.exit(main(sys.argv[0], sys.argv[1:], host=%r, run_dir=%r))\n"
                % (python, host, LAB_DIR, host, run_dir))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def write_shims(bin_dir: str, root: str, python: str) -> None:
    os.makedirs(bin_dir, exist_ok=True)
    for tool in ("dcb", "mlnx_qos", "ethtool", "mlxconfig", "lldpctl"):
        path = os.path.join(bin_dir, tool)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(
                "#!%s\n# lab shim (tests/lab/hostsim/tools.py) acting on %s\nimport sys\nsys.path.insert(0, %r)\n"
                "from hostsim.tools import main\nsys.exit(main(%r, %r, sys.argv[1:]))\n" % (python, root, LAB_DIR, tool, root)
            )
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    path = os.path.join(bin_dir, "ib_write_bw")  # perftest (perftest.py): argv[0] goes into glibc getopt's messages
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(
            "#!%s\n# lab shim (tests/lab/hostsim/perftest.py) acting on %s\nimport sys\nsys.path.insert(0, %r)\n"
            "from hostsim.perftest import main\nsys.exit(main(%r, sys.argv[1:], sys.argv[0]))\n" % (python, root, LAB_DIR, root)
        )
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def make_host(base: str, nics: list[dict], stack: str, python: str, debugfs: bool = True, peermem: bool = True,
              host: str | None = None, wiring_file: str | None = None) -> dict:
    """Build (or keep) one host's root and bin; return the inventory variables.

    With ``host`` and ``wiring_file`` (the launcher's <run_dir>/wiring.json), the NICs' link state and
    LLDP neighbours follow the lab's cables: sysfs now, and on every lldpctl call (tools.lab_links)."""
    if LAB_DIR not in sys.path:
        sys.path.insert(0, LAB_DIR)
    import wiring  # pylint: disable=import-outside-toplevel

    from hostsim import tree  # pylint: disable=import-outside-toplevel

    root, bin_dir = os.path.join(base, "root"), os.path.join(base, "bin")
    settings = {"nics": nics, "stack": stack, "debugfs": debugfs, "peermem": peermem}
    marker = os.path.join(base, "settings.json")
    kept = None
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as handle:
            kept = json.load(handle)
    if kept != settings:
        shutil.rmtree(root, ignore_errors=True)
        tree.build(root, nics, stack, debugfs=debugfs, peermem=peermem)
        with open(marker, "w", encoding="utf-8") as handle:
            json.dump(settings, handle)
    write_shims(bin_dir, root, python)
    if host:
        write_node_bench(bin_dir, host, os.path.dirname(wiring_file) if wiring_file else None, python)
    state = tree.load(root)
    state["lab"] = {"host": host, "wiring_file": wiring_file}
    tree.save(root, state)
    seen = wiring.view(wiring.load(os.path.dirname(wiring_file)), host) if wiring_file and host else None
    tree.sync_links(root, host or "", seen, wiring.mac)
    return {"lab_host_root": root, "lab_host_bin": bin_dir}


# lab_nic_driver (host variable, or lab_nic_drivers {host: driver} as a group variable): the RDMA driver the host's
# NICs run; mlx5 hosts take their stack from lab_nic_stacks / lab_nic_stack as before.
LAB_DRIVERS = {"mlx5": None, "bnxt_re": "bnxt", "ionic": "ionic"}


def lab_stack(host: str, hvars: dict) -> str:
    driver = (hvars.get("lab_nic_drivers") or {}).get(host) or hvars.get("lab_nic_driver") or "mlx5"
    if driver not in LAB_DRIVERS:
        raise ValueError("%s: lab_nic_driver %r is not one of %s" % (host, driver, ", ".join(LAB_DRIVERS)))
    return LAB_DRIVERS[driver] or (hvars.get("lab_nic_stacks") or {}).get(host) or hvars.get("lab_nic_stack", "upstream")


class Hosts:
    name = "hostsim"

    def wanted(self, ctx) -> bool:  # type: ignore[no-untyped-def]
        return bool(self._hosts(ctx))

    @staticmethod
    def _hosts(ctx) -> dict:  # type: ignore[no-untyped-def]
        found = {}
        for host, hvars in ctx.devices("host").items():
            nics = [n for n in hvars["lossless_fabric_device"].get("nics") or [] if isinstance(n, dict) and n.get("netdev")]
            if nics:
                found[host] = (hvars, [{"name": n["name"], "netdev": n["netdev"]} for n in nics])
        return found

    def start(self, ctx) -> dict:  # type: ignore[no-untyped-def]
        hosts = {}
        for host, (hvars, nics) in self._hosts(ctx).items():
            stack = lab_stack(host, hvars)
            base = os.path.join(ctx.run_dir, "hosts", host)
            hosts[host] = make_host(base, nics, stack, ctx.python, bool(hvars.get("lab_nic_debugfs", True)), bool(hvars.get("lab_nic_peermem", True)),
                                    host=host, wiring_file=os.path.join(ctx.run_dir, "wiring.json"))
        return {"hosts": hosts}

    def before_stop(self, run_dir: str) -> None:
        """Nothing runs; the trees stay for the next lab run."""
