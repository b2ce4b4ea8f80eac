# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/kubernetes.yml (roles fabric_plan + k8s_rdma) against the lab's Kubernetes API emulator:
deploy, idempotence, check mode, a wait that times out naming the node, state absent that removes
only our objects, the Network Operator path (with the operator installed already, and installed and
uninstalled through kubernetes.core.helm and the lab's helm shim), and invalid intents that fail before any API call."""

from __future__ import annotations

import base64
import gzip
import json
import os
import pathlib
import subprocess
import sys
import urllib.request

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import ansible_env, assert_lab_down, copy_lab_inventory, launcher  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchlab import recap, results  # noqa: E402  # pylint: disable=import-error,wrong-import-position

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
from helmsim.plugin import write_bin  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from k8sim.client import K8sSim  # noqa: E402  # pylint: disable=import-error,wrong-import-position

BIN = pathlib.Path(sys.executable).parent
LAB = ROOT / "inventories" / "lab"
RES = "rdma/rdma_shared_device_a"
NODES = [{"name": n, "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}]} for n in ("gpu1", "gpu2")]
WAIT = ["-e", "k8s_rdma_wait_timeout=30", "-e", "k8s_rdma_wait_sleep=1"]
OUR_LABELS = {"app.kubernetes.io/managed-by": "lossless.fabric", "lossless.fabric/role": "k8s_rdma"}

pytestmark = pytest.mark.skipif(not (ROOT / ".deps" / "collections" / "ansible_collections" / "kubernetes" / "core").exists(),
                                reason="needs kubernetes.core in .deps")


def _env(tmp_path):
    return ansible_env(ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"), HOME=str(tmp_path))


@pytest.fixture
def inventory(tmp_path):
    """A copy of the lab inventory (a lab the user has up stays undisturbed)."""
    return pathlib.Path(copy_lab_inventory(tmp_path / "lab"))


@pytest.fixture
def sim(tmp_path):
    with K8sSim({"time_scale": 0.02, "nodes": NODES}, str(tmp_path / "sim")) as running:
        yield running


def playbook(tmp_path, inventory, sim, *args):
    helm = write_bin(str(tmp_path / "helm-bin"), sys.executable)  # what the launcher's helmsim plug-in writes
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), "playbooks/kubernetes.yml", "-e", "lab_kubeconfig=%s" % sim.kubeconfig,
            "-e", "lab_helm_bin=%s" % helm, *WAIT, *args]
    return subprocess.run(argv, cwd=str(ROOT), env=_env(tmp_path), capture_output=True, text=True, timeout=600, check=False)


def changed(out) -> int:
    return recap(out)["localhost"]["changed"]


def names(objects, key):
    return sorted("%s/%s" % (o["metadata"].get("namespace") or "", o["metadata"]["name"]) for o in objects.get(key, []))


def ours(objects):
    return sorted("%s %s" % (key, o["metadata"]["name"]) for key, objs in objects.items() for o in objs
                  if all((o["metadata"].get("labels") or {}).get(k) == v for k, v in OUR_LABELS.items()))


def call(sim, method, path, body=None):
    """One request to the emulated API server, as another user of the cluster."""
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(sim.url + path, data=data, method=method, headers={"Content-Type": ctype})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def post(sim, path, body):
    return call(sim, "POST", path, body)


def intent_file(tmp_path, mutate, **extra):
    data = yaml.safe_load((LAB / "group_vars" / "all" / "lossless_fabric.yml").read_text())
    mutate(data["lossless_fabric"]["kubernetes"])
    data.update(extra)
    path = tmp_path / "intent.yml"
    path.write_text(yaml.safe_dump(data))
    return "@%s" % path


def test_check_deploy_idempotent(tmp_path, inventory, sim):
    before = sim.objects()
    checked = playbook(tmp_path, inventory, sim, "--check", "--diff")
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert changed(checked) > 0
    # a dry run on an empty cluster: the namespaces it would create are named, nothing is created
    assert '"would create: ConfigMap lossless-fabric/rdma-devices, DaemonSet lossless-fabric/rdma-shared-dp-ds, ' in checked.stdout
    assert "Deployment multi-nic-cni-operator/multi-nic-cni-operator-controller-manager" in checked.stdout
    assert sim.objects() == before

    first = playbook(tmp_path, inventory, sim)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    assert changed(first) > 0
    objects = sim.objects()
    assert {n["metadata"]["name"]: n["status"]["allocatable"].get(RES) for n in objects["nodes"]} == {"gpu1": "63", "gpu2": "63"}
    (net,) = objects["multinic.fms.io/multinicnetworks"]
    assert net["metadata"]["name"] == "multinic-rdma" and net["status"]["configStatus"] == "Success"
    assert names(objects, "apps/daemonsets") == ["lossless-fabric/rdma-shared-dp-ds"]
    assert names(objects, "apps/deployments") == ["multi-nic-cni-operator/multi-nic-cni-operator-controller-manager"]
    assert len(objects["apiextensions.k8s.io/customresourcedefinitions"]) == 6 + 1  # + the MPI Operator's mpijobs CRD
    assert objects["apps/deployments"][0]["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "ghcr.io/foundation-model-stack/multi-nic-cni-controller:v1.3.1"
    # the controller made one net-attach-def per namespace for the network (owned by it)
    assert "default/multinic-rdma" in names(objects, "k8s.cni.cncf.io/network-attachment-definitions")

    again = playbook(tmp_path, inventory, sim)
    assert again.returncode == 0, again.stdout[-4000:]
    assert changed(again) == 0, again.stdout
    rv = sim.state()["resource_version"]
    dry = playbook(tmp_path, inventory, sim, "--check", "--diff")
    assert dry.returncode == 0 and changed(dry) == 0, dry.stdout
    assert sim.state()["resource_version"] == rv


def test_a_changed_intent_shows_in_check_diff_then_applies(tmp_path, inventory, sim):
    assert playbook(tmp_path, inventory, sim).returncode == 0
    bigger = intent_file(tmp_path, lambda k: k["device_plugin"]["resources"][0].update(rdma_hca_max=16))
    dry = playbook(tmp_path, inventory, sim, "--check", "--diff", "-e", bigger)
    assert dry.returncode == 0 and changed(dry) == 1, dry.stdout
    lines = dry.stdout.splitlines()
    assert any(line.startswith("-") and '\\"rdmaHcaMax\\": 63,' in line for line in lines), dry.stdout
    assert any(line.startswith("+") and '\\"rdmaHcaMax\\": 16,' in line for line in lines), dry.stdout
    applied = playbook(tmp_path, inventory, sim, "-e", bigger)
    assert applied.returncode == 0, applied.stdout[-4000:]
    nodes = {n["metadata"]["name"]: n["status"]["allocatable"].get(RES) for n in sim.objects()["nodes"]}
    assert nodes == {"gpu1": "16", "gpu2": "16"}


def test_wait_timeout_names_the_broken_node(tmp_path, inventory):
    # through the lab launcher: lab_k8sim_rdma_broken on one host
    with open(inventory / "host_vars" / "gpu2.yml", "a", encoding="utf-8") as handle:
        handle.write("lab_k8sim_rdma_broken: true\n")
    (inventory / "group_vars" / "all" / "zz_test.yml").write_text("lab_k8sim_time_scale: 0.02\n")
    argv = [*launcher(inventory, tmp_path / "run", tmp_path / "report"), str(BIN / "ansible-playbook"), "-i", str(inventory),
            "playbooks/kubernetes.yml", "-e", "k8s_rdma_wait_timeout=4", "-e", "k8s_rdma_wait_sleep=1"]
    out = subprocess.run(argv, cwd=str(ROOT), env=_env(tmp_path), capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode != 0, out.stdout[-4000:]
    failure = [line for line in out.stdout.splitlines() if line.startswith("fatal:") and "after 4 s" in line]
    assert len(failure) == 1, out.stdout[-6000:]
    assert "1 of 2 nodes selected by feature.node.kubernetes.io/pci-15b3.present=true do not advertise allocatable > 0" in failure[0]
    assert "gpu2 (rdma/rdma_shared_device_a; plugin pod rdma-shared-dp-ds-" in failure[0] and "CrashLoopBackOff" in failure[0]
    assert "gpu1" not in failure[0]
    assert_lab_down(inventory, tmp_path / "run", out)


def test_absent_removes_only_ours(tmp_path, inventory, sim):
    assert playbook(tmp_path, inventory, sim).returncode == 0
    # somebody else's objects: in our namespace, with one of our labels only, and a network of their own
    post(sim, "/api/v1/namespaces/lossless-fabric/configmaps", {"metadata": {"name": "someone-elses"}, "data": {"a": "b"}})
    post(sim, "/api/v1/namespaces/kube-system/configmaps",
         {"metadata": {"name": "rdma-devices", "labels": {"app.kubernetes.io/managed-by": "lossless.fabric"}}, "data": {"x": "y"}})
    post(sim, "/apis/apps/v1/namespaces/kube-system/daemonsets", {
        "metadata": {"name": "rdma-shared-dp-ds"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "x"}},
                 "spec": {"containers": [{"name": "x", "image": "registry.example/x:1"}]}}}})
    post(sim, "/apis/multinic.fms.io/v1/multinicnetworks", {
        "metadata": {"name": "theirs"}, "spec": {"ipam": '{"type":"whereabouts","range":"10.9.0.0/16"}',
                                                 "plugin": {"cniVersion": "0.3.1", "type": "ipvlan"}}})
    before = sim.objects()
    foreign = {k: [o for o in v if o["metadata"]["name"] in ("someone-elses", "theirs") or o["metadata"].get("namespace") == "kube-system"]
               for k, v in before.items() if k in ("configmaps", "apps/daemonsets", "multinic.fms.io/multinicnetworks")}
    assert len(ours(before)) > 20

    dry = playbook(tmp_path, inventory, sim, "-e", "k8s_rdma_state=absent", "--check")
    assert dry.returncode == 0 and changed(dry) > 0, dry.stdout[-4000:]
    assert ours(sim.objects()) == ours(before)

    gone = playbook(tmp_path, inventory, sim, "-e", "k8s_rdma_state=absent")
    assert gone.returncode == 0, gone.stdout[-4000:]
    after = sim.objects()
    # (the MPI Operator's mpijobs.kubeflow.org CRD is the cluster's, not ours: ours() leaves it out)
    kept_crds = sorted(o["metadata"]["name"] for o in after["apiextensions.k8s.io/customresourcedefinitions"]
                       if o["metadata"]["name"] != "mpijobs.kubeflow.org")
    # the CRDs stay while 'theirs' needs them, and our namespace while it holds 'someone-elses'
    assert ours(after) == sorted(["apiextensions.k8s.io/customresourcedefinitions %s" % n for n in kept_crds] + ["namespaces lossless-fabric"])
    assert "Kept the Multi-NIC CNI CRDs: MultiNicNetworks that this role did not create still use them: theirs" in gone.stdout
    assert "Kept namespace lossless-fabric: it holds objects this role did not create: ConfigMap someone-elses" in gone.stdout
    for key, objs in foreign.items():
        for obj in objs:
            assert obj["metadata"]["uid"] in {o["metadata"]["uid"] for o in after[key]}, (key, obj["metadata"]["name"])
    assert "/multi-nic-cni-operator" not in names(after, "namespaces") and "/lossless-fabric" in names(after, "namespaces")
    nodes = {n["metadata"]["name"]: n["status"]["allocatable"].get(RES) for n in after["nodes"]}
    assert nodes == {"gpu1": "0", "gpu2": "0"}  # plugin gone: the kubelet drops the resource to 0

    # once theirs are gone too, a second absent removes the rest; a third finds nothing to do
    # their network had the Multi-NIC controller's finalizer; with the controller gone it stays Terminating
    # (and keeps the CRDs) until its owner removes the finalizer, as on a real cluster
    call(sim, "DELETE", "/apis/multinic.fms.io/v1/multinicnetworks/theirs")
    assert playbook(tmp_path, inventory, sim, "-e", "k8s_rdma_state=absent").returncode == 0
    assert len(sim.objects()["apiextensions.k8s.io/customresourcedefinitions"]) == 6 + 1  # + the MPI Operator's mpijobs CRD
    call(sim, "PATCH", "/apis/multinic.fms.io/v1/multinicnetworks/theirs", {"metadata": {"finalizers": None}})
    call(sim, "DELETE", "/api/v1/namespaces/lossless-fabric/configmaps/someone-elses")
    second = playbook(tmp_path, inventory, sim, "-e", "k8s_rdma_state=absent")
    assert second.returncode == 0, second.stdout[-4000:]
    assert ours(sim.objects()) == []
    third = playbook(tmp_path, inventory, sim, "-e", "k8s_rdma_state=absent")
    assert third.returncode == 0 and changed(third) == 0, third.stdout[-4000:]


NETOP_NS = "nvidia-network-operator"
NETOP_LABELS = {"app.kubernetes.io/name": "network-operator", "app.kubernetes.io/instance": "network-operator"}


def preinstall_network_operator(sim):
    """The operator as its chart installs it (the Deployment tests/lab/helmsim creates), installed by somebody else."""
    post(sim, "/api/v1/namespaces", {"metadata": {"name": NETOP_NS}})
    post(sim, "/apis/apps/v1/namespaces/%s/deployments" % NETOP_NS, {
        "metadata": {"name": "network-operator", "labels": NETOP_LABELS},
        "spec": {"replicas": 1, "selector": {"matchLabels": NETOP_LABELS}, "template": {"metadata": {"labels": NETOP_LABELS}, "spec": {
            "containers": [{"name": "network-operator", "image": "nvcr.io/nvidia/cloud-native/network-operator:v26.4.1",
                            "command": ["/manager"], "args": ["--leader-elect"]}]}}}})


def test_network_operator_path(tmp_path, inventory, sim):
    netop = intent_file(tmp_path, lambda k: (k.pop("multi_nic_cni"), k.update(cni="network_operator")),
                        k8s_rdma_network_operator_install=False)
    preinstall_network_operator(sim)
    first = playbook(tmp_path, inventory, sim, "-e", netop)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    objects = sim.objects()
    (ncp,) = objects["mellanox.com/nicclusterpolicies"]
    assert ncp["status"]["state"] == "ready"
    assert ncp["spec"]["rdmaSharedDevicePlugin"]["version"] == "network-operator-v26.4.1"
    # the operator (emulated) deployed the plugin in its namespace from the policy
    assert names(objects, "apps/daemonsets") == ["nvidia-network-operator/rdma-shared-dp-ds"]
    assert {n["metadata"]["name"]: n["status"]["allocatable"].get(RES) for n in objects["nodes"]} == {"gpu1": "63", "gpu2": "63"}
    again = playbook(tmp_path, inventory, sim, "-e", netop)
    assert again.returncode == 0 and changed(again) == 0, again.stdout[-4000:]
    gone = playbook(tmp_path, inventory, sim, "-e", netop, "-e", "k8s_rdma_state=absent")
    assert gone.returncode == 0, gone.stdout[-4000:]
    after = sim.objects()
    assert ours(after) == [] and "apps/daemonsets" not in after and "mellanox.com/nicclusterpolicies" not in after
    # the operator is somebody else's: it stays, and so does the namespace it came with
    assert names(after, "apps/deployments") == ["%s/network-operator" % NETOP_NS] and "/%s" % NETOP_NS in names(after, "namespaces")


def test_without_the_operator_the_policy_is_never_reconciled_and_the_wait_says_so(tmp_path, inventory, sim):
    # install false and no operator on the cluster: the role creates the namespace and the policy, nothing acts on it
    netop = intent_file(tmp_path, lambda k: (k.pop("multi_nic_cni"), k.update(cni="network_operator")),
                        k8s_rdma_network_operator_install=False)
    out = playbook(tmp_path, inventory, sim, "-e", netop, "-e", "k8s_rdma_wait_timeout=3")
    assert out.returncode != 0
    failure = [line for line in out.stdout.splitlines() if line.startswith("fatal:") and "is not ready after 3 s" in line]
    assert len(failure) == 1, out.stdout[-4000:]
    assert "NicClusterPolicy nic-cluster-policy is not ready after 3 s: no status at all: " \
           "is the Network Operator running in %s?" % NETOP_NS in failure[0], failure[0]
    # the role waited 3 s, many operator_sync periods at the fixture's time scale: nobody acted on the policy
    objects = sim.objects()
    (ncp,) = objects["mellanox.com/nicclusterpolicies"]
    assert "status" not in ncp and "apps/daemonsets" not in objects and "apps/deployments" not in objects
    assert "/%s" % NETOP_NS in names(objects, "namespaces")  # a namespace alone is not an operator


HELM_KINDS = ("serviceaccounts", "apps/deployments", "rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings")


def releases(objects):
    """Helm 3's release Secrets: name -> (labels, decoded release)."""
    found = {}
    for sec in objects.get("secrets", []):
        if sec.get("type") == "helm.sh/release.v1":
            data = json.loads(gzip.decompress(base64.b64decode(base64.b64decode(sec["data"]["release"]))))
            found["%s/%s" % (sec["metadata"]["namespace"], sec["metadata"]["name"])] = (sec["metadata"]["labels"], data)
    return found


def helm_owned(objects):
    return sorted("%s %s" % (key, names({key: [o]}, key)[0]) for key in HELM_KINDS for o in objects.get(key, [])
                  if (o["metadata"].get("annotations") or {}).get("meta.helm.sh/release-name") == "network-operator")


def test_network_operator_installed_with_helm(tmp_path, inventory, sim):
    netop = intent_file(tmp_path, lambda k: (k.pop("multi_nic_cni"), k.update(cni="network_operator")))
    before = sim.objects()
    dry = playbook(tmp_path, inventory, sim, "-e", netop, "--check", "--diff")
    assert dry.returncode == 0 and changed(dry) > 0, dry.stdout[-4000:] + dry.stderr[-2000:]
    assert sim.objects() == before  # helm list / show chart only: nothing installed

    first = playbook(tmp_path, inventory, sim, "-e", netop)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    objects = sim.objects()
    found = releases(objects)
    key = NETOP_NS + "/sh.helm.release.v1.network-operator.v1"
    assert list(found) == [key]
    labels, release = found[key]
    assert {k: labels[k] for k in ("name", "owner", "status", "version")} == \
        {"name": "network-operator", "owner": "helm", "status": "deployed", "version": "1"}
    assert release["chart"]["metadata"]["version"] == "26.4.1" and release["namespace"] == NETOP_NS
    # the role's values (templates/network_operator_values.yml.j2) are the release's user-supplied values
    assert release["config"] == {"nfd": {"enabled": True, "deployNodeFeatureRules": True}, "sriovNetworkOperator": {"enabled": False},
                                 "upgradeCRDs": True}
    assert helm_owned(objects) == sorted(["apps/deployments %s/network-operator" % NETOP_NS, "serviceaccounts %s/network-operator" % NETOP_NS,
                                          "rbac.authorization.k8s.io/clusterroles /network-operator",
                                          "rbac.authorization.k8s.io/clusterrolebindings /network-operator"])
    (dep,) = [d for d in objects["apps/deployments"] if d["metadata"]["namespace"] == NETOP_NS]
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nvcr.io/nvidia/cloud-native/network-operator:v26.4.1"
    (ncp,) = objects["mellanox.com/nicclusterpolicies"]
    assert ncp["status"]["state"] == "ready"
    assert {n["metadata"]["name"]: n["status"]["allocatable"].get(RES) for n in objects["nodes"]} == {"gpu1": "63", "gpu2": "63"}

    again = playbook(tmp_path, inventory, sim, "-e", netop)
    assert again.returncode == 0 and changed(again) == 0, again.stdout[-4000:]
    rv = sim.state()["resource_version"]
    dry = playbook(tmp_path, inventory, sim, "-e", netop, "--check", "--diff")
    assert dry.returncode == 0 and changed(dry) == 0, dry.stdout[-4000:]
    assert sim.state()["resource_version"] == rv and list(releases(sim.objects())) == [key]

    # a chart version the repository does not have: helm's own error, nothing changes
    missing = intent_file(tmp_path, lambda k: (k.pop("multi_nic_cni"), k.update(cni="network_operator", network_operator={"chart_version": "26.9.9"})))
    bad = playbook(tmp_path, inventory, sim, "-e", missing)
    assert bad.returncode != 0
    assert 'Error: chart \\"network-operator\\" version \\"26.9.9\\" not found in https://helm.ngc.nvidia.com/nvidia repository' in bad.stdout, \
        bad.stdout[-3000:]
    assert list(releases(sim.objects())) == [key]

    # someone else's objects in the operator's namespace keep it; theirs elsewhere stay untouched
    post(sim, "/api/v1/namespaces/%s/configmaps" % NETOP_NS, {"metadata": {"name": "someone-elses"}, "data": {"a": "b"}})
    post(sim, "/api/v1/namespaces/kube-system/serviceaccounts", {"metadata": {"name": "network-operator"}})
    dry = playbook(tmp_path, inventory, sim, "-e", netop, "-e", "k8s_rdma_state=absent", "--check")
    assert dry.returncode == 0 and changed(dry) > 0, dry.stdout[-4000:]
    assert list(releases(sim.objects())) == [key] and len(helm_owned(sim.objects())) == 4

    gone = playbook(tmp_path, inventory, sim, "-e", netop, "-e", "k8s_rdma_state=absent")
    assert gone.returncode == 0, gone.stdout[-4000:]
    after = sim.objects()
    assert releases(after) == {} and helm_owned(after) == [] and ours(after) == ["namespaces %s" % NETOP_NS]
    assert "kube-system/network-operator" in names(after, "serviceaccounts")
    assert "Kept namespace %s: it holds objects this role did not create: ConfigMap someone-elses" % NETOP_NS in gone.stdout
    third = playbook(tmp_path, inventory, sim, "-e", netop, "-e", "k8s_rdma_state=absent")
    assert third.returncode == 0 and changed(third) == 0, third.stdout[-4000:]


def test_a_helm_binary_with_whitespace_is_refused_before_any_api_call(tmp_path, inventory, sim):
    netop = intent_file(tmp_path, lambda k: (k.pop("multi_nic_cni"), k.update(cni="network_operator")))
    rv = sim.state()["resource_version"]
    out = playbook(tmp_path, inventory, sim, "-e", netop, "-e", "k8s_rdma_helm_binary='/opt/helm 3/helm'")
    assert out.returncode != 0
    assert "k8s_rdma: k8s_rdma_helm_binary: '/opt/helm 3/helm' is not a path (letters, digits and ._+@/~- only)" in out.stdout, \
        out.stdout[-3000:]
    assert "Preflight - the cluster answers" not in out.stdout and sim.state()["resource_version"] == rv


def test_network_wait_names_the_network_status(tmp_path, inventory, sim):
    # plugin mellanox needs the Network Operator's sriovDevicePlugin: the controller reports Failed
    mellanox = intent_file(tmp_path, lambda k: k["multi_nic_cni"].update(network={"name": "multinic-rdma", "plugin": "mellanox"}))
    out = playbook(tmp_path, inventory, sim, "-e", mellanox, "-e", "k8s_rdma_wait_timeout=3")
    assert out.returncode != 0
    assert "NicClusterPolicy sriovDevicePlugin" in out.stderr  # the intent's warning, before anything is applied
    failure = [line for line in out.stdout.splitlines() if line.startswith("fatal:") and "is not ready after 3 s" in line]
    assert len(failure) == 1, out.stdout[-4000:]
    assert 'MultiNicNetwork multinic-rdma is not ready after 3 s: configStatus \\"Failed\\", message ' \
           '\\"Failed to create multinic-rdma: failed to get resource annotation from sriov plugin config\\"' in failure[0], failure[0]


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda k: k["device_plugin"]["resources"][0].update(name="rdma-shared-device-a"),
         "lossless_fabric.kubernetes.device_plugin.resources[0].name: 'rdma-shared-device-a' is not a resource name"),
        (lambda k: k["device_plugin"]["resources"][0].pop("selectors"),
         "lossless_fabric.kubernetes.device_plugin.resources[0].selectors: required (a resource needs at least one selector"),
        (lambda k: k.update(cni="multinic"), "lossless_fabric.kubernetes.cni: 'multinic' is not a CNI choice (did you mean 'multi_nic_cni'?)"),
    ],
    ids=["resource-name", "no-selector", "unknown-cni"],
)
def test_invalid_intent_fails_before_any_api_call(tmp_path, inventory, sim, mutate, expected):
    before, rv = sim.objects(), sim.state()["resource_version"]
    out = playbook(tmp_path, inventory, sim, "-e", intent_file(tmp_path, mutate))
    assert out.returncode != 0
    assert expected in out.stdout, out.stdout[-4000:]
    assert "Preflight - the cluster answers" not in out.stdout
    assert sim.objects() == before and sim.state()["resource_version"] == rv


