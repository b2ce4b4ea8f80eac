# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_ib/_verify.py's tenants check and the collector's tenants section
(_facts.Collector): the P_Key tables of tenant ports and the cross-tenant PathRecord queries. The shapes are the
real tools' against ibsim + OpenSM 3.3.23 (fixtures/ib/pkeys_ca.txt, saquery_pr_pkey_lid.txt; an SA with no path
answers nothing, rc 0: saquery_pr_pkey_nonmember.txt); the other checks are in test_facts.py."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib
from ansible_collections.lossless.fabric.plugins.module_utils._ib import _files as _ib_files
from ansible_collections.lossless.fabric.plugins.module_utils._ib import _verify as _ib_verify
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "ib")
A1, A2, B1, B2, SM = "0x0c42a10300010001", "0x0c42a10300020001", "0x0c42a10300030001", "0x0c42a10300040001", "0x0c42a10300000001"
LIDS = {SM: 1, A1: 5, A2: 6, B1: 7, B2: 8}


def fixture(name):
    with open(os.path.join(FIX, name + ".txt"), encoding="utf-8") as handle:
        return handle.read()


@pytest.fixture(name="plan")
def fixture_plan():
    devices = {"ufm1": {"kind": "subnet_manager", "role": "master"}}
    for index, port in enumerate((A1, A2, B1, B2), 1):
        devices["gpu%d" % index] = {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "200G", "guid": port}]}
    intent = {"name": "t", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}, "partitions": [], "compute_partition": None},
              "tenants": [{"name": "team-a", "hosts": ["gpu1", "gpu2"], "partition": {"pkey": "0x8001"}},
                          {"name": "team-b", "hosts": ["gpu3", "gpu4"], "partition": {"pkey": "0x8003"}}]}
    return _plan.build_plan(intent, devices)


def topo():
    nodes = {}
    for port, lid in LIDS.items():
        node = "0x%016x" % (int(port, 16) - 1)
        nodes[node] = {"type": "ca", "description": "%s mlx5_0" % {SM: "ufm1", A1: "gpu1", A2: "gpu2", B1: "gpu3", B2: "gpu4"}[port],
                       "lid": lid, "port_guids": {"1": port}, "port_lids": {"1": lid}, "links": {}}
    return {"nodes": nodes, "links": []}


def table(*pkeys):
    return {"pkeys": list(pkeys), "capacity": 64}


def facts(queries=None):
    """A snapshot of the plan's fabric as OpenSM programs it: tenant ports default-limited (0x7fff) and in their own."""
    return {
        "collected": list(_ib.SECTIONS), "nodes": topo()["nodes"], "links": [], "sm": {"guid": SM},
        "pkeys": {SM: table("0xffff", "0x8001", "0x8003"), A1: table("0x7fff", "0x8001"), A2: table("0x7fff", "0x8001"),
                  B1: table("0x7fff", "0x8003"), B2: table("0x7fff", "0x8003")},
        "tenants": queries if queries is not None else [
            {"src": A1, "dst": B1, "pkey": p, "found": False, "src_tenant": "team-a", "dst_tenant": "team-b"} for p in (None, "0x8001", "0x8003")],
    }


def test_collector_asks_for_paths_between_every_two_tenants(plan):
    asked = []

    def run(argv):
        asked.append(argv)
        return 0, "", ""   # the SA's answer when the two ports share no partition (saquery_pr_pkey_nonmember.txt)

    collector = _ib.Collector(run, ["topology", "tenants"], partitions=plan["intent"]["infiniband"]["partitions"])
    out = collector._tenants(topo(), [])
    assert asked == [["saquery", "-p", "--src-to-dst", "5:7"], ["saquery", "-p", "--pkey", "0x8001", "--src-to-dst", "5:7"],
                     ["saquery", "-p", "--pkey", "0x8003", "--src-to-dst", "5:7"]]
    assert out == [{"src": A1, "dst": B1, "pkey": p, "found": False, "src_tenant": "team-a", "dst_tenant": "team-b"} for p in (None, "0x8001", "0x8003")]
    found = _ib.Collector(lambda argv: (0, fixture("saquery_pr_pkey_lid"), ""), ["tenants"], partitions=plan["intent"]["infiniband"]["partitions"])
    assert found._tenants(topo(), [])[0] == {"src": A1, "dst": B1, "pkey": None, "found": True, "record_pkey": "0x8001", "sl": 4,
                                             "src_tenant": "team-a", "dst_tenant": "team-b"}
    failed = _ib.Collector(lambda argv: (1, "", "ibwarn: query failed"), ["tenants"], partitions=plan["intent"]["infiniband"]["partitions"])
    assert failed._tenants(topo(), [])[0]["found"] is None and failed.errors[0]["stderr"] == "ibwarn: query failed"


