# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""One intent for the whole fabric: every host in scope must see the same ``lossless_fabric``.

Each play of a run plans from its own hosts' variables, so a ``lossless_fabric`` overridden in one group
(``group_vars/gpu_hosts``) plans the switches from one intent and the NICs from another, and both plays pass.
fabric_plan refuses that before any device is touched, naming the hosts and groups of each version and where
the versions differ."""

from __future__ import annotations

import json
from typing import Any

# How many differing keys and hosts a message names before it says "and N more".
SHOWN = 6


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Key paths where two intents differ, each with both values: ``roce.dscp: 26 != 24``."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            where = "%s.%s" % (path, key) if path else str(key)
            if key not in a:
                out.append("%s: absent != %s" % (where, _canonical(b[key])))
            elif key not in b:
                out.append("%s: %s != absent" % (where, _canonical(a[key])))
            else:
                out += differences(a[key], b[key], where)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for index, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, "%s[%d]" % (path, index))
        return out
    if _canonical(a) != _canonical(b):
        return ["%s: %s != %s" % (path or "(the whole value)", _canonical(a), _canonical(b))]
    return []


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (" and %d more" % (len(items) - SHOWN) if len(items) > SHOWN else "")


def _groups_of(hosts: list[str], others: set[str], groups: dict) -> list[str]:
    """The inventory groups that hold some of ``hosts`` and none of ``others`` (where the version was most likely
    set), else every group of ``hosts``."""
    mine = set(hosts)
    candidates = {g: set(members or []) for g, members in (groups or {}).items() if g not in ("all", "ungrouped")}
    only = sorted(g for g, members in candidates.items() if members & mine and not members & others)
    return only or sorted(g for g, members in candidates.items() if members & mine)


def check(used_by: str, used: Any, views: dict[str, Any], groups: dict | None = None) -> str | None:
    """None when every host of ``views`` ({host: its lossless_fabric}) sees ``used`` (the intent the plan is built
    from, as ``used_by`` sees it); else the message that names each version's hosts and groups and the differences."""
    versions: list[tuple[Any, list[str]]] = [(used, [used_by])]
    keys = [_canonical(used)]
    for host in sorted(views):
        key = _canonical(views[host])
        if key in keys:
            if host != used_by:
                versions[keys.index(key)][1].append(host)
        else:
            keys.append(key)
            versions.append((views[host], [host]))
    if len(versions) == 1:
        return None
    lines = ["lossless_fabric: the hosts in scope see %d different intents; switches and NICs must be planned from one "
             "(set lossless_fabric once, e.g. in group_vars/all, and override it nowhere):" % len(versions)]
    everyone = {h for _v, hosts in versions for h in hosts}
    for number, (value, hosts) in enumerate(versions, 1):
        found = _groups_of(hosts, everyone - set(hosts), groups or {})
        line = "(%d) %s%s" % (number, _names(hosts), " (groups %s)" % ", ".join(found) if found else "")
        if number == 1:
            line += ": the intent this plan would use"
        else:
            diff = differences(versions[0][0], value)
            line += ": differs from (1) at %s" % "; ".join(diff[:SHOWN]) + (" and %d more" % (len(diff) - SHOWN) if len(diff) > SHOWN else "")
        lines.append(line)
    return "\n".join(lines)
