# SPDX-License-Identifier: GPL-3.0-or-later
"""_counters.run_fabric without devices: a result per switch, failures named
per switch with the others kept, warnings named by switch, bad workers refused."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._switches import _counters


def _fake_run(results):
    def run(args, device):
        outcome = results[device]
        if isinstance(outcome, Exception):
            raise outcome
        return dict(outcome, seen_host=args["host"])

    return run


def test_a_result_per_switch_and_each_failure_named(monkeypatch):
    results = {
        "leaf1": {"changed": False, "counters": {"device": "leaf1"}, "warnings": ["leaf1: show x: the device answered % Invalid"]},
        "leaf2": {"changed": False, "failed": True, "msg": "leaf2 (10.0.0.2:22): HOST KEY CHANGED: ..."},
        "leaf3": RuntimeError("channel closed"),
        "leaf4": {"changed": False, "counters": {"device": "leaf4"}},
    }
    monkeypatch.setattr(_counters, "run", _fake_run(results))
    per_switch = {name: {"platform": "eos", "host": "10.0.0.%s" % name[-1]} for name in results}
    out = _counters.run_fabric(per_switch, workers=2)
    assert sorted(out["switches"]) == ["leaf1", "leaf2", "leaf3", "leaf4"]
    assert out["changed"] is False and out["failed"] is True
    assert out["msg"].splitlines() == [
        "2 of 4 switches failed:",
        "leaf2 (10.0.0.2:22): HOST KEY CHANGED: ...",
        "leaf3: unexpected RuntimeError: channel closed",
    ]
    # Each switch ran with its own arguments; the ones that answered keep their snapshots.
    assert out["switches"]["leaf1"]["seen_host"] == "10.0.0.1" and out["switches"]["leaf4"]["counters"] == {"device": "leaf4"}
    # Warnings move to the task, each still naming its switch.
    assert out["warnings"] == ["leaf1: show x: the device answered % Invalid"] and "warnings" not in out["switches"]["leaf1"]


def test_all_answered_is_not_a_failure(monkeypatch):
    monkeypatch.setattr(_counters, "run", _fake_run({"s1": {"changed": False, "counters": {}}}))
    out = _counters.run_fabric({"s1": {"platform": "nvue", "host": "h"}}, workers=32)
    assert "failed" not in out and "msg" not in out and list(out["switches"]) == ["s1"]


def test_workers_below_one_is_refused_naming_the_value():
    out = _counters.run_fabric({"s1": {"platform": "eos", "host": "h"}}, workers=0)
    assert out["failed"] and out["msg"] == "workers: 0 is not a positive number of threads" and out["switches"] == {}
