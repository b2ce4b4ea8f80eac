# SPDX-License-Identifier: GPL-3.0-or-later
"""Every platform renders every fabric mode (issue 36) from the plan alone: golden configs in fixtures/modes/<os>-<mode>.txt,
and what each mode must not carry (PFC or the watchdog in ecn_only, ECN in pfc_only). Regenerate the goldens after a
reviewed render change with ``LF_REGEN_GOLDEN=1``."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _render as eos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _render as junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _render as nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _render as nxos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _render as sonic

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "modes")
RENDER = {"eos": eos.render, "nvue": nvue.render, "junos": junos.render, "sonic": sonic.render, "nxos": nxos.render_plan}
PORTS = {"eos": ("Ethernet1/1", "Ethernet2/1"), "nvue": ("swp1", "swp2"), "junos": ("et-0/0/1", "et-0/0/2"),
         "sonic": ("Ethernet0", "Ethernet8"), "nxos": ("Ethernet1/1", "Ethernet1/2")}
MODES = ("lossless", "ecn_only", "pfc_only")

# What a mode must not render, per platform (a regular expression per forbidden form).
NO_PFC = {
    "eos": (r"^\s*priority-flow-control (on|priority \d no-drop|pause watchdog)",),
    "nvue": (r"qos pfc \S+ ", r"qos pfc profile", r"pfc-watchdog (polling-interval|robustness|state)", r"traffic-pool lossless"),
    "junos": (r"no-loss", r"pfc-priority", r"congestion-notification-profile \S+ ", r"pfc-watchdog"),
    "sonic": (r'"pfc_enable", "value": "\d', r'"add", "path": "/PFC_WD/', r'"add", "path": "/BUFFER_PG/', r"pg_lossless", r'pfcwd_sw_enable", "value": "\d'),
    "nxos": (r"pause pfc-cos", r"watch-dog-interval", r"priority-flow-control mode on"),
}
NO_ECN = {
    "eos": (r"^\s*random-detect ecn minimum-threshold \d", r"^\s*random-detect ecn count"),
    "nvue": (r"congestion-control \S+ traffic-class", r"congestion-control profile"),
    "junos": (r"explicit-congestion-notification", r"drop-profile"),
    "sonic": (r"/WRED_PROFILE/", r'"add", "path": "/QUEUE/[^"]*/wred_profile'),
    "nxos": (r"random-detect",),
}


def _devices() -> dict:
    out = {}
    for platform, names in PORTS.items():
        dev = {"kind": "switch", "platform": platform,
               "ports": {name: {"speed": "400G", "cable_length_m": 3 + 2 * i} for i, name in enumerate(names)}}
        if platform == "nvue":
            dev["release"] = "5.14"
        if platform == "junos":
            dev["queue_buffer_bytes"] = 12000000
        out["sw-" + platform] = dev
    return out


@pytest.fixture(scope="module")
def plans() -> dict:
    out = {}
    for mode in MODES:
        intent = {"name": "golden", "transport": "roce", "roce": {"mode": mode},
                  "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 100}]}}}
        out[mode] = _plan.build_plan(intent, _devices())["devices"]
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("platform", sorted(RENDER))
def test_each_platform_renders_each_mode_as_its_golden_config(plans, platform, mode):
    text = "\n".join(RENDER[platform](plans[mode]["sw-" + platform])) + "\n"
    path = os.path.join(HERE, "%s-%s.txt" % (platform, mode))
    if os.environ.get("LF_REGEN_GOLDEN"):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    with open(path, encoding="utf-8") as handle:
        assert text == handle.read(), "render of %s in mode %s differs from %s" % (platform, mode, path)


@pytest.mark.parametrize("platform", sorted(RENDER))
def test_ecn_only_renders_no_pfc_no_watchdog_and_keeps_ecn(plans, platform):
    lines = RENDER[platform](plans["ecn_only"]["sw-" + platform])
    for form in NO_PFC[platform]:
        assert not [line for line in lines if re.search(form, line)], (platform, form)
    assert any(re.search(form, line) for form in NO_ECN[platform] for line in lines), platform


@pytest.mark.parametrize("platform", sorted(RENDER))
def test_pfc_only_renders_no_ecn_and_keeps_pfc(plans, platform):
    lines = RENDER[platform](plans["pfc_only"]["sw-" + platform])
    for form in NO_ECN[platform]:
        assert not [line for line in lines if re.search(form, line)], (platform, form)
    assert any(re.search(form, line) for form in NO_PFC[platform] for line in lines), platform
