# SPDX-License-Identifier: GPL-3.0-or-later
"""_ib parsers on real infiniband-diags 44 output (captured from the lab's ibsim +
OpenSM 3.3.23 fabric: 2 spines, 2 leaves, CAs ufm1, gpu1, gpu2), the
collector with a replaying runner, and _ib_verify on the resulting snapshot."""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib
from ansible_collections.lossless.fabric.plugins.module_utils._ib import _verify as _ib_verify
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "ib")
UFM, GPU1, GPU2 = "0x0c42a10300000001", "0x0c42a10300010001", "0x0c42a10300020001"
LEAF2 = "0x0008f1332e695c00"


def fixture(name):
    with open(os.path.join(FIX, name + ".txt"), encoding="utf-8") as handle:
        return handle.read()


# --- parsers ------------------------------------------------------------------------


def test_ibnetdiscover_nodes_links_lids():
    topo = _ib.parse_ibnetdiscover(fixture("ibnetdiscover"))
    assert _ib.summary(topo) == {"switches": 4, "cas": 3, "routers": 0, "links": 7}
    assert _ib.port_lids(topo) == {GPU1: 6, GPU2: 7, UFM: 1}
    leaf2 = topo["nodes"][LEAF2]
    assert (leaf2["type"], leaf2["description"], leaf2["lid"], leaf2["ports_count"]) == ("switch", "leaf2", 3, 36)
    assert leaf2["links"]["1"] == {"remote_guid": "0x0c42a10300010000", "remote_port": 1, "width": "4X", "speed": "HDR",
                                   "remote_port_guid": GPU1}
    gpu1 = topo["nodes"]["0x0c42a10300010000"]
    assert (gpu1["type"], gpu1["description"], gpu1["port_guids"], gpu1["port_lids"]) == ("ca", "gpu1 mlx5_0", {"1": GPU1}, {"1": 6})
    assert {"a": {"guid": LEAF2, "port": 1, "description": "leaf2"},
            "b": {"guid": "0x0c42a10300010000", "port": 1, "description": "gpu1 mlx5_0"}, "width": "4X", "speed": "HDR"} in topo["links"]


def test_ibnetdiscover_refuses_what_it_does_not_know():
    with pytest.raises(_ib.IbParseError, match="unexpected line 'Bogus 1'"):
        _ib.parse_ibnetdiscover(fixture("ibnetdiscover") + "Bogus 1\n")


def test_iblinkinfo_active_and_down_ports():
    rows = _ib.parse_iblinkinfo(fixture("iblinkinfo"))
    assert len(rows) == 147
    assert rows[0] == {"port_guid": GPU1, "lid": 6, "port": 1, "state": "Active", "physical_state": "LinkUp", "width": "4X",
                       "speed_gbps": 53.125, "speed": "HDR", "peer_lid": 3, "peer_port": 1}
    down = rows[2]
    assert (down["lid"], down["port"], down["state"], down["physical_state"], down["width"]) == (3, 2, "Down", "Polling", None)


@pytest.mark.parametrize("line, speed", [
    ("      0x0c42a10300010001      6    1[  ] ==( 4X        25.78125 Gbps Active/  LinkUp)==>       3    1[  ] \"x\" ( )", "EDR"),
    ("           3   19[  ] ==( 4X          2.5 Gbps Active/  LinkUp)==>       4    2[  ] \"spine1\" ( )", "SDR"),
    ("           3   19[  ] ==( 4X       106.25 Gbps Active/  LinkUp)==>       4    2[  ] \"spine1\" ( )", "NDR"),
])
def test_iblinkinfo_speed_names(line, speed):
    assert _ib.parse_iblinkinfo(line)[0]["speed"] == speed


def test_sminfo():
    assert _ib.parse_sminfo(fixture("sminfo")) == {"lid": 1, "guid": UFM, "activity_count": 1071, "priority": 0, "state": 3,
                                                   "state_name": "master"}
    with pytest.raises(_ib.IbParseError, match="no SM"):
        _ib.parse_sminfo("ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid 1)")


