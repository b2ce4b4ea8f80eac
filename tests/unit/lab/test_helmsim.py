# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's helm shim: helm's command-line rules and refusals, Helm 3's release Secrets,
the list/status/get output shapes, the chart catalog, and install/upgrade/uninstall
against k8sim; the launcher plug-in writes the wrapper."""

from __future__ import annotations

import base64
import gzip
import json
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
from helmsim import helm  # noqa: E402  # pylint: disable=wrong-import-position
from helmsim.plugin import Helm, write_bin  # noqa: E402  # pylint: disable=wrong-import-position
from k8sim.client import K8sSim  # noqa: E402  # pylint: disable=wrong-import-position

NGC = "https://helm.ngc.nvidia.com/nvidia"
NS = "nvidia-network-operator"
INSTALL = ["--version=26.4.1", "--repo=" + NGC, "upgrade", "-i", "--reset-values", "--wait", "--timeout", "30s"]


def err(argv, environ=None):
    code, out, stderr = helm.run(argv, environ or {})
    assert code == 1 and out == "", (code, out, stderr)
    return stderr


@pytest.mark.parametrize("argv, message", [
    (["list", "--foo"], "Error: unknown flag: --foo\n"),
    (["--foo", "list"], "Error: unknown flag: --foo\n"),
    (["list", "-z"], "Error: unknown shorthand flag: 'z' in -z\n"),
    (["list", "--output"], "Error: flag needs an argument: --output\n"),
    (["list", "-o"], "Error: flag needs an argument: 'o' in -o\n"),
    (["list", "--all=maybe"], 'Error: invalid argument "maybe" for "-a, --all" flag: strconv.ParseBool: parsing "maybe": invalid syntax\n'),
    (["uninstall", "--timeout", "5 minutes", "x"], 'Error: invalid argument "5 minutes" for "--timeout" flag: time: invalid duration "5 minutes"\n'),
    (["frobnicate"], "Error: unknown command \"frobnicate\" for \"helm\"\nRun 'helm --help' for usage.\n"),
    (["get", "valuez", "x"], "Error: unknown command \"valuez\" for \"helm get\"\nRun 'helm get --help' for usage.\n"),
    (["upgrade", "only-one"], 'Error: "helm upgrade" requires 2 arguments\n\nUsage:  helm upgrade [RELEASE] [CHART] [flags]\n'),
    (["uninstall"], 'Error: "helm uninstall" requires at least 1 argument\n\nUsage:  helm uninstall RELEASE_NAME [...] [flags]\n'),
    (["status", "a", "b"], 'Error: "helm status" requires 1 argument\n\nUsage:  helm status RELEASE_NAME [flags]\n'),
    (["list", "-o", "xml"], 'Error: invalid argument "xml" for "-o, --output" flag: invalid format type\n'),
    (["upgrade", "--post-renderer", "x", "a", "b"], "Error: lab helm shim: flag --post-renderer is not emulated\n"),
    (["upgrade", "Bad_Name", "network-operator"], "Error: invalid release name, must match regex"),
    (["repo", "update"], "Error: no repositories found. You must add one before updating\n"),
])
def test_refusals_use_helms_messages(argv, message):
    assert err(argv).startswith(message)


def test_flags_before_the_sub_command_as_kubernetes_core_passes_them():
    path, rest = helm.find_command(["--version=26.4.1", "--repo=" + NGC, "show", "chart", "network-operator"])
    assert path == ("show", "chart")
    assert helm.parse_flags(path, rest) == ({"version": "26.4.1", "repo": NGC}, ["network-operator"])
    path, rest = helm.find_command(["list", "--output=yaml", "--filter", "network-operator", "--all"])
    assert helm.parse_flags(path, rest) == ({"output": "yaml", "filter": "network-operator", "all": True}, [])
    path, rest = helm.find_command(["-n", "ns", "upgrade", "-i", "-f=/a.yml", "--values", "/b.yml", "rel", "chart"])
    assert path == ("upgrade",)
    assert helm.parse_flags(path, rest) == ({"namespace": "ns", "install": True, "values": ["/a.yml", "/b.yml"]}, ["rel", "chart"])
    assert helm.find_command(["ls"])[0] == ("list",) and helm.find_command(["del", "x"])[0] == ("uninstall",)


def test_version_matches_what_kubernetes_core_parses():
    code, out, _err = helm.run(["version"], {})
    assert code == 0 and out.startswith('version.BuildInfo{Version:"v3.')
    assert helm.run(["plugin", "list"], {})[1] == "NAME\tVERSION\tDESCRIPTION\n"  # no helm-diff plugin


def test_chart_catalog_and_its_errors():
    from ansible_collections.lossless.fabric.plugins.module_utils._intent._kubernetes import K8S_DEFAULTS  # pylint: disable=import-outside-toplevel

    # the version the intent pins by default must be served, or the lab's Network Operator path breaks
    pinned = K8S_DEFAULTS["netop_chart_version"]
    code, out, _err = helm.run(["show", "chart", "network-operator", "--repo", NGC, "--version", pinned], {})
    chart = yaml.safe_load(out)
    assert code == 0 and chart["name"] == "network-operator" and chart["version"] == pinned and chart["appVersion"] == "v" + pinned
    assert helm.run(["show", "chart", "network-operator", "--repo", NGC + "/", "--version", "v" + pinned], {})[0] == 0
    assert err(["show", "chart", "network-operator", "--repo", NGC, "--version", "1.2.3"]) == \
        'Error: chart "network-operator" version "1.2.3" not found in %s repository\n' % NGC
    assert err(["show", "chart", "gpu-operator", "--repo", NGC]) == 'Error: chart "gpu-operator" not found in %s repository\n' % NGC
    assert err(["show", "chart", "network-operator", "--repo", "https://charts.example"]).startswith(
        'Error: looks like "https://charts.example" is not a valid chart repository or cannot be reached')
    assert err(["show", "chart", "network-operator"]) == \
        "Error: non-absolute URLs should be in form of repo_name/path_to_chart, got: network-operator\n"
    assert err(["show", "chart", "nvidia/network-operator"]) == "Error: repo nvidia not found\n"


def _release(version=1, status="deployed"):
    chart = helm.CATALOG[NGC]["network-operator"]["26.4.1"]
    return {"name": "network-operator", "namespace": NS, "version": version,
            "info": {"first_deployed": "2026-01-02T03:04:05.000000000Z", "last_deployed": "2026-01-02T03:04:05.000000000Z",
                     "deleted": "", "description": "Install complete", "status": status, "notes": ""},
            "chart": {"metadata": chart, "values": {}}, "config": {"a": 1}, "manifest": ""}


def test_release_secret_is_helm3_storage_format():
    rel = _release(version=3)
    sec = helm.release_secret(rel)
    assert sec["type"] == "helm.sh/release.v1" and sec["metadata"]["name"] == "sh.helm.release.v1.network-operator.v3"
    assert sec["metadata"]["namespace"] == NS
    labels = sec["metadata"]["labels"]
    assert {k: labels[k] for k in ("name", "owner", "status", "version")} == \
        {"name": "network-operator", "owner": "helm", "status": "deployed", "version": "3"}
    assert labels["createdAt"].isdigit() and "modifiedAt" in helm.release_secret(rel, "modifiedAt")["metadata"]["labels"]
    # API data is base64 of helm's value, itself base64(gzip(json))
    inner = base64.b64decode(sec["data"]["release"])
    assert json.loads(gzip.decompress(base64.b64decode(inner))) == rel
    assert helm.decode_release(inner.decode()) == rel


def test_list_and_status_shapes():
    elem = helm.list_element(_release(version=2))
    assert elem == {"name": "network-operator", "namespace": NS, "revision": "2", "updated": "2026-01-02 03:04:05.000000000 +0000 UTC",
                    "status": "deployed", "chart": "network-operator-26.4.1", "app_version": "v26.4.1"}
    assert helm.status_text(_release()).splitlines() == [
        "NAME: network-operator", "LAST DEPLOYED: Fri Jan 2 03:04:05 2026", "NAMESPACE: " + NS, "STATUS: deployed", "REVISION: 1",
        "TEST SUITE: None"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with K8sSim({"time_scale": 0.02, "nodes": [{"name": "gpu1", "gpus": 8}]}, str(tmp_path_factory.mktemp("k8sim"))) as sim:
        yield sim


def test_install_upgrade_uninstall_against_k8sim(cluster, tmp_path):
    env = {"KUBECONFIG": cluster.kubeconfig, "HELM_NAMESPACE": NS}
    values = tmp_path / "values.yml"
    values.write_text("nfd:\n  enabled: true\n")
    assert helm.run(["list", "--output=yaml", "--filter", "network-operator"], env) == (0, "[]\n", "")
    # no namespace, no --create-namespace: the storage driver cannot create the release Secret
    assert err([*INSTALL, "-f=%s" % values, "network-operator", "network-operator"], env) == \
        'Error: INSTALLATION FAILED: create: failed to create: namespaces "%s" not found\n' % NS
    code, out, _e = helm.run([*INSTALL, "--create-namespace", "-f=%s" % values, "network-operator", "network-operator"], env)
    assert code == 0 and out.startswith('Release "network-operator" does not exist. Installing it now.\nNAME: network-operator\n')
    code, out, _e = helm.run(["list", "--output=yaml", "--filter", "network-oper"], env)
    (elem,) = yaml.safe_load(out)
    assert (elem["revision"], elem["status"], elem["chart"]) == ("1", "deployed", "network-operator-26.4.1")
    assert helm.run(["get", "values", "--output=yaml", "network-operator"], env)[1] == "nfd:\n  enabled: true\n"
    objects = cluster.objects()
    assert [s["metadata"]["name"] for s in objects["secrets"] if s.get("type") == "helm.sh/release.v1"] == \
        ["sh.helm.release.v1.network-operator.v1"]
    (dep,) = objects["apps/deployments"]
    assert dep["metadata"]["annotations"] == {"meta.helm.sh/release-name": "network-operator", "meta.helm.sh/release-namespace": NS}

    # upgrade without values and without --reset-values: the previous values are reused; v1 is superseded
    code, out, _e = helm.run(["--repo=" + NGC, "--version=26.1.0", "upgrade", "-i", "network-operator", "network-operator"], env)
    assert code == 0 and out.startswith('Release "network-operator" has been upgraded. Happy Helming!\n'), out
    code, out, _e = helm.run(["list", "-a", "-o", "json"], env)
    assert [(e["revision"], e["chart"]) for e in json.loads(out)] == [("2", "network-operator-26.1.0")]
    assert helm.run(["get", "values", "-o", "yaml", "network-operator"], env)[1] == "nfd:\n  enabled: true\n"
    labels = {s["metadata"]["name"]: s["metadata"]["labels"]["status"] for s in cluster.objects()["secrets"] if s.get("type")}
    assert labels == {"sh.helm.release.v1.network-operator.v1": "superseded", "sh.helm.release.v1.network-operator.v2": "deployed"}
    assert "REVISION: 2" in helm.run(["status", "network-operator"], env)[1]
    assert err(["install", "--repo", NGC, "network-operator", "network-operator"], env) == \
        "Error: INSTALLATION FAILED: cannot re-use a name that is still in use\n"

    # the same release name in another namespace would take over the first one's ClusterRole: Helm 3 refuses, creating nothing
    before = cluster.objects()
    assert err(["install", "--repo", NGC, "network-operator", "network-operator"], {"KUBECONFIG": cluster.kubeconfig}) == \
        'Error: INSTALLATION FAILED: Unable to continue with install: ClusterRole "network-operator" exists and cannot be imported ' \
        'into the current release: invalid ownership metadata\n'
    assert cluster.objects() == before

    assert helm.run(["uninstall", "--wait", "network-operator"], env) == (0, 'release "network-operator" uninstalled\n', "")
    objects = cluster.objects()
    assert not [s for s in objects.get("secrets", []) if s.get("type") == "helm.sh/release.v1"]
    assert "apps/deployments" not in objects and "rbac.authorization.k8s.io/clusterroles" not in objects
    assert err(["uninstall", "network-operator"], env) == "Error: uninstall: Release not loaded: network-operator: release: not found\n"
    assert helm.run(["uninstall", "--ignore-not-found", "network-operator"], env) == (0, "", "")
    assert err(["status", "network-operator"], env) == "Error: release: not found\n"


def test_unreachable_cluster_is_helms_error(tmp_path):
    missing = str(tmp_path / "nope")
    assert err(["list"], {"KUBECONFIG": missing}) == \
        "Error: Kubernetes cluster unreachable: stat %s: no such file or directory\n" % missing


def test_plugin_writes_the_wrapper_and_is_registered(tmp_path):
    assert any(isinstance(sim, Helm) for sim in launcher.SIMULATORS)
    ctx = launcher.Context(str(tmp_path), str(tmp_path / "run"), {"_meta": {"hostvars": {"localhost": {"lab_kubernetes": True}}}})
    assert Helm().wanted(ctx)
    assert not Helm().wanted(launcher.Context(str(tmp_path), str(tmp_path / "run"), {"_meta": {"hostvars": {}}}))
    got = Helm().start(ctx)
    assert got == {"all": {"lab_helm_bin": str(tmp_path / "run" / "helm" / "bin")}}
    wrapper = os.path.join(got["all"]["lab_helm_bin"], "helm")
    assert os.access(wrapper, os.X_OK)
    done = subprocess.run([wrapper, "list", "--bogus"], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "Error: unknown flag: --bogus\n")
    assert write_bin(str(tmp_path / "again"), sys.executable) == str(tmp_path / "again")


def test_keep_history_marks_the_release_uninstalled(cluster):
    env = {"KUBECONFIG": cluster.kubeconfig, "HELM_NAMESPACE": "kept"}
    assert helm.run(["install", "--create-namespace", "--repo", NGC, "network-operator", "network-operator"], env)[0] == 0
    assert helm.run(["uninstall", "--keep-history", "network-operator"], env)[0] == 0
    assert helm.run(["list", "-q"], env)[1] == ""
    code, out, _e = helm.run(["list", "--uninstalled", "-o", "yaml"], env)
    assert [(e["name"], e["status"]) for e in yaml.safe_load(out)] == [("network-operator", "uninstalled")]
    (sec,) = [s for s in cluster.objects()["secrets"] if s["metadata"]["namespace"] == "kept"]
    assert sec["metadata"]["labels"]["status"] == "uninstalled" and "modifiedAt" in sec["metadata"]["labels"]
    assert err(["upgrade", "-i", "--repo", NGC, "network-operator", "network-operator"], env) == \
        'Error: UPGRADE FAILED: "network-operator" has no deployed releases\n'
    assert "STATUS: uninstalled" in helm.run(["status", "network-operator"], env)[1]


def test_sriov_operator_subchart_deployment_only_when_enabled():
    """sriovNetworkOperator.enabled renders the subchart's Deployment (name from its _helpers.tpl fullname, env
    RESOURCE_PREFIX from the network-operator chart's values): what k8sim's SR-IOV operator emulation keys on."""
    chart = helm.CATALOG[NGC]["network-operator"]["26.4.1"]
    plain = helm.render(chart, "network-operator", NS, helm.merge(helm.NETOP_DEFAULT_VALUES, {}))
    assert [o["kind"] for o in plain] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"]
    on = helm.render(chart, "network-operator", NS, helm.merge(helm.NETOP_DEFAULT_VALUES, {"sriovNetworkOperator": {"enabled": True}}))
    dep = on[-1]
    assert dep["metadata"]["name"] == "network-operator-sriov-network-operator"
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/mellanox/sriov-network-operator:network-operator-v26.4.1"
    assert {"name": "RESOURCE_PREFIX", "value": "nvidia.com"} in container["env"]
    # a release whose name contains the chart's name keeps its own name; the prefix follows the values
    dep = helm.render(chart, "sriov-network-operator", NS, helm.merge(
        helm.NETOP_DEFAULT_VALUES, {"sriovNetworkOperator": {"enabled": True},
                                    "sriov-network-operator": {"operator": {"resourcePrefix": "example.com"}}}))[-1]
    assert dep["metadata"]["name"] == "sriov-network-operator"
    assert {"name": "RESOURCE_PREFIX", "value": "example.com"} in dep["spec"]["template"]["spec"]["containers"][0]["env"]
    assert "# Source: network-operator/charts/sriov-network-operator/templates/operator.yaml\n" in helm.manifest_text(on)
