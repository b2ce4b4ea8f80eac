# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""ib_fabric_verify: compare an ib_fabric_facts snapshot with the intent (pure).

Every check returns mismatch strings that name the port/partition, the
expected and the observed value; ``verify()`` runs the checks whose data is
present and returns all mismatches at once.  What OpenSM 3.3.23 does that
the expectations follow (verified against the lab's ibsim + OpenSM):

- With ``qos TRUE`` and a valid policy, a PathRecord's SL is the matched
  qos-level's SL, and the DEFAULT level's for a P_Key no rule names; a
  partition's own ``sl=`` then does not show (it only counts without QoS).
- partitions.conf without a 0x7fff rule gets ``Default=0x7fff, ipoib : ALL=full``
  from the plan (_intent/_plan.py _partitions_conf), so every CA port holds 0xffff;
  with tenants the plan writes that rule itself, the tenants' ports ``limited`` (0x7fff).
- A port named twice for one P_Key keeps the last membership given: ``osm_prtn_add_port``
  (linux-rdma/opensm opensm/osm_prtn.c) removes it from the full and the limited table before
  inserting it (``allow_both_pkeys FALSE``, the default); ``ALL=full, <port>=limited`` leaves
  the port limited (verified against ibsim).
- Two ports reach each other in a partition when both are members and one is full; the SA
  answers a PathRecord query between ports that share no such partition with no record
  (``saquery`` prints nothing, rc 0; verified against ibsim), which the ``tenants`` check reads.
- A partitions.conf member GUID that is no port of the subnet is skipped, not refused:
  ``osm_prtn_add_port`` logs "port 0x... not found" (verbose) and returns success
  (linux-rdma/opensm opensm/osm_prtn.c at fa74b98). Upstream OpenSM has no virtual-port
  support (no ``virt_enabled`` anywhere in its tree), so an SR-IOV VF's GUID (members the
  plan marks ``vf``) is not a node or port ibnetdiscover/smpquery can read here: the
  ``tenants`` check reports such VF GUIDs under ``not_verified``, never as proven.
- VLArb tables are written in the order of ``qos_vlarb_*``, padded with
  weight-0 entries up to the port's capacity; SL2VL rows of a switch's
  external ports follow ``qos_swe_sl2vl``, CA ports ``qos_ca_sl2vl``.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib
from ansible_collections.lossless.fabric.plugins.module_utils._ib._opensm import DEFAULT_PKEY

# One check per section of the ib_fabric_facts snapshot, named as the section it reads.
CHECKS: tuple[str, ...] = _ib.SECTIONS


def expected_hosts(devices: dict) -> dict[str, str]:
    """Port GUID -> "host nic" for every host NIC of the plan that names a GUID."""
    out = {}
    for host, plan in sorted((devices or {}).items()):
        if not isinstance(plan, dict) or plan.get("kind") != "host":
            continue
        for nic in plan.get("nics") or []:
            if nic.get("guid"):
                out[_ib.guid(nic["guid"])] = "%s %s" % (host, nic.get("name"))
    return out


def _ca_ports(facts: dict) -> dict[str, str]:
    """CA port GUID -> node description."""
    out = {}
    for node in facts["nodes"].values():
        if node["type"] == "ca":
            for pg in node["port_guids"].values():
                out[pg] = node["description"]
    return out


