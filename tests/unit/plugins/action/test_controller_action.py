# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_controller_action.py: the prologue the controller-side action plugins share
(no connection, no transfer, args validated against the plugin's spec before its own code runs)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

# Each converted plugin with the least it accepts (its required options).
CONVERTED = {
    "change_report": {"dest": "/reports", "window": {"id": "w1"}, "status": "passed", "devices": {}},
    "fabric_plan": {},
    "nccl_report": {"report_dir": "/reports", "name": "pre", "results": []},
    "switch_config": {"state": "gathered"},
    "switch_counters": {},
}


class _Templar:
    @staticmethod
    def template(value):
        return value


def _action(cls, args, check_mode=False):
    """The plugin as the task executor builds it, for a task with these args."""
    task = SimpleNamespace(args=dict(args), async_val=0, check_mode=check_mode, diff=False, action="lossless.fabric.test")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    return cls(task, connection, play_context=None, loader=None, templar=_Templar())


class _Echo(ControllerAction):
    """Returns what the base handed it."""

    argument_spec = {
        "name": {"type": "str", "required": True},
        "count": {"type": "int", "default": 3},
        "state": {"type": "str", "default": "present", "choices": ["present", "rendered"]},
        "plan": {"type": "dict"},
    }
    required_if = [("state", "rendered", ("plan",))]

    def run_validated(self, args, task_vars, result):
        result.update(args=args, task_vars=task_vars)
        return result


def test_run_validates_and_coerces_before_run_validated():
    result = _action(_Echo, {"name": "leaf1", "count": "5"}).run(task_vars=None)
    assert result["changed"] is False
    assert result["args"] == {"name": "leaf1", "count": 5, "state": "present", "plan": None}
    assert result["task_vars"] == {}


def test_run_passes_task_vars_through():
    result = _action(_Echo, {"name": "leaf1"}).run(task_vars={"inventory_hostname": "leaf1"})
    assert result["task_vars"] == {"inventory_hostname": "leaf1"}


@pytest.mark.parametrize(("args", "expected"), [
    ({}, "missing required arguments: name"),
    ({"name": "leaf1", "count": "many"}, "count"),
    ({"name": "leaf1", "colour": "red"}, "Unsupported parameters"),
    ({"name": "leaf1", "state": "rendered"}, "state is rendered but all of the following are missing: plan"),
    ({"name": "leaf1", "state": "merged"}, "state must be one of: present, rendered, got: merged"),
])
def test_bad_args_fail_before_run_validated(args, expected):
    with pytest.raises(AnsibleActionFail, match=expected):
        _action(_Echo, args).run(task_vars={})


def test_no_connection_no_transfer():
    assert ControllerAction.TRANSFERS_FILES is False
    assert ControllerAction._requires_connection is False  # pylint: disable=protected-access


@pytest.mark.parametrize("name", CONVERTED)
def test_controller_plugins_validate_against_their_argument_spec(name):
    plugin = importlib.import_module("ansible_collections.lossless.fabric.plugins.action.%s" % name)
    assert issubclass(plugin.ActionModule, ControllerAction)
    # The module-level ARGUMENT_SPEC is what the docs test reads; the class must validate against the same dict.
    assert plugin.ActionModule.argument_spec is plugin.ARGUMENT_SPEC
    with pytest.raises(AnsibleActionFail, match="Unsupported parameters .*no_such_option"):
        _action(plugin.ActionModule, dict(CONVERTED[name], no_such_option=1)).run(task_vars={})


def test_switch_config_keeps_its_required_if():
    from ansible_collections.lossless.fabric.plugins.action import switch_config

    assert switch_config.ActionModule.required_if is _switch_config.REQUIRED_IF
    with pytest.raises(AnsibleActionFail, match="state is merged but any of the following are missing: plan, plans"):
        _action(switch_config.ActionModule, {"state": "merged"}).run(task_vars={})


def test_fabric_plan_through_the_base():
    from ansible_collections.lossless.fabric.plugins.action import fabric_plan

    result = _action(fabric_plan.ActionModule, {}).run(task_vars={})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"].startswith("lossless_fabric: the fabric intent is not defined")


def test_nccl_report_errors_name_the_option_before_writing(tmp_path):
    from ansible_collections.lossless.fabric.plugins.action import nccl_report

    args = {"report_dir": str(tmp_path / "reports"), "name": "bad name", "results": [], "phase": "pre\npost"}
    result = _action(nccl_report.ActionModule, args).run(task_vars={})
    assert result["failed"] is True and result["changed"] is False
    assert "name: 'bad name' is not a report name" in result["msg"]
    assert "phase: 'pre\\npost' holds a line break" in result["msg"]
    assert not (tmp_path / "reports").exists()


def test_change_report_through_the_base(tmp_path):
    from ansible_collections.lossless.fabric.plugins.action import change_report

    dest = tmp_path / "reports"
    bad = {"dest": str(dest), "window": {"id": "bad id"}, "status": "passed", "devices": {}}
    result = _action(change_report.ActionModule, bad).run(task_vars={})
    assert result["failed"] is True and result["changed"] is False
    assert "window.id: 'bad id' makes no file name" in result["msg"]
    assert not dest.exists()

    good = dict(bad, window={"id": "w1"})
    result = _action(change_report.ActionModule, good, check_mode=True).run(task_vars={})
    assert result["changed"] is True and not dest.exists()
    result = _action(change_report.ActionModule, good).run(task_vars={})
    assert result["changed"] is True and result["verdict"]
    assert sorted(p.name for p in dest.iterdir()) == ["change-window-w1.json", "change-window-w1.md"]
    assert _action(change_report.ActionModule, good).run(task_vars={})["changed"] is False
