# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/tenant.yml against the lab's Kubernetes API emulator with two tenants, each with its own token (RBAC
limited to its namespace): both onboarded (namespace, NAD with the tenant's VLAN, Role and RoleBinding), each tenant's
benchmark run with the tenant's own credentials and compared with the host baseline of the same hosts (team-a replays
the baseline's log: at bare-metal speed; team-b a slower real log: slower by N %), and tenant A's credentials refused
in tenant B's namespace with the API server's 403 text (no change window: tenant_change_window=false). Then the
window path on the InfiniBand lab (ibsim + OpenSM): a change of OpenSM's files pending under the rollback timer,
judged by the tenant's checks as the window's post-checks - the tenant is slower, so the window rolls back, the
report says why, and the new tenant's Kubernetes objects are removed again."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

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
USERS = [{"token": "token-team-a", "user": "alice", "groups": ["lossless.fabric:tenant:team-a"]},
         {"token": "token-team-b", "user": "bob", "groups": ["lossless.fabric:tenant:team-b"]}]

pytestmark = pytest.mark.skipif(not (ROOT / ".deps" / "collections" / "ansible_collections" / "kubernetes" / "core").exists(),
                                reason="needs kubernetes.core in .deps")


def test_two_tenants_onboarded_benchmarked_against_the_host_baseline_and_isolated(tmp_path):
    config = {"time_scale": 0.01, "nodes": NODES, "users": USERS, "replay": BASELINE,
              "replays": [{"selector": {"lossless.fabric/tenant": "team-b"}, "path": SLOWER}]}
    with K8sSim(config, str(tmp_path / "sim")) as sim:
        kubeconfigs = sim.info["user_kubeconfigs"]
        tenants = {name: {"hosts": ["gpu1", "gpu2"], "namespace": name, "kubeconfig": kubeconfigs[user], "vlan": vlan,
                          "partition": None, "qos_level": None}
                   for name, user, vlan in (("team-a", "alice", 101), ("team-b", "bob", 102))}
        extra = {"lab_kubeconfig": sim.kubeconfig, "tenant_tenants": tenants, "tenant_change_window": False,
                 "lossless_fabric_report_dir": str(tmp_path / "reports"), "tenant_repeats": 4, "tenant_poll_interval": 0.1,
                 "tenant_baseline_launcher": "kubernetes", "tenant_timeout": 60,
                 "tenant_kubernetes": {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "rdma_resource_count": 0},
                 "k8s_rdma_tenant_ipam": {t: {"type": "whereabouts", "range": "10.%d.0.0/24" % v} for t, v in (("team-a", 101), ("team-b", 102))}}
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
    assert report["reasons"] == ["benchmark: " + report["benchmarks"]["team-b"]["text"]]
    assert report["isolation"] == []
    cross = dict(report["cross_namespace"])
    assert set(cross) == {"team-a -> team-b", "team-b -> team-a"}
    assert 'pods is forbidden: User \\"alice\\" cannot list resource \\"pods\\" in API group \\"\\" in the namespace \\"team-b\\"' in cross[
        "team-a -> team-b"] or 'User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"' in cross["team-a -> team-b"], cross
    # onboarded: each tenant's NAD carries its own VLAN; the tenants' MPIJobs ran in their own namespaces, then were deleted
    nads = {o["metadata"]["namespace"]: json.loads(o["spec"]["config"]) for o in objects["k8s.cni.cncf.io/network-attachment-definitions"]}
    assert {ns: (c["type"], c["vlan"]) for ns, c in nads.items()} == {"team-a": ("sriov", 101), "team-b": ("sriov", 102)}
    bindings = {o["metadata"]["namespace"]: o["subjects"][0]["name"] for o in objects["rbac.authorization.k8s.io/rolebindings"]}
    assert bindings == {"team-a": "lossless.fabric:tenant:team-a", "team-b": "lossless.fabric:tenant:team-b"}
    assert (tmp_path / "reports" / "tenant-report.md").read_text().startswith("# Tenants: failed")


@pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None, reason="needs ibsim-utils and opensm")
def test_a_slower_tenant_rolls_the_partition_window_back_and_its_objects_are_removed(tmp_path):
    lab = IbWindow(tmp_path).up()
    try:
        config = {"time_scale": 0.01, "nodes": NODES, "users": USERS, "replays": [{"selector": {"lossless.fabric/tenant": "team-b"}, "path": SLOWER}]}
        with K8sSim(config, str(tmp_path / "sim")) as sim:
            tenants = {"team-b": {"hosts": ["gpu1", "gpu2"], "namespace": "team-b", "kubeconfig": sim.info["user_kubeconfigs"]["bob"], "vlan": None,
                                  "partition": {"name": "team-b", "pkey": "0x8013", "membership": "full", "ipoib": True}, "qos_level": None}}
            extra = {"lossless_fabric_kubeconfig": sim.kubeconfig, "tenant_tenants": tenants, "tenant_repeats": 4, "tenant_poll_interval": 0.1,
                     "tenant_timeout": 60, "tenant_kubernetes": {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "rdma_resource_count": 0},
                     "change_window_benchmark": False, "change_window_confirm_margin_seconds": 0,
                     "lossless_fabric_report_dir": lab.report_dir, "fabric_plan_lock_dir": str(tmp_path / "locks")}
            (tmp_path / "extra.json").write_text(json.dumps(extra))
            before = lab.files()
            out = run(lab.argv("tenant.yml", "-e", lab.change(vlarb_weight=32), "-e", "@%s" % (tmp_path / "extra.json")), timeout=900)
            nads = sim.objects().get("k8s.cni.cncf.io/network-attachment-definitions", [])
            after = lab.files()
    finally:
        lab.launcher("down")
    assert out.returncode == 2, out.stdout[-6000:]
    report = json.loads((pathlib.Path(lab.report_dir) / "tenant-report.json").read_text())
    assert report["verdict"] == "rolled back" and report["window"]["verdict"] == "rolled back", report
    assert report["benchmarks"]["team-b"]["text"].startswith("tenant team-b slower by 91.7 % than the host baseline (at 1 GiB: 15.12 vs 181.62 GB/s")
    window = lab.report()
    assert "post checks: benchmark: tenant team-b slower by 91.7 %" in "\n".join(window["reasons"]), window["reasons"]
    assert after == before  # OpenSM's files are back
    assert nads == []  # the new tenant's network went with its partition