def check_topology(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    found = facts.get("summary") or _ib.summary(facts)
    out = []
    for key in ("switches", "cas", "links"):
        want = expect.get(key)
        if want is not None and found[key] != want:
            out.append("topology: %d %s found, %d expected" % (found[key], key, want))
    ca_ports = _ca_ports(facts)
    for pg, name in expected_hosts(devices).items():
        if pg not in ca_ports:
            out.append("topology: %s (port GUID %s) is not in the fabric" % (name, pg))
    return out


def _rank(table: dict, value: Any) -> int:
    return list(table).index(value) if value in table else -1


def check_ports(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    out = []
    ports = facts.get("ports") or {}
    linked = {_ib.port_key(g, p) for g, n in facts["nodes"].items() for p in n["links"]}
    min_width, min_speed = expect.get("min_width"), expect.get("min_speed")
    for key in sorted(linked):
        port = ports.get(key)
        where = _where(facts, key)
        if port is None:
            out.append("ports: %s: no iblinkinfo line for this linked port" % where)
            continue
        if port["state"] != "Active":
            out.append("ports: %s is %s/%s, expected Active" % (where, port["state"], port["physical_state"]))
            continue
        if min_width and port["width"] and _ib.WIDTHS.get(port["width"], 0) < _ib.WIDTHS[min_width]:
            out.append("ports: %s runs at width %s, below %s" % (where, port["width"], min_width))
        if min_speed and _rank(_ib.SPEEDS, port["speed"]) < _rank(_ib.SPEEDS, min_speed):
            out.append("ports: %s runs at %s (%s Gbps per lane), below %s" % (where, port["speed"], port["speed_gbps"], min_speed))
    return out


def check_sm(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    sm = facts.get("sm")
    if not sm:
        return ["sm: no subnet manager answered sminfo"]
    out = []
    if sm["state_name"] != "master":
        out.append("sm: the SM at lid %d is %s, expected master" % (sm["lid"], sm["state_name"]))
    want = intent["infiniband"]["sm"]["priority"]
    if sm["priority"] != want:
        out.append("sm: master SM %s has priority %d, expected sm.priority %d" % (sm["guid"], sm["priority"], want))
    return out


def check_sl2vl(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    qos = intent["infiniband"]["qos"]
    if not qos["enabled"]:
        return []
    out = []
    for key, entry in sorted((facts.get("sl2vl") or {}).items()):
        want = qos["sl2vl"]["ca" if entry["type"] == "ca" else "switch"]
        bad = {inp: row for inp, row in entry["rows"].items() if row != want}
        if bad:
            inp, row = sorted(bad.items(), key=lambda kv: int(kv[0]))[0]
            more = " (and %d more in-ports)" % (len(bad) - 1) if len(bad) > 1 else ""
            out.append("sl2vl: %s in-port %s maps SL0-15 to %s, expected %s%s" % (_where(facts, key), inp, row, want, more))
    out += _missing(facts, "sl2vl")
    return out


def _weights(entries: list[dict]) -> list[tuple[int, int]]:
    return [(e["vl"], e["weight"]) for e in entries if e["weight"]]


def check_vlarb(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    qos = intent["infiniband"]["qos"]
    if not qos["enabled"]:
        return []
    out = []
    for key, table in sorted((facts.get("vlarb") or {}).items()):
        for name in ("high", "low"):
            cap = table.get("%s_cap" % name)
            want = _weights(qos["vlarb_%s" % name][:cap] if cap else qos["vlarb_%s" % name])
            got = _weights(table[name])
            if got != want:
                out.append("vlarb: %s %s-priority table is %s, expected %s" % (_where(facts, key), name, _pairs(got), _pairs(want)))
    out += _missing(facts, "vlarb")
    return out


def _pairs(pairs: list[tuple[int, int]]) -> str:
    return ",".join("%d:%d" % p for p in pairs) or "(empty)"


def expected_pkeys(intent: dict, ca_ports: list[str], sm_guid: str | None) -> dict[str, dict[str, str]]:
    """P_Key (low 15 bits, "0x%04x") -> CA port GUID -> membership ("full", "limited" or "both")."""
    ib = intent["infiniband"]
    out: dict[str, dict[str, str]] = {}
    parts = list(ib["partitions"])
    if not any(int(p["pkey"], 16) & 0x7FFF == DEFAULT_PKEY for p in parts):
        parts.insert(0, {"pkey": "0x7fff", "members": [{"keyword": "ALL", "membership": "full"}]})
    for part in parts:
        key = "0x%04x" % (int(part["pkey"], 16) & 0x7FFF)
        holders = out.setdefault(key, {})
        for member in part["members"]:
            for pg in _member_ports(member, ca_ports, sm_guid):
                holders[pg] = member["membership"]  # the last one given wins (osm_prtn_add_port, module docstring)
    return out


def _member_ports(member: dict, ca_ports: list[str], sm_guid: str | None) -> list[str]:
    if member.get("guid"):
        return [_ib.guid(member["guid"])]
    keyword = member["keyword"]
    if keyword in ("ALL", "ALL_CAS"):
        return list(ca_ports)
    if keyword == "SELF":
        return [sm_guid] if sm_guid else []
    return []  # ALL_SWITCHES / ALL_ROUTERS: switch port 0 and routers are not CA ports


def _merge(old: str | None, new: str) -> str:
    # One port's table holding a P_Key twice (0x8001 and 0x0001): both memberships.
    if old is None or old == new:
        return new
    return "full" if "full" in (old, new) else "both"


def _held(pkeys: list[str]) -> dict[str, str]:
    """P_Key (low 15 bits) -> membership held by one port."""
    held: dict[str, str] = {}
    for text in pkeys:
        number = int(text, 16)
        key = "0x%04x" % (number & 0x7FFF)
        held[key] = _merge(held.get(key), "full" if number & 0x8000 else "limited")
    return held


def check_pkeys(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    tables = facts.get("pkeys") or {}
    sm_guid = (facts.get("sm") or {}).get("guid")
    want = expected_pkeys(intent, sorted(_ca_ports(facts)), sm_guid)
    names = {"0x%04x" % (int(p["pkey"], 16) & 0x7FFF): "partition %s (pkey %s)" % (p["name"], p["pkey"])
             for p in intent["infiniband"]["partitions"]}
    out = []
    for pkey, holders in sorted(want.items()):
        label = names.get(pkey, "partition Default (pkey %s)" % pkey)
        for pg, membership in sorted(holders.items()):
            if pg not in tables:
                if pg in _ca_ports(facts):
                    out.append("pkeys: %s: no P_Key table read from member %s" % (label, _port_name(facts, pg)))
                continue  # a member not in the fabric is a topology finding
            got = _held(tables[pg]["pkeys"]).get(pkey)
            if got is None:
                out.append("pkeys: %s: member %s does not hold it (expected %s)" % (label, _port_name(facts, pg), membership))
            elif membership != "both" and got != membership:
                out.append("pkeys: %s: member %s holds it as %s, expected %s" % (label, _port_name(facts, pg), got, membership))
    for pg, table in sorted(tables.items()):
        for pkey, got in sorted(_held(table["pkeys"]).items()):
            if pg not in want.get(pkey, {}):
                label = names.get(pkey, "P_Key %s (no partition of the intent)" % pkey)
                out.append("pkeys: %s: %s holds it (%s) but is not a member" % (label, _port_name(facts, pg), got))
    return out


def expected_path_sl(intent: dict, partition: dict) -> int:
    """SL OpenSM puts in PathRecords of ``partition`` (see the module docstring)."""
    ib = intent["infiniband"]
    if ib["qos"]["enabled"]:
        wanted = (partition.get("qos_level") or "default").lower()
        for level in ib["qos"]["levels"]:
            if level["name"].lower() == wanted:
                return level["sl"]
    return partition["sl"] if partition.get("sl") is not None else 0


def check_paths(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    parts = {"0x%04x" % (int(p["pkey"], 16) & 0x7FFF): p for p in intent["infiniband"]["partitions"]}
    out = []
    for path in facts.get("paths") or []:
        part = parts.get("0x%04x" % (int(path["pkey"], 16) & 0x7FFF))
        label = "paths: %s -> %s pkey %s" % (_port_name(facts, path["src"]), _port_name(facts, path["dst"]), path["pkey"])
        if part is None:
            continue
        if not path.get("found"):
            out.append("%s (partition %s): the SA returned no PathRecord%s" % (label, part["name"], " (%s)" % path["error"] if path.get("error") else ""))
            continue
        want = expected_path_sl(intent, part)
        if path["sl"] != want:
            out.append("%s (partition %s): SL %s, expected %d per the QoS policy" % (label, part["name"], path["sl"], want))
    return out


def _tenant_ports(intent: dict) -> dict[str, tuple[str, str, str, str]]:
    """Tenant port GUID -> (tenant, its P_Key without bit 15, its membership, its partition's name)."""
    out = {}
    for part in intent["infiniband"]["partitions"]:
        if part.get("tenant"):
            key = "0x%04x" % (int(part["pkey"], 16) & 0x7FFF)
            for member in part["members"]:
                if member.get("guid"):
                    out[_ib.guid(member["guid"])] = (part["tenant"], key, member["membership"], part["name"])
    return out


def check_tenants(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    """Each tenant port in its own partition and in no other tenant's; no partition through which ports of two
    tenants reach each other (both members, one full); no PathRecord between two tenants (the collector's queries)."""
    ports = _tenant_ports(intent)
    if not ports:
        return []
    tables = facts.get("pkeys")
    if tables is None:
        return ["tenants: no P_Key tables in the snapshot (collect the pkeys section too)"]
    names = {"0x%04x" % (int(p["pkey"], 16) & 0x7FFF): p["name"] for p in intent["infiniband"]["partitions"]}
    own = {key: tenant for tenant, key, _m, _n in ports.values()}
    ca_ports = _ca_ports(facts)
    out = []
    shared: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for pg, (tenant, key, membership, part_name) in sorted(ports.items()):
        who = "tenant %r port %s" % (tenant, _port_name(facts, pg))
        if pg not in tables:
            if pg in ca_ports:
                out.append("tenants: %s: no P_Key table read" % who)
            continue  # not in the fabric: a topology finding
        held = _held(tables[pg]["pkeys"])
        got = held.get(key)
        if got is None:
            out.append("tenants: %s is not in its partition %s (pkey %s)" % (who, part_name, key))
        elif got != membership and membership != "both":
            out.append("tenants: %s holds its partition %s (pkey %s) as %s, expected %s" % (who, part_name, key, got, membership))
        for other_key, other_membership in sorted(held.items()):
            if other_key == key:
                continue
            if own.get(other_key) not in (None, tenant):
                args = (who, other_key, other_membership, own[other_key], names.get(other_key))
                out.append("tenants: %s holds P_Key %s (%s) of tenant %r's partition %s" % args)
            elif other_key not in own:
                shared.setdefault(other_key, {}).setdefault(tenant, []).append((pg, other_membership))
    for key, by_tenant in sorted(shared.items()):
        full = [(tenant, pg) for tenant, held in sorted(by_tenant.items()) for pg, membership in held if membership != "limited"]
        if len(by_tenant) < 2 or not full:
            continue
        tenant, pg = full[0]
        other = next(t for t in sorted(by_tenant) if t != tenant)
        label = "the default partition" if int(key, 16) == 0x7FFF else "partition %s" % names.get(key, "(not in the intent)")
        out.append("tenants: tenant %r port %s is a full member of %s (pkey %s), which tenant %r's port %s is also in: the tenants reach "
                   "each other through it" % (tenant, _port_name(facts, pg), label, key, other, _port_name(facts, by_tenant[other][0][0])))
    tenants_present = {ports[pg][0] for pg in ports if pg in ca_ports}
    queries = facts.get("tenants") or []
    if len(tenants_present) > 1 and not queries:
        out.append("tenants: no PathRecord was asked between two tenants (collect the tenants section with the intent's partitions)")
    for query in queries:
        how = "for pkey %s" % query["pkey"] if query.get("pkey") else "for any partition"
        ends = (_port_name(facts, query["src"]), query.get("src_tenant"), _port_name(facts, query["dst"]), query.get("dst_tenant"), how)
        label = "tenants: %s (tenant %r) -> %s (tenant %r) %s" % ends
        if query.get("found") is None:
            out.append("%s: not asked (%s): the tenants' separation is not proved" % (label, query.get("error") or "no answer"))
        elif query["found"]:
            out.append("%s: the SA returned a PathRecord (pkey %s): the tenants reach each other" % (label, query.get("record_pkey")))
    return out


def vf_guids(intent: dict) -> set[str]:
    """The VF GUIDs the plan put in partitions (members marked ``vf``: _intent/_tenants)."""
    return {_ib.guid(m["guid"]) for p in intent["infiniband"]["partitions"] for m in p["members"] if m.get("guid") and m.get("vf")}


def known_guids(facts: dict | None, intent: dict) -> set[str] | None:
    """The member GUIDs partitions.conf may name (the role's preflight, ib_fabric_verify ``files``): the snapshot's
    ports and the intent's VF GUIDs, which upstream OpenSM skips while they are no port (osm_prtn_add_port "port ...
    not found") and ibnetdiscover never lists (module docstring). None without a topology snapshot."""
    if not facts or "nodes" not in facts:
        return None
    return {pg for node in facts["nodes"].values() for pg in node.get("port_guids", {}).values()} | vf_guids(intent)


def unverified_vfs(facts: dict, intent: dict) -> list[str]:
    """Tenant VF GUIDs whose P_Key table the snapshot does not hold: listed as not verified, never as proven (the
    module docstring: upstream OpenSM shows no virtual ports). A VF GUID that is a port of the fabric is checked
    like any tenant port by check_tenants."""
    tables = facts.get("pkeys") or {}
    vfs = vf_guids(intent)
    out = []
    for pg, (tenant, key, membership, part_name) in sorted(_tenant_ports(intent).items()):
        if pg in vfs and pg not in tables:
            out.append("tenants: tenant %r VF GUID %s (partition %s, pkey %s, %s): not a port of the fabric's snapshot (a virtual "
                       "port is not seen by ibnetdiscover/smpquery): its P_Key table is not verified" % (tenant, pg, part_name, key, membership))
    return out


def check_counters(facts: dict, intent: dict, devices: dict, expect: dict) -> list[str]:
    thresholds = expect.get("counters")
    if thresholds is None:
        thresholds = {name: 0 for name in _ib.ERROR_COUNTERS}
    out = []
    for key, counters in sorted((facts.get("counters") or {}).items()):
        for name, limit in sorted(thresholds.items()):
            value = counters.get(name)
            if value is not None and value > limit:
                out.append("counters: %s %s = %d, above the threshold %d" % (_where(facts, key), name, value, limit))
    out += _missing(facts, "counters")
    return out


def _missing(facts: dict, section: str) -> list[str]:
    """Linked ports the section has no reading for (a failed command)."""
    got = facts.get(section) or {}
    return ["%s: %s: no reading (%s)" % (section, _where(facts, k), _error_for(facts, k)) for k in sorted(_linked(facts)) if k not in got]


def _linked(facts: dict) -> set[str]:
    return {_ib.port_key(g, p) for g, n in facts["nodes"].items() for p in n["links"] if n["lid"] is not None}


def _error_for(facts: dict, key: str) -> str:
    """What the failed command for this port said (the collector addresses ports as LID PORT)."""
    node_guid, port = key.split("/")
    node = facts["nodes"].get(node_guid, {})
    lid = node.get("port_lids", {}).get(port, node.get("lid"))
    tail = ["%s" % lid, port]
    return "; ".join(e["stderr"] for e in facts.get("errors") or [] if e["command"].split()[-2:] == tail) or "not read"


def _where(facts: dict, key: str) -> str:
    node_guid, port = key.split("/")
    node = facts["nodes"].get(node_guid, {})
    return '%s "%s" port %s' % (node.get("type", "node"), node.get("description") or node_guid, port)


def _port_name(facts: dict, pg: str) -> str:
    for node in facts["nodes"].values():
        for value in node["port_guids"].values():
            if value == pg:
                return '"%s" (%s)' % (node["description"], pg)
    return pg


_CHECKERS = {
    "topology": check_topology, "ports": check_ports, "sm": check_sm, "sl2vl": check_sl2vl, "vlarb": check_vlarb,
    "pkeys": check_pkeys, "paths": check_paths, "counters": check_counters, "tenants": check_tenants,
}


def verify(facts: dict, intent: dict, devices: dict | None = None, expect: dict | None = None,
           checks: list[str] | None = None) -> dict[str, Any]:
    """Run the checks whose section the snapshot holds; return ``{mismatches, checked, not_checked, not_verified}``
    (``not_verified``: what a check could not see, such as tenant VF GUIDs that are no port of the snapshot)."""
    collected = set(facts.get("collected") or CHECKS)
    wanted = list(checks or CHECKS)
    checked, not_checked, mismatches, not_verified = [], [], [], []
    for name in wanted:
        if name != "topology" and name not in collected:
            not_checked.append(name)
            continue
        checked.append(name)
        mismatches += _CHECKERS[name](facts, intent, devices or {}, expect or {})
        if name == "tenants" and facts.get("pkeys") is not None:
            not_verified += unverified_vfs(facts, intent)
    return {"mismatches": mismatches, "checked": checked, "not_checked": not_checked, "not_verified": not_verified}
