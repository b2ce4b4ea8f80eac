#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: the rounds are plugins/module_utils/_localize/, the jobs _localize/_jobs.py, launching _nccl/_jobs.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_localize
short_description: Find the bad NIC, host, link, leaf or uplink in rounds of small nccl-tests jobs
version_added: 0.1.0
description:
  - Runs rounds of 2-node nccl-tests jobs chosen from the fabric plan's cabling, all jobs of a round at once,
    and narrows the suspects down until it can name them (the algorithm is C(docs/localization.md)).
  - Each job is one launch of O(binary) over two pinned hosts (O(hosts)), one GPU and one rank per node, one NIC
    by exact name (C(NCCL_IB_HCA==<nic>)) and, with V(mpirun) or V(slurm), its GPU (C(CUDA_VISIBLE_DEVICES)); a
    Kubernetes worker sees only the GPU the device plugin gives it. MPIJob workers get a pod anti-affinity on the
    node name, so that the two workers of a job never share a node.
  - Each job's busbw is the median out-of-place busbw of its sizes from 1 GiB up (the largest size when none is
    that large). A job that fails, times out or prints no result counts as slow - it is evidence, not an error.
  - Before the first round it checks every option, the cabling and the hosts (the message names the key and the
    value), and with V(kubernetes) that the MPI Operator is there and every host has a GPU and the RDMA resource.
  - Returns the suspects ranked with their evidence, every round with its jobs and busbw, and the report in
    Markdown. With O(exclude) it also returns, but never applies, what to drain (Slurm) or cordon and taint
    (Kubernetes).
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._nccl_launch
attributes:
  check_mode:
    support: full
    details:
      - Plans round 1 and renders its jobs (RV(plan)), launches nothing and does not contact the cluster.
        C(changed) is V(false).
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - Every run is a new set of measurements; a run that launches reports C(changed=true).
options:
  cabling:
    description:
      - The fabric plan's cabling, C(fabric_plan_result.cabling) (module M(lossless.fabric.fabric_plan)) - every
        host's NICs with their rail and leaf port, every switch's ports and peers.
    type: dict
    required: true
  hosts:
    description: The GPU hosts to search (inventory names, also the node names); at least two, each with its rails in O(cabling).
    type: list
    elements: str
    required: true
  loopback:
    description:
      - Round 0, measured before this module runs - C(ib_write_bw) loopback per NIC (module
        M(lossless.fabric.nic_bandwidth)) - either C(<host>:<nic>) to Gb/s (null when the test failed), or each host
        to its M(lossless.fabric.nic_bandwidth) result (a host whose test failed counts as slow on every NIC).
      - A NIC slow on its own is a host-side suspect; a NIC that is fine there but slow in pairs points at its link or
        switch. Empty - no round 0.
    type: dict
    default: {}
  loopback_expected_gbps:
    description: The loopback rate a healthy NIC reaches, in Gb/s; default from the cabling's port speeds.
    type: float
  settings:
    description:
      - The search's settings, the keys of C(_localize.DEFAULT_SETTINGS) (repeats, the flag rule, the ratio, the
        round limit; role variables C(localize_<key>)). An unknown key is refused.
      - C(cross_rail) defaults to V(false) here - one C(NCCL_IB_HCA) value reaches every rank of a job, so a job with
        NIC r on one host and NIC r' on the other cannot be pinned; with V(true) such a job is refused, naming it.
    type: dict
    default: {}
  min_bytes:
    description: Smallest message size (C(-b)) of every job; bandwidth-bound sizes start at 1 GiB.
    type: raw
    default: 1G
  max_bytes:
    description: Largest message size (C(-e)) of every job.
    type: raw
    default: 4G
  workers:
    description: Jobs in flight at once (threads); a round with more jobs runs them in waves.
    type: int
    default: 16
  name_prefix:
    description: Prefix of the job names; each job is C(<name_prefix>-<job id>-<6 random characters>-1).
    type: str
    default: nccl-localize
  exclude:
    description:
      - Also return RV(exclusion) - the Slurm C(scontrol update) argument vectors that drain the suspects' nodes
        (V(slurm)), or the nodes to cordon and taint (V(kubernetes)). Nothing is applied here (role
        C(lossless.fabric.localize) applies it when asked).
    type: str
    choices: [none, slurm, kubernetes]
    default: none
  exclude_reason:
    description: The reason recorded with the exclusion (Slurm C(reason=), the taint's value); one line.
    type: str
    default: lossless.fabric localize suspect
notes:
  - The lab (C(inventories/lab)) with C(lab_perf_faults) set computes every job's output from a performance model
    of its cabling and the injected faults (C(docs/lab.md)); real hardware is needed for real evidence.
seealso:
  - module: lossless.fabric.nccl_benchmark
  - module: lossless.fabric.fabric_plan
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Find the bad part over the GPU hosts, MPIJobs from the controller
  lossless.fabric.nccl_localize:
    launcher: kubernetes
    cabling: "{{ fabric_plan_result.cabling }}"
    hosts: "{{ groups['gpu_hosts'] }}"
    nccl_env: "{{ fabric_plan_result.nccl_env }}"
    algo: Ring
    kubernetes:
      kubeconfig: "{{ lossless_fabric_kubeconfig }}"
      image: nvcr.io/nvidia/pytorch:24.05-py3
  register: found

- name: mpirun from the first GPU host, with round 0 results, a Slurm drain list returned
  lossless.fabric.nccl_localize:
    launcher: mpirun
    binary_dir: /opt/nccl-tests/build
    cabling: "{{ fabric_plan_result.cabling }}"
    hosts: "{{ groups['gpu_hosts'] }}"
    loopback: {"gpu1:mlx5_0": 390.2, "gpu1:mlx5_1": 196.0, "gpu2:mlx5_0": 389.9, "gpu2:mlx5_1": 390.4}
    settings:
      repeats: 2
    exclude: slurm
  delegate_to: "{{ groups['gpu_hosts'][0] }}"
  run_once: true
"""

RETURN = r"""
verdict:
  description: V(found), V(ambiguous), V(clean) or V(inconclusive) (C(verdict) of RV(localization)); V(planned) in check mode.
  returned: always
  type: str
suspect_names:
  description: The suspects in rank order, each as C(<kind> <name>) (for example V(nic gpu1:mlx5_1)).
  returned: when not in check mode
  type: list
  elements: str
localization:
  description:
    - The inference - C(verdict), C(suspects) ranked (each C(component) C({kind, name}), C(rank), C(host), C(rail),
      C(leaf_port), C(slow), C(fast), C(evidence) and the C(group) of components it cannot be told from), C(rounds),
      C(jobs) and C(gpu_minutes) spent.
  returned: when not in check mode
  type: dict
rounds:
  description: Every round run, in order.
  returned: always
  type: list
  elements: dict
  contains:
    number:
      description: The round number (1 first; round 0 is O(loopback)).
      type: int
    purpose:
      description: Why the round was planned, for example V(intra-leaf), V(cross-leaf) or V(verify).
      type: str
    jobs:
      description:
        - Each job - C(id), C(hosts), C(rail), C(nics), C(gpu), C(path), C(components), the launch C(name),
          C(status), C(busbw) (GB/s, C(null) when it failed), C(why) it has none, and the flag the round gave it.
      type: list
      elements: dict
plan:
  description: The first round as planned, with the job names and the commands or manifests each job would run.
  returned: in check mode
  type: dict
report:
  description: The result in Markdown, for people.
  returned: when not in check mode
  type: str
exclusion:
  description: What would exclude the suspects (O(exclude)); applied by nobody here.
  returned: when O(exclude) is not V(none) and not in check mode
  type: list
  elements: dict
"""

# Imports follow the documentation blocks, as in every Ansible module (STYLE.md point 5).
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, env_fallback  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils import _localize  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._localize import _jobs as _localize_jobs  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _jobs as _nccl_jobs  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as _nccl_launch  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _runner as _nccl_runner  # noqa: E402

ARGUMENT_SPEC = _nccl_jobs.argument_spec({
    "cabling": {"type": "dict", "required": True},
    "hosts": {"type": "list", "elements": "str", "required": True},
    "loopback": {"type": "dict", "default": {}},
    "loopback_expected_gbps": {"type": "float"},
    "settings": {"type": "dict", "default": {}},
    "min_bytes": {"type": "raw", "default": "1G"},
    "max_bytes": {"type": "raw", "default": "4G"},
    "workers": {"type": "int", "default": 16},
    "name_prefix": {"type": "str", "default": "nccl-localize"},
    "exclude": {"type": "str", "choices": ["none", "slurm", "kubernetes"], "default": "none"},
    "exclude_reason": {"type": "str", "default": "lossless.fabric localize suspect"},
}, (env_fallback, ["K8S_AUTH_KUBECONFIG"]))

# options of this module that are not launch options of a job
_OWN = ("cabling", "loopback", "loopback_expected_gbps", "settings", "workers", "exclude", "exclude_reason")


class Localizer:
    """One module run: check everything, then the rounds (or, in check mode, round 1's plan)."""

    def __init__(self, module: AnsibleModule) -> None:
        self.module = module
        params = module.params
        self.base = {k: v for k, v in params.items() if k not in _OWN and k != "name_prefix"}
        self.prefix = params["name_prefix"]
        self.as_root = os.geteuid() == 0
        self.timeout_bin = None

    def fail(self, msg: str, **extra) -> None:
        self.module.fail_json(msg=msg, **extra)

    def settings(self) -> dict:
        given = dict(self.module.params["settings"] or {})
        # one NCCL_IB_HCA value reaches every rank of a job: a cross-rail job (NIC r on one host, r' on the other)
        # cannot be pinned, so this module plans none unless asked (and then refuses such a job, naming it)
        given.setdefault("cross_rail", False)
        try:
            return _localize.check_settings(given)
        except _localize.LocalizeError as exc:
            self.fail(str(exc))
        return {}

    def render(self, job: dict) -> tuple[dict, dict, dict]:
        params = _localize_jobs.job_params(self.base, job, self.prefix)
        spec, errors = _nccl_launch.validate(params)
        if errors:
            raise _localize_jobs.JobError("job %s: %s" % (job["id"], "; ".join(errors)))
        return params, spec, _nccl_jobs.render(spec, _nccl_jobs.token(), self.module.tmpdir, self.as_root)

    def launch(self, job: dict) -> dict:
        params, spec, rendered = self.render(job)
        return _nccl_jobs.launch_one(spec, params, rendered, self.module.run_command, self.timeout_bin)

    def preflight(self, hosts: list[str]) -> None:
        """Before any round: the launcher can run at all (a broken launcher is not evidence against the fabric)."""
        if self.base["launcher"] != "kubernetes":
            self.timeout_bin = self.module.get_bin_path("timeout", required=True)
            return
        params = dict(self.base, hosts=list(hosts), nodes=len(hosts), gpus_per_node=1, repeats=1, name_prefix=self.prefix)
        spec, errors = _nccl_launch.validate(params)
        if errors:
            self.fail("\n".join(errors), errors=errors)
        rendered = _nccl_launch.render(spec, _nccl_jobs.token())
        runner = _nccl_jobs.kubernetes_runner(spec, params)
        try:
            runner.connect()
            runner.preflight(rendered["manifests"][1])
            runner.ensure_namespace(rendered["manifests"][0])
        except _nccl_runner.LaunchError as exc:
            self.fail(str(exc))
        for warning in runner.warnings:
            self.module.warn(warning)

    def run(self) -> None:
        params = self.module.params
        settings = self.settings()
        try:
            topo = _localize.topology(params["cabling"], params["hosts"])
            history = []
            if params["loopback"]:
                loopback = _localize_jobs.loopback_results(params["loopback"], params["cabling"])
                history.append(_localize.loopback_round(topo, loopback, params["loopback_expected_gbps"], settings))
            first = _localize.plan_round(topo, list(history), settings)
            planned = [(job, self.render(job)) for job in (first or {}).get("jobs") or []]
        except (_localize.LocalizeError, _localize_jobs.JobError) as exc:
            self.fail(str(exc))
        if self.module.check_mode:
            plan = dict(first or {}, jobs=[dict(job, name=rendered["names"][0],
                                                **{k: rendered[k] for k in ("commands", "manifests") if k in rendered})
                                           for job, (_params, _spec, rendered) in planned])
            self.module.exit_json(changed=False, verdict="planned", plan=plan, rounds=[])

        self.preflight(params["hosts"])
        try:
            result, rounds = _localize_jobs.localize(topo, history, settings, self.launch, params["workers"])
        except (_localize.LocalizeError, _localize_jobs.JobError) as exc:
            self.fail(str(exc))
        names = [_localize.component_text(s["component"]) for s in result.get("suspects") or []]
        out = {"changed": True, "verdict": result.get("verdict"), "suspect_names": names, "localization": result, "rounds": rounds,
               "report": _localize.report_markdown(result)}
        if params["exclude"] != "none":
            try:
                out["exclusion"] = _localize.exclusion(result, params["exclude"], params["exclude_reason"])
            except _localize.LocalizeError as exc:
                self.fail(str(exc), **out)
        self.module.exit_json(**out)


def main() -> None:
    # AnsibleModule fills suboption defaults into a dict default in place: keep the module-level spec pristine
    module = AnsibleModule(argument_spec=_nccl_jobs.argument_spec(ARGUMENT_SPEC), supports_check_mode=True)
    if module.params["workers"] < 1:
        module.fail_json(msg="workers: %d is below 1" % module.params["workers"])
    Localizer(module).run()


if __name__ == "__main__":
    main()