def test_sl2vl_ca_and_switch():
    assert _ib.parse_sl2vl(fixture("sl2vl_ca")) == {"0": [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7]}
    switch = _ib.parse_sl2vl(fixture("sl2vl_sw1"))
    assert sorted(switch, key=int) == [str(p) for p in range(37)]
    assert switch["19"] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(_ib.IbParseError, match="unexpected line"):
        _ib.parse_sl2vl("ports: in  0, out  0: | 0| 1|\n")


def test_vlarb_tables_and_caps():
    table = _ib.parse_vlarb(fixture("vlarb_ca"))
    assert (table["low_cap"], table["high_cap"]) == (8, 8)
    assert table["high"][:3] == [{"vl": 0, "weight": 64}, {"vl": 3, "weight": 64}, {"vl": 0, "weight": 0}]
    assert [e for e in table["low"] if e["weight"]] == [{"vl": v, "weight": 64} for v in range(4)]


def test_pkeys_and_membership_bit():
    assert _ib.parse_pkeys(fixture("pkeys_ca")) == {"pkeys": ["0xffff", "0x8001"], "capacity": 64}
    assert _ib.parse_pkeys(fixture("pkeys_ca2"))["pkeys"] == ["0xffff", "0x0001"]    # limited member


def test_path_records():
    records = _ib.parse_path_records(fixture("saquery_pr_pkey_lid"))
    assert len(records) == 1 and records[0]["sl"] == 4 and records[0]["pkey"] == 0x8001 and records[0]["mtu"] == 0x84
    assert not _ib.parse_path_records(fixture("saquery_pr_pkey_nonmember"))      # no path for a non-member


def test_perfquery_counters():
    counters = _ib.parse_perfquery(fixture("perfquery_err"))
    assert counters["SymbolErrorCounter"] == 7 and counters["PortXmitWait"] == 0 and counters["PortXmitData"] == 2736


# --- collector with a runner replaying the captured output --------------------------


def replay(argv):
    tool, args = argv[0], argv[1:]
    if tool == "smpquery":
        what, lid = args[0], args[1]
        ca = lid in ("1", "6", "7")
        name = {"sl2vl": "sl2vl_ca" if ca else "sl2vl_sw1", "vlarb": "vlarb_ca" if ca else "vlarb_sw",
                "pkeys": {"7": "pkeys_ca2"}.get(lid, "pkeys_ca")}[what]
        return 0, fixture(name), ""
    if tool == "saquery":
        return 0, fixture("saquery_pr_pkey_lid"), ""
    if tool == "perfquery":
        return 0, fixture("perfquery"), ""
    return 0, fixture(tool), ""


def ib_intent():
    ca = [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7]
    intent = {
        "name": "unit", "transport": "infiniband",
        "infiniband": {
            "sm": {"priority": 1, "standby_priority": 0, "routing_engine": ["minhop"]},
            "qos": {"max_vls": 8, "vlarb_high": [{"vl": 0, "weight": 64}, {"vl": 3, "weight": 64}],
                    "vlarb_low": [{"vl": v, "weight": 64} for v in range(4)],
                    "sl2vl": {"ca": ca, "switch": list(range(8)) * 2},
                    "levels": [{"name": "default", "sl": 0}, {"name": "rdma", "sl": 4}]},
            "partitions": [{"name": "gpu", "pkey": "0x8001", "sl": 4, "qos_level": "rdma", "default_membership": "full",
                            "members": [{"keyword": "SELF", "membership": "full"}, GPU1, {"guid": GPU2, "membership": "limited"}]}],
        },
    }
    devices = {"ufm1": {"kind": "subnet_manager", "role": "master"},
               "gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "200G", "guid": GPU1}]},
               "gpu2": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "200G", "guid": GPU2}]}}
    return _plan.build_plan(intent, devices)


