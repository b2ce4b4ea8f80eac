# SPDX-License-Identifier: GPL-3.0-or-later
"""Every manifest role k8s_rdma can render (state rendered, no cluster), for each CNI choice and
network kind: built-in kinds validate with kubernetes-validate for k8s_rdma_kubernetes_version,
custom resources against the CRDs the role ships (MultiNicNetwork) or k8sim's copy of the
upstream schema (NicClusterPolicy), and only the device plugin asks for privileged."""
from __future__ import annotations

import copy
import json
import pathlib
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
ROLE = ROOT / "roles" / "k8s_rdma"
PLAYBOOK = ROOT / ".venv" / "bin" / "ansible-playbook"
sys.path.insert(0, str(ROOT / "tests" / "lab"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from k8sim import crds as k8sim_crds  # noqa: E402
from labrun import run  # noqa: E402

kubernetes_validate = pytest.importorskip("kubernetes_validate")
pytestmark = pytest.mark.skipif(not PLAYBOOK.exists(), reason="needs the venv's ansible-playbook")

LAB_INTENT = yaml.safe_load((ROOT / "inventories" / "lab" / "group_vars" / "all" / "lossless_fabric.yml").read_text())["lossless_fabric"]


CUSTOM_GROUPS = {"multinic.fms.io", "mellanox.com"}


def variant(**k8s):
    intent = copy.deepcopy(LAB_INTENT)
    intent["kubernetes"] = k8s
    return intent


VARIANTS = {
    "lab": LAB_INTENT,
    "defaults": variant(),
    "ipvlan-whereabouts": variant(multi_nic_cni={"network": {
        "plugin": "ipvlan", "ipam": "whereabouts", "subnet": "10.20.0.0/16", "master_nets": ["192.168.1.0/24"],
        "attach_policy": {"strategy": "costOpt", "target": "200Gbps"}, "namespaces": ["bench"]}}),
    "mellanox-host-device": variant(multi_nic_cni={"network": {"plugin": "mellanox"}}),
    "network-operator": variant(cni="network_operator", device_plugin={"resources": [
        {"name": "rdma_a", "rdma_hca_max": 10, "selectors": {"device_ids": ["1021"], "drivers": ["mlx5_core"]}},
        {"name": "rdma_b", "prefix": "example.com", "selectors": {"link_types": ["ether"], "if_names": ["eth3"]}}]}),
}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """One ansible-playbook run per variant; returns {variant: {file: [objects]}}.

    The variant's intent is an extra var, so every host in scope sees the same one (fabric_plan refuses a run
    whose hosts see different intents, and a play var would reach localhost only)."""
    where = tmp_path_factory.mktemp("render")
    play = where / "render.yml"
    play.write_text(yaml.safe_dump([{"name": "render", "hosts": "localhost", "connection": "local", "gather_facts": False,
                                     "roles": ["lossless.fabric.fabric_plan", "lossless.fabric.k8s_rdma"]}]))
    for name, intent in VARIANTS.items():
        extra = where / (name + ".json")
        extra.write_text(json.dumps({"lossless_fabric": intent, "k8s_rdma_state": "rendered", "k8s_rdma_render_dir": str(where / name),
                                     "fabric_plan_show_summary": False, "lossless_fabric_report_dir": "",
                                     "fabric_plan_lock_dir": str(where / "locks")}))
        out = run([str(PLAYBOOK), "-i", str(ROOT / "inventories" / "lab"), "-e", "@" + str(extra), str(play)], timeout=300)
        assert out.returncode == 0, name + ": " + out.stdout[-4000:] + out.stderr[-2000:]
    result = {}
    for name in VARIANTS:
        result[name] = {f.stem: [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
                        for f in sorted((where / name).glob("*.yml"))}
    return result


def k8s_version() -> str:
    return str(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["k8s_rdma_kubernetes_version"])


def objects(rendered, name):
    return [obj for file, objs in rendered[name].items() if file != "network_operator_values" for obj in objs]


def test_the_configured_version_is_k8sim_s():
    # k8sim serves 1.30.0 unless its config says otherwise: the lab validates what the test validates
    assert k8s_version() == ".".join(__import__("k8sim.store", fromlist=["Store"]).Store().kube_version.split(".")[:2])


def test_every_variant_renders_its_components(rendered):
    assert sorted(rendered["lab"]) == ["device_plugin", "multi_nic_cni", "multi_nic_cni_crds", "multinicnetwork", "namespaces"]
    assert sorted(rendered["network-operator"]) == ["namespaces", "network_operator_values", "nicclusterpolicy"]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_builtin_kinds_pass_kubernetes_validate(rendered, name):
    checked = 0
    for obj in objects(rendered, name):
        if obj["apiVersion"].split("/")[0] in CUSTOM_GROUPS:
            continue  # a custom resource: see the next test
        kubernetes_validate.validate(obj, k8s_version(), strict=True)
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("name", list(VARIANTS))
def test_custom_resources_match_their_crds(rendered, name):
    for obj in objects(rendered, name):
        group = obj["apiVersion"].split("/")[0]
        if obj["kind"] == "MultiNicNetwork":
            crd = next(c for c in json.loads((ROLE / "files" / "multi-nic-cni" / "crds-release-v1.3.1.json").read_text())
                       if c["spec"]["names"]["kind"] == "MultiNicNetwork")
            _validate_openapi(obj["spec"], crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"], "spec")
            assert json.loads(obj["spec"]["ipam"])["type"] in ("multi-nic-ipam", "whereabouts", "host-device-ipam")
        elif obj["kind"] == "NicClusterPolicy":
            probe = copy.deepcopy(obj)
            assert k8sim_crds.validate(probe, k8sim_crds.NCP_SCHEMA) == []
            config = json.loads(obj["spec"]["rdmaSharedDevicePlugin"]["config"])
            assert [c["resourceName"] for c in config["configList"]] == ["rdma_a", "rdma_b"]
        else:
            assert group not in CUSTOM_GROUPS, obj["kind"]


def _validate_openapi(value, schema, path):
    """The part of OpenAPI v3 the CRD uses: type, required, properties, additionalProperties, items."""
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int}
    assert isinstance(value, types[schema["type"]]), "%s: %r is not %s" % (path, value, schema["type"])
    for key in schema.get("required", []):
        assert key in value, "%s.%s: required" % (path, key)
    if schema["type"] == "object":
        for key, sub in value.items():
            child = schema.get("properties", {}).get(key) or schema.get("additionalProperties")
            assert child is not None, "%s.%s: not in the CRD schema (the apiserver would prune it)" % (path, key)
            _validate_openapi(sub, child, "%s.%s" % (path, key))
    if schema["type"] == "array":
        for i, item in enumerate(value):
            _validate_openapi(item, schema["items"], "%s[%d]" % (path, i))


def test_device_plugin_config_is_what_the_plugin_reads(rendered):
    cm = next(o for o in rendered["lab"]["device_plugin"] if o["kind"] == "ConfigMap")
    config = json.loads(cm["data"]["config.json"])
    assert config == {"periodicUpdateInterval": 60, "configList": [{
        "resourceName": "rdma_shared_device_a", "resourcePrefix": "rdma", "rdmaHcaMax": 63,
        "selectors": {"vendors": ["15b3"], "ifNames": ["eth2", "eth3"]}}]}
    # derived: every host NIC's netdev when the intent names no resource
    cm = next(o for o in rendered["defaults"]["device_plugin"] if o["kind"] == "ConfigMap")
    assert json.loads(cm["data"]["config.json"])["configList"][0]["selectors"] == {"ifNames": ["eth2", "eth3"]}


def test_multinicnetwork_from_the_intent(rendered):
    (net,) = rendered["lab"]["multinicnetwork"]
    assert net["spec"]["plugin"] == {"cniVersion": "0.3.1", "type": "macvlan", "args": {"mode": "bridge", "mtu": "9000"}}
    assert json.loads(net["spec"]["ipam"]) == {"type": "multi-nic-ipam", "hostBlock": 8, "interfaceBlock": 2, "vlanMode": "l2"}
    assert net["spec"]["multiNICIPAM"] is True and net["spec"]["subnet"] == "172.30.0.0/16"
    (net,) = rendered["mellanox-host-device"]["multinicnetwork"]
    assert (net["spec"]["subnet"], json.loads(net["spec"]["ipam"]), net["spec"]["multiNICIPAM"]) == ("", {"type": "host-device-ipam"}, False)
    assert "args" not in net["spec"]["plugin"]
    (net,) = rendered["ipvlan-whereabouts"]["multinicnetwork"]
    assert json.loads(net["spec"]["ipam"]) == {"type": "whereabouts", "range": "10.20.0.0/16"}
    assert net["spec"]["attachPolicy"] == {"strategy": "costOpt", "target": "200Gbps"}
    assert net["spec"]["masterNets"] == ["192.168.1.0/24"] and net["spec"]["namespaces"] == ["bench"]


def test_images_are_pinned(rendered):
    for name in VARIANTS:
        for obj in objects(rendered, name):
            for container in _containers(obj):
                image = container["image"]
                assert ("@sha256:" in image or ":" in image.rsplit("/", 1)[-1]) and not image.endswith(":latest"), image
    ncp = rendered["network-operator"]["nicclusterpolicy"][0]["spec"]
    assert {ncp[k]["version"] for k in ("rdmaSharedDevicePlugin", "nvIpam")} == {"network-operator-v26.4.1"}


def _containers(obj):
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return (spec.get("containers") or []) + (spec.get("initContainers") or [])


def test_only_the_device_plugin_is_privileged_and_everything_is_labelled(rendered):
    privileged = set()
    for name in VARIANTS:
        for obj in objects(rendered, name):
            labels = obj["metadata"].get("labels") or {}
            assert labels.get("app.kubernetes.io/managed-by") == "lossless.fabric", obj["metadata"]["name"]
            assert labels.get("lossless.fabric/role") == "k8s_rdma", obj["metadata"]["name"]
            for container in _containers(obj):
                if (container.get("securityContext") or {}).get("privileged"):
                    privileged.add((obj["kind"], obj["metadata"]["name"]))
                # nothing else asks for more than it needs either
                assert "capabilities" not in (container.get("securityContext") or {}), obj["metadata"]["name"]
    assert privileged == {("DaemonSet", "rdma-shared-dp-ds")}