def test_no_kubernetes_section_is_refused_before_any_api_call(tmp_path, inventory, sim):
    data = yaml.safe_load((LAB / "group_vars" / "all" / "lossless_fabric.yml").read_text())
    del data["lossless_fabric"]["kubernetes"]
    (tmp_path / "nok8s.yml").write_text(yaml.safe_dump(data))
    rv = sim.state()["resource_version"]
    out = playbook(tmp_path, inventory, sim, "-e", "@%s" % (tmp_path / "nok8s.yml"))
    assert out.returncode != 0
    assert "k8s_rdma: lossless_fabric.kubernetes is not set: add a kubernetes section to the intent" in out.stdout, out.stdout[-3000:]
    assert sim.state()["resource_version"] == rv


def test_verify_alone_with_tags(tmp_path, inventory, sim):
    assert playbook(tmp_path, inventory, sim).returncode == 0
    tags = "fabric_plan_preflight,k8s_rdma_preflight,k8s_rdma_verify"
    out = playbook(tmp_path, inventory, sim, "--tags", tags)
    assert out.returncode == 0 and changed(out) == 0, out.stdout[-3000:]
    assert "Verify - wait until the plugin registered on every selected node" in out.stdout
    assert "Configure - apply the manifests" not in out.stdout


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({"k8s_rdma_kubernetes_version": "1.30\n"}, "k8s_rdma_kubernetes_version: '1.30\\\\n' is not a Kubernetes version major.minor (like 1.30)"),
        ({"k8s_rdma_render_dir": "/tmp/x\nrm -rf /"}, "k8s_rdma_render_dir: '/tmp/x\\\\nrm -rf /' is not a path"),
        ({"k8s_rdma_network_operator_chart_repo": "https://helm.ngc.nvidia.com/nvidia\n"},
         "k8s_rdma_network_operator_chart_repo: 'https://helm.ngc.nvidia.com/nvidia\\\\n' is not an https URL"),
        ({"k8s_rdma_periodic_update_interval": 0}, "k8s_rdma_periodic_update_interval: 0 is not a number of seconds above 0"),
    ],
    ids=["version-newline", "render-dir-newline", "chart-repo-newline", "interval-zero"],
)
def test_a_role_variable_with_a_second_line_is_refused_before_any_api_call(tmp_path, inventory, sim, extra, expected):
    extra_file = tmp_path / "extra.yml"
    extra_file.write_text(yaml.safe_dump(extra))
    rv = sim.state()["resource_version"]
    out = playbook(tmp_path, inventory, sim, "-e", "@%s" % extra_file)
    assert out.returncode != 0
    assert expected in out.stdout, out.stdout[-3000:]
    assert "Preflight - the cluster answers" not in out.stdout and sim.state()["resource_version"] == rv


