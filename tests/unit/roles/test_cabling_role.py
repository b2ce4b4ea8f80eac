# SPDX-License-Identifier: GPL-3.0-or-later
"""Role lossless.fabric.cabling: its variables (defaults, argument spec, tasks agree), the preflight's checks of
cabling_exceptions, and the playbook order (site.yml checks the cabling right after the plan, before any change)."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.filter.cabling_exception_errors import cabling_exception_errors

ROOT = pathlib.Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "cabling"


def _yaml(path: pathlib.Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


DEFAULTS = _yaml(ROLE / "defaults" / "main.yml")
SPEC = _yaml(ROLE / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
TASKS_TEXT = (ROLE / "tasks" / "main.yml").read_text(encoding="utf-8") + (ROLE / "vars" / "main.yml").read_text(encoding="utf-8")


def test_every_default_is_in_the_argument_spec_with_the_same_value_and_a_description():
    assert sorted(DEFAULTS) == sorted(SPEC)
    for name, value in DEFAULTS.items():
        assert name.startswith("cabling_"), name
        assert SPEC[name].get("default") == value, name
        assert SPEC[name].get("description"), name


def test_every_role_variable_the_tasks_use_has_a_default():
    used = set(re.findall(r"\bcabling_[a-z_]+\b", TASKS_TEXT)) - {"cabling_result", "cabling_exception_errors", "cabling_preflight", "cabling_verify"}
    assert used and used <= set(DEFAULTS), used - set(DEFAULTS)


def test_the_choices_of_the_host_lldp_agent_are_host_links_own():
    assert SPEC["cabling_host_lldp"]["choices"] == ["auto", "lldpd", "lldptool", "none"]


def test_the_tasks_are_tagged_preflight_or_verify():
    tasks = _yaml(ROLE / "tasks" / "main.yml")
    for task in tasks:
        assert set(task.get("tags", [])) & {"cabling_preflight", "cabling_verify"}, task["name"]


@pytest.mark.parametrize("exceptions, errors", [
    ([], []),
    ([{"end": "leaf1:swp2", "finding": "degraded", "reason": "RMA 1234"}], []),
    ([{"end": "leaf1:swp2", "finding": "slow", "reason": "RMA 1234"}],
     ["exceptions[0].finding: 'slow' is not a finding an exception can allow (missing, wrong_peer, swapped, degraded, unexpected, unproven, unread)"]),
    ([{"end": "leaf1:swp2", "finding": "missing", "reason": "x\ny"}], ["exceptions[0].reason: 'x\\ny' is not one line saying why (a ticket, an RMA number)"]),
    ("leaf1:swp2", ["exceptions: 'leaf1:swp2' is not a list of {end, finding, reason}"]),
])
def test_the_preflight_filter_names_the_entry_the_key_and_the_value(exceptions, errors):
    assert cabling_exception_errors(exceptions) == errors


def test_site_checks_the_cabling_after_the_plan_and_before_any_change():
    site = _yaml(ROOT / "playbooks" / "site.yml")
    steps = [play.get("ansible.builtin.import_playbook") or "plan" for play in site]
    assert steps[:3] == ["plan", "cabling.yml", "switches.yml"], steps


def test_the_cabling_playbook_plans_only_when_the_run_has_no_plan_and_reads_every_kind_of_device():
    plays = _yaml(ROOT / "playbooks" / "cabling.yml")
    plan = plays[0]["tasks"][0]
    assert plays[0]["hosts"] == "localhost" and plan["ansible.builtin.include_role"]["name"] == "lossless.fabric.fabric_plan"
    assert plan["when"] == "fabric_plan_result is not defined"
    assert plays[1]["hosts"] == "switches:gpu_hosts:subnet_managers" and plays[1]["roles"] == [{"role": "lossless.fabric.cabling"}]
    # The verdict fails on one host (run_once): without this the rest of site.yml would go on changing the others.
    assert plays[1]["any_errors_fatal"] is True
