#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: the statistics and the gate are plugins/module_utils/_nccl/_stats.py and _nccl/_gate.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_compare
short_description: Compare nccl-tests launches before and after a change and fail on a regression
version_added: 0.1.0
description:
  - Takes the nccl-tests results of several launches before a change (O(pre)) and after it (O(post)); each launch is one
    sample, and each C(-N) cycle of a launch (nccl-tests prints the whole sweep again per cycle) is one sample. Per
    gated size it compares the out-of-place bus bandwidth of the launches and returns the medians, the
    post/pre ratio as a Hodges-Lehmann estimate with its exact confidence interval, and an exact one-sided
    Mann-Whitney p-value for a drop.
  - A size is C(regressed) when the drop is significant (p below O(alpha)) and larger than the threshold,
    max(O(tolerance_percent), twice the noise of the pre launches); C(ok) when there is no such drop and the
    confidence interval excludes one; C(inconclusive) otherwise. With 3 or fewer launches a side no p-value can fall
    below 0.05, so the verdict is C(inconclusive) - run 5 launches a side.
  - Fails on a regression, on an inconclusive verdict unless O(allow_inconclusive=true), when the transport or
    GPUDirect RDMA differs between pre and post, and when the post launches (the median per size) miss the absolute
    gate - the targets, and by default (O(require_complete)) complete, checked logs of one run each. The message has
    one line per reason, naming the size, the metric and the threshold.
  - Pure computation; read-only - it never reports C(changed).
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.info_module
  - lossless.fabric._nccl_gate
