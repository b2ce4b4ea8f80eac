# SPDX-License-Identifier: GPL-3.0-or-later
"""Modules that run on managed hosts carry only host code (issue 30).

Ansible's own payload finder - ``ansible.executor.module_common.recursive_finder``, the function
``_find_module_utils`` calls to fill the AnsiballZ zip (ansible-core 2.19) - runs on every module that
runs on a managed host; the test fails when a switch, intent, window, cabling or NCCL-controller
file enters its payload, and prints each payload's size (files, lines and bytes of the collection's
module_utils). To see the table: ``pytest -n0 tests/unit/plugins/test_payloads.py``, or run this
file with the venv's python (``--root DIR`` measures another checkout of the collection).

The finder runs in a child process: it needs Ansible's collection loader installed, and installing
it in the pytest process would change how every later test imports ``ansible_collections``.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import pytest
from ansible._internal._ansiballz import _builder
from ansible._internal._datatag._tags import Origin
from ansible.executor import module_common
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PREFIX = "ansible_collections/lossless/fabric/plugins/module_utils/"

# Where each module runs, from the roles and playbooks: module -> the module_utils packages it may carry
# besides the always-allowed ones (_common, _hosts, _ib, _kubernetes).
HOST_MODULES = {
    # playbooks/hosts.yml (hosts: gpu_hosts), roles/change_window (the NICs), roles/localize round 0 (nic_bandwidth)
    "nic_qos": (),
    "nic_counters": (),
    "nic_bandwidth": (),
    # roles/cabling on gpu_hosts (host_links) and subnet_managers (ib_links)
    "host_links": (),
    "ib_links": (),
    # playbooks/infiniband.yml and roles/opensm, roles/change_window/tasks/ib.yml: hosts subnet_managers
    "ib_fabric_facts": (),
    "ib_fabric_verify": (),
    # roles/change_window: on the subnet manager it changes, and on each GPU host (nic_qos' timer, settle.yml)
    "rollback_timer": (),
    # roles/nccl_gate/tasks/run.yml: delegate_to nccl_gate_launch_host, the first host of nccl_gate_launcher_group
    # for mpirun and slurm (localhost only for the kubernetes launcher): a managed host
    "nccl_benchmark": ("_nccl",),
    # roles/localize/tasks/configure.yml: delegate_to localize_launch_host, chosen the same way
    "nccl_localize": ("_nccl", "_localize"),
}
# nccl_result and nccl_compare: roles/nccl_gate/tasks/verify.yml runs them without delegate_to, in the play on
# localhost (playbooks/benchmark.yml, site.yml): controller-run, so their payload is measured, not judged.
CONTROLLER_RUN = ("nccl_result", "nccl_compare")
# The rest are stubs for action plugins that do the work on the controller: nothing is shipped.
ACTION_ONLY = ("cabling_verify", "change_report", "fabric_plan", "nccl_report", "switch_config", "switch_counters", "switch_links")

FORBIDDEN_PACKAGES = ("_platforms", "_switches", "_cabling", "_window", "_localize", "_nccl", "_intent")
# The declared plan contract (_intent/_contract.py imports nothing): a host module may read a plan through it.
ALLOWED_INTENT = ("_intent/__init__.py", "_intent/_contract.py")
# The NCCL report and plot run on the controller only (the nccl_report action), also for the NCCL modules.
CONTROLLER_FILES = ("_nccl/_report.py",)


def forbidden(module: str, files: list[str]) -> list[str]:
    """The files of ``module``'s payload (paths under module_utils/) that a host module must not carry."""
    allowed = HOST_MODULES[module]
    bad = []
    for path in files:
        package = path.split("/")[0]
        if path in CONTROLLER_FILES or (package in FORBIDDEN_PACKAGES and package not in allowed and path not in ALLOWED_INTENT):
            bad.append(path)
    return bad


def measure(root: str, modules: list[str]) -> dict[str, list[list]]:
    """module -> [[path under module_utils/, lines, bytes], ...] of the payload recursive_finder builds.
    Only for a process of its own: it installs Ansible's collection loader for ``root``."""
    farm = tempfile.mkdtemp(prefix="payloads.")
    os.makedirs(os.path.join(farm, "ansible_collections", "lossless"))
    os.symlink(root, os.path.join(farm, "ansible_collections", "lossless", "fabric"))
    _AnsibleCollectionFinder(paths=[farm])._install()  # what ansible-test's pytest plugin does for collection unit tests
    out = {}
    for name in modules:
        path = os.path.join(root, "plugins", "modules", name + ".py")
        with open(path, "rb") as handle:
            data = handle.read()
        zf = zipfile.ZipFile(io.BytesIO(), "w")
        # the same call _find_module_utils makes (module_common.py, ansible-core 2.19), without the cache around it
        module_common.recursive_finder(name, "ansible_collections.lossless.fabric.plugins.modules." + name, Origin(path=path).tag(data), zf,
                                       datetime.datetime.now(datetime.UTC), _builder.ExtensionManager())
        files = []
        for entry in sorted(zf.namelist()):
            # module_utils/__init__.py is the finder's own empty stand-in, not a file of ours
            if entry.startswith(PREFIX) and entry != PREFIX + "__init__.py":
                source = zf.read(entry)
                files.append([entry[len(PREFIX):], len(source.splitlines()), len(source)])
        out[name] = files
    return out


def table(payloads: dict[str, list[list]]) -> str:
    lines = ["%-18s %-10s %5s %7s %9s" % ("module", "runs on", "files", "lines", "bytes")]
    for name in sorted(payloads):
        files = payloads[name]
        where = "host" if name in HOST_MODULES else "controller"
        lines.append("%-18s %-10s %5d %7d %9d" % (name, where, len(files), sum(f[1] for f in files), sum(f[2] for f in files)))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def payloads(tmp_path_factory) -> dict[str, list[list]]:
    dest = tmp_path_factory.mktemp("payloads") / "payloads.json"
    names = sorted(HOST_MODULES) + list(CONTROLLER_RUN)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--json", str(dest), *names], check=True, cwd=ROOT, timeout=300)
    return json.loads(dest.read_text())


def test_every_module_is_classified():
    modules = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules")) if f.endswith(".py") and f != "__init__.py")
    assert sorted([*HOST_MODULES, *CONTROLLER_RUN, *ACTION_ONLY]) == modules


@pytest.mark.parametrize("module", sorted(HOST_MODULES))
def test_a_host_module_carries_only_host_code(module, payloads):
    files = [f[0] for f in payloads[module]]
    assert files, "%s: no module_utils in its payload: the finder did not run" % module
    bad = forbidden(module, files)
    assert not bad, "%s carries controller code in its payload: %s" % (module, ", ".join(bad))


def test_payload_sizes_are_printed(payloads, capsys):
    text = table(payloads)
    with capsys.disabled():
        print("\n" + text)
    assert len(text.splitlines()) == len(HOST_MODULES) + len(CONTROLLER_RUN) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=ROOT, help="the collection checkout to measure (default: this one)")
    parser.add_argument("--json", help="write {module: [[path, lines, bytes], ...]} here instead of printing the table")
    parser.add_argument("modules", nargs="*", default=sorted(HOST_MODULES) + list(CONTROLLER_RUN))
    args = parser.parse_args()
    measured = measure(os.path.abspath(args.root), args.modules)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(measured, handle)
        return
    print(table(measured))
    for name in args.modules:
        bad = forbidden(name, [f[0] for f in measured[name]]) if name in HOST_MODULES else []
        if bad:
            print("%s must not carry: %s" % (name, ", ".join(bad)))


if __name__ == "__main__":
    main()