def test_tenants_pass_on_the_fabric_opensm_programs(plan):
    assert _ib_verify.verify(facts(), plan["intent"], plan["devices"], checks=["pkeys", "tenants"])["mismatches"] == []


def test_the_real_pkeys_table_parses_into_a_tenant_port(plan):
    snap = facts()
    snap["pkeys"][A1] = _ib.parse_pkeys(fixture("pkeys_ca"))      # 0xffff 0x8001: default full, team-a full
    assert _ib_verify.check_tenants(snap, plan["intent"], plan["devices"], {}) == [
        'tenants: tenant \'team-a\' port "gpu1 mlx5_0" (0x0c42a10300010001) is a full member of the default partition (pkey 0x7fff), which '
        'tenant \'team-b\'\'s port "gpu3 mlx5_0" (0x0c42a10300030001) is also in: the tenants reach each other through it'
    ]


def test_tenants_mismatches_name_port_partition_and_tenant(plan):
    snap = facts([{"src": A1, "dst": B1, "pkey": None, "found": True, "record_pkey": "0x8001", "src_tenant": "team-a", "dst_tenant": "team-b"},
                  {"src": A1, "dst": B1, "pkey": "0x8003", "found": None, "error": "saquery failed", "src_tenant": "team-a", "dst_tenant": "team-b"}])
    snap["pkeys"][A2] = table("0x7fff", "0x0001")         # limited in its own
    snap["pkeys"][B1] = table("0x7fff", "0x8003", "0x8001")  # in the other tenant's
    snap["pkeys"][B2] = table("0x7fff")                   # lost its own
    assert _ib_verify.check_tenants(snap, plan["intent"], plan["devices"], {}) == [
        'tenants: tenant \'team-a\' port "gpu2 mlx5_0" (0x0c42a10300020001) holds its partition team-a (pkey 0x0001) as limited, expected full',
        'tenants: tenant \'team-b\' port "gpu3 mlx5_0" (0x0c42a10300030001) holds P_Key 0x0001 (full) of tenant \'team-a\'\'s partition team-a',
        'tenants: tenant \'team-b\' port "gpu4 mlx5_0" (0x0c42a10300040001) is not in its partition team-b (pkey 0x0003)',
        'tenants: "gpu1 mlx5_0" (0x0c42a10300010001) (tenant \'team-a\') -> "gpu3 mlx5_0" (0x0c42a10300030001) (tenant \'team-b\') for any '
        "partition: the SA returned a PathRecord (pkey 0x8001): the tenants reach each other",
        'tenants: "gpu1 mlx5_0" (0x0c42a10300010001) (tenant \'team-a\') -> "gpu3 mlx5_0" (0x0c42a10300030001) (tenant \'team-b\') for pkey '
        "0x8003: not asked (saquery failed): the tenants' separation is not proved",
    ]


def test_tenants_need_their_evidence(plan):
    snap = facts([])
    assert _ib_verify.check_tenants(snap, plan["intent"], plan["devices"], {}) == [
        "tenants: no PathRecord was asked between two tenants (collect the tenants section with the intent's partitions)"]
    del snap["pkeys"]
    assert _ib_verify.check_tenants(snap, plan["intent"], plan["devices"], {}) == [
        "tenants: no P_Key tables in the snapshot (collect the pkeys section too)"]
    # no tenants: nothing to prove
    intent = copy.deepcopy(plan["intent"])
    intent["infiniband"]["partitions"] = [p for p in intent["infiniband"]["partitions"] if not p.get("tenant")]
    assert _ib_verify.check_tenants(snap, intent, plan["devices"], {}) == []


