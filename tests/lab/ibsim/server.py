# SPDX-License-Identifier: GPL-3.0-or-later
"""Keep one simulated InfiniBand fabric up until SIGTERM (the lab launcher's process).

    python tests/lab/ibsim/server.py --config ibsim.json --state-file ibsim.state.json

Config (JSON):
    {"workdir": "/abs/dir",                 # the fabric's files (default: beside the config, "ibsim/")
     "topology": {...},                     # a topology.build() spec (spines, leaves, hosts, ...)
     "opensm_options": {"sweep_interval": 10},   # extra opensm.conf lines of the lab SM (optional)
     "partitions": "...", "qos_policy": "..."}    # initial files (optional; default: Default partition,
                                                  # a DEFAULT-only QoS policy); kept when already there
The state file is written (atomically) once OpenSM logged SUBNET UP and
removed on exit: Fabric.state() plus "pid" (this process) and "topology"
(node id -> port GUID).  Signals: SIGTERM/SIGINT stop OpenSM, then ibsim,
and exit 0; SIGUSR1 restarts OpenSM (for options SIGHUP does not re-read);
SIGHUP is passed on to OpenSM.  If ibsim or OpenSM dies, the server stops
the other one and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ibsim import topology as topo_mod  # noqa: E402
from ibsim.fabric import Fabric, FabricError  # noqa: E402


def _write_state(path: str, state: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=2, sort_keys=True)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--state-file", required=True)
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as handle:
        config = json.load(handle)
    workdir = config.get("workdir") or os.path.join(os.path.dirname(os.path.abspath(args.config)), "ibsim")
    try:
        topology = topo_mod.build(config["topology"])
    except (KeyError, topo_mod.TopologyError) as exc:
        print("ibsim server: bad topology in %s: %s" % (args.config, exc), file=sys.stderr)
        return 2
    kwargs = {k: config[k] for k in ("partitions", "qos_policy") if config.get(k) is not None}
    fabric = Fabric(workdir, topology, opensm_options=config.get("opensm_options"), control_pid=os.getpid(), **kwargs)

    events: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: events.append("stop"))
    signal.signal(signal.SIGINT, lambda *_: events.append("stop"))
    signal.signal(signal.SIGUSR1, lambda *_: events.append("restart"))
    signal.signal(signal.SIGHUP, lambda *_: events.append("reload"))

    state_path = os.path.abspath(args.state_file)
    try:
        fabric.start()
        state = dict(fabric.state(), pid=os.getpid(), topology=topology.guids(), sm_nodes=topology.sm_nodes)
        _write_state(state_path, state)
        print("ibsim server: fabric up (%d nodes), diag wrappers in %s" % (len(topology.nodes), fabric.files["bin"]), flush=True)
        while True:
            while events:
                event = events.pop(0)
                if event == "stop":
                    return 0
                if event == "reload":
                    fabric.reload(wait=False)
                elif event == "restart":
                    fabric.restart_opensm()
                    _write_state(state_path, dict(state, **fabric.state()))
                    print("ibsim server: OpenSM restarted (pid %d)" % fabric.opensm.pid, flush=True)
            if not fabric.running:
                print("ibsim server: a fabric process died:\n%s" % fabric._logs(), file=sys.stderr)  # pylint: disable=protected-access
                return 1
            time.sleep(0.1)
    except FabricError as exc:
        print("ibsim server: %s" % exc, file=sys.stderr)
        return 1
    finally:
        fabric.stop()
        if os.path.exists(state_path):
            os.unlink(state_path)


if __name__ == "__main__":
    sys.exit(main())
