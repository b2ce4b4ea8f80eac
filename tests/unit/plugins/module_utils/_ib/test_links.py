# SPDX-License-Identifier: GPL-3.0-or-later
"""ib_links: ibnetdiscover output (fixtures/ib, fixtures/ib_links/SOURCES.md) per inventory name."""

from __future__ import annotations

import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib
from ansible_collections.lossless.fabric.plugins.module_utils._ib import _links as _ib_links

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def fixture(path: str) -> str:
    with open(os.path.join(HERE, path), encoding="utf-8") as handle:
        return handle.read()


def run_on(text: str, rc: int = 0, err: str = ""):
    calls = []

    def run(argv):
        calls.append(argv)
        return rc, text, err

    return run, calls


def test_ibsim_fabric_per_inventory_name():
    run, calls = run_on(fixture("ib/ibnetdiscover.txt"))
    result = _ib_links.run_ib_links({}, run)
    assert calls == [["ibnetdiscover"]] and result["changed"] is False and result["unmapped"] == []
    devices = result["devices"]
    assert set(devices) == {"leaf1", "leaf2", "spine1", "spine2", "gpu1", "gpu2", "ufm1"}
    assert devices["gpu1"]["mlx5_0"] == {
        "oper": "up", "speed": "200G", "width": "4X",
        "neighbors": [{"system": "leaf2", "port": "1", "port_id_subtype": None, "port_descr": None, "chassis_id": "0x0008f1332e695c00"}],
        "self": {"netdev": None, "mac": None, "guid": "0x0c42a10300010001"}}
    assert devices["leaf2"]["1"]["neighbors"][0]["system"] == "gpu1" and devices["leaf2"]["1"]["neighbors"][0]["port"] == "mlx5_0"
    assert devices["spine1"]["1"]["neighbors"][0] == {"system": "leaf1", "port": "19", "port_id_subtype": None, "port_descr": None,
                                                      "chassis_id": "0x0008f18f2f1bf300"}
    # every switch port appears; one without a peer is down
    assert len(devices["leaf1"]) == 36 and devices["leaf1"]["5"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}


def test_nvidia_switch_description_and_ndr200():
    run, _calls = run_on(fixture("ib_links/ibnetdiscover_qm9700_ndr200.txt"))
    result = _ib_links.run_ib_links({}, run)
    switch = result["devices"]["CNTSN-POD229-QM97-IB-02"]
    assert len(switch) == 129
    assert switch["1"]["width"] == "2X" and switch["1"]["speed"] == "200G"
    # the CAs' own sections were cut from the paste: their GUID names them
    assert switch["1"]["neighbors"][0]["system"] == "0xb83f000000000001"


def test_node_names_map_descriptions_and_guids():
    run, _calls = run_on(fixture("ib_links/ibnetdiscover_qm9700_ndr200.txt"))
    result = _ib_links.run_ib_links({"node_names": {"MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1": "ib-leaf1"}}, run)
    assert list(result["devices"]) == ["ib-leaf1"]
    run, _calls = run_on(fixture("ib/ibnetdiscover.txt"))
    result = _ib_links.run_ib_links({"node_names": {"0x0008f1332e695c00": "leafB", "0x0c42a10300010000": "gpu9 mlx5_7"}}, run)
    assert "leafB" in result["devices"] and "leaf2" not in result["devices"]
    expected = {"system": "leafB", "port": "1", "port_id_subtype": None, "port_descr": None, "chassis_id": "0x0008f1332e695c00"}
    assert result["devices"]["gpu9"]["mlx5_7"]["neighbors"][0] == expected


def test_router_and_unmapped():
    run, _calls = run_on(fixture("ib_links/ibnetdiscover_ca_router.txt"))
    result = _ib_links.run_ib_links({}, run)
    assert result["unmapped"] == ["router 0xb8e924030000b928 'MF0;mamba-2132:Q3400_RA/U2/RT'"]
    ca = result["devices"]["r-dcs96"]["HCA-2"]
    assert ca["width"] == "4X" and ca["speed"] == "100G"
    assert ca["neighbors"][0]["system"] == "0xb8599f0300fc6de4"  # its switch is not in this cut