def test_expected_pkeys_keep_the_last_membership_given(plan):
    # Default=0x7fff : ALL=full, SELF=full, <tenant ports>=limited (the plan's rule): OpenSM leaves the tenant ports limited.
    want = _ib_verify.expected_pkeys(plan["intent"], sorted(LIDS), SM)
    assert want["0x7fff"] == {SM: "full", A1: "limited", A2: "limited", B1: "limited", B2: "limited"}
    assert _ib_verify.verify(facts(), plan["intent"], plan["devices"], checks=["pkeys"])["mismatches"] == []


VA, VB = "0x0c42a1030f010000", "0x0c42a1030f030000"


@pytest.fixture(name="vf_plan")
def fixture_vf_plan():
    """The plan's fabric with one VF on gpu1's (team-a) and gpu3's (team-b) HCA (issue 37 C2)."""
    devices = {"ufm1": {"kind": "subnet_manager", "role": "master"}}
    for index, port in enumerate((A1, A2, B1, B2), 1):
        devices["gpu%d" % index] = {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "200G", "guid": port}]}
    devices["gpu1"]["nics"][0].update(vfs=1, vf_guids=[VA], pci="0000:0c:00.0")
    devices["gpu3"]["nics"][0].update(vfs=1, vf_guids=[VB], pci="0000:0c:00.0")
    intent = {"name": "t", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}, "partitions": [], "compute_partition": None},
              "tenants": [{"name": "team-a", "hosts": ["gpu1", "gpu2"], "partition": {"pkey": "0x8001"}},
                          {"name": "team-b", "hosts": ["gpu3", "gpu4"], "partition": {"pkey": "0x8003"}}]}
    return _plan.build_plan(intent, devices)


def test_vf_guids_ibnetdiscover_cannot_see_are_not_verified_never_proven(vf_plan):
    """ibsim (like upstream OpenSM) has no virtual ports: the VF GUIDs have no P_Key table in the snapshot. The
    tenants check still passes on the ports it can read, and lists each VF GUID as not verified."""
    found = _ib_verify.verify(facts(), vf_plan["intent"], vf_plan["devices"], checks=["tenants"])
    assert found["mismatches"] == []
    assert found["not_verified"] == [
        "tenants: tenant 'team-a' VF GUID %s (partition team-a, pkey 0x0001, full): not a port of the fabric's snapshot (a virtual port is "
        "not seen by ibnetdiscover/smpquery): its P_Key table is not verified" % VA,
        "tenants: tenant 'team-b' VF GUID %s (partition team-b, pkey 0x0003, full): not a port of the fabric's snapshot (a virtual port is "
        "not seen by ibnetdiscover/smpquery): its P_Key table is not verified" % VB,
    ]
    # a plan without VFs reports nothing unverified; other checks do not list them
    assert _ib_verify.verify(facts(), vf_plan["intent"], vf_plan["devices"], checks=["pkeys"])["not_verified"] == []


def test_a_vf_guid_the_fabric_shows_is_checked_like_a_port(vf_plan):
    """Where the SM exposes the VF as a port with a table (a fabric with virtual ports), its table is checked: holding
    the other tenant's P_Key is a mismatch, and it is no longer listed as not verified."""
    snapshot = facts()
    snapshot["pkeys"][VA] = table("0x7fff", "0x8001", "0x8003")
    found = _ib_verify.verify(snapshot, vf_plan["intent"], vf_plan["devices"], checks=["tenants"])
    assert found["mismatches"] == ["tenants: tenant 'team-a' port %s holds P_Key 0x0003 (full) of tenant 'team-b''s partition team-b" % VA]
    assert [line for line in found["not_verified"] if VA in line] == []


def test_known_guids_let_the_intents_vf_guids_through_the_member_check(vf_plan):
    """The role's preflight checks partitions.conf members against the fabric's ports: VF GUIDs are let through
    (OpenSM skips a member that is no port; ibnetdiscover lists no virtual port), any other unknown GUID is not."""
    known = _ib_verify.known_guids(facts(), vf_plan["intent"])
    assert {VA, VB, A1, SM} <= known
    conf = vf_plan["devices"]["ufm1"]["partitions_conf"]
    assert _ib_files.check_partitions_conf(conf, known) == []
    ports_only = {pg for node in facts()["nodes"].values() for pg in node["port_guids"].values()}
    assert "partitions.conf line 2: member %s is not a port in the fabric" % VA in _ib_files.check_partitions_conf(conf, ports_only)
    assert _ib_verify.known_guids({}, vf_plan["intent"]) is None
