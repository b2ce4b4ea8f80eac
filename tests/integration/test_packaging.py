# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection as its users get it: the tarball `ansible-galaxy collection
build` makes, installed into an empty path with `ansible-galaxy collection
install`, its modules, roles and playbooks resolved there (ansible-doc,
ansible-playbook --syntax-check lossless.fabric.<playbook>) from outside this
checkout; its runtime requirements as ansible-builder reads them; and the
execution environment definition rendered into a build context by
`ansible-builder create` (no container engine needed for that).

One build and one install for the whole module (a few seconds)."""

from __future__ import annotations

import ast
import glob
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
DEPS_COLLECTIONS = os.path.join(ROOT, ".deps", "collections", "ansible_collections")

# Top-level imports in plugins/ that are not third-party packages to install.
STDLIB = set(sys.stdlib_module_names)
# yaml: PyYAML is ansible-core's own dependency (ansible-builder's introspect --sanitize drops it from a collection's
# list for that reason), so the NVUE parser's import of it needs no line of ours.
NOT_PACKAGES = {"ansible", "ansible_collections", "__future__", "yaml"}
# import name -> distribution name, where they differ.
DISTRIBUTION = {"jinja2": "Jinja2"}


def _run(argv, cwd, env, check=True):
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)
    if check and out.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (" ".join(argv), out.returncode, out.stdout[-4000:], out.stderr[-4000:]))
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(tarball, collections path, env): built and installed once, run from an empty folder."""
    base = tmp_path_factory.mktemp("packaging")
    outside = base / "elsewhere"
    outside.mkdir()
    # No ansible.cfg of this checkout, no collection found through its symlink farm.
    cfg = outside / "ansible.cfg"
    cfg.write_text("[defaults]\nretry_files_enabled = false\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_CONFIG=str(cfg), ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(base / "home"), ANSIBLE_LOCAL_TEMP=str(base / "tmp"))
    _run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(base), ROOT], cwd=str(outside), env=env)
    (tarball,) = glob.glob(str(base / "lossless-fabric-*.tar.gz"))
    colls = base / "collections"
    # Offline: kubernetes.core (galaxy.yml dependencies) from the copy `make setup` installed.
    reqs = base / "requirements.yml"
    reqs.write_text(yaml.safe_dump({"collections": [{"name": tarball, "type": "file"},
                                                    {"name": os.path.join(DEPS_COLLECTIONS, "kubernetes", "core"), "type": "dir"}]}), encoding="utf-8")
    _run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-r", str(reqs), "-p", str(colls)], cwd=str(outside), env=env)
    env["ANSIBLE_COLLECTIONS_PATH"] = str(colls)
    env["ANSIBLE_COLLECTIONS_SCAN_SYS_PATH"] = "false"
    return tarball, colls, env, outside


def test_tarball_ships_runtime_files_only(installed):
    tarball = installed[0]
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    tops = {name.split("/")[0] for name in names}
    for left_out in ("tests", "bench", "tools", ".venv", ".deps", ".ci", ".git", "requirements-dev.txt", "constraints.txt", "Makefile", "ansible.cfg"):
        assert left_out not in tops, left_out
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.startswith(("inventories/lab/", "inventories/lab-ib/"))]
    for shipped in ("requirements.txt", "bindep.txt", "meta/execution-environment.yml", "meta/runtime.yml", "playbooks/site.yml"):
        assert shipped in names, shipped
    manifest = json.loads(tar_member(tarball, "MANIFEST.json"))
    assert manifest["collection_info"]["dependencies"] == {"kubernetes.core": ">=5.0.0"}


def tar_member(tarball, name):
    with tarfile.open(tarball) as tar:
        return tar.extractfile(name).read().decode("utf-8")


def test_modules_resolve_from_the_installed_collection(installed):
    _tarball, colls, env, outside = installed
    listed = json.loads(_run([os.path.join(BIN, "ansible-doc"), "-l", "-j", "lossless.fabric"], cwd=str(outside), env=env).stdout)
    ours = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")))
    assert sorted(name.split(".")[-1] for name in listed) == ours
    # The full documentation of each renders from the install (doc fragments resolved there too).
    docs = json.loads(_run([os.path.join(BIN, "ansible-doc"), "-j", *["lossless.fabric." + m for m in ours]], cwd=str(outside), env=env).stdout)
    for module in ours:
        doc = docs["lossless.fabric." + module]["doc"]
        assert doc["filename"].startswith(str(colls)), doc["filename"]
        assert doc["short_description"]


def test_roles_resolve_from_the_installed_collection(installed):
    _tarball, _colls, env, outside = installed
    listed = json.loads(_run([os.path.join(BIN, "ansible-doc"), "-t", "role", "-l", "-j", "lossless.fabric"], cwd=str(outside), env=env).stdout)
    ours = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "roles", "*")) if os.path.isdir(p))
    assert sorted(name.split(".")[-1] for name in listed) == ours


@pytest.mark.parametrize("playbook", sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml"))))
def test_playbooks_run_by_fqcn_from_the_installed_collection(installed, playbook):
    _tarball, colls, env, outside = installed
    out = _run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "--syntax-check", "lossless.fabric." + playbook], cwd=str(outside), env=env)
    # The play and every role and playbook it imports resolved from the install, not from this checkout.
    assert "playbook: %s" % os.path.join(colls, "ansible_collections", "lossless", "fabric", "playbooks", playbook + ".yml") in out.stdout
    assert ROOT not in out.stdout + out.stderr


def _requirements(path):
    reqs = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#"):
                reqs.append(Requirement(line))
    return reqs


def _third_party_imports():
    """Top-level package names imported anywhere under plugins/ (module-level or inside functions)."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, "plugins", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {name for name in names if name not in STDLIB and name not in NOT_PACKAGES}


def test_runtime_requirements_are_ranges_for_what_plugins_import():
    reqs = _requirements(os.path.join(ROOT, "requirements.txt"))
    by_name = {req.name.lower(): req for req in reqs}
    assert "ansible-core" not in by_name and "ansible" not in by_name, "the platform brings ansible-core"
    for req in reqs:
        assert req.specifier, "%s: give a range" % req.name
        assert not [s for s in req.specifier if s.operator in ("==", "===")], "%s: a range, not a pin" % req
        # What the tests run on lies inside the range.
        assert req.specifier.contains(importlib.metadata.version(req.name), prereleases=True), (req, importlib.metadata.version(req.name))
    imported = {DISTRIBUTION.get(name, name).lower() for name in _third_party_imports()}
    assert imported - set(by_name) == set(), "imported by plugins/ but not in requirements.txt"
    assert set(by_name) - imported == set(), "in requirements.txt but imported by nothing under plugins/"


def test_requires_ansible_admits_the_tested_core_only():
    with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as handle:
        spec = Requirement("ansible-core" + yaml.safe_load(handle)["requires_ansible"]).specifier
    tested = importlib.metadata.version("ansible-core")
    assert spec.contains(tested)
    # ansible-core 2.20 needs Python >= 3.12 on the controller, so nothing newer can be tested on 3.11;
    # nothing older than the pinned release is tested either.
    assert not spec.contains("2.20.0")
    older = ("2.18.9", "2.19.0", "%d.%d.0" % (Version(tested).major, Version(tested).minor))
    assert not [v for v in older if spec.contains(v) and Version(v) < Version(tested)]


def test_dev_requirements_are_pinned_and_not_shipped():
    pins = {req.name.lower(): req for req in _requirements(os.path.join(ROOT, "constraints.txt"))}
    with open(os.path.join(ROOT, "requirements-dev.txt"), encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    assert "-r requirements.txt" in lines
    for line in lines:
        if line.startswith("-r"):
            continue
        req = Requirement(line)
        assert [s.operator for s in req.specifier] == ["=="], line
        assert pins[req.name.lower()].specifier == req.specifier, line
    for req in _requirements(os.path.join(ROOT, "requirements.txt")):
        assert req.name.lower() in pins, "%s: pin it in constraints.txt" % req.name
        assert req.specifier.contains(next(iter(pins[req.name.lower()].specifier)).version), req


def test_introspect_reads_the_collection_requirements(installed):
    """What ansible-builder's build stage will install for the collections in the EE."""
    _tarball, colls, env, outside = installed
    out = _run([os.path.join(BIN, "ansible-builder"), "introspect", "--sanitize", str(colls)], cwd=str(outside), env=env).stdout
    data = yaml.safe_load(out[out.index("python:"):]) if "python:" in out else {}
    python = " ".join(data.get("python", []))
    for req in _requirements(os.path.join(ROOT, "requirements.txt")):
        assert req.name in python or req.name.lower() in python.lower(), (req.name, out)
    assert "ansible-core" not in python
    system = data.get("system", [])
    assert any(line.startswith("openssh-client") for line in system), out


def test_bindep_file_parses():
    out = _run([os.path.join(BIN, "bindep"), "--file", os.path.join(ROOT, "bindep.txt"), "--list_all", "newline"], cwd=ROOT, env=dict(os.environ), check=False)
    # bindep exits 0 with the list for this platform (Debian here: openssh-client).
    assert out.returncode == 0, out.stderr
    assert "openssh-client" in out.stdout.split()


def test_ansible_builder_create_renders_a_build_context(installed, tmp_path):
    tarball, _colls, env, _outside = installed
    ee_dir = tmp_path / "ee"
    ee_dir.mkdir()
    with open(os.path.join(ROOT, "meta", "ee", "execution-environment.yml"), encoding="utf-8") as handle:
        definition = handle.read()
    (ee_dir / "execution-environment.yml").write_text(definition, encoding="utf-8")
    # As its header says: the built tarball beside the definition.
    os.symlink(tarball, ee_dir / os.path.basename(tarball))
    context = tmp_path / "context"
    _run([os.path.join(BIN, "ansible-builder"), "create", "-f", str(ee_dir / "execution-environment.yml"), "-c", str(context),
          "--output-filename", "Containerfile"], cwd=str(tmp_path), env=env)
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    assert "ansible-galaxy collection install" in containerfile
    assert "introspect" in containerfile
    assert 'ANSIBLE_INSTALL_REFS="ansible-core>=2.19' in containerfile
    assert (context / "_build" / "collection" / os.path.basename(tarball)).is_file()
    galaxy = yaml.safe_load((context / "_build" / "requirements.yml").read_text(encoding="utf-8"))
    assert galaxy == {"collections": [{"name": "/build/lossless-fabric.tar.gz", "type": "file"}]}
