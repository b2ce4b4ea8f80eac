# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/tenant.yml against the lab's Kubernetes API emulator with two tenants, each with its own token (RBAC
limited to its namespace): both onboarded (namespace, NAD with the tenant's VLAN, Role and RoleBinding), each tenant's
benchmark run with the tenant's own credentials and compared with the host baseline of the same hosts (team-a replays
the baseline's log: at bare-metal speed; team-b a slower real log: slower by N %), and tenant A's credentials refused
in tenant B's namespace with the API server's 403 text (no change window: tenant_change_window=false). Then the
window path on the InfiniBand lab (ibsim + OpenSM): a tenant added to the intent, its partition written into OpenSM's
files pending under the rollback timer, judged by the tenants' checks as the window's post-checks (the fabric's P_Key
tables and cross-tenant PathRecords, its Kubernetes objects, its benchmark) - a slower tenant is rolled back (files,
P_Key tables and Kubernetes objects as before), a tenant at bare-metal speed is kept, and that tenant CHANGED (a new
P_Key) and slower is rolled back with its previous network attachment put back; one report each."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import ansible_env, copy_lab_inventory, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from test_change_window_ib import IbWindow  # noqa: E402  # pylint: disable=import-error,wrong-import-position

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
from k8sim.client import K8sSim  # noqa: E402  # pylint: disable=import-error,wrong-import-position

BIN = pathlib.Path(sys.executable).parent
REPLAYS = ROOT / "tests" / "lab" / "nccl" / "replays"
BASELINE = str(REPLAYS / "deepops_k8s_sriov_roce_2node.txt")  # 22.77 GB/s at 1 GiB (the host baseline, and team-a)
SLOWER = str(REPLAYS / "cci_moc_h100_2node_roce_allreduce_nogdr.txt")  # 15.12 GB/s at 1 GiB (team-b)
NODES = [{"name": n, "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2"}]} for n in ("gpu1", "gpu2")]
# The InfiniBand lab's hosts as nodes: both HCAs SR-IOV capable (device data nics[].vfs = 2, selected by PCI address)
IB_NODES = [{"name": n, "gpus": 8, "nics": [{"name": "mlx5_%d" % i, "netdev": "ib%d" % i, "link_type": "infiniband", "totalvfs": 8, "pci": pci}
                                            for i, pci in enumerate(("0000:0c:00.0", "0000:16:00.0"))]} for n in ("gpu1", "gpu2", "gpu3", "gpu4")]
OPERATOR_NS = "nvidia-network-operator"
USERS = [{"token": "token-team-a", "user": "alice", "groups": ["lossless.fabric:tenant:team-a"]},
         {"token": "token-team-b", "user": "bob", "groups": ["lossless.fabric:tenant:team-b"]}]

pytestmark = pytest.mark.skipif(not (ROOT / ".deps" / "collections" / "ansible_collections" / "kubernetes" / "core").exists(),
                                reason="needs kubernetes.core in .deps")


