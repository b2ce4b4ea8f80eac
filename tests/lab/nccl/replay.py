# SPDX-License-Identifier: GPL-3.0-or-later
"""Which recorded nccl-tests log the lab serves (README.md beside this file).

The inventory variables ``lab_nccl_replay`` (every launch) and
``lab_nccl_replay_post`` (launches labelled ``lossless.fabric/phase: post``)
take ``passing``, ``failing`` or the file name of a real log: one in
``replays/`` here, or one in the shared public corpus. ``resolve`` turns a
choice into absolute file paths (several for a choice that cycles).
"""
from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPLAY_DIR = os.path.join(HERE, "replays")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# The corpus of real logs the repository carries (tests/data/nccl-corpus, provenance in its README.md).
CORPUS_DIR = os.environ.get("LAB_NCCL_CORPUS") or os.path.join(ROOT, "tests", "data", "nccl-corpus")

# Real logs only (copies in replays/, provenance in their .json and in README.md).
CHOICES: dict[str, tuple[str, ...]] = {
    # 2 x DGX A100, 8 x HDR 200G InfiniBand, all_reduce 16 ranks: 181.62 GB/s at 1 GiB, 188.53 at 4 GiB.
    "passing": ("deepops_netop_dgxa100_2node_hdr.txt",),
    # 2 x 8 GPUs over SR-IOV RoCE, untuned, all_reduce 16 ranks: 22.77 GB/s at 1 GiB.
    "failing": ("deepops_k8s_sriov_roce_2node.txt",),
}
PHASE_LABEL = "lossless.fabric/phase"
TENANT_LABEL = "lossless.fabric/tenant"  # _nccl/_launch.py TENANT_LABEL


class ReplayError(RuntimeError):
    """A replay choice that names no log; the message lists what exists."""


def available() -> list[str]:
    names = set()
    for folder in (REPLAY_DIR, CORPUS_DIR):
        if os.path.isdir(folder):
            names.update(n for n in os.listdir(folder) if n.endswith(".txt"))
    return sorted(names)


def resolve(choice: str, key: str = "lab_nccl_replay") -> list[str]:
    """``passing`` | ``failing`` | a log's file name -> absolute paths; ReplayError names the key and the value."""
    if not isinstance(choice, str) or not choice:
        raise ReplayError("%s: %r is not passing, failing or a log file name" % (key, choice))
    if choice in CHOICES:
        return [os.path.join(REPLAY_DIR, name) for name in CHOICES[choice]]
    name = choice if choice.endswith(".txt") else choice + ".txt"
    if os.path.basename(name) != name:
        raise ReplayError("%s: %r is a path; give a file name from %s or the corpus" % (key, choice, REPLAY_DIR))
    for folder in (REPLAY_DIR, CORPUS_DIR):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return [path]
    raise ReplayError("%s: %r is not passing, failing or a recorded log (known: %s)" % (key, choice, ", ".join(available())))


def k8sim_config(default: str | None, post: str | None, tenants: dict | None = None) -> dict:
    """The k8sim config keys for these choices: ``replay`` and per-phase ``replays`` (first match wins).

    ``tenants``: tenant name -> choice, for the MPIJobs nccl_benchmark labels ``lossless.fabric/tenant: <name>``
    (its tenant option): each tenant's benchmark replays its own log (lab_nccl_replay_tenants)."""
    config: dict = {}
    if default:
        config["replay"] = resolve(default, "lab_nccl_replay")
    rules = [{"selector": {TENANT_LABEL: name}, "path": resolve(choice, "lab_nccl_replay_tenants.%s" % name)}
             for name, choice in sorted((tenants or {}).items()) if choice]
    if post:
        rules.append({"selector": {PHASE_LABEL: "post"}, "path": resolve(post, "lab_nccl_replay_post")})
    if rules:
        config["replays"] = rules
    return config
