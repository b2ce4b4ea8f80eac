#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: the parser and the gate are plugins/module_utils/_nccl/_parse.py and _nccl/_gate.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_result
short_description: Parse nccl-tests output and gate it on bus bandwidth, transport and correctness
version_added: 0.1.0
description:
  - Parses the output of an nccl-tests binary (C(all_reduce_perf), C(all_gather_perf) and every other collective) of any
    release, from the 2017 layout to the C(-J) JSON file, with launcher prefixes (C(mpirun --tag-output), C(srun -l))
    and C(NCCL_DEBUG=INFO) lines mixed in.
  - Returns the table per message size and what the log proves about the run - NCCL version, ranks, nodes, the
    inter-node transport and GPUDirect RDMA. Nothing is guessed - what the log does not show is C(null) or C(unknown).
  - It also checks the result and fails with one line per unmet requirement, each naming the size, the metric, the
    measured value and the threshold. A log that lacks what a requirement needs fails it. O(require_complete) is on by
    default, so a cut, damaged, failed or multi-job log fails even without targets; set O(require_complete=false) and no
    other gate option to only parse.
  - Read-only - it never reports C(changed). Reads O(src) on the managed host; use O(content) for output already
    held in a variable.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.info_module
  - lossless.fabric._nccl_gate
options:
  src:
    description:
      - Path of a file on the managed host that holds nccl-tests stdout (and stderr, if captured) or a C(-J) JSON file.
      - Mutually exclusive with O(content); one of the two is required.
    type: path
  content:
    description:
      - nccl-tests output as a string, for example the C(stdout) of a registered task.
      - Mutually exclusive with O(src); one of the two is required.
    type: str
seealso:
  - module: lossless.fabric.nccl_compare
  - module: lossless.fabric.fabric_plan
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Parse a log on the GPU host that ran the benchmark (no gate at all)
  lossless.fabric.nccl_result:
    src: /var/tmp/nccl/all_reduce_perf.log
    require_complete: false
  register: nccl

- name: Show the bus bandwidth at the largest size
  ansible.builtin.debug:
    msg: "{{ nccl.oop_busbw_at_largest_size }} GB/s at {{ nccl.largest_size_bytes }} B over {{ nccl.transport }}"

- name: Gate - at least 180 GB/s from 1 GiB up, both placements, over RoCE with GPUDirect, a complete log
  lossless.fabric.nccl_result:
    src: /var/tmp/nccl/all_reduce_perf.log
    targets:
      - min_size: 1G
        min_busbw: 180
        placement: both
      - min_size: 64M
        max_size: 512M
        min_busbw: 120
        placement: out_of_place
    require_transport: RoCE
    require_gdr: true

- name: Gate on the targets of the fabric intent (collectives, transport, GPUDirect)
  lossless.fabric.nccl_result:
    content: "{{ benchmark_run.stdout }}"
    fabric_targets: "{{ fabric_plan_result.intent.targets }}"
  register: nccl_gate

- name: Gate on correctness only (no wrong results above 0, checks not switched off)
  lossless.fabric.nccl_result:
    src: /var/tmp/nccl/all_gather_perf.log
    targets: []
    max_wrong: 0
"""

RETURN = r"""
nccl_tests_version:
  description: The nccl-tests version the log prints (2.13.4 and later), or C(null).
  returned: success
  type: str
  sample: 2.17.1
nccl_tests_version_inferred:
  description: When the log prints no version, the release range its layout belongs to, or C(null).
  returned: success
  type: str
  sample: ">=2.13 and <2.17.3"
nccl_version:
  description: The NCCL library version (C(NCCL version) line or C(nccl-library=)), or C(null).
  returned: success
  type: str
  sample: 2.21.5
collective:
  description: The collective the log measured (C(all_reduce), C(all_gather), ...), or C(null) when the log does not show it.
  returned: success
  type: str
  sample: all_reduce
ranks:
  description: Number of ranks, when the log shows or implies it, else C(null).
  returned: success
  type: int
  sample: 16
nodes:
  description: Number of nodes, when the log shows it (host names in the device list or debug lines), else C(null).
  returned: success
  type: int
  sample: 2
gpus_per_node:
  description: GPUs per node, when the log shows it, else C(null).
  returned: success
  type: int
  sample: 8
gpu_model:
  description: The GPU model from the device list, or C(null).
  returned: success
  type: str
  sample: NVIDIA H100 80GB HBM3