def _admin_post(sim, path, body):
    """One object created as the cluster's admin (the kubeconfig's own token), behind tenant.yml's back."""
    req = urllib.request.Request(sim.url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer %s" % sim.info["token"]})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_two_tenants_onboarded_benchmarked_against_the_host_baseline_and_isolated(tmp_path):
    """The run's tenants are team-a and team-b (tenant_names); the plan has a third, team-z, outside the run, whose
    namespace binds team-a's group (made behind the playbook's back): the isolation check and the cross-namespace
    probes cover every tenant of the plan, so team-z's finding is a reason of the verdict, naming team-z."""
    config = {"time_scale": 0.01, "nodes": NODES, "users": USERS, "replay": BASELINE,
              "replays": [{"selector": {"lossless.fabric/tenant": "team-b"}, "path": SLOWER}]}
    with K8sSim(config, str(tmp_path / "sim")) as sim:
        kubeconfigs = sim.info["user_kubeconfigs"]
        tenants = {name: {"hosts": ["gpu1", "gpu2"], "namespace": name, "kubeconfig": kubeconfigs[user], "vlan": vlan,
                          "partition": None, "qos_level": None}
                   for name, user, vlan in (("team-a", "alice", 101), ("team-b", "bob", 102))}
        tenants["team-z"] = {"hosts": ["gpu1", "gpu2"], "namespace": "team-z", "kubeconfig": None, "vlan": 103, "partition": None, "qos_level": None}
        _admin_post(sim, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-z"}})
        _admin_post(sim, "/apis/rbac.authorization.k8s.io/v1/namespaces/team-z/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "peek", "namespace": "team-z"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "lossless.fabric:tenant:team-a"}]})
        extra = {"lab_kubeconfig": sim.kubeconfig, "tenant_tenants": tenants, "tenant_names": "team-a,team-b", "tenant_proceed_not_isolated": True,
                 "tenant_change_window": False,
                 "lossless_fabric_report_dir": str(tmp_path / "reports"), "tenant_repeats": 4, "tenant_poll_interval": 0.1,
                 "tenant_baseline_launcher": "kubernetes", "tenant_timeout": 60,
                 "tenant_kubernetes": {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "rdma_resource_count": 0}, "tenant_rdma_resource_count": 0,
                 "k8s_rdma_tenant_ipam": {t: {"type": "whereabouts", "range": "10.%d.0.0/24" % v}
                                          for t, v in (("team-a", 101), ("team-b", 102), ("team-z", 103))}}
        (tmp_path / "reports").mkdir()
        (tmp_path / "extra.json").write_text(json.dumps(extra))
        inventory = copy_lab_inventory(tmp_path / "lab")
        out = subprocess.run([str(BIN / "ansible-playbook"), "-i", inventory, "playbooks/tenant.yml", "-e", "@%s" % (tmp_path / "extra.json")],
                             cwd=str(ROOT), env=ansible_env(ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), HOME=str(tmp_path)),
                             capture_output=True, text=True, timeout=600, check=False)
        objects = sim.objects()
    report = json.loads((tmp_path / "reports" / "tenant-report.json").read_text())
    tail = out.stdout[-6000:] + out.stderr[-2000:]
    # team-b is slower than the host baseline: the run fails on it, and says by how much
    assert out.returncode == 2, tail
    assert report["onboarded"] == ["team-a", "team-b"] and report["verdict"] == "failed", report
    assert report["benchmarks"]["team-a"]["verdict"] == "bare_metal", report["benchmarks"]
    assert report["benchmarks"]["team-a"]["text"].startswith("tenant team-a at bare-metal speed")
    assert report["benchmarks"]["team-b"]["verdict"] == "slower", report["benchmarks"]
    assert report["benchmarks"]["team-b"]["text"].startswith("tenant team-b slower by 33.6 %"), report["benchmarks"]
    assert report["benchmarks"]["team-a"]["launches"] == ["succeeded"] * 4
    # team-z is outside the run (not onboarded, not benchmarked) but in the plan: its finding blocks, naming it
    assert report["tenants"] == ["team-a", "team-b"], report["tenants"]
    finding = "isolation: tenant team-z: RoleBinding team-z/peek: binds tenant team-a's group lossless.fabric:tenant:team-a"
    assert report["reasons"] == [finding, "benchmark: " + report["benchmarks"]["team-b"]["text"]], report["reasons"]
    assert [(f["tenant"], f["names"]) for f in report["isolation"]] == [("team-z", "team-a")], report["isolation"]
    cross = dict(report["cross_namespace"])
    assert set(cross) == {"team-a -> team-b", "team-b -> team-a", "team-a -> team-z", "team-b -> team-z"}, cross
    assert all("403" in answer for answer in cross.values()), cross
    assert 'pods is forbidden: User \\"alice\\" cannot list resource \\"pods\\" in API group \\"\\" in the namespace \\"team-b\\"' in cross[
        "team-a -> team-b"] or 'User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"' in cross["team-a -> team-b"], cross
    # onboarded: each tenant's NAD carries its own VLAN; the tenants' MPIJobs ran in their own namespaces, then were deleted
    nads = {o["metadata"]["namespace"]: json.loads(o["spec"]["config"]) for o in objects["k8s.cni.cncf.io/network-attachment-definitions"]}
    assert {ns: (c["type"], c["vlan"]) for ns, c in nads.items()} == {"team-a": ("sriov", 101), "team-b": ("sriov", 102)}
    bindings = {o["metadata"]["namespace"]: o["subjects"][0]["name"] for o in objects["rbac.authorization.k8s.io/rolebindings"]}
    assert bindings == {"team-a": "lossless.fabric:tenant:team-a", "team-b": "lossless.fabric:tenant:team-b",
                        "team-z": "lossless.fabric:tenant:team-a"}
    assert (tmp_path / "reports" / "tenant-report.md").read_text().startswith("# Tenants: failed")


GPU3_0, GPU4_1 = "0x0c42a10300030001", "0x0c42a10300040101"


def _pkeys(lab, port_guid):
    """The P_Key table OpenSM programmed into a CA port (smpquery pkeys: rows of 8 entries; the non-zero ones)."""
    return set(re.findall(r"0x[0-9a-f]{4}", lab.tool("smpquery", "-G", "pkeys", port_guid, "1"))) - {"0x0000"}


@pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None, reason="needs ibsim-utils and opensm")
def test_a_tenant_partition_onboarded_under_the_window_is_kept_or_rolled_back_with_its_objects(tmp_path):
    """The fabric runs team-a alone (gpu1, gpu2: the inventory's intent without team-b, configured by
    playbooks/infiniband.yml). tenant.yml then onboards a tenant on gpu3 and gpu4 through the intent (-e @file: the
    intent with the tenant added), its partition written into OpenSM's partitions.conf under the rollback timer:
    team-c (P_Key 0x8005) runs slower than the host baseline - the window rolls back, partitions.conf is back byte for
    byte, no port holds 0x8005, team-c's Kubernetes objects and namespace are gone; team-b (0x8003) runs at bare-metal
    speed - the window keeps it, its ports hold 0x8003 (full), the tenants check found no cross-tenant path, its
    network attachment carries the P_Key. Then team-b is CHANGED (P_Key 0x8007) and runs slower (the k8sim replay
    for its label): the window rolls back, partitions.conf is as after step 2 byte for byte, its ports hold 0x8003
    again, and the network attachment the window applied with pkey 0x0007 is put back with 0x0003 (its RBAC and
    namespace unchanged). The k8sim has the lab's four hosts as SR-IOV capable nodes and the SR-IOV operator: each
    tenant's workers ask for its own VFs (nvidia.com/team_b, one per HCA), advertised on its nodes only, and its quota
    refuses a pod asking for team-a's (403). One lab and one k8sim for the three."""
    lab = IbWindow(tmp_path).up()
    try:
        base = lab.intent()
        base["lossless_fabric"]["tenants"] = [t for t in base["lossless_fabric"]["tenants"] if t["name"] == "team-a"]
        lab.write_intent(base)
        # a lock folder of its own: another IB lab test on this controller (the same HOME) locks fabric lab-ib too
        out = lab.playbook("--skip-tags", "infiniband_verify", "-e", "fabric_plan_lock_dir=%s" % (tmp_path / "locks"))
        assert out.returncode == 0, out.stdout[-6000:] + out.stderr
        users = USERS + [{"token": "token-team-c", "user": "carol", "groups": ["lossless.fabric:tenant:team-c"]}]
        # the tenant's launches replay the log of the lab's mpirun baseline (lab_nccl_replay passing); team-c's a slower one
        config = {"time_scale": 0.01, "nodes": IB_NODES, "users": users, "replay": str(REPLAYS / "deepops_netop_dgxa100_2node_hdr.txt"),
                  "replays": [{"selector": {"lossless.fabric/tenant": "team-c"}, "path": SLOWER}], "namespaces": [OPERATOR_NS]}
        with K8sSim(config, str(tmp_path / "sim")) as sim:
            # the SR-IOV Network Operator as the Network Operator chart deploys it (resource prefix nvidia.com): it makes
            # the VFs of a tenant's policy and advertises them as the tenant's resource on the tenant's nodes
            labels = {"app": "sriov-network-operator"}
            _admin_post(sim, "/apis/apps/v1/namespaces/%s/deployments" % OPERATOR_NS, {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sriov-network-operator"},
                "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                    "name": "sriov-network-operator", "image": "nvcr.io/nvidia/mellanox/sriov-network-operator:network-operator-v26.4.1",
                    "env": [{"name": "RESOURCE_PREFIX", "value": "nvidia.com"}]}]}}}})
            extra = {"lossless_fabric_kubeconfig": sim.kubeconfig, "tenant_repeats": 4, "tenant_poll_interval": 0.1,
                     "tenant_timeout": 60, "tenant_kubernetes": {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "rdma_resource_count": 0},
                     "change_window_benchmark": False, "change_window_confirm_margin_seconds": 0,
                     "lossless_fabric_report_dir": lab.report_dir, "fabric_plan_lock_dir": str(tmp_path / "locks")}
            (tmp_path / "extra.json").write_text(json.dumps(extra))

            def onboard(name, pkey, user, window_id=None):
                """tenant.yml with the intent = team-a + this tenant (onboarded when new, changed when not)."""
                window_id = window_id or name
                data = copy.deepcopy(base)
                data["lossless_fabric"]["tenants"].append({"name": name, "hosts": ["gpu3", "gpu4"], "namespace": name,
                                                           "kubeconfig": sim.info["user_kubeconfigs"][user],
                                                           "partition": {"pkey": pkey, "membership": "full", "ipoib": True}, "qos_level": "rdma"})
                (tmp_path / ("intent-%s.yml" % window_id)).write_text(yaml.safe_dump(data))
                result = run(lab.argv("tenant.yml", "-e", "@%s" % (tmp_path / ("intent-%s.yml" % window_id)), "-e", "@%s" % (tmp_path / "extra.json"),
                                      "-e", "tenant_names=%s" % name, "-e", "change_window_id=%s" % window_id), timeout=900)
                report = json.loads((pathlib.Path(lab.report_dir) / "tenant-report.json").read_text())
                report["md"] = (pathlib.Path(lab.report_dir) / "tenant-report.md").read_text()
                return result, report, lab.report(window_id)

            # 1. team-c is slower: the window rolls its partition back, its Kubernetes objects go
            before = lab.files()
            # gpu3 and gpu4 are in no tenant yet: full members of the default partition (storage: limited)
            assert _pkeys(lab, GPU3_0) == {"0xffff"} and _pkeys(lab, GPU4_1) == {"0xffff", "0x0002"}
            out, report, window = onboard("team-c", "0x8005", "carol")
            slow = {"files": lab.files(), "objects": sim.objects(), "pkeys": (_pkeys(lab, GPU3_0), _pkeys(lab, GPU4_1))}
            # 2. team-b at bare-metal speed: kept
            out_b, report_b, window_b = onboard("team-b", "0x8003", "bob")
            kept = {"files": lab.files(), "objects": sim.objects(), "pkeys": (_pkeys(lab, GPU3_0), _pkeys(lab, GPU4_1))}
            # team-b's quota: a pod in its namespace asking for team-a's VFs (or the shared plugin's HCA) is refused
            steal = None
            try:
                _admin_post(sim, "/api/v1/namespaces/team-b/pods", {
                    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "steal", "namespace": "team-b"},
                    "spec": {"containers": [{"name": "c", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                             "resources": {"limits": {"nvidia.com/team_a": "1"}, "requests": {"nvidia.com/team_a": "1"}}}]}})
            except urllib.error.HTTPError as exc:
                steal = (exc.code, json.loads(exc.read())["message"])
            # 3. team-b CHANGED (P_Key 0x8003 -> 0x8007) and now slower: rolled back, its previous objects put back
            sim.set_replay(path=SLOWER, selector={"lossless.fabric/tenant": "team-b"})
            out_c, report_c, window_c = onboard("team-b", "0x8007", "bob", window_id="team-b-pkey")
            changed = {"files": lab.files(), "objects": sim.objects(), "pkeys": (_pkeys(lab, GPU3_0), _pkeys(lab, GPU4_1))}
    finally:
        lab.launcher("down")

    assert out.returncode == 2, out.stdout[-6000:]
    assert report["verdict"] == "rolled back" and report["window"]["verdict"] == "rolled back" and report["onboarded"] == ["team-c"], report
    assert report["partitions"] == {"team-c": {"name": "team-c", "pkey": "0x8005", "membership": "full", "ipoib": True, "sl": 3}}
    assert report["benchmarks"]["team-c"]["text"].startswith("tenant team-c slower by 91.7 % than the host baseline (at 1 GiB: 15.12 vs 181.62 GB/s")
    # the fabric check ran under the timer and proved team-c apart: its ports held 0x8005 full, and the SA gave no
    # PathRecord team-a -> team-c (for any P_Key, for 0x8001, for 0x8005)
    assert report["fabric"]["verdict"] == "apart" and report["fabric"]["mismatches"] == [], report["fabric"]
    assert report["fabric"]["paths_asked"] == 3 and report["fabric"]["paths_found"] == 0, report["fabric"]
    assert set(report["fabric"]["pkeys"][GPU3_0]["pkeys"]) == {"0x8005", "0x7fff"}, report["fabric"]["pkeys"][GPU3_0]
    assert report["reasons"] == ["benchmark: " + report["benchmarks"]["team-c"]["text"]], report["reasons"]
    # the window's own whole-fabric benchmark is off here (change_window_benchmark: false): the tenant's benchmark judges
    assert [r for r in window["reasons"] if not r.startswith("benchmark not run")] == ["post checks: " + report["reasons"][0]], window["reasons"]
    # the window's change was the tenant's partition (partitions.conf, qos-policy.conf), not opensm.conf
    diffs = {os.path.basename(f["path"]): f for f in window["devices"]["ufm1"]["files"]}
    assert diffs["partitions.conf"]["changed"] and "team-c=0x8005" in diffs["partitions.conf"]["diff"], diffs["partitions.conf"]
    assert diffs["qos-policy.conf"]["changed"] and "0x8005" in diffs["qos-policy.conf"]["diff"], diffs["qos-policy.conf"]
    assert not diffs["opensm.conf"]["changed"], diffs["opensm.conf"]
    assert slow["files"] == before  # byte for byte
    assert slow["pkeys"] == ({"0xffff"}, {"0xffff", "0x0002"})  # OpenSM took 0x8005 out of the tables again
    # an onboarded tenant's objects did not exist before the window: each deleted (the namespace after the others);
    # its nodes' labels were not there either: the nodes put back
    assert {r["object"]: r["action"] for r in report["restored"]} == {
        "Namespace team-c": "deleted", "NetworkAttachmentDefinition team-c/team-c-rdma": "deleted",
        "Role team-c/lossless-fabric-tenant": "deleted", "RoleBinding team-c/lossless-fabric-tenant": "deleted",
        "ResourceQuota team-c/lossless-fabric-tenant": "deleted", "SriovNetworkNodePolicy %s/lossless-fabric-team-c" % OPERATOR_NS: "deleted",
        "Node gpu3": "put back", "Node gpu4": "put back"}, report["restored"]
    assert not any("lossless.fabric/tenant" in (n["metadata"].get("labels") or {}) for n in slow["objects"]["nodes"]), slow["objects"]["nodes"]
    assert not [o for kind in ("k8s.cni.cncf.io/network-attachment-definitions", "rbac.authorization.k8s.io/roles",
                               "rbac.authorization.k8s.io/rolebindings", "namespaces")
                for o in slow["objects"].get(kind, []) if "team-c" in json.dumps(o["metadata"])], slow["objects"]

    assert out_b.returncode == 0, out_b.stdout[-6000:]
    assert report_b["verdict"] == "passed" and report_b["window"]["verdict"] == "kept" and report_b["onboarded"] == ["team-b"], report_b
    assert report_b["benchmarks"]["team-b"]["verdict"] == "bare_metal", report_b["benchmarks"]
    assert report_b["fabric"]["verdict"] == "apart" and report_b["fabric"]["paths_found"] == 0, report_b["fabric"]
    assert window_b["verdict"] == "kept" and window_b["devices"]["ufm1"]["outcome"] == "kept", window_b
    assert "team-b=0x8003" in kept["files"]["lab_opensm_partitions_file"] and "team-b=0x8003" not in before["lab_opensm_partitions_file"]
    # team-b full; the default partition (0xffff before) and storage limited
    assert kept["pkeys"] == ({"0x7fff", "0x8003"}, {"0x7fff", "0x0002", "0x8003"})
    nads = {o["metadata"]["namespace"]: json.loads(o["spec"]["config"]) for o in kept["objects"]["k8s.cni.cncf.io/network-attachment-definitions"]}
    assert {ns: (c["type"], c["pkey"]) for ns, c in nads.items()} == {"team-b": ("ib-sriov", "0x0003")}, nads
    # team-b's workers asked for its own VFs, one per HCA, which only its nodes (labelled for it) advertise
    assert report_b["benchmarks"]["team-b"]["requests"] == {"nvidia.com/gpu": "8", "nvidia.com/team_b": "2"}, report_b["benchmarks"]["team-b"]
    alloc = {n["metadata"]["name"]: n["status"]["allocatable"] for n in kept["objects"]["nodes"]}
    assert {n: a.get("nvidia.com/team_b") for n, a in alloc.items()} == {"gpu1": None, "gpu2": None, "gpu3": "4", "gpu4": "4"}, alloc
    assert {n["metadata"]["name"]: n["metadata"]["labels"].get("lossless.fabric/tenant") for n in kept["objects"]["nodes"]} == {
        "gpu1": None, "gpu2": None, "gpu3": "team-b", "gpu4": "team-b"}
    assert steal is not None and steal[0] == 403, steal
    assert 'pods "steal" is forbidden: exceeded quota: lossless-fabric-tenant, requested: requests.nvidia.com/team_a=1' in steal[1], steal
    assert report_b["md"].startswith("# Tenants: passed")

    # 3. a changed tenant rolled back: partitions.conf as before the change byte for byte, the ports hold 0x8003 again,
    # and its Kubernetes objects as before - the NAD the window applied with pkey 0x0007 put back with 0x0003
    assert out_c.returncode == 2, out_c.stdout[-6000:]
    assert report_c["verdict"] == "rolled back" and report_c["onboarded"] == [], report_c
    assert report_c["benchmarks"]["team-b"]["verdict"] == "slower", report_c["benchmarks"]
    assert set(report_c["fabric"]["pkeys"][GPU3_0]["pkeys"]) == {"0x8007", "0x7fff"}, report_c["fabric"]  # under the timer
    assert window_c["verdict"] == "rolled back", window_c["reasons"]
    assert changed["files"] == kept["files"]  # byte for byte
    assert changed["pkeys"] == kept["pkeys"]
    assert {r["object"]: (r["action"], r["error"]) for r in report_c["restored"]} == dict(
        {"Namespace team-b": ("unchanged", None), "NetworkAttachmentDefinition team-b/team-b-rdma": ("put back", None),
         "Role team-b/lossless-fabric-tenant": ("unchanged", None), "RoleBinding team-b/lossless-fabric-tenant": ("unchanged", None),
         "ResourceQuota team-b/lossless-fabric-tenant": ("unchanged", None), "Node gpu3": ("unchanged", None), "Node gpu4": ("unchanged", None),
         "SriovNetworkNodePolicy %s/lossless-fabric-team-b" % OPERATOR_NS: ("unchanged", None)}), report_c["restored"]

    def tenant_b(objects, kind):
        found = [o for o in objects[kind] if o["metadata"].get("namespace") == "team-b"]
        assert len(found) == 1, found
        return found[0]
    nad = tenant_b(changed["objects"], "k8s.cni.cncf.io/network-attachment-definitions")
    assert json.loads(nad["spec"]["config"])["pkey"] == "0x0003", nad
    assert nad["spec"] == tenant_b(kept["objects"], "k8s.cni.cncf.io/network-attachment-definitions")["spec"]
    for kind in ("rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings"):
        assert tenant_b(changed["objects"], kind) == tenant_b(kept["objects"], kind), kind
    assert "Kubernetes objects after the roll-back: Namespace team-b unchanged, NetworkAttachmentDefinition team-b/team-b-rdma put back," in report_c["md"]