SRIOV_NODES = [{"name": n, "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2", "totalvfs": 8}, {"name": "mlx5_1", "netdev": "eth3", "totalvfs": 8}]}
               for n in ("gpu1", "gpu2")]
VF_TENANTS = {name: {"hosts": [host], "namespace": name, "kubeconfig": None, "vlan": vlan, "partition": None, "qos_level": None}
              for name, host, vlan in (("team-a", "gpu1", 101), ("team-b", "gpu2", 102))}


@pytest.fixture
def sriov_sim(tmp_path):
    """The lab's emulator with SR-IOV capable NICs (8 VFs each), as the sim fixture otherwise."""
    with K8sSim({"time_scale": 0.02, "nodes": SRIOV_NODES}, str(tmp_path / "sim")) as running:
        yield running


# What the extra play prints for the test (switchlab.results): as the cluster held it after the role, and the pods' answers.
RESULT = ("RESULT {{ {'nodes': nodes.resources | map(attribute='metadata') | map(attribute='labels') | list,"
          " 'alloc': nodes.resources | map(attribute='status') | map(attribute='allocatable') | list,"
          " 'quota': quota.resources[0].spec.hard, 'steal': steal.msg | default(''), 'steal_failed': steal is failed,"
          " 'shared': shared.msg | default(''), 'shared_failed': shared is failed, 'own': own is changed,"
          " 'sriov_op': sriov_op.resources | map(attribute='spec.template.spec.containers') | list} | to_json }}")