options:
  pre:
    description:
      - The launches before the change, one list item per launch.
      - An item is an M(lossless.fabric.nccl_result) result, nccl-tests output as a string, a registered
        M(ansible.builtin.command) result (its C(stdout) is parsed), an M(ansible.builtin.slurp) result, or a C(-J)
        JSON document.
    type: list
    elements: raw
    required: true
  post:
    description:
      - The launches after the change, in the forms O(pre) takes.
    type: list
    elements: raw
    required: true
  sizes:
    description:
      - Message sizes to compare, in bytes or with a C(K), C(M) or C(G) suffix (powers of 1024).
      - Default - every size that a target of O(targets) or O(fabric_targets) covers and every launch printed,
        else the largest size every launch printed.
    type: list
    elements: raw
  tolerance_percent:
    description:
      - The drop in percent that counts as a regression when the pre launches are quieter than half of it.
      - The threshold used is max(O(tolerance_percent), 2 x noise), noise being 100 x (max - min) / median of the
        pre launches at that size.
      - Default - C(tolerance_percent) of O(fabric_targets) when given, else V(5).
    type: float
  alpha:
    description:
      - Significance level of the one-sided test. The confidence interval is two-sided at 1 - O(alpha) (95 % by default),
        or the nearest level above it the sample sizes allow.
    type: float
    default: 0.05
  allow_inconclusive:
    description:
      - Pass when a size is C(inconclusive) (too few launches or too much noise to tell) instead of failing.
      - A C(regressed) size fails either way.
    type: bool
    default: false
  tenant:
    description:
      - Name of a tenant of the fabric. O(pre) is then the host baseline (the bare-metal launches on the tenant's hosts)
        and O(post) the tenant's own launches (M(lossless.fabric.nccl_benchmark) with its O(lossless.fabric.nccl_benchmark#module:tenant)),
        and the result gains RV(tenant_verdict) - C(tenant NAME at bare-metal speed) or C(tenant NAME slower by N %) - from
        the same statistics. A slower tenant fails the task as a regression does.
    type: str
seealso:
  - module: lossless.fabric.nccl_result
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Parse five launches before the change
  lossless.fabric.nccl_result:
    src: "/var/tmp/nccl/pre-{{ item }}.log"
  loop: [1, 2, 3, 4, 5]
  register: nccl_pre

- name: Parse five launches after the change
  lossless.fabric.nccl_result:
    src: "/var/tmp/nccl/post-{{ item }}.log"
  loop: [1, 2, 3, 4, 5]
  register: nccl_post

- name: Fail on a busbw drop beyond 5 % (or twice the noise) from 1 GiB up, and on a post below the intent
  lossless.fabric.nccl_compare:
    pre: "{{ nccl_pre.results }}"
    post: "{{ nccl_post.results }}"
    fabric_targets: "{{ fabric_plan_result.intent.targets }}"
  register: nccl_diff

- name: Compare two sizes with a 3 % tolerance, accepting an inconclusive verdict
  lossless.fabric.nccl_compare:
    pre: "{{ nccl_pre.results }}"
    post: "{{ nccl_post.results }}"
    sizes: [256M, 8G]
    tolerance_percent: 3
    allow_inconclusive: true
    require_transport: [IB]
"""

RETURN = r"""
verdict:
  description: C(regressed) when any size regressed, else C(inconclusive) when any size is, else C(ok).
  returned: success
  type: str
  sample: ok
sizes:
  description: The comparison per gated size.
  returned: success
  type: list
  elements: dict
  contains:
    size:
      description: Message size in bytes.
      type: int
    size_human:
      description: The size in binary units.
      type: str
      sample: 1 GiB
    pre:
      description: Out-of-place busbw of each pre launch in GB/s (a launch that printed the size several times gives its median).
      type: list
      elements: float
    post:
      description: Out-of-place busbw of each post launch in GB/s.
      type: list
      elements: float
    n_pre:
      description: Number of pre launches with a value at this size.
      type: int
    n_post:
      description: Number of post launches with a value at this size.
      type: int
    pre_median:
      description: Median busbw of the pre launches in GB/s.
      type: float
    post_median:
      description: Median busbw of the post launches in GB/s.
      type: float
    ratio:
      description: post_median / pre_median.
      type: float
    hl_ratio:
      description: Hodges-Lehmann estimate of post/pre (median of all post/pre ratios on the log scale).
      type: float
    ci_low:
      description: Lower end of the confidence interval of RV(sizes[].hl_ratio), or C(null) when the sample sizes allow none.
      type: float
    ci_high:
      description: Upper end of the confidence interval, or C(null).
      type: float
    ci_level:
      description: Confidence level of the interval (the exact level the sample sizes allow), or C(null).
      type: float
    p_value:
      description: Exact one-sided Mann-Whitney p-value for post below pre (normal approximation beyond 120 launches).
      type: float
    min_p_value:
      description: The smallest p-value the sample sizes allow; at or above O(alpha) the verdict is C(inconclusive).
      type: float
    noise_percent:
      description: 100 x (max - min) / median of the pre launches.
      type: float
    threshold_percent:
      description: max(tolerance, 2 x RV(sizes[].noise_percent)).
      type: float
    change_percent:
      description: Change post vs pre in percent from the Hodges-Lehmann estimate (negative is a drop).
      type: float
    target_busbw_gbps:
      description: The absolute target that covers this size, when one does.
      type: float
    post_median_meets_target:
      description: Whether RV(sizes[].post_median) reaches RV(sizes[].target_busbw_gbps), when a target covers this size.
      type: bool
    verdict:
      description: C(ok), C(regressed) or C(inconclusive).
      type: str
    reason:
      description: Why, in words.
      type: str
transport:
  description: The transports of the pre and post launches and whether they differ.
  returned: success
  type: dict
  sample: {pre: [RoCE], post: [RoCE], changed: false}
gdr_active:
  description: GPUDirect RDMA of the pre and post launches (as strings) and whether they differ.
  returned: success
  type: dict
  sample: {pre: ["True"], post: ["True"], changed: false}
flags:
  description: Differences between pre and post that fail the task on their own (transport, GPUDirect RDMA).
  returned: success
  type: list
  elements: str
collective:
  description: The collective every launch ran, or C(null) when they differ or it is not known.
  returned: success
  type: str
n_pre:
  description: Number of pre launches.
  returned: success
  type: int
n_post:
  description: Number of post launches.
  returned: success
  type: int
tolerance_percent:
  description: The tolerance used.
  returned: success
  type: float
notes:
  description: Caveats about the comparison (for example fewer launches than the default 5 a side); also shown as warnings.
  returned: always
  type: list
  elements: str
noise_definition:
  description: How noise and threshold are computed.
  returned: success
  type: str
gate:
  description:
    - The absolute gate on the post launches - a result built from the median of each number per size over the post
      launches (the largest C(#wrong)), checked like M(lossless.fabric.nccl_result) checks one log.
  returned: unless O(require_complete=false) and no other gate option is set
  type: dict
  contains:
    passed:
      description: Whether every requirement is met.
      type: bool
    unmet:
      description: One line per unmet requirement.
      type: list
      elements: str
    checked:
      description: Every requirement checked, each with C(requirement), C(passed) and C(measured).
      type: list
      elements: dict
tenant_verdict:
  description:
    - With O(tenant) - C(verdict) (C(bare_metal), C(slower) or C(inconclusive)), C(slower_percent) (the largest
      Hodges-Lehmann drop among the regressed sizes), C(size) and C(text).
  returned: when O(tenant) is set
  type: dict
  sample: {tenant: team-a, verdict: slower, slower_percent: 33.6, size: 1073741824, text: "tenant team-a slower by 33.6 % ..."}
unmet:
  description: Every reason the task fails, one line each; the same lines form C(msg).
  returned: success
  type: list
  elements: str
"""

# Imports follow the documentation blocks, as in every Ansible module (STYLE.md point 5).
from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as _nccl_stats  # noqa: E402

ARGUMENT_SPEC = {
    "pre": {"type": "list", "elements": "raw", "required": True},
    "post": {"type": "list", "elements": "raw", "required": True},
    "sizes": {"type": "list", "elements": "raw"},
    "tolerance_percent": {"type": "float"},
    "alpha": {"type": "float", "default": 0.05},
    "allow_inconclusive": {"type": "bool", "default": False},
    "tenant": {"type": "str"},
    **_nccl_gate.GATE_ARG_SPEC,
}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    fabric, fabric_errors = _intent_targets.fabric_targets(params["fabric_targets"])
    settings, errors = _nccl_gate.gate_settings(params, fabric, fabric_errors)
    sizes = None
    if params["sizes"] is not None:
        sizes = [_nccl_gate.size_option(s, "sizes[%d]" % i, errors) for i, s in enumerate(params["sizes"])]
    tolerance = params["tolerance_percent"]
    if tolerance is not None and not 0 <= tolerance < 100:
        errors.append("tolerance_percent: %r is not a tolerance (0 <= x < 100 percent)" % tolerance)
    if not 0 < params["alpha"] < 0.5:
        errors.append("alpha: %r is not a significance level (0 < x < 0.5)" % params["alpha"])
    launches = {}
    for side in ("pre", "post"):
        launches[side] = []
        for i, item in enumerate(params[side]):
            try:
                launches[side].append(_nccl_parse.load_launch(item, "%s[%d]" % (side, i)))
            except ValueError as exc:
                errors.append(str(exc))
    if errors:
        module.fail_json(msg="\n".join(errors), errors=errors)

    result = _nccl_stats.compare_report(launches["pre"], launches["post"], settings, sizes, tolerance, params["alpha"],
                                        params["allow_inconclusive"])
    # Kept in the result too: Ansible shows each distinct warning once per run.
    result["notes"] = result.pop("compare_warnings")
    for warning in result["notes"]:
        module.warn(warning)
    result["changed"] = False
    if params["tenant"]:
        result["tenant_verdict"] = _nccl_stats.tenant_verdict(result, params["tenant"])
        result["unmet"] = [result["tenant_verdict"]["text"]] + result["unmet"] if result["unmet"] else []
    if result["unmet"]:
        module.fail_json(msg="\n".join(result["unmet"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
