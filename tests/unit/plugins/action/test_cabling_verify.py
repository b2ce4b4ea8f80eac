# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/action/cabling_verify.py: the controller-side glue - readings merged, the verdict fails the task,
the report written like nccl_report's (only changed files, nothing in check mode), bad input refused first."""

from __future__ import annotations

import importlib
import json
import os
import sys
from types import SimpleNamespace

import pytest

from ansible_collections.lossless.fabric.plugins.action import cabling_verify
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "module_utils", "_cabling"))
cabling_tests = importlib.import_module("test_compare")


class _Templar:
    @staticmethod
    def template(value):
        return value


def run(args, check_mode=False, diff=False):
    task = SimpleNamespace(args=dict(args), async_val=0, check_mode=check_mode, diff=diff, action="lossless.fabric.cabling_verify")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    return cabling_verify.ActionModule(task, connection, play_context=None, loader=None, templar=_Templar()).run(task_vars={})


def readings(faults=None):
    obs = cabling_tests.observe(faults)
    out = {h: {"switch_links": {"changed": False, "ends": obs[h]}} for h in cabling_tests.SWITCHES}
    out.update({h: {"host_links": {"changed": False, "ends": obs[h], "lldp_source": "lldpd"}, "switch_links": {"skipped": True}}
                for h in cabling_tests.HOSTS})
    return out


def test_it_is_a_controller_action_validating_its_spec():
    assert issubclass(cabling_verify.ActionModule, ControllerAction)
    assert cabling_verify.ActionModule.argument_spec is cabling_verify.ARGUMENT_SPEC


def test_a_correct_fabric_passes_and_writes_the_report_once(tmp_path):
    args = {"cabling": cabling_tests.lab_cabling(), "readings": readings(), "report_dir": str(tmp_path / "r")}
    result = run(args)
    assert not result.get("failed") and result["verdict"] == "passed" and result["changed"] is True
    assert result["msg"] == "Cabling check passed: 6 intended link(s) ok, 0 allowed by exceptions"
    assert sorted(os.listdir(tmp_path / "r")) == ["cabling.json", "cabling.md"]
    assert result["files"] == {"json": str(tmp_path / "r" / "cabling.json"), "markdown": str(tmp_path / "r" / "cabling.md")}
    assert run(args)["changed"] is False


def test_a_bad_link_fails_the_task_after_writing_the_report(tmp_path):
    args = {"cabling": cabling_tests.lab_cabling(), "readings": readings([{"unplug": "leaf1:swp2"}]), "report_dir": str(tmp_path)}
    result = run(args)
    assert result["failed"] is True and result["verdict"] == "failed"
    assert result["msg"].splitlines() == [
        "Cabling check failed: 1 finding(s) on 6 intended link(s) (report %s):" % (tmp_path / "cabling.md"),
        "missing leaf1:swp2 - gpu2:mlx5_0: expected leaf1:swp2 - gpu2:mlx5_0 at 400G; found leaf1:swp2 down; gpu2:mlx5_0 down"]
    assert "| missing | leaf1:swp2 | gpu2:mlx5_0 | 0 |" in (tmp_path / "cabling.md").read_text()
    assert json.loads((tmp_path / "cabling.json").read_text())["summary"]["missing"] == 1


def test_check_mode_judges_the_same_and_writes_nothing(tmp_path):
    args = {"cabling": cabling_tests.lab_cabling(), "readings": readings([{"unplug": "leaf1:swp2"}]), "report_dir": str(tmp_path / "r")}
    result = run(args, check_mode=True, diff=True)
    assert result["failed"] is True and "(report not written: check mode)" in result["msg"]
    assert not (tmp_path / "r").exists() and result["changed"] is True
    assert [d["after_header"] for d in result["diff"]] == [str(tmp_path / "r" / "cabling.json"), str(tmp_path / "r" / "cabling.md")]


def test_a_failed_reader_makes_its_device_unread_with_the_readers_message():
    got = readings()
    got["leaf2"] = {"switch_links": {"failed": True, "msg": "leaf2: 'show lldp neighbors detail | display json': not JSON"}}
    result = run({"cabling": cabling_tests.lab_cabling(), "readings": got})
    assert result["failed"] is True and result["files"] == {}
    assert "unread leaf2: expected an observation of leaf2" in result["msg"]
    assert "found nothing: switch_links failed on leaf2: leaf2: 'show lldp neighbors detail | display json': not JSON" in result["msg"]


def test_an_allowed_exception_passes_and_an_unused_one_warns():
    exceptions = [{"end": "leaf1:swp2", "finding": "missing", "reason": "RMA 1234"}, {"end": "gpu1", "finding": "degraded", "reason": "old"}]
    result = run({"cabling": cabling_tests.lab_cabling(), "readings": readings([{"unplug": "leaf1:swp2"}]), "exceptions": exceptions})
    assert not result.get("failed") and result["summary"]["allowed"] == 1
    assert result["warnings"] == ["cabling exceptions[1] (gpu1 degraded: old) matched no finding; remove it once the link is fixed"]


def test_bad_input_fails_naming_the_key_and_the_value_and_writes_nothing(tmp_path):
    result = run({"cabling": cabling_tests.lab_cabling(), "readings": readings(), "report_dir": str(tmp_path / "r"),
                  "exceptions": [{"end": "leaf1:swp2", "finding": "slow", "reason": "x"}]})
    assert result["failed"] is True and result["msg"].startswith("exceptions[0].finding: 'slow' is not a finding")
    result = run({"cabling": cabling_tests.lab_cabling(), "name": "../x", "title": "a\nb", "report_dir": str(tmp_path / "r")})
    assert result["errors"] == ["name: '../x' is not a report name (letters, digits, '.', '_' and '-', starting with a letter or digit, "
                                "at most 100 characters)",
                                "title: 'a\\nb' holds a line break (it becomes one line of the report)"]
    assert not (tmp_path / "r").exists()


def test_the_plan_s_nic_netdevs_name_a_host_that_gave_no_self():
    got = readings()
    for host in cabling_tests.HOSTS:
        for seen in got[host]["host_links"]["ends"].values():
            seen.pop("self")
            seen["neighbors"] = []
    devices = {h: {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}]} for h in cabling_tests.HOSTS}
    assert run({"cabling": cabling_tests.lab_cabling(), "readings": got, "devices": devices})["verdict"] == "passed"


@pytest.mark.parametrize("bad", [{"leaf1": "x"}, {"leaf1": {"switch_links": 3}}])
def test_readings_out_of_shape_are_refused(bad):
    result = run({"cabling": cabling_tests.lab_cabling(), "readings": bad})
    assert result["failed"] is True and result["msg"].startswith("readings['leaf1']")
