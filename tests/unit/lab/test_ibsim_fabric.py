# SPDX-License-Identifier: GPL-3.0-or-later
"""A real OpenSM on an ibsim fabric in a private network namespace: start,
read-back with infiniband-diags, reload, faults, isolation, clean stop.

Each test starts its own fabric (well under a second) and stops it; tests
run in parallel (pytest-xdist) because every fabric has its own namespace.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from ibsim import topology as t  # noqa: E402
from ibsim.fabric import UMAD2SIM, Fabric, FabricError  # noqa: E402


def _usable() -> str | None:
    for tool in ("ibsim", "opensm", "smpquery", "saquery", "unshare", "nsenter"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            return "%s is not installed (apt-get install ibsim-utils opensm infiniband-diags)" % tool
    if not os.path.exists(UMAD2SIM):
        return "%s is missing (ibsim-utils)" % UMAD2SIM
    if subprocess.run(["unshare", "--net", "true"], capture_output=True, check=False).returncode != 0:
        return "cannot create a network namespace here (needs root / CAP_SYS_ADMIN)"
    return None


pytestmark = pytest.mark.skipif(_usable() is not None, reason=str(_usable()))

SMALL = {"spines": 1, "leaves": 2, "switch_ports": 8, "subnet_managers": ["sm"],
         "hosts": [{"name": "gpu1", "nics": [{"name": "mlx5_0"}, {"name": "mlx5_1"}]},
                   {"name": "gpu2", "nics": [{"name": "mlx5_0"}]}]}


@pytest.fixture
def topo():
    return t.build(SMALL)


@pytest.fixture
def fab(tmp_path, topo):
    with Fabric(str(tmp_path / "fabric"), topo) as fabric:
        yield fabric


def first_row(fab, *argv):
    return fab.run(list(argv)).stdout.splitlines()[0]


def lid_of(fab, guid):
    out = fab.run(["smpquery", "-G", "portinfo", guid, "1"]).stdout
    return int(re.search(r"^Lid:\.+(\d+)$", out, re.M).group(1))


def path_record(fab, slid, dlid, pkey):
    out = fab.run(["saquery", "-p", "--slid", str(slid), "--dlid", str(dlid), "--pkey", pkey]).stdout
    return dict(re.findall(r"^\s*(\w+)\.+(\S+)$", out, re.M))


def processes_mentioning(text):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and int(pid) != os.getpid():
            found.append((int(pid), cmdline))
    return found


def test_fabric_comes_up_with_the_generated_topology(fab, topo):
    sminfo = fab.run(["sminfo"]).stdout
    assert "SMINFO_MASTER" in sminfo
    assert "sm guid %s" % hex(int(topo.port_guid("sm", "mlx5_0"), 16)) in sminfo
    net = fab.run(["ibnetdiscover"]).stdout
    switches = re.findall(r'^Switch\s+\d+ "S-([0-9a-f]{16})"', net, re.M)
    cas = re.findall(r'^Ca\s+\d+ "H-([0-9a-f]{16})"\s+# "([^"]+)"', net, re.M)
    assert len(switches) + len(cas) == len(topo.nodes) == 3 + 4
    assert {"0x" + g for g in switches} == {topo.guids()[s] for s in topo.switches}
    # ibnetdiscover names CAs by node GUID (= port GUID - 1) and shows our NodeDescription
    assert sorted(desc for _g, desc in cas) == ["gpu1 mlx5_0", "gpu1 mlx5_1", "gpu2 mlx5_0", "sm mlx5_0"]
    assert "CA type: simulator" in fab.run(["ibstat"]).stdout or "simulator" in fab.run(["ibstat"]).stdout
    # links come up at the topology's link type (4X HDR)
    links = fab.run(["iblinkinfo"]).stdout
    assert "53.125 Gbps Active" in links and "2.5 Gbps Active" not in links
    # no ibsim "attached as client" noise on stderr
    assert "attached as client" not in fab.run(["sminfo"]).stderr


def test_partition_change_and_reload_reaches_members_only(fab, topo):
    member, other = topo.port_guid("gpu1", "mlx5_0"), topo.port_guid("gpu2", "mlx5_0")
    assert first_row(fab, "smpquery", "-G", "pkeys", member, "1").split()[1:3] == ["0xffff", "0x0000"]
    fab.write_partitions("Default=0x7fff : ALL=full ;\nrdma=0x8001 : %s=full ;\nstore=0x0002 : %s=limited ;\n" % (member, member))
    result = fab.reload()
    assert result["errors"] == []
    assert first_row(fab, "smpquery", "-G", "pkeys", member, "1").split()[1:4] == ["0xffff", "0x8001", "0x0002"]
    assert first_row(fab, "smpquery", "-G", "pkeys", other, "1").split()[1:3] == ["0xffff", "0x0000"]
    # the switch port facing the member carries its P_Keys too
    leaf, port = topo.nodes["gpu1-mlx5_0"].links[1]
    leaf_row = first_row(fab, "smpquery", "-G", "pkeys", topo.guids()[leaf], str(port)).split()
    assert "0x8001" in leaf_row and "0x0002" in leaf_row


def test_sl2vl_change_and_reload_on_cas_and_switches(fab, topo):
    ca = topo.port_guid("gpu1", "mlx5_0")
    fab.set_opensm_options({"qos_max_vls": 8, "qos_ca_sl2vl": "3,2,1,0,4,5,6,7,7,7,7,7,7,7,7,7",
                            "qos_swe_sl2vl": "0,1,2,3,4,5,6,7,1,1,1,1,1,1,1,1",
                            "qos_vlarb_high": "0:64,3:64", "qos_vlarb_low": "0:4,1:4,2:4,3:4"})
    fab.reload()
    table = fab.run(["smpquery", "-G", "sl2vl", ca, "1"]).stdout
    assert "ports: in  0, out  0: | 3| 2| 1| 0| 4| 5| 6| 7| 7| 7| 7| 7| 7| 7| 7| 7|" in table
    leaf, port = topo.nodes["gpu1-mlx5_0"].links[1]
    table = fab.run(["smpquery", "-G", "sl2vl", topo.guids()[leaf], str(port)]).stdout
    rows = re.findall(r"^ports: in\s+\d+, out\s+%d: (.*)$" % port, table, re.M)
    assert rows and all(r == "| 0| 1| 2| 3| 4| 5| 6| 7| 1| 1| 1| 1| 1| 1| 1| 1|" for r in rows)
    vlarb = fab.run(["smpquery", "-G", "vlarb", ca, "1"]).stdout
    assert "WEIGHT: |0x40|0x40|0x0 " in vlarb  # high table 0:64,3:64


def test_the_lab_ib_plan_applies_path_sl_per_pkey(tmp_path):
    from test_ibsim_topology import _inventory_hostvars  # pylint: disable=import-outside-toplevel

    from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # pylint: disable=import-outside-toplevel

    hostvars = _inventory_hostvars()
    topo = t.build(t.spec_from_inventory(hostvars, hostvars["ufm1"]["lab_ib_fabric"]))
    devices = {h: v["lossless_fabric_device"] for h, v in hostvars.items()}
    sm = _plan.build_plan(hostvars["ufm1"]["lossless_fabric"], devices)["devices"]["ufm1"]
    with Fabric(str(tmp_path / "fabric"), topo) as fab:
        fab.write_partitions(sm["partitions_conf"])
        fab.write_qos_policy(sm["qos_policy_conf"])
        # the plan's *_file paths are /etc/opensm/...: in the lab the -P/-Y
        # command line wins over them (also after SIGHUP), so keep them as they are
        fab.set_opensm_options(sm["opensm_conf"])
        fab.restart_opensm()      # routing_engine is only read at start
        assert fab.errors() == []
        log = pathlib.Path(fab.files["opensm_log"]).read_text()
        assert "ftree tables configured on all switches" in log
        g = {(h, n): topo.port_guid(h, n) for (h, n) in topo.ca_by_nic}
        # tenants (inventories/lab-ib): team-a gpu1+gpu2 on 0x8001, team-b gpu3+gpu4 on 0x8003; tenant ports are
        # limited members of the default partition (0x7fff), so two tenants meet nowhere but at the SM
        assert first_row(fab, "smpquery", "-G", "pkeys", g[("gpu1", "mlx5_0")], "1").split()[1:4] == ["0x7fff", "0x8001", "0x0000"]
        assert first_row(fab, "smpquery", "-G", "pkeys", g[("gpu1", "mlx5_1")], "1").split()[1:4] == ["0x7fff", "0x8001", "0x0002"]
        lid = {k: lid_of(fab, v) for k, v in g.items()}
        src = lid[("gpu1", "mlx5_0")]
        assert path_record(fab, src, lid[("gpu2", "mlx5_0")], "0x8001")["sl"] == "0x3"  # partition sl=3 / qos-level rdma
        assert path_record(fab, src, lid[("gpu3", "mlx5_0")], "0x8001") == {}  # gpu3 is team-b's
        assert path_record(fab, src, lid[("gpu3", "mlx5_0")], "0xffff") == {}  # limited <-> limited in the default partition
        sm_lid = lid_of(fab, topo.guids()["ufm1-mlx5_0"])
        assert path_record(fab, sm_lid, src, "0xffff")["sl"] == "0x0"  # the SM (full) reaches a tenant port: DEFAULT level
        # storage (0x0002): gpu1 mlx5_0 is no member -> no path; limited <-> limited -> no path either
        assert path_record(fab, src, lid[("gpu2", "mlx5_1")], "0x0002") == {}
        assert path_record(fab, lid[("gpu1", "mlx5_1")], lid[("gpu2", "mlx5_1")], "0x0002") == {}
        # the SM (SELF=full) reaches a limited storage member
        assert path_record(fab, sm_lid, lid[("gpu2", "mlx5_1")], "0x0002")["sl"] == "0x0"
        assert "| 0| 1| 2| 3| 4| 5| 6| 7| 7|" in fab.run(["smpquery", "-G", "sl2vl", g[("gpu4", "mlx5_1")], "1"]).stdout


def test_two_fabrics_at_once_do_not_see_each_other(tmp_path, topo):
    other = t.build({"spines": 0, "leaves": ["solo"], "switch_ports": 4, "subnet_managers": ["sm"],
                     "hosts": [{"name": "x", "nics": [{"name": "mlx5_0"}]}]})
    with Fabric(str(tmp_path / "a"), topo) as a, Fabric(str(tmp_path / "b"), other) as b:
        assert os.readlink(a.netns) != os.readlink(b.netns) != os.readlink("/proc/self/ns/net")
        net_a, net_b = a.run(["ibnetdiscover"]).stdout, b.run(["ibnetdiscover"]).stdout
        assert len(re.findall(r"^(?:Switch|Ca)\s", net_a, re.M)) == len(topo.nodes)
        assert len(re.findall(r"^(?:Switch|Ca)\s", net_b, re.M)) == len(other.nodes) == 3
        assert '"solo"' not in net_a and '"solo"' in net_b
        # a change to one SM does not reach the other fabric
        a.write_partitions("Default=0x7fff : ALL=full ;\np=0x0007 : ALL=full ;\n")
        a.reload()
        assert "0x8007" in first_row(a, "smpquery", "-G", "pkeys", topo.port_guid("gpu2", "mlx5_0"), "1")
        assert "0x8007" not in first_row(b, "smpquery", "-G", "pkeys", other.port_guid("x", "mlx5_0"), "1")


def test_stop_leaves_no_process(tmp_path, topo):
    workdir = str(tmp_path / "fabric")
    fab = Fabric(workdir, topo).start()
    pids = [fab.ibsim.pid, fab.opensm.pid]
    assert len(processes_mentioning(workdir)) == 2
    fab.stop()
    for pid in pids:
        assert not os.path.exists("/proc/%d" % pid)
    assert processes_mentioning(workdir) == []
    assert not os.path.exists(fab.files["env"])
    fab.stop()   # idempotent
    with pytest.raises(FabricError, match="not running"):
        fab.run(["sminfo"])


def test_console_faults_counters_links_and_mad_drops(fab, topo):
    guid = topo.port_guid("gpu2", "mlx5_0")
    fab.set_counter("gpu2-mlx5_0", 1, "SymbolErrorCounter", 7)
    fab.set_counter("gpu2-mlx5_0", 1, "PortXmitWait", 1234)
    counters = fab.run(["perfquery", "-G", guid, "1"]).stdout
    assert re.search(r"^SymbolErrorCounter:\.+7$", counters, re.M)
    assert re.search(r"^PortXmitWait:\.+1234$", counters, re.M)
    with pytest.raises(FabricError, match="cannot be found"):
        fab.set_counter("gpu2-mlx5_0", 1, "NoSuchCounter", 1)
    with pytest.raises(FabricError, match="not found"):
        fab.link_down("nosuch", 1)
    # link down: the CA drops out of the fabric
    lid = lid_of(fab, guid)
    fab.link_down("gpu2-mlx5_0", 1)
    deadline = time.monotonic() + 5
    while '"gpu2 mlx5_0"' in fab.run(["ibnetdiscover"]).stdout and time.monotonic() < deadline:
        time.sleep(0.05)
    assert '"gpu2 mlx5_0"' not in fab.run(["ibnetdiscover"]).stdout
    leaf, port = topo.nodes["gpu2-mlx5_0"].links[1]
    info = fab.run(["smpquery", "-G", "portinfo", topo.guids()[leaf], str(port)]).stdout
    assert re.search(r"^LinkState:\.+Down$", info, re.M)
    fab.link_up("gpu2-mlx5_0", 1)
    deadline = time.monotonic() + 10
    while "Active" not in fab.run(["smpquery", "-G", "portinfo", topo.guids()[leaf], str(port)]).stdout and time.monotonic() < deadline:
        time.sleep(0.05)
    assert re.search(r"^LinkState:\.+Active$", fab.run(["smpquery", "-G", "portinfo", guid, "1"]).stdout, re.M)
    # MAD drops: 100% of the MADs to the port are lost, 0 restores
    fab.mad_errors("gpu2-mlx5_0", 1, 100)
    assert fab.run(["smpquery", "-t", "100", "nodeinfo", str(lid_of(fab, topo.port_guid("gpu1", "mlx5_0")))]).returncode == 0
    lost = fab.run(["smpquery", "-t", "100", "nodeinfo", str(lid)], check=False)
    assert lost.returncode != 0
    fab.mad_errors("gpu2-mlx5_0", 1, 0)
    assert "Node info" in fab.run(["smpquery", "-t", "100", "nodeinfo", str(lid)]).stdout


def test_bad_qos_policy_is_reported_by_reload(fab):
    fab.write_qos_policy("qos-levels\n    qos-level\n        name: rdma\n        sl: 3\n    end-qos-level\nend-qos-levels\n")
    result = fab.reload()
    assert any("ERR AC10" in line for line in result["errors"])
    fab.write_qos_policy("qos-levels\n    qos-level\n        name: DEFAULT\n        sl: 0\n    end-qos-level\nend-qos-levels\n")
    assert fab.reload()["errors"] == []
