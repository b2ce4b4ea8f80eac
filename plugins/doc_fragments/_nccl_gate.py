# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The NCCL gate options nccl_result and nccl_compare share.

The argument spec is GATE_ARG_SPEC in plugins/module_utils/_nccl/_gate.py; keep the two in step
(validate-modules compares them in every module that uses both).
"""

from __future__ import annotations


class ModuleDocFragment:
    """Bus-bandwidth targets, transport, GPUDirect, correctness and completeness requirements."""

    DOCUMENTATION = r"""
options:
  targets:
    description:
      - Bus-bandwidth targets, each for a range of message sizes.
      - A target is met when every row of the log whose size is in the range has a busbw of at least O(targets[].min_busbw)
        in each O(targets[].placement). The failure line names the collective, the placement, the size, the measured busbw
        and the target.
      - A target is judged only on rows the log shows. A log that lacks the data a target needs fails it, never passes it -
        no row in the range (the run crashed or the log was cut before that size), a log that stops below
        O(targets[].max_size), an C(N/A) cell, sizes in the range that the header (C(minBytes), C(maxBytes), C(step))
        requested but the log does not show (C(no evidence for sizes X-Y)), a table that starts inside the range with its
        header lost, or one that ends inside an open range without its footer.
      - A damaged row in the range (a cell that is not a number, a missing or extra cell, or cells that contradict each
        other - C(algbw) is not size / time, C(busbw) / C(algbw) differs from the other rows, size is not count times the
        element size) fails the target with its line; it is never dropped.
      - Added to the targets taken from O(fabric_targets).
      - Setting this option, even to an empty list, turns the gate on.
    type: list
    elements: dict
    suboptions:
      min_size:
        description:
          - Smallest message size of the range, in bytes, as an integer or a string with a C(K), C(M) or C(G) suffix
            in powers of 1024, as nccl-tests C(-b)/C(-e) take them (V(64M), V(1G), V(1GiB)). V(1GB) is refused as ambiguous.
        type: raw
        required: true
      max_size:
        description:
          - Largest message size of the range, written like O(targets[].min_size).
          - When set, a log that stops below it fails the target.
          - Without it the range runs up to the largest size in the log.
        type: raw
      min_busbw:
        description:
          - The bus bandwidth every size in the range must reach, in GB/s (nccl-tests C(busbw), 10^9 bytes per second).
          - A number (a numeric string is taken as one). V(auto) is refused here - it needs the hosts' NICs, which only
            the intent has - put C(min_busbw=auto) in the intent's targets and pass O(fabric_targets).
        type: raw
        required: true
      placement:
        description:
          - Which of the two measurements nccl-tests prints per size must reach O(targets[].min_busbw).
        type: str
        choices: [out_of_place, in_place, both]
        default: both
      collective:
        description:
          - Gate only logs of this collective; a log of another collective skips the target. When every target
            is skipped so, the gate fails - a busbw gate that checks nothing never passes.
          - A log whose collective cannot be told from the output fails a target that names one.
          - Without it the target applies to any collective.
        type: str
        choices: [all_reduce, all_gather, reduce_scatter, alltoallv, alltoall, broadcast, reduce, sendrecv, scatter, gather, hypercube]
      gpu_model:
        description:
          - Gate only logs whose GPUs are this model, as nccl-tests' device list names them (CUDA's device name, for
            example V(NVIDIA H200) or V(NVIDIA H100 80GB HBM3)); case and spacing aside, the names must be equal.
          - For node baselines (M(lossless.fabric.nccl_benchmark) with O(lossless.fabric.nccl_benchmark#module:launcher=local)),
            one target per GPU model the cluster has. When targets exist and all name another model, the gate fails.
          - A log without a device list fails a target that names a model.
        type: str
  fabric_targets:
    description:
      - The C(targets) section of the fabric intent, so the numbers live in one place. Pass the validated intent from
        M(lossless.fabric.fabric_plan), for example C({{ fabric_plan_result.intent.targets }}), or the section as written
        in C(lossless_fabric.targets).
      - Keys - C(collectives) (collective name to a list of C(min_size), C(max_size), C(min_busbw)), C(require_transport),
        C(require_gdr) and C(tolerance_percent).
      - C(min_busbw=auto) in the intent is derived by M(lossless.fabric.fabric_plan) from the hosts' NICs (NICs per host
        x link rate x an efficiency per collective, C(docs/benchmark.md) "Targets derived from the hardware"); pass its
        result (C(fabric_plan_result.intent.targets)), which carries the number and how it was derived, and the report
        prints both. The section as written with V(auto) is refused (no hardware in it).
      - Every target in C(collectives) becomes a target for that collective with O(targets[].placement=both).
        A log of a collective the intent has no target for fails, unless O(targets) has a target without
        O(targets[].collective). An intent without C(collectives) gates transport, GPUDirect and C(#wrong) only.
      - Validated by the fabric intent's own rules (the same validator M(lossless.fabric.fabric_plan) uses), so collectives
        are named by their binary (C(all_reduce_perf)) and a section as written gets the intent's defaults -
        C(require_gdr=true), C(tolerance_percent=5). C(require_gdr=null) turns the GPUDirect check off.
      - C(require_transport) and C(require_gdr) apply unless O(require_transport) or O(require_gdr) is set.
        C(tolerance_percent) is the tolerance of M(lossless.fabric.nccl_compare) unless its own option is set.
      - Setting this option turns the gate on.
    type: dict
  require_transport:
    description:
      - Fail unless the log proves the inter-node transport is one of these.
      - Only C(NCCL_DEBUG=INFO) lines prove a transport; a log without them is C(unknown) and fails.
      - Setting this option turns the gate on.
    type: list
    elements: str
    choices: [IB, RoCE, Socket, EFA, NVLink-only]
  require_gdr:
    description:
      - V(true) fails unless the log proves GPUDirect RDMA was active; V(false) fails unless it proves it was off.
      - Only C(NCCL_DEBUG=INFO) lines prove either; without them it is C(unknown) and fails.
      - Setting this option turns the gate on.
    type: bool
  max_wrong:
    description:
      - The largest C(#wrong) count allowed in any cell once the gate is on.
      - An C(Out of bounds values) count above 0 fails.
      - Logs before nccl-tests 2.13 print a maximum deviation (C(error), C(res) in 2017) instead of a count; a deviation
        above nccl-tests' own bound (C(1e-5) for float, C(1e-2) for half and bfloat16, C(1e-12) for double, any for
        integers, times ranks - 1) fails.
      - On its own this option does not turn the gate on.
    type: int
    default: 0
  require_correctness:
    description:
      - V(true) fails a log without correctness evidence - every C(#wrong) or C(error) cell C(N/A) (run with C(-c 0)).
        In-place cells that nccl-tests never checks (C(sendrecv), C(alltoall), C(alltoallv)) are not missing evidence.
      - V(false) accepts such a log; a wrong count or a deviation that the log does show still fails.
    type: bool
    default: true
  accept_transport_errors:
    description:
      - V(false) fails a run whose log shows a NET/IB work completion with an error status on any rank (C(NCCL WARN NET/IB
        ... Got completion ... with error) or C(status=), for example 12, transport retry counter exceeded), even when its
        table completes; the failure names the rank (from nccl-tests' device list), host, GPU, HCA and status.
      - V(true) accepts such a run (the errors stay in the result's C(transport_errors)).
    type: bool
    default: false
  require_complete:
    description:
      - Fail when the log is not complete - cut before the requested maximum size, missing its C(Avg bus bandwidth)
        footer, with elided or damaged rows, with failures reported (C(Test NCCL failure), NET/IB completion errors,
        a launcher that reports a non-zero exit, C(Avg bus bandwidth ... FAILED) from C(NCCL_TESTS_MIN_BW)), or holding
        several independent runs.
      - On by default, so calling the module directly is as safe as the M(lossless.fabric.nccl_gate) role. V(false) with
        no other gate option only parses.
    type: bool
    default: true
"""