@pytest.fixture(name="snapshot")
def fixture_snapshot():
    plan = ib_intent()
    facts = _ib.Collector(replay, partitions=plan["intent"]["infiniband"]["partitions"]).collect()
    facts = json.loads(json.dumps(facts))     # what the module returns: JSON, string keys
    facts["sm"]["priority"] = 1               # the capture ran with OpenSM's default priority
    return facts, plan


EXPECT = {"switches": 4, "cas": 3, "links": 7, "min_width": "4X", "min_speed": "HDR"}


def test_collector_reads_every_section(snapshot):
    facts, _plan = snapshot
    assert facts["errors"] == []
    assert facts["summary"] == {"switches": 4, "cas": 3, "routers": 0, "links": 7}
    assert len(facts["sl2vl"]) == len(facts["vlarb"]) == len(facts["counters"]) == 14   # 7 links, both ends
    assert sorted(facts["pkeys"]) == sorted([UFM, GPU1, GPU2])
    assert facts["paths"] == [{"src": GPU1, "dst": GPU2, "pkey": "0x8001", "partition": "gpu", "found": True, "sl": 4,
                               "mtu": 0x84, "rate": 0x91, "record_pkey": "0x8001"}]
    assert facts["ports"]["%s/1" % LEAF2]["state"] == "Active"


def test_collector_keeps_failed_commands_and_verify_names_them(snapshot):
    _facts, plan = snapshot

    def broken(argv):
        if argv[0] == "perfquery" and argv[1] == "6":
            return 255, "", "perfquery: iberror: failed: classportinfo query"
        return replay(argv)
    facts = json.loads(json.dumps(_ib.Collector(broken, sections=["counters"]).collect()))
    assert facts["errors"] == [{"command": "perfquery 6 1", "rc": 255, "stderr": "perfquery: iberror: failed: classportinfo query"}]
    found = _ib_verify.verify(facts, plan["intent"], checks=["counters"])
    assert found["mismatches"] == ['counters: ca "gpu1 mlx5_0" port 1: no reading (perfquery: iberror: failed: classportinfo query)']


def test_collector_fails_without_topology():
    with pytest.raises(_ib.IbCollectError, match="ibnetdiscover failed .rc 127.: no fabric"):
        _ib.Collector(lambda argv: (127, "", "no fabric")).collect()


def test_verify_passes_on_the_matching_fabric(snapshot):
    facts, plan = snapshot
    found = _ib_verify.verify(facts, plan["intent"], plan["devices"], EXPECT)
    assert found == {"mismatches": [], "checked": list(_ib_verify.CHECKS), "not_checked": [], "not_verified": []}


def mismatches(facts, plan, expect=None, **changes):
    return _ib_verify.verify(facts, plan["intent"], plan["devices"], dict(EXPECT, **(expect or {})))["mismatches"]


def test_verify_topology_counts_and_missing_host(snapshot):
    facts, plan = snapshot
    plan["devices"]["gpu3"] = {"kind": "host", "nics": [{"name": "mlx5_0", "guid": "0x0c42a10300030001"}]}
    assert mismatches(facts, plan, {"switches": 6, "links": 17}) == [
        "topology: 4 switches found, 6 expected",
        "topology: 7 links found, 17 expected",
        "topology: gpu3 mlx5_0 (port GUID 0x0c42a10300030001) is not in the fabric",
    ]


def test_verify_ports_width_speed_state(snapshot):
    facts, plan = snapshot
    facts["ports"]["%s/1" % LEAF2].update(width="1X")
    facts["ports"]["%s/19" % LEAF2].update(speed="EDR", speed_gbps=25.78125)
    facts["ports"]["%s/20" % LEAF2].update(state="Init", physical_state="LinkUp")
    assert mismatches(facts, plan) == [
        'ports: switch "leaf2" port 1 runs at width 1X, below 4X',
        'ports: switch "leaf2" port 19 runs at EDR (25.78125 Gbps per lane), below HDR',
        'ports: switch "leaf2" port 20 is Init/LinkUp, expected Active',
    ]


