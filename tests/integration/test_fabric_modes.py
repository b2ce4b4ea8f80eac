# SPDX-License-Identifier: GPL-3.0-or-later
"""Fabric modes (issue 36) on the strict switch simulators: one lab of the five platforms moved from lossless to
ecn_only and back, each step committed and read back, the way back rolled back once (a failed post-check) and then
committed. switch_config runs in-process (as test_switch_config's hang tests do) to keep the lab at one start."""

from __future__ import annotations

import copy
import json
import os
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switchlab import INTENT, PASSWORD  # noqa: E402  # pylint: disable=import-error,wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config  # noqa: E402

SWITCHES = {"sw-eos": "eos", "sw-nvue": "nvue", "sw-junos": "junos", "sw-sonic": "sonic", "sw-nxos": "nxos"}


def _plans(lab, mode: str) -> dict:
    intent = copy.deepcopy(INTENT)
    intent.setdefault("roce", {})["mode"] = mode
    if mode == "ecn_only":
        intent["roce"].setdefault("pfc", {}).pop("priorities", None)
        intent["roce"]["pfc"].pop("watchdog", None)
    lab.write_inventory(intent)
    inventory = yaml.safe_load((lab.inventory / "hosts.yml").read_text())
    hosts = inventory["all"]["children"]["switches"]["hosts"]
    return _plan.build_plan(intent, {h: v["lossless_fabric_device"] for h, v in hosts.items()})["devices"]


def _push(lab, name: str, plan: dict, **extra) -> dict:
    args = {key: spec.get("default") for key, spec in _config.ARGUMENT_SPEC.items()}
    args.update(plan=plan, platform=plan["platform"], host="127.0.0.1", port=lab.sim.port(name), username="admin", password=PASSWORD,
                host_key_checking=True, known_hosts_file=str(lab.known_hosts))
    args.update(extra)
    return _config.run(args, device=name)


def _gathered_pfc(lab, name: str, plan: dict) -> dict:
    res = _push(lab, name, plan, state="gathered")
    assert not res.get("failed"), res
    return res


def test_a_fabric_moves_lossless_to_ecn_only_and_back_with_a_rollback(switch_lab):
    lab = switch_lab(SWITCHES)
    lossless, ecn_only = _plans(lab, "lossless"), _plans(lab, "ecn_only")
    for name in SWITCHES:
        assert lossless[name]["mode"] == "lossless" and ecn_only[name]["mode"] == "ecn_only"
        assert ecn_only[name]["pfc_priorities"] == [] and not ecn_only[name]["watchdog"]["enabled"]
    running = {}
    for name in SWITCHES:
        first = _push(lab, name, lossless[name])
        assert not first.get("failed") and first["device_state"] == "committed", (name, first)
        running["lossless", name] = lab.running(name)
    for name in SWITCHES:
        moved = _push(lab, name, ecn_only[name])
        assert not moved.get("failed") and moved["device_state"] == "committed", (name, moved.get("msg"), moved.get("device_said"))
        again = _push(lab, name, ecn_only[name])
        assert not again.get("failed") and not again["changed"], (name, again)  # read back: the device holds the ecn_only plan
        running["ecn_only", name] = lab.running(name)
        assert running["ecn_only", name] != running["lossless", name], name
        gathered = _gathered_pfc(lab, name, ecn_only[name])
        assert _config.drift(ecn_only[name], gathered["gathered"]) == [], (name, gathered)
    # what the lossless plan left is gone: EOS no-drop priorities, SONiC's watchdog entries, lossless PG and pfc_enable
    assert "no-drop" not in running["ecn_only", "sw-eos"] and "no-drop" in running["lossless", "sw-eos"]
    db = json.loads(running["ecn_only", "sw-sonic"])
    assert "PFC_WD" not in db or not set(db["PFC_WD"]) & set(ecn_only["sw-sonic"]["ports"]), db.get("PFC_WD")
    assert not [key for key in db.get("BUFFER_PG", {}) if key.endswith("|3")], db.get("BUFFER_PG")
    assert {db["PORT_QOS_MAP"][port]["pfc_enable"] for port in ecn_only["sw-sonic"]["ports"]} == {""}
    # the way back: pushed under the commit timer, a post-check fails, rolled back: the switch holds ecn_only again
    for name in SWITCHES:
        pending = _push(lab, name, lossless[name], confirm=False, confirm_timeout=600)
        assert pending["device_state"] == "pending confirmation", (name, pending)
        undone = _push(lab, name, lossless[name], state="rolled_back", session=pending["session"])
        assert not undone.get("failed"), (name, undone)
        assert lab.running(name) == running["ecn_only", name], name
    for name in SWITCHES:
        back = _push(lab, name, lossless[name])
        assert not back.get("failed") and back["device_state"] == "committed", (name, back)
        gathered = _gathered_pfc(lab, name, lossless[name])
        assert _config.drift(lossless[name], gathered["gathered"]) == [], (name, gathered)
    # second mode, second run: lossless -> pfc_only, read back without ECN
    pfc_only = _plans(lab, "pfc_only")
    for name in SWITCHES:
        moved = _push(lab, name, pfc_only[name])
        assert not moved.get("failed") and moved["device_state"] == "committed", (name, moved.get("msg"), moved.get("device_said"))
        again = _push(lab, name, pfc_only[name])
        assert not again.get("failed") and not again["changed"], (name, again.get("msg"))
        gathered = _gathered_pfc(lab, name, pfc_only[name])
        assert _config.drift(pfc_only[name], gathered["gathered"]) == [], (name, _config.drift(pfc_only[name], gathered["gathered"]))
    assert "random-detect ecn minimum-threshold" not in lab.running("sw-eos")
    db = json.loads(lab.running("sw-sonic"))
    assert not [key for key, row in db["QUEUE"].items() if "wred_profile" in row], db["QUEUE"]
    nxos_run, junos_run = lab.running("sw-nxos"), lab.running("sw-junos")
    assert "random-detect" not in nxos_run, nxos_run
    # Junos: the ports' scheduler map is the one without a drop profile (the lossless plan's ECN objects stay, unused)
    assert "scheduler-map LF-ROCE-SM;" in junos_run and "scheduler-map LF-ROCE-SM-" not in junos_run, junos_run