def test_firmware_description_is_unmapped_and_duplicates_named():
    text = fixture("ib/ibnetdiscover.txt").replace('"gpu2 mlx5_0"', '"MT4129 ConnectX7 Mellanox Technologies"').replace('"ufm1 mlx5_0"', '"gpu1 mlx5_0"')
    run, _calls = run_on(text)
    result = _ib_links.run_ib_links({}, run)
    assert "CA 0x0c42a10300020000 'MT4129 ConnectX7 Mellanox Technologies'" in result["unmapped"]
    assert "CA 0x0c42a10300010000 'gpu1 mlx5_0': gpu1 mlx5_0 is also 0x0c42a10300000000" in result["unmapped"]
    # the unnamed CA still shows as its switch's neighbour, by description
    assert any(end["neighbors"] and end["neighbors"][0]["system"] == "MT4129 ConnectX7 Mellanox Technologies" for end in result["devices"]["leaf1"].values())


@pytest.mark.parametrize("lanes, speed, want", [
    ("4X", "NDR", ("4X", "400G")), ("4X", "HDR", ("4X", "200G")), ("4X", "FDR", ("4X", "56G")), ("2X", "NDR", ("2X", "200G")),
    ("1X", "SDR", ("1X", "2.5G")), ("4X", "FDR10", ("4X", "40G")), ("1X", "XDR", ("1X", "200G")), (None, None, (None, None)),
    ("4X", "???", ("4X", None)),
])
def test_link_rate(lanes, speed, want):
    assert _ib_links.link_rate(lanes, speed) == want


def test_port_line_without_link_type():
    text = ('Switch\t41 "S-08c0eb03008cc87c"\t\t# "MF0;IB-ComputeSpine-03:MQM8700/U1" enhanced port 0 lid 304 lmc 0\n'
            '[2]\t"S-08c0eb0300539a9c"[23]\t\t# "MF0;IB-ComputeLeaf-102:MQM8700/U1" lid 383 \n')
    run, _calls = run_on(text)
    end = _ib_links.run_ib_links({}, run)["devices"]["IB-ComputeSpine-03"]["2"]
    assert end["oper"] == "up" and end["width"] is None and end["speed"] is None


def test_ca_to_ca_back_to_back():
    # out_ca_port: a CA peer's GUID follows its port with a space, " (guid) " (ibnetdiscover.c)
    text = ('Ca\t1 "H-0c42a10300010000"\t\t# "gpu1 mlx5_0"\n'
            '[1](c42a10300010001) \t"H-0c42a10300020000"[1] (c42a10300020001) \t\t# lid 1 lmc 0 "gpu2 mlx5_0" lid 2 4xNDR\n'
            '\nCa\t1 "H-0c42a10300020000"\t\t# "gpu2 mlx5_0"\n'
            '[1](c42a10300020001) \t"H-0c42a10300010000"[1] (c42a10300010001) \t\t# lid 2 lmc 0 "gpu1 mlx5_0" lid 1 4xNDR\n')
    run, _calls = run_on(text)
    devices = _ib_links.run_ib_links({}, run)["devices"]
    assert devices["gpu1"]["mlx5_0"]["neighbors"][0]["system"] == "gpu2" and devices["gpu1"]["mlx5_0"]["neighbors"][0]["port"] == "mlx5_0"
    assert devices["gpu1"]["mlx5_0"]["speed"] == "400G"


@pytest.mark.parametrize("text, rc, err, words", [
    ("", 1, "ibwarn: [12345] mad_rpc_open_port: can't open UMAD port ((null):0)", "ibnetdiscover failed (rc 1): ibwarn"),
    ("Bogus 1\n", 0, "", "unexpected line 'Bogus 1'"),
    ("#\n# Topology file: generated on x\n#\n", 0, "", "no node"),
])
def test_refusals(text, rc, err, words):
    run, _calls = run_on(text, rc, err)
    with pytest.raises(_ib_links.IbLinksError) as exc:
        _ib_links.run_ib_links({}, run)
    assert words in str(exc.value)


@pytest.mark.parametrize("names, words", [
    (["x"], "not a mapping"),
    ({"leaf": "two words here"}, "is not an inventory name"),
    ({"leaf": "bad;name"}, "is not an inventory name"),
])
def test_bad_node_names(names, words):
    with pytest.raises(_ib_links.IbLinksError, match=words):
        _ib_links.validate_node_names(names)


def test_guid_keys_normalised():
    assert _ib_links.validate_node_names({"0x8f1332e695c00": "leaf2"}) == {_ib.guid("0x8f1332e695c00"): "leaf2"}
