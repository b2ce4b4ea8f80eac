# SPDX-License-Identifier: GPL-3.0-or-later
"""_intent_scope: every host in scope sees one lossless_fabric, or the refusal names the hosts, groups and keys."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _scope as _intent_scope

INTENT = {"name": "lab", "roce": {"dscp": 26, "cnp": {"dscp": 48}}, "links": [{"speed": 400}]}
GROUPS = {"all": ["leaf1", "leaf2", "gpu1", "gpu2"], "switches": ["leaf1", "leaf2"], "gpu_hosts": ["gpu1", "gpu2"], "ungrouped": []}


def _other():
    return {"name": "lab", "roce": {"dscp": 24, "cnp": {"dscp": 48}}, "links": [{"speed": 400}]}


def test_one_intent_everywhere_passes():
    views = {h: dict(INTENT) for h in ("leaf1", "leaf2", "gpu1", "gpu2")}
    assert _intent_scope.check("localhost", INTENT, views, GROUPS) is None
    # the task host being one of the hosts in scope changes nothing
    assert _intent_scope.check("leaf1", INTENT, views, GROUPS) is None


def test_a_group_override_is_refused_naming_hosts_groups_and_keys():
    views = {"leaf1": INTENT, "leaf2": INTENT, "gpu1": _other(), "gpu2": _other()}
    msg = _intent_scope.check("localhost", INTENT, views, GROUPS)
    assert msg.startswith("lossless_fabric: the hosts in scope see 2 different intents")
    assert "(1) localhost, leaf1, leaf2 (groups switches): the intent this plan would use" in msg
    assert "(2) gpu1, gpu2 (groups gpu_hosts): differs from (1) at roce.dscp: 26 != 24" in msg
    assert "cnp" not in msg and "links" not in msg  # only where they differ


def test_three_versions_absent_keys_and_list_items():
    third = {"name": "lab", "roce": {"dscp": 26, "cnp": {"dscp": 48}}, "links": [{"speed": 200}], "extra": True}
    views = {"leaf1": INTENT, "gpu1": _other(), "gpu2": third}
    msg = _intent_scope.check("leaf1", INTENT, views, GROUPS)
    assert "3 different intents" in msg
    assert "(1) leaf1 (groups switches)" in msg
    assert "(3) gpu2 (groups gpu_hosts): differs from (1) at extra: absent != true; links[0].speed: 400 != 200" in msg
    # gpu1 and gpu2 disagree, so the gpu_hosts group is named for neither alone - their own groups are
    assert "(2) gpu1 (groups gpu_hosts)" in msg


def test_differences_of_whole_values():
    assert _intent_scope.differences([1, 2], [1]) == ["(the whole value): [1, 2] != [1]"]
    assert _intent_scope.differences({"a": 1}, {"a": 1}) == []
