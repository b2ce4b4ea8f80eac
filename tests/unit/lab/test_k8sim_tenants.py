# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim with static tokens and RBAC (tests/lab/k8sim/auth.py): each tenant's token reaches its own namespace only,
with the apiserver's 401 and 403 Status texts, and the tenant manifests of _kubernetes/_tenants.py are accepted
by the emulated API server as a real one accepts them (and a NAD in a missing namespace is refused)."""
from __future__ import annotations

import json
import pathlib
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _tenants

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402
from k8sim.sim import Simulator  # noqa: E402
from nccl import replay  # noqa: E402

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

TENANTS = {"team-a": {"hosts": ["gpu1", "gpu2"], "namespace": "team-a", "kubeconfig": None, "vlan": None,
                      "partition": {"name": "team-a", "pkey": "0x8002", "membership": "full", "ipoib": True}, "qos_level": None},
           "team-b": {"hosts": ["gpu1", "gpu2"], "namespace": "team-b", "kubeconfig": None, "vlan": None,
                      "partition": {"name": "team-b", "pkey": "0x8003", "membership": "full", "ipoib": True}, "qos_level": None}}
USERS = [{"token": "token-team-a", "user": "alice", "groups": [_tenants.group_name("team-a")]},
         {"token": "token-team-b", "user": "bob", "groups": [_tenants.group_name("team-b")]}]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    with K8sSim({"time_scale": 0.01, "nodes": [{"name": "gpu1", "gpus": 8}], "users": USERS},
                str(tmp_path_factory.mktemp("k8sim"))) as s:
        yield s


@pytest.fixture(scope="module")
def onboarded(sim):
    """The tenants' objects, applied with the admin's credentials."""
    admin = k8s_config.new_client_from_config(config_file=sim.kubeconfig)
    rendered = _tenants.manifests(TENANTS, "infiniband")
    for ns in rendered["namespaces"]:
        k8s.CoreV1Api(admin).create_namespace(ns)
    for obj in rendered["tenants"]:
        group, _slash, version = obj["apiVersion"].rpartition("/")
        plural = {"NetworkAttachmentDefinition": "network-attachment-definitions", "Role": "roles", "RoleBinding": "rolebindings"}[obj["kind"]]
        k8s.CustomObjectsApi(admin).create_namespaced_custom_object(group, version, obj["metadata"]["namespace"], plural, obj)
    return admin


def tenant_api(sim, user):
    return k8s_config.new_client_from_config(config_file=sim.info["user_kubeconfigs"][user])


def forbidden(call):
    with pytest.raises(ApiException) as err:
        call()
    assert err.value.status == 403
    return json.loads(err.value.body)


def test_a_tenant_reaches_its_namespace_and_is_refused_the_other_with_the_apiservers_403(sim, onboarded):
    alice = tenant_api(sim, "alice")
    nads = k8s.CustomObjectsApi(alice).list_namespaced_custom_object("k8s.cni.cncf.io", "v1", "team-a", "network-attachment-definitions")
    assert [n["metadata"]["name"] for n in nads["items"]] == ["team-a-rdma"]
    assert json.loads(nads["items"][0]["spec"]["config"])["pkey"] == "0x0002"
    assert k8s.CoreV1Api(alice).list_namespaced_pod("team-a").items == []
    body = forbidden(lambda: k8s.CoreV1Api(alice).list_namespaced_pod("team-b"))
    assert body["message"] == 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"'
    assert body["reason"] == "Forbidden" and body["details"] == {"group": "", "kind": "pods"}
    body = forbidden(lambda: k8s.CustomObjectsApi(alice).get_namespaced_custom_object(
        "k8s.cni.cncf.io", "v1", "team-b", "network-attachment-definitions", "team-b-rdma"))
    assert body["message"] == ('network-attachment-definitions.k8s.cni.cncf.io "team-b-rdma" is forbidden: User "alice" cannot get '
                               'resource "network-attachment-definitions" in API group "k8s.cni.cncf.io" in the namespace "team-b"')


def test_a_tenant_cannot_write_its_network_nor_read_cluster_objects(sim, onboarded):
    alice = tenant_api(sim, "alice")
    nad = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": {"name": "steal"},
           "spec": {"config": json.dumps({"type": "ib-sriov", "pkey": "0x0003"})}}
    body = forbidden(lambda: k8s.CustomObjectsApi(alice).create_namespaced_custom_object(
        "k8s.cni.cncf.io", "v1", "team-a", "network-attachment-definitions", nad))
    assert 'cannot create resource "network-attachment-definitions"' in body["message"]
    body = forbidden(lambda: k8s.CoreV1Api(alice).read_namespace("team-a"))
    assert body["message"] == 'namespaces "team-a" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "team-a"'
    body = forbidden(lambda: k8s.CoreV1Api(alice).list_node())
    assert body["message"] == 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope'
    body = forbidden(lambda: k8s.CoreV1Api(alice).read_namespaced_pod_log("x", "team-b"))
    assert 'cannot get resource "pods/log" in API group "" in the namespace "team-b"' in body["message"]


def test_an_unknown_token_is_401_and_the_admin_still_reaches_everything(sim, onboarded):
    cfg = k8s.Configuration()
    cfg.host = sim.url
    cfg.api_key = {"authorization": "Bearer not-a-token"}
    with pytest.raises(ApiException) as err:
        k8s.CoreV1Api(k8s.ApiClient(cfg)).list_namespaced_pod("team-a")
    assert err.value.status == 401
    assert json.loads(err.value.body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                          "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    assert k8s.CoreV1Api(onboarded).list_namespaced_pod("team-b").items == []


def test_a_nad_in_a_namespace_that_does_not_exist_is_refused(sim, onboarded):
    nad = _tenants.manifests({"team-c": dict(TENANTS["team-a"], namespace="team-c")}, "infiniband")["tenants"][0]
    with pytest.raises(ApiException) as err:
        k8s.CustomObjectsApi(onboarded).create_namespaced_custom_object("k8s.cni.cncf.io", "v1", "team-c", "network-attachment-definitions", nad)
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == 'namespaces "team-c" not found'


def test_each_tenants_mpijobs_replay_the_tenants_log_from_the_lab_variables():
    passing, failing = replay.resolve("passing")[0], replay.resolve("failing")[0]
    config = replay.k8sim_config("passing", "passing", {"team-b": "failing", "team-a": ""})
    assert config["replays"] == [{"selector": {"lossless.fabric/tenant": "team-b"}, "path": [failing]},
                                 {"selector": {"lossless.fabric/phase": "post"}, "path": [passing]}]
    sim = Simulator(config)

    def job(name, labels):
        return {"metadata": {"namespace": "x", "name": name, "labels": labels}}

    assert sim.plan_for(job("b", {"lossless.fabric/tenant": "team-b"}))["replay_path"] == failing
    assert sim.plan_for(job("a", {"lossless.fabric/tenant": "team-a"}))["replay_path"] == passing
    with pytest.raises(replay.ReplayError, match="lab_nccl_replay_tenants.team-b"):
        replay.k8sim_config(None, None, {"team-b": "no-such-log"})
