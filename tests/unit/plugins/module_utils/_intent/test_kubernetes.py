# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``kubernetes`` section of the intent (plugins/module_utils/_intent/):
defaults derived from the hosts, and one error per mistake naming key and value."""

from __future__ import annotations

import copy
import os
import re

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _kubernetes as _intent_kubernetes
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _tables

K8S = "lossless_fabric.kubernetes"
DP = K8S + ".device_plugin"
RES0 = DP + ".resources[0]"
NET = K8S + ".multi_nic_cni.network"


def fabric(k8s=None, transport="roce"):
    intent = {"name": "lab", "transport": transport, "kubernetes": {} if k8s is None else k8s}
    if transport == "infiniband":
        intent["infiniband"] = {"sm": {"routing_engine": "minhop"}}
        nics = [{"name": "mlx5_0", "speed": "400G"}]
    else:
        nics = [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_1", "netdev": "eth3", "speed": "400G"}]
    devices = {"gpu1": {"kind": "host", "nics": nics}, "gpu2": {"kind": "host", "nics": copy.deepcopy(nics)}}
    return intent, devices


def k8s_plan(k8s=None, transport="roce"):
    return _plan.build_plan(*fabric(k8s, transport))["intent"]["kubernetes"]


def res(**extra):
    entry = {"name": "rdma_shared_device_a", "selectors": {"if_names": ["eth2"]}}
    entry.update(extra)
    return {"device_plugin": {"resources": [entry]}}


# --- defaults ---------------------------------------------------------------------------------------


def test_no_section_no_kubernetes_plan():
    intent, devices = fabric()
    del intent["kubernetes"]
    assert "kubernetes" not in _plan.build_plan(intent, devices)["intent"]


def test_defaults_derive_the_resource_from_the_hosts_netdevs():
    plan = k8s_plan()
    assert plan["namespace"] == "lossless-fabric"
    assert plan["cni"] == "multi_nic_cni"
    assert plan["node_selector"] == {"feature.node.kubernetes.io/pci-15b3.present": "true"}
    assert plan["device_plugin"]["image"] == "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3"
    assert plan["device_plugin"]["resources"] == [
        {
            "name": "rdma_shared_device_a",
            "prefix": "rdma",
            "rdma_hca_max": 63,
            "selectors": {"vendors": [], "device_ids": [], "drivers": [], "if_names": ["eth2", "eth3"], "link_types": []},
        }
    ]
    mnc = plan["multi_nic_cni"]
    assert mnc["controller_image"] == "ghcr.io/foundation-model-stack/multi-nic-cni-controller:v1.3.1"
    # macvlan child MTU = the host MTU of the intent (roce.mtu.host default 9000)
    assert mnc["network"] == {
        "name": "multinic-rdma", "plugin": "macvlan", "ipam": "multi-nic-ipam", "subnet": "172.30.0.0/16",
        "master_nets": [], "attach_policy": {"strategy": "none", "target": None}, "namespaces": [], "mtu": 9000,
    }


def test_mtu_follows_the_intent_host_mtu():
    intent, devices = fabric()
    intent["roce"] = {"mtu": {"switch": 9214, "host": 4200}}
    assert _plan.build_plan(intent, devices)["intent"]["kubernetes"]["multi_nic_cni"]["network"]["mtu"] == 4200


def test_infiniband_without_netdevs_selects_mellanox_infiniband_ports():
    plan = k8s_plan({"cni": "network_operator"}, transport="infiniband")
    assert plan["device_plugin"]["resources"][0]["selectors"]["vendors"] == ["15b3"]
    assert plan["device_plugin"]["resources"][0]["selectors"]["link_types"] == ["infiniband"]


def test_network_operator_defaults_use_the_operator_build_of_the_plugin():
    plan = k8s_plan({"cni": "network_operator"})
    assert plan["network_operator"] == {
        "namespace": "nvidia-network-operator", "chart_version": "26.4.1",
        "version": "network-operator-v26.4.1", "repository": "nvcr.io/nvidia/mellanox",
    }
    assert plan["device_plugin"]["image"] == "nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:network-operator-v26.4.1"
    assert "multi_nic_cni" not in plan


def test_mellanox_host_device_ipam_for_gpudirect():
    errors, warnings = _plan.validate(*fabric({"multi_nic_cni": {"network": {"plugin": "mellanox"}}}))
    assert errors == []
    assert len(warnings) == 1 and "NicClusterPolicy sriovDevicePlugin" in warnings[0]
    net = k8s_plan({"multi_nic_cni": {"network": {"plugin": "mellanox"}}})["multi_nic_cni"]["network"]
    assert (net["ipam"], net["subnet"], net["mtu"]) == ("host-device-ipam", "", None)


@pytest.mark.parametrize("k8s", [{}, {"cni": "network_operator"}, res(), {"multi_nic_cni": {"network": {"plugin": "mellanox"}}}])
def test_normalized_section_is_itself_valid(k8s):
    intent, devices = fabric(k8s)
    first = _plan.build_plan(intent, devices)
    assert _plan.build_plan(first["intent"], devices) == first


def test_multi_nic_version_gets_its_v():
    mnc = k8s_plan({"multi_nic_cni": {"version": "1.3.1"}})["multi_nic_cni"]
    assert (mnc["version"], mnc["controller_image"]) == ("v1.3.1", "ghcr.io/foundation-model-stack/multi-nic-cni-controller:v1.3.1")


def test_digest_pins_too():
    image = "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin@sha256:" + "a" * 64
    assert k8s_plan({"device_plugin": {"image": image}})["device_plugin"]["image"] == image


def test_if_names_matching_no_host_netdev_warn():
    errors, warnings = _plan.validate(*fabric(res(selectors={"if_names": ["ens9"]})))
    assert errors == []
    assert warnings == [f"{RES0}.selectors.if_names: ['ens9'] match no NIC netdev of the inventory hosts (eth2, eth3)"]


# --- one mistake, one error naming key and value ---------------------------------------------------

RESOURCE_RULE = (
    "is not a resource name (the plugin takes only A-Z a-z 0-9 _, and Kubernetes wants at most 63 characters "
    "starting and ending with a letter or digit: rdma_shared_device_a, not rdma-shared-device-a)"
)

ERROR_CASES = [
    ("unknown-key", {"namespce": "x"}, f"{K8S}.namespce: unknown key (did you mean 'namespace'?)"),
    ("unknown-cni", {"cni": "multinic"}, f"{K8S}.cni: 'multinic' is not a CNI choice (did you mean 'multi_nic_cni'?)"),
    ("unknown-cni-far", {"cni": "calico"}, f"{K8S}.cni: 'calico' is not a CNI choice (one of multi_nic_cni, network_operator)"),
    ("other-cni-section", {"cni": "network_operator", "multi_nic_cni": {}},
     f"{K8S}.multi_nic_cni: present but cni is 'network_operator' (remove the section)"),
    ("namespace-not-label", {"namespace": "Lossless_Fabric"},
     f"{K8S}.namespace: 'Lossless_Fabric' is not a namespace name (a DNS label: at most 63 of a-z 0-9 -)"),
    ("namespace-newline", {"namespace": "a\nb"}, f"{K8S}.namespace: 'a\\nb' contains a newline"),
    ("selector-bool", {"node_selector": {"gpu": True}},
     f"{K8S}.node_selector[gpu]: True is not a label value (a string of at most 63 of A-Z a-z 0-9 - _ .) (quote it: YAML reads true as a boolean)"),
    ("selector-empty", {"node_selector": {}}, f"{K8S}.node_selector: {{}} is not a non-empty mapping of node label to value"),
    ("resource-hyphen", res(name="rdma-shared-device-a"), f"{RES0}.name: 'rdma-shared-device-a' {RESOURCE_RULE}"),
    ("resource-trailing-underscore", res(name="rdma_"), f"{RES0}.name: 'rdma_' {RESOURCE_RULE}"),
    ("resource-too-long", res(name="a" * 64), f"{RES0}.name: {'a' * 64!r} {RESOURCE_RULE}"),
    ("resource-semicolon", res(name="a;reboot"), f"{RES0}.name: 'a;reboot' contains ';', which could start a second command or a comment"),
    ("resource-missing-name", {"device_plugin": {"resources": [{"selectors": {"vendors": ["15b3"]}}]}}, f"{RES0}.name: required"),
    ("no-selector", res(selectors=None),
     f"{RES0}.selectors: required (a resource needs at least one selector: vendors, device_ids, drivers, if_names, link_types)"),
    ("empty-selector", res(selectors={"vendors": [], "if_names": []}),
     f"{RES0}.selectors: {{'vendors': [], 'if_names': []}} selects nothing (a resource needs at least one selector: "
     "vendors, device_ids, drivers, if_names, link_types)"),
    ("device-id-number", res(selectors={"device_ids": [1021]}), f"{RES0}.selectors.device_ids[0]: 1021 is not a PCI ID (quote it: '1021')"),
    ("vendor-upper", res(selectors={"vendors": ["15B3"]}),
     f"{RES0}.selectors.vendors[0]: '15B3' is not a PCI ID (4 lower-case hex digits, like '15b3' or '1021')"),
    ("link-type", res(selectors={"link_types": ["ethernet"]}), f"{RES0}.selectors.link_types[0]: 'ethernet' is not a link type (did you mean 'ether'?)"),
    ("camel-case-key", res(rdmaHcaMax=10), f"{RES0}.rdmaHcaMax: unknown key (the intent spells the plugin's 'rdmaHcaMax' as 'rdma_hca_max')"),
    ("hca-max-zero", res(rdma_hca_max=0), f"{RES0}.rdma_hca_max: 0 is not a pod count per node (1-10000)"),
    ("prefix-reserved", res(prefix="example.kubernetes.io"), f"{RES0}.prefix: 'example.kubernetes.io' is reserved for Kubernetes' own resources"),
    ("duplicate-resource", {"device_plugin": {"resources": [res()["device_plugin"]["resources"][0]] * 2}},
     f"{DP}.resources[1].name: 'rdma_shared_device_a' duplicates resources[0].name"),
    ("image-latest", {"device_plugin": {"image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:latest"}},
     f"{DP}.image: 'ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:latest' is not pinned (give a tag other than 'latest', or a digest @sha256:...)"),
    ("image-untagged", {"device_plugin": {"image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin"}},
     f"{DP}.image: 'ghcr.io/mellanox/k8s-rdma-shared-dev-plugin' is not pinned (give a tag other than 'latest', or a digest @sha256:...)"),
    ("image-digest-for-ncp", {"cni": "network_operator", "device_plugin": {"image": "nvcr.io/x/y@sha256:" + "b" * 64}},
     f"{DP}.image: {'nvcr.io/x/y@sha256:' + 'b' * 64!r}: the NicClusterPolicy image spec needs a tag (repository/image:version), not a digest"),
    ("mnc-version", {"multi_nic_cni": {"version": "latest"}}, f"{K8S}.multi_nic_cni.version: 'latest' is not a release version (like v1.3.1)"),
    ("ipam-plugin-mismatch", {"multi_nic_cni": {"network": {"plugin": "macvlan", "ipam": "host-device-ipam"}}},
     f"{NET}.ipam: 'host-device-ipam' does not go with plugin 'macvlan' (host-device-ipam is the IPAM of plugin mellanox, and only of it)"),
    ("unknown-plugin", {"multi_nic_cni": {"network": {"plugin": "sriov"}}},
     f"{NET}.plugin: 'sriov' is not a Multi-NIC CNI plugin (one of macvlan, ipvlan, mellanox)"),
    ("subnet-host-bits", {"multi_nic_cni": {"network": {"subnet": "172.30.0.1/16"}}},
     f"{NET}.subnet: '172.30.0.1/16' is not an IPv4 network in CIDR form (like 172.30.0.0/16, host bits zero)"),
    ("subnet-with-host-device", {"multi_nic_cni": {"network": {"plugin": "mellanox", "subnet": "10.0.0.0/8"}}},
     f"{NET}.subnet: '10.0.0.0/8' is not used by host-device-ipam (it takes the host device's own address): remove it"),
    ("attach-target", {"multi_nic_cni": {"network": {"attach_policy": {"strategy": "costOpt"}}}},
     f"{NET}.attach_policy.target: required for strategy 'costOpt' (a bandwidth like 200Gbps)"),
    ("attach-strategy", {"multi_nic_cni": {"network": {"attach_policy": {"strategy": "perfopt"}}}},
     f"{NET}.attach_policy.strategy: 'perfopt' is not an attach strategy (did you mean 'perfOpt'?)"),
    ("mtu-above-host", {"multi_nic_cni": {"network": {"mtu": 9216}}},
     f"{NET}.mtu: 9216 is above lossless_fabric.roce.mtu.host 9000 (a child interface cannot exceed its parent)"),
    ("master-nets", {"multi_nic_cni": {"network": {"master_nets": ["10.0.0.0/33"]}}},
     f"{NET}.master_nets[0]: '10.0.0.0/33' is not an IPv4 network in CIDR form (like 172.30.0.0/16, host bits zero)"),
    ("network-namespaces", {"multi_nic_cni": {"network": {"namespaces": ["Bench"]}}},
     f"{NET}.namespaces[0]: 'Bench' is not a namespace name (a DNS label: at most 63 of a-z 0-9 -)"),
    ("chart-version", {"cni": "network_operator", "network_operator": {"chart_version": "26.4"}},
     f"{K8S}.network_operator.chart_version: '26.4' is not a chart version (like 26.4.1)"),
]


@pytest.mark.parametrize("k8s, expected", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_one_error(k8s, expected):
    errors, _warnings = _plan.validate(*fabric(k8s))
    assert errors == [expected]
    with pytest.raises(_tables.IntentError):
        _plan.build_plan(*fabric(k8s))


def test_multi_nic_cni_refused_on_infiniband():
    errors, _warnings = _plan.validate(*fabric({"cni": "multi_nic_cni"}, transport="infiniband"))
    assert errors == [
        f"{K8S}.cni: 'multi_nic_cni' attaches Ethernet interfaces (macvlan, ipvlan, host-device); "
        "transport 'infiniband' needs IPoIB: use 'network_operator'"
    ]


def test_every_kubernetes_error_at_once():
    k8s = {"cni": "flannel", "namespace": "A", "device_plugin": {"resources": [{"name": "a-b", "selectors": {}}]}}
    errors, _warnings = _plan.validate(*fabric(k8s))
    assert [e.split(":")[0] for e in errors] == [f"{K8S}.cni", f"{K8S}.namespace", f"{RES0}.name", f"{RES0}.selectors"]


# --- docs/intent.md -----------------------------------------------------------------------------------


def _doc_section():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
    with open(os.path.join(root, "docs", "intent.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("### `kubernetes`", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"^\| `([a-z_.\[\]]+)` \|", section, flags=re.M)
    example = re.search(r"```yml\n(.*?)```", section, flags=re.S).group(1)
    return keys, example


def test_docs_table_names_every_key_and_only_real_ones():
    keys, _example = _doc_section()
    documented = {k.replace("[]", "") for k in keys}
    expected = set(_intent_kubernetes._K8S_KEYS) - {"device_plugin", "multi_nic_cni", "network_operator"}
    expected |= {f"device_plugin.{k}" for k in _intent_kubernetes._K8S_DP_KEYS}
    expected |= {f"device_plugin.resources.{k}" for k in _intent_kubernetes._K8S_RESOURCE_KEYS}
    expected |= {f"multi_nic_cni.{k}" for k in _intent_kubernetes._K8S_MNC_KEYS if k != "network"}
    expected |= {f"multi_nic_cni.network.{k}" for k in _intent_kubernetes._K8S_NET_KEYS if k != "attach_policy"}
    expected |= {f"multi_nic_cni.network.attach_policy.{k}" for k in _intent_kubernetes._K8S_ATTACH_KEYS}
    expected |= {f"network_operator.{k}" for k in _intent_kubernetes._K8S_NETOP_KEYS}
    assert documented == expected


def test_docs_example_validates():
    _keys, example = _doc_section()
    intent = yaml.safe_load(example)["lossless_fabric"]
    nics = [{"name": "mlx5_0", "netdev": "ens1f0np0", "speed": "400G"}, {"name": "mlx5_1", "netdev": "ens2f0np0", "speed": "400G"}]
    devices = {"gpu1": {"kind": "host", "nics": nics}}
    assert _plan.validate(intent, devices) == ([], [])
