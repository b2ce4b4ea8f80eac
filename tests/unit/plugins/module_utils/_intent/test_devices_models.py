# SPDX-License-Identifier: GPL-3.0-or-later
"""Switch models with their ports and speeds (_tables.SWITCH_MODELS): the intent's port speeds
checked against the model the device names; an unknown model is accepted unchecked (issue 32)."""

from __future__ import annotations

import glob
import os

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _tables

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
JUNOS = {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 12000000}
EOS = {"kind": "switch", "platform": "eos"}


def validate(device):
    return _plan.validate({"name": "lab", "transport": "roce"}, {"leaf1": device})


@pytest.mark.parametrize(
    "device",
    [
        {**JUNOS, "model": "qfx5220-32cd", "ports": {"et-0/0/0": {"speed": "400G"}, "et-0/0/31": {"speed": "100G"}}},
        {**JUNOS, "model": "qfx5120-32c", "ports": {"et-0/0/31": {"speed": "100G"}, "et-0/0/1": {"speed": "40G"}}},
        {**EOS, "model": "DCS-7280DR3-24", "ports": {"Ethernet1/1": {"speed": "400G"}, "Ethernet24/1": {"speed": "100G"}}},
        {**JUNOS, "model": "QFX5220-32CD", "ports": {"et-0/0/3": {"speed": "40G"}}},  # the table's names are case-insensitive
        # Not checked: a port name no group covers (the QFX's xe- ports), a model not in the table.
        {**JUNOS, "model": "qfx5220-32cd", "ports": {"xe-0/0/32": {"speed": "10G"}}},
        {**JUNOS, "model": "qfx5120", "ports": {"et-0/0/1": {"speed": "400G"}}},
        {**EOS, "model": "DCS-7280CR3-32P4", "ports": {"Ethernet1/1": {"speed": "400G"}}},
    ],
)
def test_speeds_the_model_runs_or_unknown_models_are_accepted(device):
    assert validate(device) == ([], [])


@pytest.mark.parametrize(
    "device, expected",
    [
        (
            {**JUNOS, "model": "qfx5120-32c", "ports": {"et-0/0/1": {"speed": "400G"}}},
            "leaf1: lossless_fabric_device.ports[et-0/0/1].speed: '400G': a qfx5120-32c runs port 1 (et-0/0/1) at 100G, 40G only",
        ),
        (
            {**JUNOS, "model": "qfx5220-32cd", "ports": {"et-0/0/5:2": {"speed": "25G"}}},
            "leaf1: lossless_fabric_device.ports[et-0/0/5:2].speed: '25G': a qfx5220-32cd runs port 5 (et-0/0/5:2) at 400G, 100G, 40G only",
        ),
        (
            {**JUNOS, "model": "qfx5220-32cd", "ports": {"et-0/0/32": {"speed": "400G"}}},
            "leaf1: lossless_fabric_device.ports[et-0/0/32]: 'et-0/0/32' is not a port of a qfx5220-32cd (its ports: 0-31)",
        ),
        (
            {**EOS, "model": "DCS-7280DR3-24", "ports": {"Ethernet25/1": {"speed": "400G"}}},
            "leaf1: lossless_fabric_device.ports[Ethernet25/1]: 'Ethernet25/1' is not a port of a DCS-7280DR3-24 (its ports: 1-24)",
        ),
        (
            {**EOS, "model": "DCS-7280DR3-24", "ports": {"Ethernet2/1": {"speed": "200G"}}},
            "leaf1: lossless_fabric_device.ports[Ethernet2/1].speed: '200G': a DCS-7280DR3-24 runs port 2 (Ethernet2/1) at 400G, 100G, 50G, 40G, 25G, 10G only",
        ),
        (  # the canonical name is checked: leading zeros dropped
            {**JUNOS, "model": "qfx5120-32c", "ports": {"et-0/0/07": {"speed": "400G"}}},
            "leaf1: lossless_fabric_device.ports[et-0/0/07].speed: '400G': a qfx5120-32c runs port 7 (et-0/0/7)",
        ),
    ],
)
def test_a_speed_the_model_does_not_run_names_key_value_model_and_what_it_supports(device, expected):
    errors, _warnings = validate(device)
    assert len(errors) == 1 and errors[0].startswith(expected), errors


def test_the_old_lab_leaf_at_400g_is_refused_and_the_new_one_plans():
    """The lab's Junos leaf was a QFX5120 (32 x 100G) cabled at 400G; named as the SKU it is refused."""
    ports = {"et-0/0/1": {"speed": "400G"}, "et-0/0/2": {"speed": "400G"}, "et-0/0/31": {"speed": "400G"}}
    errors, _warnings = validate({**JUNOS, "model": "qfx5120-32c", "ports": ports})
    assert len(errors) == 3
    plan = _plan.build_plan({"name": "lab", "transport": "roce"}, {"leaf2": {**JUNOS, "model": "qfx5220-32cd", "ports": ports}})
    junos = plan["devices"]["leaf2"]["junos"]
    # A SKU takes its family's scheduling forms and DCBX default (QFX5220: Junos EVO, port, auto).
    assert (junos["model"], junos["scheduling"], junos["dcbx"]) == ("qfx5220-32cd", "port", "auto")


@pytest.mark.parametrize("model", ["qfx5220-", "qfx5250-32cd", "-qfx5220"])
def test_a_junos_sku_of_an_unknown_family_is_refused(model):
    errors, _warnings = validate({**JUNOS, "model": model, "ports": {"et-0/0/1": {"speed": "100G"}}})
    assert len(errors) == 1 and f"'{model}' is not a Junos model we have a scheduling form for" in errors[0], errors


def test_every_table_model_has_groups_that_cover_each_port_once():
    for platform, models in _tables.SWITCH_MODELS.items():
        for model, groups in models.items():
            assert model == model.casefold() and groups, (platform, model)
            for _pattern, first, last, speeds in groups:
                assert 0 <= first <= last and speeds and set(speeds) <= set(_tables.SPEEDS.values()), (platform, model)


def test_every_lab_switch_that_names_a_model_names_one_the_table_checks_and_runs_its_ports_at_real_speeds():
    """The lab keeps itself honest: a model in inventories/lab is one whose ports the table knows, and the lab's
    whole intent plans with it, so a port speed the hardware does not run fails the lab (docs/lab.md, "Switch models")."""
    lab = os.path.join(ROOT, "inventories", "lab")
    with open(os.path.join(lab, "group_vars", "all", "lossless_fabric.yml"), encoding="utf-8") as handle:
        intent = yaml.safe_load(handle)["lossless_fabric"]
    devices = {}
    for path in sorted(glob.glob(os.path.join(lab, "host_vars", "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            devices[os.path.basename(path)[:-4]] = yaml.safe_load(handle)["lossless_fabric_device"]
    named = {name: d["model"] for name, d in devices.items() if d.get("kind") == "switch" and d.get("model")}
    assert named == {"leaf2": "qfx5220-32cd", "spine1": "DCS-7280DR3-24"}
    assert all(_tables.model_ports(devices[name]["platform"], model) is not None for name, model in named.items())
    assert _plan.validate(intent, devices)[0] == []  # errors; the lab has warnings of its own (SONiC)
    # The lab's ports at a speed its models do not run are refused: the check reaches the lab's own plan.
    devices["spine1"]["ports"]["Ethernet1/1"]["speed"] = "200G"
    errors, _warnings = _plan.validate(intent, devices)
    assert [e for e in errors if "a DCS-7280DR3-24 runs port 1" in e], errors
