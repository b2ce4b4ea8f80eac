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
