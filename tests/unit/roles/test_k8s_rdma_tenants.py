# SPDX-License-Identifier: GPL-3.0-or-later
"""Role k8s_rdma renders the tenants' objects (component ``tenants``, state rendered, no cluster) from a plan with
``tenants`` (interfaces point 5; given as k8s_rdma_tenants, the plan's by default, until the intent's tenants are merged), and the
built-in kinds among them pass kubernetes-validate at the role's Kubernetes version."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
PLAYBOOK = ROOT / ".venv" / "bin" / "ansible-playbook"
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from labrun import run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

kubernetes_validate = pytest.importorskip("kubernetes_validate")
pytestmark = pytest.mark.skipif(not PLAYBOOK.exists(), reason="needs the venv's ansible-playbook")

TENANTS = {name: {"hosts": ["gpu1", "gpu2"], "namespace": name, "kubeconfig": None, "vlan": vlan, "partition": None, "qos_level": None}
           for name, vlan in (("team-a", 101), ("team-b", 102))}


def test_the_role_renders_each_tenants_namespace_network_and_rbac(tmp_path):
    play = [{"name": "render", "hosts": "localhost", "connection": "local", "gather_facts": False,
             "roles": ["lossless.fabric.fabric_plan", "lossless.fabric.k8s_rdma"]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    extra = {"k8s_rdma_tenants": TENANTS, "k8s_rdma_state": "rendered", "k8s_rdma_render_dir": str(tmp_path / "out"),
             "fabric_plan_show_summary": False, "lossless_fabric_report_dir": "", "fabric_plan_lock_dir": str(tmp_path / "locks"),
             "k8s_rdma_tenant_ipam": {t: {"type": "whereabouts", "range": "10.%d.0.0/24" % v} for t, v in (("team-a", 101), ("team-b", 102))}}
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    out = run([str(PLAYBOOK), "-i", str(ROOT / "inventories" / "lab"), "-e", "@" + str(tmp_path / "extra.json"), str(tmp_path / "play.yml")], timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    files = {f.stem: [d for d in yaml.safe_load_all(f.read_text()) if d] for f in (tmp_path / "out").glob("*.yml")}
    assert {"team-a", "team-b"} <= {ns["metadata"]["name"] for ns in files["namespaces"]}
    kinds = sorted((o["kind"], o["metadata"]["namespace"]) for o in files["tenants"])
    assert kinds == [(k, ns) for k in ("NetworkAttachmentDefinition", "Role", "RoleBinding") for ns in ("team-a", "team-b")]
    nad = next(o for o in files["tenants"] if o["kind"] == "NetworkAttachmentDefinition" and o["metadata"]["namespace"] == "team-b")
    assert json.loads(nad["spec"]["config"])["vlan"] == 102
    version = str(yaml.safe_load((ROOT / "roles" / "k8s_rdma" / "defaults" / "main.yml").read_text())["k8s_rdma_kubernetes_version"])
    for obj in files["namespaces"] + [o for o in files["tenants"] if o["kind"] != "NetworkAttachmentDefinition"]:
        kubernetes_validate.validate(obj, version, strict=True)  # raises on a field the API server would refuse


def test_state_rendered_tenants_with_vfs_get_policies_quotas_node_labels_and_the_sriov_operator(tmp_path):
    """The plan's host NICs with ``vfs`` (C1; set here on the plan until the device data carries it): the role renders the
    SR-IOV path - policies in the operator's namespace, quotas, node label patches - and turns on the SR-IOV operator in
    the Network Operator's Helm values with the tenant resources' prefix."""
    intent = yaml.safe_load((ROOT / "inventories" / "lab" / "group_vars" / "all" / "lossless_fabric.yml").read_text())["lossless_fabric"]
    intent["kubernetes"].pop("multi_nic_cni")
    intent["kubernetes"]["cni"] = "network_operator"
    tenants = {"team-a": dict(TENANTS["team-a"], hosts=["gpu1"]), "team-b": dict(TENANTS["team-b"], hosts=["gpu2"])}
    # fabric_plan in roles: k8s_rdma's dependency on it then does not run it again over the changed plan
    play = [{"name": "render", "hosts": "localhost", "connection": "local", "gather_facts": False, "roles": ["lossless.fabric.fabric_plan"], "tasks": [
        {"name": "the hosts' NICs get 4 VFs each (device data nics[].vfs)", "ansible.builtin.set_fact": {"fabric_plan_result": (
            "{% set ns = namespace(devices={}) %}{% for host, dev in fabric_plan_result.devices.items() %}"
            "{% set ns.devices = ns.devices | combine({host: dev | combine({'nics': dev.nics | default([]) | map('combine', {'vfs': 4}) | list})"
            " if dev.kind == 'host' else dev}) %}{% endfor %}{{ fabric_plan_result | combine({'devices': ns.devices}) }}")}},
        {"ansible.builtin.include_role": {"name": "lossless.fabric.k8s_rdma"}},
    ]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    extra = {"lossless_fabric": intent, "k8s_rdma_tenants": tenants, "k8s_rdma_state": "rendered", "k8s_rdma_render_dir": str(tmp_path / "out"),
             "fabric_plan_show_summary": False, "lossless_fabric_report_dir": "", "fabric_plan_lock_dir": str(tmp_path / "locks"),
             "k8s_rdma_sriov_priority": "10",  # as -e gives it: a string of digits
             "k8s_rdma_tenant_ipam": {t: {"type": "whereabouts", "range": "10.%d.0.0/24" % v} for t, v in (("team-a", 101), ("team-b", 102))}}
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    out = run([str(PLAYBOOK), "-i", str(ROOT / "inventories" / "lab"), "-e", "@" + str(tmp_path / "extra.json"), str(tmp_path / "play.yml")], timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    files = {f.stem: [d for d in yaml.safe_load_all(f.read_text()) if d] for f in (tmp_path / "out").glob("*.yml")}
    policies = [o for o in files["tenants"] if o["kind"] == "SriovNetworkNodePolicy"]
    assert [(p["metadata"]["name"], p["metadata"]["namespace"], p["spec"]["resourceName"], p["spec"]["numVfs"], p["spec"]["nicSelector"]["pfNames"],
             p["spec"]["linkType"], p["spec"]["priority"]) for p in policies] == [
        ("lossless-fabric-team-a", "nvidia-network-operator", "team_a", 4, ["eth2", "eth3"], "eth", 10),
        ("lossless-fabric-team-b", "nvidia-network-operator", "team_b", 4, ["eth2", "eth3"], "eth", 10)]
    quotas = {q["metadata"]["namespace"]: q["spec"]["hard"] for q in files["tenants"] if q["kind"] == "ResourceQuota"}
    assert quotas == {"team-a": {"requests.nvidia.com/team_b": "0", "requests.rdma/rdma_shared_device_a": "0"},
                      "team-b": {"requests.nvidia.com/team_a": "0", "requests.rdma/rdma_shared_device_a": "0"}}
    assert [(n["metadata"]["name"], n["metadata"]["labels"]) for n in files["tenant_nodes"]] == [
        ("gpu1", {"lossless.fabric/tenant": "team-a"}), ("gpu2", {"lossless.fabric/tenant": "team-b"})]
    (values,) = files["network_operator_values"]
    assert values["sriovNetworkOperator"] == {"enabled": True} and values["sriov-network-operator"] == {"operator": {"resourcePrefix": "nvidia.com"}}
    version = str(yaml.safe_load((ROOT / "roles" / "k8s_rdma" / "defaults" / "main.yml").read_text())["k8s_rdma_kubernetes_version"])
    for obj in [o for o in files["tenants"] if o["kind"] == "ResourceQuota"]:
        kubernetes_validate.validate(obj, version, strict=True)
