# SPDX-License-Identifier: GPL-3.0-or-later
"""_ib_files: the strict offline checks of opensm.conf, partitions.conf and
qos-policy.conf, on what the plan renders and on broken variants."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _files as _ib_files
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

GPU1, GPU2 = "0x0c42a10300010001", "0x0c42a10300020001"


@pytest.fixture(name="sm_plan")
def fixture_sm_plan():
    intent = {
        "name": "unit", "transport": "infiniband",
        "infiniband": {
            "sm": {"routing_engine": ["minhop"]},
            "partitions": [
                {"name": "gpu", "pkey": "0x8001", "qos_level": "rdma", "members": [{"keyword": "SELF", "membership": "full"}, GPU1]},
                {"name": "storage", "pkey": 2, "members": [GPU2]},
            ],
        },
    }
    return _plan.build_plan(intent, {"ufm1": {"kind": "subnet_manager", "role": "master"}})["devices"]["ufm1"]


def conf_text(conf):
    return "# header\n" + "".join("%s %s\n" % kv for kv in conf.items())


def test_the_plan_renders_valid_files(sm_plan):
    files = {"opensm_conf": conf_text(sm_plan["opensm_conf"]), "partitions_conf": sm_plan["partitions_conf"],
             "qos_policy_conf": sm_plan["qos_policy_conf"]}
    assert _ib_files.check_files(files, known_guids={GPU1, GPU2}) == []


def test_member_not_in_the_fabric(sm_plan):
    assert _ib_files.check_partitions_conf(sm_plan["partitions_conf"], known_guids={GPU1}) == [
        "partitions.conf line 4: member 0x0c42a10300020001 is not a port in the fabric"]


@pytest.mark.parametrize("text, error", [
    ("gpu=0x8001 : ALL=full ;\nstorage=0x0001 : ALL ;\n", "partitions.conf line 2: P_Key 0x0001 repeats line 1 (bit 15 is not part of the key)"),
    ("gpu=0x8000 : ALL ;\n", "partitions.conf line 1: '0x8000' is not a P_Key (0x0001-0x7fff, bit 15 = membership)"),
    ("gpu=0x18001 : ALL ;\n", "partitions.conf line 1: '0x18001' is not a P_Key"),
    ("gpu : ALL ;\n", "partitions.conf line 1: partition 'gpu' has no P_Key (OpenSM would pick one)"),
    ("gpu=0x8001 : ALL\n", "partitions.conf line 1: 'gpu=0x8001 : ALL' does not end with ';'"),
    ("gpu=0x8001, mtu=6 : ALL ;\n", "partitions.conf line 1: mtu=6: not an integer 1-5"),
    ("gpu=0x8001, sl=3, bogus : ALL ;\n", "partitions.conf line 1: 'bogus' is not a partition flag"),
    ("gpu=0x8001 : 0x0c42a10300010001=half ;\n", "'half' is not full, limited or both"),
    ("gpu=0x8001 : EVERYONE ;\n", "'EVERYONE' is not a port GUID or one of ALL, ALL_CAS"),
    ("gpu=0x8001 : ALL ;\ngpu=0x8002 : ALL ;\n", "partitions.conf line 2: partition name 'gpu' repeats line 1"),
    # OpenSM reads 4095 bytes a line (osm_prtn_config.c: fgets into char line[4096]): a longer line is cut mid-GUID
    ("gpu=0x8001 : " + ", ".join("0x0c42a1030f%06x=full" % i for i in range(200)) + " ;\n",
     "partitions.conf line 1: 5013 characters, over the 4094 OpenSM reads whole (fgets into a 4096-byte buffer)"),
])
def test_partitions_errors(text, error):
    errors = _ib_files.check_partitions_conf(text)
    assert any(e.startswith(error) or error in e for e in errors), errors


@pytest.mark.parametrize("text, error", [
    ("qos-levels\n qos-level\n  name: rdma\n  sl: 3\n end-qos-level\nend-qos-levels\n",
     "qos-policy.conf: no DEFAULT qos-level: OpenSM needs one (ERR AC10)"),
    ("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 16\n end-qos-level\nend-qos-levels\n", "qos-policy.conf line 4: sl '16' is not 0-15"),
    ("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n end-qos-level\nend-qos-levels\nqos-match-rules\n qos-match-rule\n"
     "  pkey: 0x8001\n  qos-level-name: fast\n end-qos-match-rule\nend-qos-match-rules\n",
     "qos-policy.conf line 8: qos-level-name 'fast' is not a defined qos-level"),
    ("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n end-qos-level\n", "qos-policy.conf: qos-levels is not closed"),
    ("qos-ulps\n default : 0\nend-qos-ulps\n", "qos-policy.conf line 1: 'qos-ulps' is not part of the policy form"),
    ("qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n  colour: red\n end-qos-level\nend-qos-levels\n",
     "qos-policy.conf line 5: 'colour: red' is not a field here"),
])
def test_qos_policy_errors(text, error):
    errors = _ib_files.check_qos_policy(text)
    assert any(e.startswith(error) for e in errors), errors


@pytest.mark.parametrize("line, error", [
    ("routing_engine ar_updn,minhop", "unknown routing engine 'ar_updn'"),
    ("sm_priority 16", "not an integer 0-15"),
    ("qos_ca_sl2vl 0,1,2", "not 16 comma-separated VLs"),
    ("qos_vlarb_high 15:64", "'15:64': VL 0-14, weight 0-255"),
    ("qos maybe", "not TRUE or FALSE"),
    ("partition_config_file relative.conf", "not an absolute path"),
    ("console_port 10000", "'console_port' is not a key lossless.fabric writes"),
])
def test_opensm_conf_errors(line, error):
    errors = _ib_files.check_opensm_conf("lmc 0\n" + line + "\n")
    assert len(errors) == 1 and error in errors[0] and errors[0].startswith("opensm.conf line 2: "), errors


def test_restart_keys():
    before = "routing_engine minhop\nsm_priority 14\nqos_policy_file /etc/opensm/qos-policy.conf\n"
    assert _ib_files.needs_restart(before, before.replace("14", "13")) == []              # SIGHUP re-reads it
    assert _ib_files.needs_restart(before, before.replace("minhop", "ftree,minhop")) == ["routing_engine"]
    assert "routing_engine" in _ib_files.needs_restart(None, before)                     # first install