def _pod(name, resource):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"containers": [{"name": "c", "image": "registry.example/nccl:1", "resources": {"limits": {resource: 1}}}]}}


def test_tenants_with_vfs_get_their_own_vfs_and_nothing_else(tmp_path, inventory, sriov_sim):
    """Tenants whose hosts have VFs (device data nics[].vfs = 4 on both NICs of gpu1 and gpu2): the role installs the
    Network Operator with the SR-IOV operator turned on (the lab's helm; RESOURCE_PREFIX nvidia.com from the values),
    labels the tenants' nodes, applies their SriovNetworkNodePolicies and quotas, and waits until the emulated SR-IOV
    operator advertises nvidia.com/team_a (8 = 4 VFs x 2 PFs) on gpu1 only and nvidia.com/team_b on gpu2 only; a team-a
    pod asking for team-b's VFs or the shared plugin's HCA is refused by the quota (403), one asking for its own is
    admitted; state absent in the same run removes the labels, policies, quotas and the release."""
    for host in ("gpu1", "gpu2"):
        path = inventory / "host_vars" / ("%s.yml" % host)
        data = yaml.safe_load(path.read_text())
        data["lossless_fabric_device"]["nics"] = [dict(nic, vfs=4) for nic in data["lossless_fabric_device"]["nics"]]
        path.write_text(yaml.safe_dump(data))
    netop = intent_file(tmp_path, lambda k: (k.pop("multi_nic_cni"), k.update(cni="network_operator")), k8s_rdma_tenants=VF_TENANTS,
                        k8s_rdma_tenant_ipam={t: {"type": "whereabouts", "range": "10.%d.0.0/24" % v} for t, v in (("team-a", 101), ("team-b", 102))})
    kube = {"kubeconfig": "{{ lab_kubeconfig }}"}
    play = [
        {"import_playbook": str(ROOT / "playbooks" / "kubernetes.yml")},
        {"name": "as the cluster holds it, then as a tenant's pods ask, then state absent", "hosts": "localhost", "connection": "local",
         "gather_facts": False, "tasks": [
             {"kubernetes.core.k8s_info": dict(kube, kind="Node"), "register": "nodes"},
             {"kubernetes.core.k8s_info": dict(kube, api_version="v1", kind="ResourceQuota", namespace="team-a"), "register": "quota"},
             {"kubernetes.core.k8s_info": dict(kube, kind="Deployment", namespace=NETOP_NS, name="network-operator-sriov-network-operator"),
              "register": "sriov_op"},
             {"kubernetes.core.k8s": dict(kube, state="present", definition=_pod("steal", "nvidia.com/team_b")), "register": "steal", "ignore_errors": True},
             {"kubernetes.core.k8s": dict(kube, state="present", definition=_pod("shared", "rdma/rdma_shared_device_a")), "register": "shared",
              "ignore_errors": True},
             {"kubernetes.core.k8s": dict(kube, state="present", definition=_pod("own", "nvidia.com/team_a")), "register": "own"},
             {"ansible.builtin.debug": {"msg": RESULT}},
             {"kubernetes.core.k8s": dict(kube, state="absent", kind="Pod", namespace="team-a", name="own", wait=True)},
             {"ansible.builtin.include_role": {"name": "lossless.fabric.k8s_rdma"}, "vars": {"k8s_rdma_state": "absent"}},
         ]},
    ]
    (tmp_path / "vf.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    helm = write_bin(str(tmp_path / "helm-bin"), sys.executable)
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(tmp_path / "vf.yml"), "-e", "lab_kubeconfig=%s" % sriov_sim.kubeconfig,
            "-e", "lab_helm_bin=%s" % helm, *WAIT, "-e", netop]
    out = subprocess.run(argv, cwd=str(ROOT), env=_env(tmp_path), capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    (got,) = results(out)
    by_node = dict(zip(("gpu1", "gpu2"), zip(got["nodes"], got["alloc"])))
    assert by_node["gpu1"][0]["lossless.fabric/tenant"] == "team-a" and by_node["gpu2"][0]["lossless.fabric/tenant"] == "team-b"
    assert by_node["gpu1"][1].get("nvidia.com/team_a") == "8" and "nvidia.com/team_b" not in by_node["gpu1"][1]
    assert by_node["gpu2"][1].get("nvidia.com/team_b") == "8" and "nvidia.com/team_a" not in by_node["gpu2"][1]
    assert got["quota"] == {"requests.nvidia.com/team_b": "0", "requests.rdma/rdma_shared_device_a": "0"}
    assert got["steal_failed"] and "exceeded quota: lossless-fabric-tenant, requested: requests.nvidia.com/team_b=1" in got["steal"]
    assert got["shared_failed"] and "exceeded quota: lossless-fabric-tenant, requested: requests.rdma/rdma_shared_device_a=1" in got["shared"]
    assert got["own"]
    # the SR-IOV operator came with the Network Operator's release, its prefix from the role's values
    ((container,),) = got["sriov_op"]
    assert {"name": "RESOURCE_PREFIX", "value": "nvidia.com"} in container["env"]
    after = sriov_sim.objects()
    assert not any(k.startswith("lossless.fabric/") for n in after["nodes"] for k in (n["metadata"].get("labels") or {}))
    assert not after.get("sriovnetwork.openshift.io/sriovnetworknodepolicies") and not after.get("resourcequotas")
    assert releases(after) == {}