rows:
  description:
    - One entry per table row, in log order (a log with several sweeps repeats sizes).
    - O(targets[].min_busbw) is compared with RV(rows[].out_of_place.busbw) and the C(busbw) of RV(rows[].in_place).
  returned: success
  type: list
  elements: dict
  contains:
    size:
      description: Message size in bytes.
      type: int
    count:
      description: Element count.
      type: int
    type:
      description: Data type (C(float), C(half), ...).
      type: str
    redop:
      description: Reduction operation, or C(null) for collectives without one.
      type: str
    root:
      description: Root rank, C(-1) for rootless collectives, or C(null) when the layout has no root column.
      type: int
    out_of_place:
      description: The out-of-place measurement, or C(null) when the row has none.
      type: dict
      contains:
        time_us:
          description: Time per iteration in microseconds, C(null) for C(N/A).
          type: float
        algbw:
          description: Algorithm bandwidth in GB/s, C(null) for C(N/A).
          type: float
        busbw:
          description: Bus bandwidth in GB/s, C(null) for C(N/A).
          type: float
        wrong:
          description: The C(#wrong) count, C(null) when not checked (C(-c 0)) or when the log prints a deviation instead.
          type: int
        max_delta:
          description: The maximum deviation printed by releases before 2.13, else C(null).
          type: float
    in_place:
      description: The in-place measurement, with the keys of RV(rows[].out_of_place), or C(null).
      type: dict
    damaged:
      description: Only on a row whose cells contradict the other rows - why (see RV(damaged_rows)); such a row is no evidence.
      type: str
  sample:
    - size: 1073741824
      count: 268435456
      type: float
      redop: sum
      root: -1
      out_of_place: {time_us: 10512.0, algbw: 102.14, busbw: 191.52, wrong: 0, max_delta: null}
      in_place: {time_us: 10498.0, algbw: 102.28, busbw: 191.77, wrong: 0, max_delta: null}
size_rows:
  description: Number of rows.
  returned: success
  type: int
  sample: 30
largest_size_bytes:
  description: The largest message size in the log, or C(null) without rows.
  returned: success
  type: int
  sample: 4294967296
oop_busbw_at_largest_size:
  description: Out-of-place busbw in GB/s at the largest size, or C(null).
  returned: success
  type: float
  sample: 191.05
avg_bus_bandwidth:
  description: The C(Avg bus bandwidth) footer value as printed, or C(null) when the log has no footer.
  returned: success
  type: str
  sample: "86.7523"
out_of_bounds:
  description: The C(Out of bounds values) footer as printed (count and C(OK)/C(FAILED)), or C(null).
  returned: success
  type: str
  sample: 0 OK
transport:
  description:
    - The inter-node transport the C(NCCL_DEBUG=INFO) lines prove - C(IB), C(RoCE), C(Socket), C(EFA), C(NVLink-only) -
      or C(unknown) when the log does not prove one (a log without debug lines always).
  returned: success
  type: str
  sample: RoCE
transport_evidence:
  description: The log lines or facts RV(transport) rests on.
  returned: success
  type: list
  elements: str
gdr_active:
  description: V(true) or V(false) when the debug lines prove whether GPUDirect RDMA was used, else the string C(unknown).
  returned: success
  type: raw
  sample: true
gdr_evidence:
  description: The log lines or facts RV(gdr_active) rests on.
  returned: success
  type: list
  elements: str
errors:
  description: Error lines of the run (NCCL WARN, test failures, aborts, failed footers), each once.
  returned: success
  type: list
  elements: str
failures:
  description:
    - Failures the run reported - test failures, timeouts, NET/IB completion errors, a launcher's non-zero exit,
      C(Avg bus bandwidth ... FAILED) (C(NCCL_TESTS_MIN_BW)); a gate fails on any, with the line.
  returned: success
  type: list
  elements: str
truncated:
  description: Whether the log is cut or damaged (see RV(truncated_reasons)).
  returned: success
  type: bool
truncated_reasons:
  description: Why the log counts as truncated.
  returned: success
  type: list
  elements: str
  sample: ['no "Avg bus bandwidth" footer', the last row (33554432 B) is below the requested maxBytes (8589934592 B)]
complete:
  description: Whether the log has rows, is not truncated, reports no failure and holds one run.
  returned: success
  type: bool
damaged_rows:
  description:
    - Lines inside the table that are not rows nccl-tests prints - a cell that is not a number, a missing or extra cell,
      a cut line, or cells that contradict the other rows (algbw is not size / time, busbw / algbw differs, size is not
      count times the element size, a type or op nccl-tests does not print). Each makes the log truncated.
  returned: success
  type: list
  elements: dict
  sample: [{line: 40, size: 1073741824, reason: busbw / algbw differs from the other rows}]
independent_runs:
  description: Whether the log holds more than one job (see RV(independent_reasons)); a gate fails on it.
  returned: success
  type: bool
independent_reasons:
  description:
    - Why the log is several jobs, not one - headers or device lists that restart at rank 0, a size printed twice in a row,
      sizes that restart with a sweep unlike the first (not C(-N) cycles, C(-d all) or C(-o all)), busbw 0 in every row
      (one-rank runs).
  returned: success
  type: list
  elements: str
parse_warnings:
  description: Oddities of the log that do not make it wrong (several sweeps in one stream, header and rows that disagree).
  returned: success
  type: list
  elements: str
gate:
  description: The result of the gate.
  returned: unless O(require_complete=false) and no other gate option is set
  type: dict
  contains:
    passed:
      description: Whether every requirement is met.
      type: bool
    unmet:
      description: One line per unmet requirement; the same lines form C(msg) when the task fails.
      type: list
      elements: str
      sample: ["all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 181.62 GB/s < target 185.00 GB/s"]
    checked:
      description: Every requirement checked, met or not.
      type: list
      elements: dict
      contains:
        requirement:
          description: The requirement in words.
          type: str
        passed:
          description: Whether it is met.
          type: bool
        measured:
          description: The measured value it was judged on (for a busbw target the lowest busbw in range), or C(null).
          type: str
header:
  description: The values of the nccl-tests parameter line (C(nThread), C(minBytes), C(maxBytes), ...), or C(null).
  returned: success
  type: dict
format:
  description: C(text) or C(json) (a C(-J) file).
  returned: success
  type: str
cycles:
  description:
    - The number of C(-N) cycles in the table (nccl-tests prints the whole sweep once per cycle); each row has its
      C(cycle). M(lossless.fabric.nccl_compare) takes each cycle as one sample. C(0) without rows.
  returned: success
  type: int
single_rank:
  description:
    - The log shows one rank (C(-g 1), one process) - all_reduce, all_gather and reduce_scatter then print busbw 0 by
      definition, and a busbw target on them fails saying so.
  returned: success
  type: bool
memory:
  description:
    - The C(-M 1) report (C(# GPU memory usage)) - C(initialization), C(user_allocated), C(collective) and C(total), each
      C(text) as printed and C(bytes); C(null) when absent.
  returned: success
  type: dict
run_notes:
  description:
    - Header lines of C(-z), C(-I)/C(-K), C(-p) and the notices of ignored options (C(-R), C(-x)), as printed.
  returned: success
  type: list
  elements: str
libibverbs_missing:
  description: NCCL said C(Failed to open libibverbs.so[.1]) (INFO from NCCL 2.19, WARN before) - no RDMA on that host.
  returned: success
  type: bool
unrecognised:
  description: Why the input is not nccl-tests output the parser knows (a cut or foreign JSON document); it is also a failure.
  returned: when the input is refused
  type: str
"""

# Imports follow the documentation blocks, as in every Ansible module (STYLE.md point 5).
from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse  # noqa: E402

ARGUMENT_SPEC = {
    "src": {"type": "path"},
    "content": {"type": "str"},
    **_nccl_gate.GATE_ARG_SPEC,
}


def main() -> None:
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[("src", "content")],
        required_one_of=[("src", "content")],
        supports_check_mode=True,
    )
    fabric, fabric_errors = _intent_targets.fabric_targets(module.params["fabric_targets"])
    settings, errors = _nccl_gate.gate_settings(module.params, fabric, fabric_errors)
    if errors:
        module.fail_json(msg="\n".join(errors), errors=errors)

    text = module.params["content"]
    if module.params["src"] is not None:
        try:
            with open(module.params["src"], "rb") as handle:
                text = handle.read()
        except OSError as exc:
            module.fail_json(msg="src: cannot read %s: %s" % (module.params["src"], exc.strerror or exc))

    result = _nccl_parse.parse(text)
    result["parse_warnings"] = result.pop("warnings")
    for warning in result["parse_warnings"]:
        module.warn(warning)
    result["changed"] = False
    if settings["active"]:
        result["gate"] = _nccl_gate.gate_report(result, settings)
        if not result["gate"]["passed"]:
            module.fail_json(msg="\n".join(result["gate"]["unmet"]), **result)
    elif result.get("unrecognised"):
        # parse only: input that is no nccl-tests output the parser knows is refused, never an empty success
        module.fail_json(msg="%s: %s" % ("src %s" % module.params["src"] if module.params["src"] else "content", result["unrecognised"]),
                         **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
