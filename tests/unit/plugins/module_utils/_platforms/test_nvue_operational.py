# SPDX-License-Identifier: GPL-3.0-or-later
"""NVUE operational views read by state: parsed / gathered (issue 32) and the confirm forms NVIDIA does not
document (issue 31): the readers on NVIDIA's published examples (fixtures/nvue/SOURCES.md), then switch_config
against the simulator over SSH (gathered with its applied state; a switch that refuses --confirm-yes)."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _readers
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "nvue")
ROOT = pathlib.Path(__file__).resolve().parents[5]


def fixture(name: str) -> str:
    with open(os.path.join(HERE, name), encoding="utf-8") as handle:
        return handle.read()


# QoS page ("Congestion Control (ECN)"), the traffic-class view of the default profile, as NVIDIA prints it.
CC_TC4 = """cumulus@switch:~$ nv show qos congestion-control default-global traffic-class 4
               operational  applied   description
-------------  -----------  --------  -----------------------------------
ecn            enable       enable    Early Congestion Notification State
max-threshold  200000 B     200000 B  Maximum Threshold (in bytes)
min-threshold  40000 B      40000 B   Minimum Threshold (in bytes)
probability    100          100       Probability
red            enable       enable    Random Early Detection State
"""

CONFIG = """nv set qos congestion-control default-global traffic-class 4 ecn enable
nv set qos congestion-control default-global traffic-class 4 min-threshold 40000
nv set qos congestion-control default-global traffic-class 4 max-threshold 200000
nv set qos congestion-control default-global traffic-class 4 probability 100
nv set qos pfc default-global switch-priority 0
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx disable
nv set qos pfc default-global cable-length 50
"""


def test_a_view_read_back_without_its_leading_spaces_keeps_its_columns():
    text = fixture("show_qos_roce_lossless_single_ipool.txt").split("\n", 1)[1]
    assert nvue.Driver.parse(text.lstrip())["switch_wide"] == nvue.Driver.parse(text)["switch_wide"]


def test_views_are_marked_operational_and_cells_are_placed_by_column():
    parsed = nvue.Driver.parse(fixture("show_qos_roce_lossless_single_ipool.txt"))
    assert parsed["operational"] is True
    # 'enable  on' sits in the applied column only: RoCE is on, and 'on' is not read as an operational value
    assert parsed["roce"]["enabled"] is True and parsed["roce"]["mode"] == "lossless-single-ipool"
    config = nvue.Driver.parse(fixture("config_show_commands.txt"))
    assert "operational" not in config and "applied_state" not in config


def test_traffic_class_view_needs_its_prompt_line():
    parsed = nvue.Driver.parse(CC_TC4)
    assert parsed["profiles"]["congestion-control"]["default-global"]["ecn"] == {
        "4": {"min_threshold_bytes": 40000, "max_threshold_bytes": 200000, "max_probability_percent": 100}}
    with pytest.raises(ValueError, match="need the prompt line that names the view"):
        nvue.Driver.parse(CC_TC4.split("\n", 1)[1])


def test_configuration_with_views_reports_the_applied_state_and_where_it_differs():
    views = CC_TC4 + fixture("show_qos_pfc_default_global.txt")
    parsed = nvue.Driver.parse(CONFIG + views)
    assert parsed["interfaces"] == {} and parsed["switch_wide"]["pfc_priorities"] == [0]
    applied = parsed["applied_state"]
    assert applied["operational"] is True
    assert applied["profiles"]["pfc"]["default-global"]["cable_length_m"] == 50
    assert parsed["applied_state_differs"] == []
    drifted = nvue.Driver.parse(CONFIG.replace("cable-length 50", "cable-length 60").replace("min-threshold 40000", "min-threshold 30000") + views)
    assert drifted["applied_state_differs"] == [
        "qos congestion-control default-global: ecn[4].min_threshold_bytes: the switch runs 40000, the configuration has 30000",
        "qos pfc default-global: cable_length_m: the switch runs 50, the configuration has 60",
    ]


def test_humanised_sizes_are_equal_within_their_two_decimals():
    assert _readers._same_bytes(149996, 150000)  # '146.48 KB' # pylint: disable=protected-access
    assert not _readers._same_bytes(159744, 150000)  # '156.00 KB', the RoCE page's Spectrum-4 note  # pylint: disable=protected-access


def test_two_configurations_or_an_unknown_view_are_refused():
    with pytest.raises(ValueError, match="2 configurations in one input"):
        nvue.Driver.parse(CONFIG + "cumulus@switch:~$ nv config show -o commands\n" + CONFIG)
    with pytest.raises(ValueError, match="an NVUE table this parser does not know"):
        nvue.Driver.parse(CONFIG + "cumulus@switch:~$ nv show system\n           operational\n---------  -----------\nhostname   cl1\n")


def test_view_commands_follow_the_profiles_of_the_configuration():
    assert _readers.view_commands(CONFIG) == ["nv show qos pfc default-global", "nv show qos congestion-control default-global"]
    assert _readers.view_commands("nv set qos roce\n")[-1] == "nv show qos roce"


# --- against the simulator over SSH (switch_config's own code path) --------------------------------------

sys.path.insert(0, str(ROOT / "tests" / "lab"))
netmiko = pytest.importorskip("netmiko")
from switchsim.client import SimProcess  # noqa: E402  # pylint: disable=wrong-import-position,import-error


@pytest.fixture(name="sim")
def fixture_sim(tmp_path):
    cfg = {"time_scale": 1.0, "switches": [{"name": "leaf3", "platform": "nvue", "port": 0, "username": "cumulus", "password": "s3cret-nv",
                                            "initial_config": ["nv set qos roce", "nv set qos pfc lf switch-priority 3", "nv set qos pfc lf tx enable",
                                                               "nv set qos congestion-control lf traffic-class 3 ecn enable",
                                                               "nv set qos congestion-control lf traffic-class 3 min-threshold 150000",
                                                               "nv set qos congestion-control lf traffic-class 3 max-threshold 1500000",
                                                               "nv set interface swp1 qos pfc profile lf",
                                                               "nv set interface swp1 qos congestion-control profile lf"]}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


def _args(sim, **extra):
    args = {key: spec.get("default") for key, spec in _switch_config.ARGUMENT_SPEC.items()}
    args.update(platform="nvue", host="127.0.0.1", port=sim.port("leaf3"), username="cumulus", password="s3cret-nv", host_key_checking=False)
    args.update(extra)
    return args


def test_gathered_reads_the_applied_state_and_reports_what_the_asic_runs_differently(sim):
    res = _switch_config.run(_args(sim, state="gathered"), device="leaf3")
    assert not res.get("failed"), res.get("msg")
    gathered = res["gathered"]
    assert gathered["interfaces"]["swp1"]["pfc_priorities"] == [3]
    applied = gathered["applied_state"]
    assert applied["roce"]["mode"] == "lossless" and applied["switch_wide"]["pfc_priorities"] == [3]
    assert applied["profiles"]["congestion-control"]["lf"]["ecn"]["3"]["min_threshold_bytes"] == 150000
    assert gathered["applied_state_differs"] == []
    sim.set_faults("leaf3", {"operational": {"congestion-control.lf.traffic-class.3.min-threshold": 159744}})
    res = _switch_config.run(_args(sim, state="gathered"), device="leaf3")
    assert res["gathered"]["applied_state_differs"] == [
        "qos congestion-control lf: ecn[3].min_threshold_bytes: the switch runs 159744, the configuration has 150000"]


def test_a_switch_that_refuses_the_confirm_form_leaves_the_apply_to_its_timer(sim):
    conn = netmiko.ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=sim.port("leaf3"), username="cumulus", password="s3cret-nv")
    try:
        assert conn.send_command("nv set interface swp2 description spare") == ""
        assert conn.send_command("nv config apply --confirm 10m -y -m 'lossless.fabric s1'").startswith("applied")
    finally:
        conn.disconnect()
    sim.set_faults("leaf3", {"unknown_options": ["--confirm-yes", "--confirm-no"]})
    for state, option in (("confirmed", "--confirm-yes"), ("rolled_back", "--confirm-no")):
        res = _switch_config.run(_args(sim, state=state, session="s1"), device="leaf3")
        assert res["failed"] and res["device_state"] == _base.PENDING, res
        assert "does not know '%s'" % option in res["msg"] and "rolls it back by itself when its --confirm timer runs out" in res["msg"]
        assert sim.pending("leaf3")["pending_commit"]
    sim.set_faults("leaf3", {"unknown_options": None})
    res = _switch_config.run(_args(sim, state="rolled_back", session="s1"), device="leaf3")
    assert not res.get("failed") and res["device_state"] == _base.ROLLED_BACK, res