def test_verify_sm_priority_and_state(snapshot):
    facts, plan = snapshot
    facts["sm"].update(priority=0, state_name="standby")
    assert mismatches(facts, plan) == ["sm: the SM at lid 1 is standby, expected master",
                                       "sm: master SM 0x0c42a10300000001 has priority 0, expected sm.priority 1"]


def test_verify_sl2vl_and_vlarb(snapshot):
    facts, plan = snapshot
    facts["sl2vl"]["0x0c42a10300010000/1"]["rows"]["0"][3] = 0
    facts["vlarb"]["%s/1" % LEAF2]["high"][1] = {"vl": 3, "weight": 128}
    assert mismatches(facts, plan) == [
        'sl2vl: ca "gpu1 mlx5_0" port 1 in-port 0 maps SL0-15 to [0, 1, 2, 0, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7], '
        "expected [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7]",
        'vlarb: switch "leaf2" port 1 high-priority table is 0:64,3:128, expected 0:64,3:64',
    ]


def test_verify_pkeys_members_and_intruders(snapshot):
    facts, plan = snapshot
    facts["pkeys"][GPU1]["pkeys"] = ["0xffff", "0x0001"]       # full member shows limited
    facts["pkeys"][GPU2]["pkeys"] = ["0xffff"]                 # member lost it
    plan["intent"]["infiniband"]["partitions"][0]["members"] = plan["intent"]["infiniband"]["partitions"][0]["members"][:2]
    facts["pkeys"][GPU2]["pkeys"].append("0x0001")             # ...and now a non-member holds it
    assert mismatches(facts, plan) == [
        'pkeys: partition gpu (pkey 0x8001): member "gpu1 mlx5_0" (0x0c42a10300010001) holds it as limited, expected full',
        'pkeys: partition gpu (pkey 0x8001): "gpu2 mlx5_0" (0x0c42a10300020001) holds it (limited) but is not a member',
    ]


def test_verify_path_sl_follows_the_qos_policy(snapshot):
    facts, plan = snapshot
    facts["paths"][0]["sl"] = 3
    facts["paths"].append({"src": GPU1, "dst": UFM, "pkey": "0x8001", "found": False})
    assert mismatches(facts, plan) == [
        'paths: "gpu1 mlx5_0" (0x0c42a10300010001) -> "gpu2 mlx5_0" (0x0c42a10300020001) pkey 0x8001 (partition gpu): SL 3, '
        "expected 4 per the QoS policy",
        'paths: "gpu1 mlx5_0" (0x0c42a10300010001) -> "ufm1 mlx5_0" (0x0c42a10300000001) pkey 0x8001 (partition gpu): '
        "the SA returned no PathRecord",
    ]
    # Without QoS the partition's own sl= is what PathRecords carry.
    intent = copy.deepcopy(plan["intent"])
    intent["infiniband"]["qos"]["enabled"] = False
    intent["infiniband"]["partitions"][0]["sl"] = 6
    assert _ib_verify.expected_path_sl(intent, intent["infiniband"]["partitions"][0]) == 6


def test_verify_counters_thresholds(snapshot):
    facts, plan = snapshot
    facts["counters"]["0x0c42a10300010000/1"]["SymbolErrorCounter"] = 7
    facts["counters"]["%s/19" % LEAF2]["PortXmitWait"] = 1000
    assert mismatches(facts, plan) == ['counters: ca "gpu1 mlx5_0" port 1 SymbolErrorCounter = 7, above the threshold 0']
    assert mismatches(facts, plan, {"counters": {"SymbolErrorCounter": 10, "PortXmitWait": 999}}) == [
        'counters: switch "leaf2" port 19 PortXmitWait = 1000, above the threshold 999']


def test_verify_only_checks_collected_sections(snapshot):
    facts, plan = snapshot
    facts["collected"] = ["topology", "sm"]
    found = _ib_verify.verify(facts, plan["intent"], plan["devices"], EXPECT)
    assert found["checked"] == ["topology", "sm"] and found["not_checked"] == ["ports", "sl2vl", "vlarb", "pkeys", "paths", "counters", "tenants"]
