# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The launch side of localization (module nccl_localize): rounds of small nccl-tests jobs.

``_localize`` plans the rounds and reads their results; this file turns one planned job into launch
parameters (2 nodes, 1 GPU each, pinned hosts, one NIC), runs a round's jobs in parallel through a
``launch(job_params) -> launch dict`` callable (the module's, over ``_nccl_jobs``), reads each job's busbw
at bandwidth-bound sizes with the collection's nccl-tests parser, and loops
``plan_round -> launch -> record`` until the plan says done.  No Ansible import.

The NIC pin is ``NCCL_IB_HCA==<nic>``: a leading ``=`` makes NCCL match the name exactly, so ``mlx5_1`` does not
also select ``mlx5_10`` (NCCL environment variables, NCCL_IB_HCA,
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-hca).
"""
from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._localize._flags import record
from ansible_collections.lossless.fabric.plugins.module_utils._localize._infer import infer
from ansible_collections.lossless.fabric.plugins.module_utils._localize._rounds import plan_round
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse

GIB = 1 << 30
# bandwidth-bound sizes: from 1 GiB up (shared/reference/localization.md 2.2); a log without them: its largest size
BANDWIDTH_BOUND_BYTES = GIB
# a guard on top of the plan's own max_rounds: a plan that never ends is a bug, not a reason to run forever
ROUND_LIMIT = 64
_NIC = re.compile(r"[A-Za-z0-9_.:-]+")
_PREFIX_MAX = 30


class JobError(ValueError):
    """A planned job cannot be launched as asked; the message names the job, the host and the value."""


def job_prefix(base: str, job: dict) -> str:
    """``nccl-localize`` + job ``r1-j0`` -> ``nccl-localize-r1-j0`` (a DNS-1035 label of at most 30 characters)."""
    suffix = re.sub(r"[^a-z0-9-]", "-", str(job["id"]).lower()).strip("-")
    return ("%s-%s" % (base[:_PREFIX_MAX - len(suffix) - 1].rstrip("-"), suffix))[:_PREFIX_MAX].rstrip("-")


def job_params(base: dict, job: dict, name_prefix: str = "nccl-localize") -> dict:
    """The launch parameters of one planned job: ``base`` (the module's launch options) pinned to the job's two
    hosts, one GPU per node, one rank each, the job's NIC by exact name and (mpirun, slurm) its GPU."""
    hosts = list(job["hosts"])
    nics = job.get("nics") or {}
    names = sorted({nics.get(h) for h in hosts} - {None})
    if len(names) != 1 or len(hosts) != 2 or any(h not in nics for h in hosts):
        raise JobError("job %s: hosts %s use NICs %s; one job pins one NIC name on both hosts (NCCL_IB_HCA is one "
                       "value for every rank)" % (job["id"], ", ".join(hosts), ", ".join("%s:%s" % (h, nics.get(h)) for h in hosts)))
    nic = names[0]
    if not _NIC.fullmatch(nic):
        raise JobError("job %s: NIC %r is not an HCA name such as mlx5_0" % (job["id"], nic))
    env = dict(base.get("env") or {})
    env["NCCL_IB_HCA"] = "=" + nic
    if base.get("launcher") != "kubernetes" and job.get("gpu") is not None:
        # a pod sees only the GPU the device plugin gave it (as device 0): no pin there
        env["CUDA_VISIBLE_DEVICES"] = str(int(job["gpu"]))
    params = dict(base)
    params.update(env=env, hosts=hosts, nodes=2, gpus_per_node=1, repeats=1, name_prefix=job_prefix(name_prefix, job))
    return params


def busbw(log: str) -> tuple[float | None, str]:
    """(out-of-place busbw in GB/s at bandwidth-bound sizes, why None): the median of the rows from 1 GiB up,
    or the largest size's when the log has none that large. None when the log has no result rows or wrong results."""
    res = _nccl_parse.parse(log or "")
    rows = [r for r in res.get("rows") or [] if r.get("out_of_place") and r["out_of_place"].get("busbw") is not None]
    if not rows:
        why = "; ".join(res.get("failures") or res.get("errors") or []) or "no nccl-tests result rows in the log"
        return None, why
    if res.get("any_nonzero_wrong"):
        return None, "nccl-tests reports wrong results (#wrong > 0)"
    big = [r for r in rows if r["size"] >= BANDWIDTH_BOUND_BYTES]
    if not big:
        largest = max(r["size"] for r in rows)
        big = [r for r in rows if r["size"] == largest]
    return round(statistics.median(float(r["out_of_place"]["busbw"]) for r in big), 3), ""


def run_round(plan: dict, launch: Callable[[dict, dict], dict], workers: int) -> dict[str, dict]:
    """Every job of the round at once (at most ``workers`` in flight); job id -> its launch dict with ``busbw``.

    ``launch(job)`` never raises for a failed launch: a failed, hung or unreadable job is evidence
    (``busbw`` None, which _localize.record counts as slow), not the end of the run.
    """
    jobs = plan["jobs"]
    out: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
        futures = {job["id"]: pool.submit(launch, job) for job in jobs}
        for job in jobs:
            result = futures[job["id"]].result()
            if result.get("status") == "succeeded":
                value, why = busbw(result.get("log") or "")
            else:
                value, why = None, result.get("message") or "launch %s" % result.get("status")
            result["busbw"] = value
            if why:
                result["why"] = why
            out[job["id"]] = result
    return out


def summary(plan: dict, launches: dict[str, dict], entry: dict) -> dict:
    """One round for the module's result: its jobs with the launch name, status, busbw and the record's flag."""
    flags = {j.get("id"): j for j in entry.get("jobs") or []} if isinstance(entry, dict) else {}
    jobs = []
    for job in plan["jobs"]:
        launch = launches.get(job["id"]) or {}
        item = {k: job[k] for k in ("id", "kind", "hosts", "rail", "nics", "gpu", "path", "components") if k in job}
        item.update(name=launch.get("name"), status=launch.get("status"), busbw=launch.get("busbw"),
                    duration_s=launch.get("duration_s"))
        if launch.get("why"):
            item["why"] = launch["why"]
        flag = flags.get(job["id"]) or {}
        for key in ("flag", "slow", "expected"):
            if key in flag:
                item[key] = flag[key]
        jobs.append(item)
    return {"number": plan.get("number"), "purpose": plan.get("purpose"), "jobs": jobs}


def localize(topo: Any, history: list, settings: dict, launch: Callable[[dict], dict], workers: int,
             on_round: Callable[[dict], None] | None = None) -> tuple[dict, list[dict]]:
    """plan_round -> run_round -> record, until the plan returns None; then infer.  (infer result, rounds)."""
    rounds = []
    for _count in range(ROUND_LIMIT):
        plan = plan_round(topo, history, settings)
        if plan is None:
            break
        launches = run_round(plan, launch, workers)
        entry = record(plan, {job_id: r["busbw"] for job_id, r in launches.items()}, settings)
        history.append(entry)
        rounds.append(summary(plan, launches, entry))
        if on_round is not None:
            on_round(rounds[-1])
    else:
        raise JobError("the plan did not end after %d rounds (settings max_rounds)" % ROUND_LIMIT)
    return infer(topo, history, settings), rounds


def loopback_results(raw: dict, cabling: dict) -> dict:
    """Round 0 as ``_localize.loopback_round`` reads it, ``{"host:nic": Gb/s or None}``, from either that form or
    ``{host: <nic_bandwidth result>}`` (``{"nics": {nic: {"gbps": ...}}}``). A host whose test failed (no ``nics``)
    gives None for every NIC the cabling gives it: a failed test counts as slow."""
    out: dict = {}
    for key, value in (raw or {}).items():
        if not isinstance(value, dict):
            out[key] = value
            continue
        host = str(key)
        nics = value.get("nics")
        if not isinstance(nics, dict) or value.get("failed"):
            for nic in ((cabling.get("hosts") or {}).get(host) or {}).get("nics") or {}:
                out["%s:%s" % (host, nic)] = None
            continue
        for nic, res in nics.items():
            gbps = res.get("gbps") if isinstance(res, dict) else res
            out["%s:%s" % (host, nic)] = None if isinstance(gbps, bool) or not isinstance(gbps, (int, float)) else float(gbps)
    return out
