# SPDX-License-Identifier: GPL-3.0-or-later
"""nvue.Driver.parse on the operational views NVIDIA's pages print (fixtures/nvue/SOURCES.md)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "nvue")


def parse(name: str) -> dict:
    with open(os.path.join(HERE, name), encoding="utf-8") as handle:
        return nvue.Driver.parse(handle.read())


def test_show_qos_roce_switch_wide():
    parsed = parse("show_qos_roce_lossless_single_ipool.txt")
    wide = parsed["switch_wide"]
    assert parsed["interfaces"] == {}
    assert wide["trust"] == "pcp,dscp"
    assert wide["pfc_enabled"] and wide["pfc_priorities"] == [3]
    # 146.48 KB / 1.43 MB are 150,000 / 1,500,000 B humanised (KB = 1024 B); two decimals of precision
    assert sorted(wide["ecn"]) == ["0", "3"]
    assert abs(wide["ecn"]["3"]["min_threshold_bytes"] - 150000) < 10 and abs(wide["ecn"]["3"]["max_threshold_bytes"] - 1500000) < 6000
    assert wide["ecn"]["3"]["max_probability_percent"] == 100
    assert wide["strict_queues"] == [6] and wide["bandwidth_percent"] == {"0": 50, "3": 50}
    assert parsed["dscp_map"]["26"] == 3 and parsed["dscp_map"]["48"] == 6 and "7" not in parsed["dscp_map"]
    assert parsed["roce"]["mode"] == "lossless-single-ipool"
    assert parsed["roce"]["lldp_app_tlv"] == {"priority": 3, "protocol_id": 4791, "selector": "UDP"}
    assert parsed["roce"]["pools"]["roce-reserved-egress"]["traffic_classes"] == [3]


def test_show_qos_roce_lossy_multi_tc_blank_lines_and_wide_columns():
    parsed = parse("show_qos_roce_lossy_multi_tc.txt")
    wide = parsed["switch_wide"]
    assert parsed["roce"]["mode"] == "lossy-multi-tc"
    assert not wide["pfc_enabled"] and wide["pfc_priorities"] == []
    assert sorted(wide["ecn"]) == ["1", "2", "3"] and wide["ecn"]["1"]["max_probability_percent"] == 5
    assert wide["strict_queues"] == [] and wide["bandwidth_percent"]["3"] == 22 and wide["bandwidth_percent"]["7"] == 0
    # the DSCP column is far wider than its ruler: split on runs of spaces, not on ruler positions
    assert parsed["dscp_map"]["26"] == 4 and parsed["dscp_map"]["5"] == 3 and "63" not in parsed["dscp_map"]


def test_interface_roce_status_names_its_port_from_the_prompt():
    parsed = parse("show_interface_qos_roce_status.txt")
    port = parsed["interfaces"]["swp16"]
    assert parsed["switch_wide"] is None
    assert port["pfc_enabled"] and port["pfc_priorities"] == [3]
    assert port["ecn"]["3"]["min_threshold_bytes"] == 153 * 1024  # the hardware-programmed value NVIDIA's note explains
    assert port["strict_queues"] == [6] and port["bandwidth_percent"] == {"3": 50}
    assert parsed["dscp_map"] == {"26": 3, "48": 6}
    assert parsed["roce"]["congestion_mode"] == "ecn, absolute"
    assert parsed["roce"]["pools"]["roce-reserved-ingress"]["switch_priorities"] == [3]


def test_interface_roce_status_without_prompt_is_switch_wide():
    with open(os.path.join(HERE, "show_interface_qos_roce_status.txt"), encoding="utf-8") as handle:
        text = handle.read().split("\n", 1)[1]
    parsed = nvue.Driver.parse(text)
    assert parsed["interfaces"] == {} and parsed["switch_wide"]["pfc_priorities"] == [3]


def test_congestion_control_profile_table_after_blank_line():
    parsed = parse("show_qos_congestion_control_default_global.txt")
    ecn = parsed["profiles"]["congestion-control"]["default-global"]["ecn"]
    assert ecn == {tc: {"min_threshold_bytes": 40000, "max_threshold_bytes": 200000, "max_probability_percent": 100} for tc in ("4", "5", "7")}


def test_pfc_profile_key_rows():
    parsed = parse("show_qos_pfc_default_global.txt")
    assert parsed["profiles"]["pfc"]["default-global"] == {
        "pfc_priorities": [0],
        "pfc_enabled": True,  # tx enable, rx disable
        "cable_length_m": 50,
        "port_buffer_bytes": 25000,
        "xoff_threshold_bytes": 10000,
        "xon_threshold_bytes": 2000,
    }


def test_config_show_yaml_with_docs_header_and_ranges():
    parsed = parse("config_show_yaml_docs.txt")
    # 'bond1-3' is an NVUE range; on/off read as YAML booleans come back as NVUE's words
    assert sorted(parsed["interfaces"]) == ["bond1", "bond2", "bond3"]
    assert parsed["interfaces"]["bond2"]["mtu"] == 9000


def test_config_show_yaml_switch_form_and_one_shot_roce():
    text = "- header:\n    model: SN5600\n    version: Cumulus Linux 5.14.0\n- set:\n    qos:\n      roce:\n        mode: lossless\n"
    parsed = nvue.Driver.parse(text)
    assert parsed["roce"] == {"mode": "lossless"}
    wide = parsed["switch_wide"]
    # no port named: what 'nv set qos roce' programs applies switch-wide (RoCE page defaults)
    assert wide["pfc_priorities"] == [3] and wide["trust"] == "pcp,dscp" and wide["strict_queues"] == [6]
    assert wide["ecn"]["3"] == {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "max_probability_percent": 100}


def test_one_shot_roce_commands_with_explicit_override():
    parsed = nvue.Driver.parse("nv set qos roce\nnv set qos congestion-control default-global traffic-class 3 min-threshold 200000\n")
    wide = parsed["switch_wide"]
    assert wide["ecn"]["3"]["min_threshold_bytes"] == 200000 and wide["ecn"]["0"]["min_threshold_bytes"] == 150000
    assert parsed["roce"] == {"mode": "lossless"}


def test_one_shot_roce_lossy_has_no_pfc():
    wide = nvue.Driver.parse("nv set qos roce mode lossy\n")["switch_wide"]
    assert wide["pfc_priorities"] == [] and sorted(wide["ecn"]) == ["0", "3"]


@pytest.mark.parametrize(
    "text, why",
    [
        ("Interface  Admin Status\n---------  ------------\nswp1       up\n", "table this parser does not know"),
        ("- header:\n    model: VX\n", "without a '- set:' section"),
        (
            "                 operational  applied\n---------------  -----------  -------\nmode             lossless\n\nRoCE X\n======\nrow without ruler\n",
            "has no header line",
        ),
    ],
)
def test_unknown_views_are_refused(text, why):
    with pytest.raises(ValueError, match=why):
        nvue.Driver.parse(text)


def test_revision_table_and_json():
    table = (
        "Rev ID  State              Apply ID       Apply Date           Type  User     Reason         Message\n"
        "------  -----------------  -------------  -------------------  ----  -------  -------------  -------------------------------\n"
        "1       applied_and_saved  rev_1_apply_1  2024-04-26 11:24:50  CLI   root     Config update  Password sync for user: cumulus\n"
        "2       confirm            rev_2_apply_1  2024-04-26 16:06:14  CLI   cumulus  Config update  lossless.fabric window-a\n"
    )
    revs = nvue.parse_revisions(table)
    assert revs["2"] == {"state": "confirm", "user": "cumulus", "message": "lossless.fabric window-a"}
    assert revs["1"]["message"] == "Password sync for user: cumulus"
    assert nvue.parse_revisions('{"3": {"state": "confirm"}}') == {"3": {"state": "confirm", "user": None, "message": None}}
    with pytest.raises(ValueError, match="neither JSON nor the revision table"):
        nvue.parse_revisions("Error-free garbage")


@pytest.mark.parametrize("line", ["nv set qos roce enable off", "nv set qos roce state disabled"])
def test_one_shot_roce_switched_off_programs_nothing(line):
    parsed = nvue.Driver.parse(line + "\n")
    assert parsed["roce"]["enabled"] is False
    assert parsed["switch_wide"]["pfc_priorities"] == [] and parsed["switch_wide"]["ecn"] == {}


@pytest.mark.parametrize("line", ["nv set qos roce enable on", "nv set qos roce state enabled"])
def test_one_shot_roce_switched_on_both_spellings(line):
    parsed = nvue.Driver.parse(line + "\n")
    assert parsed["roce"] == {"mode": "lossless", "enabled": True} and parsed["switch_wide"]["pfc_priorities"] == [3]
