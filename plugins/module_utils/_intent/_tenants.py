# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric.tenants: tenants sharing one fabric (issue 37, docs/tenants.md).

A tenant names its GPU hosts (``hosts``, or an inventory ``host_group``) and what keeps it apart:
on InfiniBand a partition (P_Key, membership, IPoIB) and a QoS level, on RoCE optionally a VLAN,
in Kubernetes a namespace and optionally its own kubeconfig (a virtual cluster's).

Checked after the devices, because the hosts are inventory hosts and a tenant's partition lists
their NICs' port GUIDs, then their SR-IOV VFs' GUIDs (``nics[].vf_guids``, issue 37 C2; marked
``vf: true`` in the partition's members). The partitions are made by the same code as ``infiniband.partitions``
(_infiniband._partition: the same name, P_Key, MTU, SL and member checks) and are appended to
``infiniband.partitions`` with ``tenant: <name>``, so partitions.conf, qos-policy.conf, the
offline file checks and ib_fabric_verify treat them as every other partition.

OpenSM's rules this follows (linux-rdma/opensm, doc/partition-config.txt and opensm/osm_prtn.c,
osm_prtn_config.c; host-ib-k8s.md b.2):

- two ports can talk in a partition when both are members and at least one is a full member
  (limited members reach only full members);
- a port named twice for one P_Key keeps the last membership given (``osm_prtn_add_port`` removes
  it from both tables before inserting it; with ``allow_both_pkeys FALSE``, OpenSM's default,
  ``both`` is full): so ``ALL=full, <tenant port>=limited`` leaves the tenant port limited
  (verified in the lab: its table holds 0x7fff, not 0xffff);
- the default partition 0x7fff always exists and holds every port.

So the plan writes the default partition (when the intent has no 0x7fff rule) as ``ALL=full,
SELF=full`` with every tenant port ``limited``: tenants keep the SA and the SM port, and cannot
reach each other through it. An ``infiniband.partitions`` entry (the default one included) that
makes ports of two tenants members, one of them full, is an error.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._ib._opensm import DEFAULT_PKEY
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _ok, _suggest, type_name
from ansible_collections.lossless.fabric.plugins.module_utils._intent._infiniband import _partition, _pkey, check_compute_sl, partition_sl
from ansible_collections.lossless.fabric.plugins.module_utils._intent._kubernetes import _DNS_LABEL_RE, _K8S_NS_RULE
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import value as leaf
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import BAD

PATH = "lossless_fabric.tenants"
_TENANT_KEYS = ("name", "hosts", "host_group", "namespace", "kubeconfig", "vlan", "partition", "qos_level")
_TENANT_PARTITION_KEYS = ("name", "pkey", "membership", "ipoib")
# A kubeconfig path reaches a command line (kubectl --kubeconfig, the k8s modules): absolute, no blanks or shell characters.
_ABS_PATH_RE = re.compile(r"/[A-Za-z0-9._/+@=,-]*")
# Keywords that put every tenant port into a partition (ALL_SWITCHES / ALL_ROUTERS / SELF name no host port).
_ALL_HOST_PORTS = ("ALL", "ALL_CAS")


def partition_names(raw: Any) -> tuple[str, ...]:
    """The names the tenants' partitions will have (``compute_partition`` may name one), read before validation."""
    names = []
    for entry in raw if isinstance(raw, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("partition"), dict):
            name = entry["partition"].get("name", entry.get("name"))
            if isinstance(name, str):
                names.append(name)
    return tuple(names)


def tenants_section(ctx: Ctx, raw: Any, norm: dict, devices: dict, groups: dict | None) -> Any:
    """Validate ``lossless_fabric.tenants`` whole; on InfiniBand add their partitions (and the default
    partition that keeps them apart) to ``norm['infiniband']['partitions']``. Returns the normalized list."""
    if raw is None:
        return []
    entries = ctx.sequence(raw, PATH)
    if entries is BAD:
        return BAD
    transport = norm.get("transport")
    ib = norm.get("infiniband") if transport == "infiniband" else None
    levels = ib["qos"]["levels"] if ib else BAD
    level_names = [level["name"] for level in levels] if _ok(levels) else None
    tenants = [_tenant(ctx, entry, f"{PATH}[{index}]", transport, devices, groups, level_names) for index, entry in enumerate(entries)]
    _check_together(ctx, tenants)
    if ib is not None and _ok(ib["partitions"]):
        # Partitions that failed their own checks are left out here; the others are still checked against the tenants.
        _add_partitions(ctx, ib, tenants, devices, level_names)
    if not all(_whole(t) for t in tenants):
        return BAD
    return [{key: value for key, value in tenant.items() if key != "_path"} for tenant in tenants]


def _whole(tenant: Any) -> bool:
    """A tenant whose every field passed its checks."""
    return isinstance(tenant, dict) and _ok(*tenant.values())


def _tenant(ctx: Ctx, entry: Any, path: str, transport: Any, devices: dict, groups: dict | None, level_names: list | None) -> Any:
    if not isinstance(entry, dict):
        ctx.error(path, f"{type_name(entry)} is not a mapping (a tenant: name, hosts or host_group, ...)")
        return BAD
    src = ctx.mapping(entry, path, _TENANT_KEYS, required=("name",))
    name = ctx.name(src["name"], f"{path}.name") if src.get("name") is not None else BAD
    hosts = _hosts(ctx, src, path, devices, groups)
    namespace = src.get("namespace")
    if namespace is not None:
        namespace = ctx.text(namespace, f"{path}.namespace", _DNS_LABEL_RE, _K8S_NS_RULE)
    kubeconfig = src.get("kubeconfig")
    if kubeconfig is not None:
        kubeconfig = ctx.text(kubeconfig, f"{path}.kubeconfig", _ABS_PATH_RE, "an absolute path (/ then letters, digits and ._/+@=,- only)")
    vlan_row = _schema.BY_PATH["tenants[].vlan"]
    vlan = ctx.check_int(src.get("vlan"), f"{path}.vlan", vlan_row.low, vlan_row.high, vlan_row.what, nullable=True)
    if transport == "infiniband" and vlan is not None and _ok(vlan):
        ctx.error(f"{path}.vlan", f"{vlan!r}: a VLAN is RoCE only (an InfiniBand tenant is kept apart by its partition)")
        vlan = BAD
    partition = _partition_src(ctx, src, path, transport)
    qos_level = src.get("qos_level")
    if qos_level is not None:
        if not isinstance(qos_level, str):
            ctx.error(f"{path}.qos_level", f"{qos_level!r} is not a QoS level name")
            qos_level = BAD
        elif transport == "roce":
            ctx.error(f"{path}.qos_level", f"{qos_level!r}: a QoS level is InfiniBand only (RoCE traffic classes come from lossless_fabric.roce)")
            qos_level = BAD
        elif level_names is not None and qos_level.lower() not in [n.lower() for n in level_names]:
            ctx.error(f"{path}.qos_level", f"{qos_level!r} is not a defined QoS level ({_suggest(qos_level, level_names)})")
            qos_level = BAD
    tenant = {
        "name": name,
        "hosts": hosts,
        "host_group": src.get("host_group"),
        "namespace": namespace,
        "kubeconfig": kubeconfig,
        "vlan": vlan,
        "partition": partition,
        "qos_level": qos_level,
    }
    # Kept with its bad fields (BAD) so the rules across tenants still check the good ones ("validated whole").
    return dict(tenant, _path=path)


def _hosts(ctx: Ctx, src: dict, path: str, devices: dict, groups: dict | None) -> Any:
    """The tenant's inventory hosts of kind host, from ``hosts`` or ``host_group``."""
    given, group = src.get("hosts"), src.get("host_group")
    if given is not None and group is not None:
        ctx.error(path, "give hosts or host_group, not both")
        return BAD
    if given is None and group is None:
        ctx.error(f"{path}.hosts", "required (or host_group): the tenant's GPU hosts")
        return BAD
    gpu_hosts = sorted(h for h, d in devices.items() if _ok(d) and d["kind"] == "host")
    if group is not None:
        if not isinstance(group, str):
            ctx.error(f"{path}.host_group", f"{group!r} is not an inventory group name")
            return BAD
        if groups is None:
            ctx.error(f"{path}.host_group", f"{group!r}: no inventory groups were given to resolve it (fabric_plan passes them; or list hosts)")
            return BAD
        if group not in groups:
            ctx.error(f"{path}.host_group", f"{group!r} is not an inventory group ({_suggest(group, sorted(groups))})")
            return BAD
        members = [str(h) for h in groups[group] or []]
        if any(h in devices and not _ok(devices[h]) for h in members):
            return BAD  # a host that failed validation has its own errors
        hosts = [h for h in members if h in gpu_hosts]
        if not hosts:
            ctx.error(f"{path}.host_group", f"{group!r} holds no GPU host of the fabric (no member has lossless_fabric_device of kind host)")
            return BAD
        return hosts
    hosts = ctx.sequence(given, f"{path}.hosts", min_len=_schema.BY_PATH["tenants[].hosts"].min_len)
    if hosts is BAD:
        return BAD
    out: list[Any] = []
    for index, host in enumerate(hosts):
        item = f"{path}.hosts[{index}]"
        if not isinstance(host, str):
            ctx.error(item, f"{host!r} is not an inventory host name")
            out.append(BAD)
        elif host in out:
            ctx.error(item, f"{host!r} is listed twice")
            out.append(BAD)
        elif host in devices and not _ok(devices[host]):
            out.append(BAD)  # its own errors name it
        elif host not in gpu_hosts:
            why = f"it is a {devices[host]['kind']}" if host in devices else (_suggest(host, gpu_hosts) if gpu_hosts else "the fabric has no host of kind host")
            ctx.error(item, f"{host!r} is not a GPU host of the fabric ({why})")
            out.append(BAD)
        else:
            out.append(host)
    return out if _ok(*out) else BAD


def _partition_src(ctx: Ctx, src: dict, path: str, transport: Any) -> Any:
    raw = src.get("partition")
    ppath = f"{path}.partition"
    if transport == "roce":
        if raw is not None:
            ctx.error(ppath, "a partition is InfiniBand only (a RoCE tenant may have a vlan)")
            return BAD
        return None
    if transport != "infiniband":
        return None if raw is None else BAD
    if raw is None:
        ctx.error(ppath, "required on InfiniBand: the partition (its P_Key) keeps the tenant's ports apart from the other tenants'")
        return BAD
    if not isinstance(raw, dict):
        ctx.error(ppath, f"{type_name(raw)} is not a mapping (pkey, membership, ipoib, name)")
        return BAD
    psrc = ctx.mapping(raw, ppath, _TENANT_PARTITION_KEYS, required=("pkey",))
    membership = leaf(ctx, psrc, "tenants[].partition.membership", ppath)
    ipoib = leaf(ctx, psrc, "tenants[].partition.ipoib", ppath)
    pkey = psrc.get("pkey")
    if pkey is None:
        pkey = BAD
    else:
        number = _pkey(pkey)
        if number is not None and number & 0x7FFF == DEFAULT_PKEY:
            ctx.error(f"{ppath}.pkey", f"{pkey!r} is the default partition's P_Key (every port is in it): give the tenant a P_Key of its own")
            pkey = BAD
    name = psrc.get("name", src.get("name"))
    if psrc.get("name") is not None:
        name = ctx.name(name, f"{ppath}.name")
    out = {"name": name, "pkey": pkey, "membership": membership, "ipoib": ipoib}
    return out if _ok(*out.values()) and name is not None else BAD


def _check_together(ctx: Ctx, tenants: list) -> None:
    """Rules across tenants: unique names and VLANs, one namespace per cluster, a host in one tenant where
    membership must be exclusive (a tenant with a partition or a VLAN: its ports would join both)."""
    names: dict[str, int] = {}
    vlans: dict[int, int] = {}
    namespaces: dict[tuple, int] = {}
    owners: dict[str, int] = {}
    for index, tenant in enumerate(tenants):
        if not _ok(tenant):
            continue
        path = tenant["_path"]
        if _ok(tenant["name"]):
            if tenant["name"] in names:
                ctx.error(f"{path}.name", f"{tenant['name']!r} duplicates tenants[{names[tenant['name']]}].name")
            names.setdefault(tenant["name"], index)
        if tenant["vlan"] is not None and _ok(tenant["vlan"]):
            if tenant["vlan"] in vlans:
                other = vlans[tenant["vlan"]]
                ctx.error(f"{path}.vlan", f"{tenant['vlan']!r} duplicates tenants[{other}].vlan: two tenants on one VLAN share a broadcast domain")
            vlans.setdefault(tenant["vlan"], index)
        if tenant["namespace"] is not None and _ok(tenant["namespace"], tenant["kubeconfig"]):
            cluster = (tenant["kubeconfig"], tenant["namespace"])
            if cluster in namespaces:
                where = "its kubeconfig" if tenant["kubeconfig"] else "the fabric's cluster"
                ctx.error(f"{path}.namespace", f"{tenant['namespace']!r} duplicates tenants[{namespaces[cluster]}].namespace in {where}")
            namespaces.setdefault(cluster, index)
        # A partition or VLAN that failed its own check still makes the tenant's membership exclusive.
        exclusive = tenant["partition"] is not None or tenant["vlan"] is not None
        for number, host in enumerate(tenant["hosts"] if _ok(tenant["hosts"]) else []):
            other = owners.get(host)
            if other is None:
                owners[host] = index
                continue
            them = tenants[other]
            if exclusive or them["partition"] is not None or them["vlan"] is not None:
                where = f"{path}.hosts[{number}]" if tenant["host_group"] is None else f"{path}.host_group"
                ctx.error(
                    where,
                    f"{host!r} is also in tenant {them['name'] if _ok(them['name']) else '?'!r} (tenants[{other}]): a host belongs to one tenant "
                    "where tenants have a partition or a VLAN (its ports would be members of both)",
                )


def _ports(ctx: Ctx, tenant: dict, devices: dict) -> Any:
    """The port GUIDs of the tenant's hosts' NICs, then their VFs' GUIDs (``nics[].vf_guids``); every NIC must name
    its GUID. Returns ``(guids, vf_guids)``: one list of members for the partition (the VFs' GUIDs are members by the
    same rule as the ports': a pod's VF is in its tenant's partition, and limited in the default one), and the VF
    GUIDs again so the partition can mark them (``vf: true``) for the checks that cannot see virtual ports."""
    guids: list[str] = []
    vfs: list[str] = []
    for host in tenant["hosts"]:
        for index, nic in enumerate(devices[host]["nics"]):
            if nic["guid"] is None:
                ctx.error(
                    f"{host}: lossless_fabric_device.nics[{index}].guid",
                    f"required: {host} is in tenant {tenant['name']!r} ({tenant['_path']}), whose partition lists its ports by GUID",
                )
                return BAD
            guids.append(nic["guid"])
            vfs += nic.get("vf_guids") or []
    return guids + vfs, vfs


def _add_partitions(ctx: Ctx, ib: dict, tenants: list, devices: dict, level_names: list | None) -> None:
    ports: dict[str, str] = {}  # tenant port GUID -> tenant name
    made = []
    for tenant in tenants:
        if not _whole(tenant) or tenant["partition"] is None:
            continue
        found = _ports(ctx, tenant, devices)
        if found is BAD:
            tenant["partition"] = BAD
            continue
        guids, vf_guids = found
        for guid in guids:
            ports[guid] = tenant["name"]
        made.append((tenant, guids, set(vf_guids)))
    _check_shared(ctx, ib, ports)
    good = [(i, p) for i, p in enumerate(ib["partitions"]) if _ok(p)]
    names = {p["name"]: f"lossless_fabric.infiniband.partitions[{i}]" for i, p in good}
    pkeys = {int(p["pkey"], 16) & 0x7FFF: (f"lossless_fabric.infiniband.partitions[{i}]", p["pkey"]) for i, p in good}
    added = []
    for tenant, guids, vf_guids in made:
        want = tenant["partition"]
        membership = want["membership"]
        # The SM port is a full member (OpenSM's own examples: SELF=full), so the SM host reaches every tenant;
        # a limited tenant port can only reach full members.
        entry = {
            "name": want["name"],
            "pkey": want["pkey"],
            "ipoib": want["ipoib"],
            "qos_level": tenant["qos_level"],
            "default_membership": membership,
            "members": [{"keyword": "SELF", "membership": "full"}] + [{"guid": guid, "membership": membership} for guid in guids],
        }
        part = _partition(ctx, entry, f"{tenant['_path']}.partition", level_names, names, pkeys, f"{tenant['_path']}.partition")
        if not _ok(part):
            tenant["partition"] = BAD
            continue
        # A VF's GUID is a member like a port's; marked so that the role's preflight and ib_fabric_verify know it may not
        # be a port the fabric shows (upstream OpenSM has no virtual ports: docs/tenants.md, "InfiniBand").
        for member in part["members"]:
            if member.get("guid") in vf_guids:
                member["vf"] = True
        # The SL its PathRecords carry, written as sl= too, so partitions.conf and the QoS policy agree (_ib_cross_checks).
        part["sl"] = partition_sl(ib, part)
        part["tenant"] = tenant["name"]
        want.update(name=part["name"], pkey=part["pkey"], sl=part["sl"])
        added.append(part)
    if not added:
        return
    if not any(_ok(p) and int(p["pkey"], 16) & 0x7FFF == DEFAULT_PKEY for p in ib["partitions"]):
        ib["partitions"].insert(0, _default_partition(ports, {guid for entry in made for guid in entry[2]}))
    ib["partitions"] += added
    if all(_ok(p) for p in ib["partitions"]) and ib["compute_partition"] in [p["name"] for p in added]:
        check_compute_sl(ctx, ib, "lossless_fabric.infiniband")


def _default_partition(ports: dict[str, str], vf_guids: set[str]) -> dict:
    """The default partition with the tenants' ports (and their VFs' GUIDs, marked ``vf``) limited: they keep the SA and
    the SM port (full), not each other.
    Later specifiers win in OpenSM (osm_prtn_add_port), so ALL=full comes first."""
    return {
        "name": "Default",
        "pkey": f"0x{DEFAULT_PKEY:04x}",
        "ipoib": True,
        "mtu": None,
        "rate": None,
        "sl": None,
        "qos_level": None,
        "default_membership": "full",
        "members": [{"keyword": "ALL", "membership": "full"}, {"keyword": "SELF", "membership": "full"}]
        + [dict({"guid": guid, "membership": "limited"}, **({"vf": True} if guid in vf_guids else {})) for guid in sorted(ports)],
        "tenant": None,
    }


def _check_shared(ctx: Ctx, ib: dict, ports: dict[str, str]) -> None:
    """An intent partition must not let two tenants reach each other: refused when it makes ports of two
    tenants members and one of them is full (limited members reach only full members)."""
    for index, part in enumerate(ib["partitions"]):
        if not _ok(part):
            continue
        held: dict[str, tuple[str, int]] = {}
        for number, member in enumerate(part["members"]):
            if member.get("guid"):
                targets = [member["guid"]] if member["guid"] in ports else []
            else:
                targets = list(ports) if member["keyword"] in _ALL_HOST_PORTS else []
            for guid in targets:
                held[guid] = (member["membership"], number)  # the last one given wins (osm_prtn_add_port)
        tenants_in = sorted({ports[guid] for guid in held})
        full = sorted((number, ports[guid]) for guid, (membership, number) in held.items() if membership != "limited")
        if len(tenants_in) < 2 or not full:
            continue
        number, tenant = full[0]
        other = next(t for t in tenants_in if t != tenant)
        member = part["members"][number]
        text = f"{member.get('guid') or member.get('keyword')}={member['membership']}"
        message = (
            f"{text} makes tenant {tenant!r} a full member of partition {part['name']!r} (pkey {part['pkey']}), which tenant {other!r} "
            "is also in: the tenants reach each other through it (tenants may share a partition only as limited members)"
        )
        if int(part["pkey"], 16) & 0x7FFF == DEFAULT_PKEY:
            message += (
                "; the default partition must not be left open to tenants: make their ports limited in it, or leave the 0x7fff rule out "
                "and the plan writes it with ALL=full and the tenants' ports limited"
            )
        ctx.error(f"lossless_fabric.infiniband.partitions[{index}].members[{number}]", message)


def plan(intent: dict) -> dict[str, Any]:
    """fabric_plan's ``tenants``: tenant name -> hosts, namespace, kubeconfig, vlan, partition, qos_level (interfaces point 5)."""
    out = {}
    for tenant in intent.get("tenants") or []:
        part = tenant["partition"]
        out[tenant["name"]] = {
            "hosts": list(tenant["hosts"]),
            "namespace": tenant["namespace"],
            "kubeconfig": tenant["kubeconfig"],
            "vlan": tenant["vlan"],
            "partition": dict(part) if part is not None else None,
            "qos_level": tenant["qos_level"],
        }
    return out


def tenant_of(intent: dict, host: str) -> dict | None:
    """The tenant a host belongs to where membership is exclusive (it has a partition), else None."""
    for tenant in intent.get("tenants") or []:
        if tenant["partition"] is not None and host in tenant["hosts"]:
            return tenant
    return None
