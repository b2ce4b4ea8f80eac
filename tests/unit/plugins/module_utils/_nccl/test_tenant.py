# SPDX-License-Identifier: GPL-3.0-or-later
"""The tenant benchmark: nccl_benchmark's tenant option (_launch.with_tenant) and nccl_compare's verdict of the
tenant's launches against the host baseline (_stats.tenant_verdict)."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as L
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as S

GIB = 1 << 30


def launch(busbw, size=GIB):
    return {"rows": [{"size": size, "out_of_place": {"busbw": busbw}}], "transport": "IB", "gdr_active": True}


BASE = [launch(v) for v in (180.1, 181.0, 181.6, 180.8, 181.3)]


def test_tenant_at_bare_metal_speed():
    res = S.compare(BASE, [launch(v) for v in (180.9, 181.2, 180.5, 181.4, 181.1)])
    verdict = S.tenant_verdict(res, "team-a")
    assert verdict["verdict"] == "bare_metal" and verdict["slower_percent"] is None and verdict["size"] == GIB
    assert verdict["text"].startswith("tenant team-a at bare-metal speed (largest change ")


def test_tenant_slower_by_the_hodges_lehmann_drop():
    res = S.compare(BASE, [launch(v) for v in (120.2, 121.0, 120.6, 119.9, 120.4)])
    size = res["sizes"][0]
    assert size["verdict"] == "regressed"
    verdict = S.tenant_verdict(res, "team-b")
    assert verdict["verdict"] == "slower"
    assert verdict["slower_percent"] == round(-size["change_percent"], 1) == 33.5
    assert verdict["text"].startswith("tenant team-b slower by 33.5 % than the host baseline (at 1 GiB: 120.40 vs 181.00 GB/s, p=")


def test_tenant_inconclusive_with_too_few_launches_or_another_transport():
    verdict = S.tenant_verdict(S.compare(BASE[:1], [launch(120.0)]), "team-a")
    assert verdict["verdict"] == "inconclusive" and "smallest possible exact one-sided p-value" in verdict["text"]
    other = [dict(launch(v), transport="Socket") for v in (180.9, 181.2, 180.5, 181.4, 181.1)]
    verdict = S.tenant_verdict(S.compare(BASE, other), "team-a")
    assert verdict["verdict"] == "inconclusive" and "transport changed: pre IB, post Socket" in verdict["text"]


KUBE = {"namespace": "nccl-benchmark", "rdma_resource": "rdma/rdma_shared_device_a", "kubeconfig": "/admin.kubeconfig", "image": "nccl:1"}
PARAMS = {"launcher": "kubernetes", "labels": {}, "kubernetes": KUBE}
TENANT = {"name": "team-a", "namespace": "team-a", "kubeconfig": "/team-a.kubeconfig", "networks": "team-a-rdma",
          "rdma_resource": "mellanox.com/mlnx_sriov_rdma_ib"}


def test_with_tenant_runs_in_the_tenants_namespace_with_its_credentials_and_network():
    params, errors = L.with_tenant(dict(PARAMS, tenant=TENANT))
    assert errors == []
    assert params["kubernetes"] == {"namespace": "team-a", "rdma_resource": "mellanox.com/mlnx_sriov_rdma_ib", "kubeconfig": "/team-a.kubeconfig",
                                    "image": "nccl:1", "networks": "team-a-rdma"}
    assert params["labels"] == {"lossless.fabric/tenant": "team-a"}
    spec, errors = L.validate(dict(params, nodes=2))
    assert errors == []
    worker = L.mpijob_manifest(spec, "x")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert worker["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "team-a-rdma"}
    assert L.with_tenant(PARAMS) == (PARAMS, [])


@pytest.mark.parametrize("change, message", [
    ({"launcher": "mpirun"}, "launcher: 'mpirun' must be kubernetes with tenant"),
    ({"kubernetes": dict(PARAMS["kubernetes"], namespace="team-b")}, "kubernetes.namespace: 'team-b' contradicts tenant team-a's namespace"),
    ({"tenant": dict(TENANT, networks="team-b/team-b-rdma")}, "names network team-b/team-b-rdma of namespace team-b, not tenant team-a's"),
    ({"labels": {"lossless.fabric/tenant": "team-b"}}, "contradicts tenant team-a"),
    ({"tenant": dict(TENANT, namespace=None)}, "tenant: needs name and namespace"),
])
def test_with_tenant_refuses(change, message):
    _params, errors = L.with_tenant(dict(dict(PARAMS, tenant=TENANT), **change))
    assert any(message in e for e in errors), errors
