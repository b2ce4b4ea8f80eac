# SPDX-License-Identifier: GPL-3.0-or-later
"""A SONiC fabric moved lossless -> ecn_only -> pfc_only on every release the simulator emulates (issue 36): the driver's
split of each plan (GCU patch, pfcwd / ecnconfig commands) against the switch's CONFIG_DB passes GCU's field-operation
validators of that release (tests/lab/switchsim/sonic_gcu.py, docs/research/sonic-gcu.md), and the move to ecn_only rolls
back (the undo commands, then 'config rollback', which GCU validates too). In-process shells: fast."""
from __future__ import annotations

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from switchsim.server import Simulator  # noqa: E402  # pylint: disable=import-error,wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _driver as sonic_driver  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _render as sonic_render  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as sonic_vendor  # noqa: E402

PORTS = ["Ethernet0", "Ethernet8"]
MELLANOX = "Mellanox-SN4700-O8C48"  # spc3, on every release's SKU list from 202305


def _plan_of(mode: str, release: str) -> dict:
    intent = {"name": "x", "transport": "roce", "roce": {"mode": mode},
              "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 100}]}}}
    device = {"kind": "switch", "platform": "sonic", "release": release, "hwsku": MELLANOX,
              "ports": {port: {"speed": "400G", "cable_length_m": 3} for port in PORTS}}
    return _plan.build_plan(intent, {"leaf5": device})["devices"]["leaf5"]


def _push(sim, sh, driver, plan: dict) -> list[str]:
    """What the driver's load and commit send: the GCU patch, then the pfcwd/ecnconfig commands; the undo commands."""
    version = sh.handle("show version")
    build = sonic_driver._VERSION.search(version).group(1)
    hwsku = sonic_driver._HWSKU.search(version).group(1)
    asic = sonic_driver._ASIC.search(version).group(1)
    release = sonic_vendor.release_of_build(build)
    running = sim.devices["leaf5"].running_config()
    ops, cli, undo = driver.split(sonic_render.render(plan), running, release, asic, hwsku, build)
    if ops:
        assert sh.handle("cat > /tmp/p.json-patch <<'EOF'") == ""
        for line in ("[\n" + ",\n".join(json.dumps(op) for op in ops) + "\n]").splitlines():
            sh.handle(line)
        sh.handle("EOF")
        out = sh.handle("sudo config apply-patch /tmp/p.json-patch")
        assert "Patch applied successfully." in out, (release, ops, out)
    for command in cli:
        out = sh.handle(command)
        assert sh.handle("echo $?").strip() == "0", (release, command, out)
    return undo


@pytest.mark.parametrize("release", sonic_vendor.RELEASES)
def test_a_sonic_fabric_moves_between_modes_and_rolls_back_on_every_release(tmp_path, release):
    spec = {"name": "leaf5", "platform": "sonic", "ports": PORTS, "version": release, "hwsku": MELLANOX}
    sim = Simulator({"time_scale": 0.002, "switches": [spec]}, str(tmp_path))
    try:
        sh = sim.devices["leaf5"].new_shell(None)
        driver = object.__new__(sonic_driver.Driver)  # split() and patch() read only their arguments
        _push(sim, sh, driver, _plan_of("lossless", release))
        lossless = json.loads(sim.devices["leaf5"].running_config())
        assert set(lossless["PFC_WD"]) >= set(PORTS) and lossless["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
        assert sh.handle("sudo config checkpoint before-ecn").strip().endswith("Checkpoint created successfully.")
        undo = _push(sim, sh, driver, _plan_of("ecn_only", release))
        ecn = json.loads(sim.devices["leaf5"].running_config())
        assert not set(ecn.get("PFC_WD", {})) & set(PORTS), ecn.get("PFC_WD")
        assert {ecn["PORT_QOS_MAP"][port]["pfc_enable"] for port in PORTS} == {""}
        assert not [key for key in ecn.get("BUFFER_PG", {}) if key.endswith("|3")], ecn.get("BUFFER_PG")
        # the rollback the timer runs: the undo commands (pfcwd start again), then config rollback (GCU-validated)
        for command in list(reversed(undo)) + ["config rollback before-ecn"]:
            out = sh.handle("sudo " + command)
            assert sh.handle("echo $?").strip() == "0", (release, command, out)
        assert json.loads(sim.devices["leaf5"].running_config()) == lossless
        _push(sim, sh, driver, _plan_of("pfc_only", release))
        pfc = json.loads(sim.devices["leaf5"].running_config())
        assert not [key for key, row in pfc["QUEUE"].items() if "wred_profile" in row], pfc["QUEUE"]
        assert pfc["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3" and set(pfc["PFC_WD"]) >= set(PORTS)
    finally:
        sim.stop()
