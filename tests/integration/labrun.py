# SPDX-License-Identifier: GPL-3.0-or-later
"""What the integration tests share to run ansible-playbook as a user does, from the repo root, and to run it
inside a lab of their own (tests/lab/launcher.py run on a copy of inventories/lab, with their own run and report
folders, so nothing collides with a lab the user has up)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
LAB = os.path.join(ROOT, "inventories", "lab")
GENERATED = "lab_run.generated.yml"  # what the launcher writes into the inventory while the lab is up


def ansible_env(**extra: str) -> dict:
    """The environment: this tree's ansible.cfg (collections_path resolves lossless.fabric here), no colours."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", **extra)
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)
    return env


def run(argv: list[str], timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """argv from the repo root; the output captured, the exit code left to the test."""
    return subprocess.run(argv, cwd=ROOT, env=env or ansible_env(), capture_output=True, text=True, check=False, timeout=timeout)


def copy_lab_inventory(dest: str | os.PathLike) -> str:
    """A copy of inventories/lab at dest (without the launcher's generated file); its path."""
    shutil.copytree(LAB, dest, ignore=shutil.ignore_patterns(GENERATED))
    return str(dest)


def launcher(inventory: str | os.PathLike, run_dir: str | os.PathLike, report_dir: str | os.PathLike) -> list[str]:
    """The argv prefix that runs a command inside a lab of its own: launcher.py run ... --"""
    return [sys.executable, os.path.join(ROOT, "tests", "lab", "launcher.py"), "run", "-i", str(inventory),
            "--run-dir", str(run_dir), "--report-dir", str(report_dir), "--"]


def assert_lab_down(inventory: str | os.PathLike, run_dir: str | os.PathLike, out: subprocess.CompletedProcess | None = None) -> None:
    """The launcher stopped every simulator it started and removed its generated inventory file."""
    pids = os.path.join(str(run_dir), "pids")
    tail = out.stdout[-3000:] if out is not None else ""
    assert not os.path.isdir(pids) or not os.listdir(pids), "a lab process outlived its run: %s\n%s" % (os.listdir(pids), tail)
    assert not os.path.exists(os.path.join(str(inventory), GENERATED)), tail
