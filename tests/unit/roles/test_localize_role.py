# SPDX-License-Identifier: GPL-3.0-or-later
"""Role lossless.fabric.localize: its variables (defaults, argument spec, tasks agree), its settings are the core's
(one name: _localize.DEFAULT_SETTINGS), every task tagged by phase; the hooks in nccl_gate and change_window; the
lab inventory's model-mode target and knob; playbooks/localize.yml plans first."""

from __future__ import annotations

import pathlib
import re

import yaml

from ansible_collections.lossless.fabric.plugins.module_utils import _localize

ROOT = pathlib.Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "localize"


def _yaml(path: pathlib.Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


DEFAULTS = _yaml(ROLE / "defaults" / "main.yml")
SPEC = _yaml(ROLE / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
TASK_FILES = sorted((ROLE / "tasks").glob("*.yml"))
TASKS_TEXT = "".join(p.read_text(encoding="utf-8") for p in TASK_FILES) + (ROLE / "vars" / "main.yml").read_text(encoding="utf-8")


def test_every_default_is_in_the_argument_spec_with_the_same_value_and_a_description():
    assert sorted(DEFAULTS) == sorted(SPEC)
    for name, value in DEFAULTS.items():
        assert name.startswith("localize_"), name
        assert SPEC[name].get("default") == value, name
        assert SPEC[name].get("description"), name


def test_every_role_variable_the_tasks_use_has_a_default():
    own = {"localize_result", "localize_preflight", "localize_configure", "localize_verify"}
    used = set(re.findall(r"\blocalize_[a-z_]+\b", TASKS_TEXT)) - own
    assert used and used <= set(DEFAULTS), used - set(DEFAULTS)


def test_the_settings_are_the_cores_by_the_same_names():
    keys = _yaml(ROLE / "vars" / "main.yml")["_localize_setting_keys"]
    assert sorted(keys) == sorted(_localize.DEFAULT_SETTINGS)
    assert {"localize_" + k for k in keys} <= set(DEFAULTS)
    # null = the module's default; cross_rail stays off (one NCCL_IB_HCA value per job)
    assert all(DEFAULTS["localize_" + k] is None for k in keys if k != "cross_rail") and DEFAULTS["localize_cross_rail"] is False


def test_the_choices_are_the_modules():
    assert SPEC["localize_launcher"]["choices"] == ["kubernetes", "mpirun", "slurm"]
    assert SPEC["localize_exclude"]["choices"] == ["none", "slurm", "kubernetes"] and DEFAULTS["localize_exclude"] == "none"


def test_every_task_is_tagged_with_its_phase():
    for path in TASK_FILES:
        if path.name == "main.yml":
            continue
        phase = {"preflight.yml": "localize_preflight", "configure.yml": "localize_configure", "verify.yml": "localize_verify"}[path.name]
        for task in _yaml(path):
            assert phase in task.get("tags", []), (path.name, task["name"])


def test_exclusion_runs_only_when_asked():
    verify = _yaml(ROLE / "tasks" / "verify.yml")
    block = next(t for t in verify if "block" in t)["block"]
    for task in block:
        if "exclude" in task["name"]:
            assert task["when"] in ("localize_exclude == 'slurm'", "localize_exclude == 'kubernetes'"), task["name"]
    assert next(t for t in verify if "block" in t)["when"] == "not ansible_check_mode"


def test_the_gate_offers_it_off_by_default_and_names_the_suspects():
    defaults = _yaml(ROOT / "roles" / "nccl_gate" / "defaults" / "main.yml")
    specs = _yaml(ROOT / "roles" / "nccl_gate" / "meta" / "argument_specs.yml")["argument_specs"]
    assert defaults["nccl_gate_localize"] is False
    for entry in ("main", "gate"):
        assert specs[entry]["options"]["nccl_gate_localize"]["default"] is False
        assert specs[entry]["options"]["nccl_gate_localize_launcher"]["default"] == defaults["nccl_gate_localize_launcher"]
    verify = (ROOT / "roles" / "nccl_gate" / "tasks" / "verify.yml").read_text(encoding="utf-8")
    assert "name: lossless.fabric.localize" in verify and "__nccl_gate_localize] if __nccl_gate_localize is defined" in verify


def test_the_lab_gates_realistically_and_localizes_only_with_the_knob():
    lab = _yaml(ROOT / "inventories" / "lab" / "group_vars" / "all" / "lab_nccl.yml")
    assert "lab_perf_faults" in lab["nccl_gate_targets"] and "'min_busbw': 80" in lab["nccl_gate_targets"]
    assert lab["nccl_gate_localize"] == "{{ lab_perf_faults | default([]) | length > 0 }}"
    assert lab["localize_loopback"] is True and lab["localize_repeats"] == 2


def test_the_playbook_plans_then_localizes():
    plays = _yaml(ROOT / "playbooks" / "localize.yml")
    assert [r["role"] for p in plays for r in p["roles"]] == ["lossless.fabric.fabric_plan", "lossless.fabric.localize"]


def test_the_change_window_offers_it_for_its_post_gate_off_by_default():
    cw = ROOT / "roles" / "change_window"
    assert _yaml(cw / "defaults" / "main.yml")["change_window_localize"] is False
    assert _yaml(cw / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]["change_window_localize"]["default"] is False
    post = _yaml(cw / "tasks" / "post.yml")
    gate = next(t for t in post if t.get("ansible.builtin.include_role", {}).get("name") == "lossless.fabric.nccl_gate")
    assert gate["vars"]["nccl_gate_localize"] == "{{ change_window_localize }}"
    judge = next(t for t in post if t["name"] == "Post - judge")
    assert "'post benchmark: localization '" in judge["ansible.builtin.set_fact"]["__change_window_reasons"]
