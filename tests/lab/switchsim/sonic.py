# SPDX-License-Identifier: GPL-3.0-or-later
"""SONiC 202505 model: the admin bash shell with sudo, SONiC's `config` / `show` CLI and CONFIG_DB.

CONFIG_DB is a JSON dict in memory (the factory DB: DEVICE_METADATA, PORT for the ports the
inventory gives, the default buffer pools). `sudo config checkpoint|apply-patch [--dry-run]|
rollback|list-checkpoints|delete-checkpoint|save [-y]` follow sonic-utilities branch 202505
(config/main.py, generic_config_updater/*): JSON Patch (RFC 6902) with python-json-patch's
errors, the YANG checks of sonic_yang.py, GCU's console notices and click's failure shape.
`systemd-run --unit=U --on-active=T CMD` arms a transient timer that really runs CMD at its
(scaled) deadline unless `systemctl stop U.timer`; `systemctl list-timers|is-active` report it.
The patch file reaches the switch by a here-document (`cat > FILE <<'EOF'` ... `EOF`, bash's
PS2 `> ` prompts), as helper sdriver's channel writes it (SONIC-CHANNEL.md). Counters
(`show pfc counters`, `show queue counters`, `show queue wredcounters`, `show pfcwd stats`), LLDP
(`show lldp table`, `show lldp neighbors`), `show interfaces status|description` and `show platform summary`
follow the scripts' layouts. Sources
and what is unverified: tests/lab/switchsim/README.md "SONiC", docs/vendor-sonic.md "Simulator".
"""
from __future__ import annotations

import datetime
import json
import re
import shlex
import time
from typing import Any

from . import sonic_gcu, sonic_yang
from .commit import ConfirmedCommit
from .core import Device, Shell, SimError, deepcopy, natural_key
from .jsonpatch_rfc6902 import JsonPatchException, JsonPointerException, Patch, escape, make_patch

CHECKPOINTS_DIR = "/etc/sonic/checkpoints"      # generic_updater.py CHECKPOINTS_DIR
CHECKPOINT_EXT = ".cp.json"                     # generic_updater.py CHECKPOINT_EXT
CONFIG_DB_FILE = "/etc/sonic/config_db.json"    # config/main.py DEFAULT_CONFIG_DB_FILE
SCOPE = "localhost"                             # gu_common.py HOST_NAMESPACE (single ASIC)
NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")       # units / checkpoints the contract allows (SONIC.md)
STOCK_WRED = "AZURE_LOSSLESS"                   # qos_config.j2's lossless WRED profile


class ClickFail(Exception):
    """click's ctx.fail / UsageError: 'Usage: ...', 'Try "... -h" for help.', '', 'Error: msg'; exit 2."""

    def __init__(self, usage: str, command: str, message: str) -> None:
        super().__init__(message)
        self.usage = usage
        self.command = command
        self.message = message

    def text(self) -> str:
        # click 7.0 (sonic-utilities setup.py pins click==7.0): UsageError.show()
        return f"Usage: {self.usage}\nTry \"{self.command} -h\" for help.\n\nError: {self.message}\n"


class GcuError(Exception):
    """generic_config_updater's GenericConfigUpdaterError / ValueError (str = its message)."""


def tabulate(rows: list, headers: list, align: str = "right") -> str:
    """tabulate(rows, headers, tablefmt='simple', stralign=align): columns two spaces apart, each at
    least its header + 2 wide (tabulate's MIN_PADDING), a dash ruler under the header."""
    rows = [[str(c) for c in r] for r in rows]
    widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def cell(text: str, width: int) -> str:
        return text.rjust(width) if align == "right" else text.ljust(width)
    out = ["  ".join(cell(h, w) for h, w in zip(headers, widths)).rstrip() if align != "right" else
           "  ".join(cell(h, w) for h, w in zip(headers, widths)),
           "  ".join("-" * w for w in widths)]
    for r in rows:
        line = "  ".join(cell(c, w) for c, w in zip(r, widths))
        out.append(line.rstrip() if align != "right" else line)
    return "\n".join(out)


def comma(n: Any) -> str:
    """utilities_common/netstat.py format_number_with_comma."""
    text = str(n)
    return f"{int(text):,}" if text.isdecimal() else text


def speed_mbps(text: str | None) -> int | None:
    m = re.fullmatch(r"(\d+)([GM]?)", str(text or ""))
    if not m:
        return None
    return int(m.group(1)) * (1000 if m.group(2) == "G" else 1)


def speed_text(mbps: int) -> str:
    """scripts/intfutil port_speed_parse."""
    if mbps < 1000:
        return f"{mbps}M"
    if mbps % 1000 >= 100:
        return f"{mbps / 1000:.1f}G"
    return f"{mbps / 1000:.0f}G"


def timespan(seconds: float) -> str:
    """systemd format_timespan as list-timers prints LEFT (two largest units; unverified rounding)."""
    secs = int(seconds)
    parts = []
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if secs >= size:
            n, secs = divmod(secs, size)
            parts.append(f"{n} days" if unit == "day" and n > 1 else f"{n}{' day' if unit == 'day' else unit}")
    return " ".join(parts[:2]) or "0s"


def parse_timespan(text: str) -> float | None:
    """systemd.time(7) time spans: '300', '300s', '5min', '1h 30min', '2m'; bare numbers are seconds."""
    units = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "": 1, "s": 1, "sec": 1, "second": 1, "seconds": 1,
             "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
             "d": 86400, "day": 86400, "days": 86400}
    total = 0.0
    rest = text.strip()
    if not rest:
        return None
    for m in re.finditer(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)", rest):
        if m.group(2) not in units:
            return None
        total += float(m.group(1)) * units[m.group(2)]
    if re.sub(r"\s*\d+(?:\.\d+)?\s*[a-z]*", "", rest):
        return None
    return total


# --------------------------------------------------------------------------------------------
# the device
# --------------------------------------------------------------------------------------------
class SonicDevice(Device):
    platform = "sonic"
    # 32 x 400G ports, 8 lanes each (SONiC names ports Ethernet<first lane index>).
    default_ports = [f"Ethernet{8 * i}" for i in range(32)]

    def __init__(self, spec: dict, sim: Any) -> None:
        super().__init__(spec, sim)
        self.release = str(spec.get("version") or "202505")
        if self.release not in sonic_gcu.RELEASES:
            raise SimError(f"sonic: release {self.release!r} is not one the simulator emulates ({', '.join(sonic_gcu.RELEASES)})")
        # The hardware SKU (DEVICE_METADATA hwsku, 'show version' HwSKU) decides the ASIC GCU's validators see;
        # the ASIC type follows the SKU's vendor (sonic_version.yml asic_type). A lab SKU is on no list.
        self.hwsku = str(spec.get("hwsku") or "lab-sonic-32x400G")
        mellanox = self.hwsku.lower().startswith(("mellanox-", "acs-msn", "acs-sn"))
        self.asic_type = str(spec.get("asic_type") or ("mellanox" if mellanox else "broadcom"))
        # sonic-buildimage functions.sh sonic_get_version: '<branch>.<build number>-<commit>' for an untagged
        # build (no 8-digit component: GCU's build-date gate is skipped); spec build_version gives a tag form.
        self.build_version = str(spec.get("build_version") or f"{self.release}.0-6f2a1c3d")
        self.buffer_model = str(spec.get("buffer_model") or "dynamic")
        self.platform_name = "x86_64-lab_sonic-r0"   # DEVICE_METADATA platform ('show version' Platform:)
        self.booted = time.time()                    # lldpd's neighbour age counts from here
        self.config: dict = self.factory_config()
        self.checkpoints: dict[str, dict] = {}
        self.files: dict[str, str] = {}
        self.units: dict[str, dict] = {}          # transient timer units: name -> {commit, argv}
        if spec.get("initial_config"):
            self.load_lines(spec["initial_config"])
        self.saved: dict = deepcopy(self.config)  # /etc/sonic/config_db.json

    def factory_config(self) -> dict:
        """A factory CONFIG_DB: DEVICE_METADATA, the PORT table of the inventory's ports, and the default buffer pools.
        Field names from the YANG models (sonic_yang.py); the hwsku/platform strings, lane numbering, aliases and
        pool sizes are this simulator's (unverified for any one hardware SKU)."""
        ports = {}
        for i, name in enumerate(sorted(self.ports, key=natural_key)):
            first = 8 * i + 1
            ports[name] = {"admin_status": "up", "alias": f"etp{i + 1}", "index": str(i + 1),
                           "lanes": ",".join(str(first + k) for k in range(8)), "mtu": "9100", "speed": "400000"}
        mac = _mac(self.name)
        return {
            "DEVICE_METADATA": {"localhost": {"hostname": self.hostname, "hwsku": self.hwsku,
                                              "platform": self.platform_name, "mac": mac, "type": "LeafRouter",
                                              "buffer_model": self.buffer_model, "default_pfcwd_status": "disable"}},
            "PORT": ports,
            "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "size": "32689152", "type": "ingress", "xoff": "2058240"},
                            "egress_lossless_pool": {"mode": "static", "size": "32340992", "type": "egress"},
                            "egress_lossy_pool": {"mode": "dynamic", "size": "24641536", "type": "egress"}},
            # buffers_config.j2's lossy / egress profiles (sizes: the simulator's, unverified per SKU); the lossless
            # PG profiles are buffermgrd's (traditional model) or buffermgrd's dynamic calculation
            "BUFFER_PROFILE": {"ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
                               "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "32340992"},
                               "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1792", "dynamic_th": "3"}},
            # The stock lossless WRED profile sonic-buildimage files/build_templates/qos_config.j2 renders
            # (AZURE_LOSSLESS: ecn_all, green/yellow/red enabled; the thresholds are per platform: these are
            # the template's defaults, unverified for any one SKU). No PFC_WD table: only 'pfcwd start_default'
            # with default_pfcwd_status=enable creates one (docs/research/sonic-gcu.md section 5).
            "WRED_PROFILE": {STOCK_WRED: {"ecn": "ecn_all", "wred_green_enable": "true", "wred_yellow_enable": "true",
                                          "wred_red_enable": "true", "green_min_threshold": "1048576",
                                          "green_max_threshold": "2097152", "green_drop_probability": "5",
                                          "yellow_min_threshold": "1048576", "yellow_max_threshold": "2097152",
                                          "yellow_drop_probability": "5", "red_min_threshold": "1048576",
                                          "red_max_threshold": "2097152", "red_drop_probability": "5"}},
        }

    # --- the platform contract ------------------------------------------------------------
    def load_lines(self, lines: list | str) -> None:
        """initial_config / POST .../load / a saved startup: JSON Patch operations, one JSON object per line
        (or one line holding the whole CONFIG_DB as a JSON object), applied to CONFIG_DB with the YANG checks."""
        lines = lines.splitlines() if isinstance(lines, str) else list(lines)
        config = deepcopy(self.config)
        for line in lines:
            if not str(line).strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError as exc:
                raise SimError(f"sonic initial config: not JSON: {line!r} ({exc})") from None
            try:
                if isinstance(doc, dict) and "op" not in doc:
                    config = doc
                else:
                    config = Patch(doc if isinstance(doc, list) else [doc]).apply(config)
            except (JsonPatchException, JsonPointerException) as exc:
                raise SimError(f"sonic initial config line {line!r}: {exc}") from None
        try:
            sonic_yang.validate(config)
        except (sonic_yang.YangError, sonic_yang.NotParsed, ValueError) as exc:
            raise SimError(f"sonic initial config: {_yang_text(exc)}") from None
        with self.lock:
            self.config = config

    def running_config(self) -> str:
        with self.lock:
            return json.dumps(self.config, indent=4, sort_keys=True) + "\n"

    def startup_lines(self) -> list[str]:
        with self.lock:
            return [json.dumps(self.saved, sort_keys=True)]

    def system_name(self) -> str:
        return str(self.config.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname", self.hostname))

    def lldp_advertised(self, port: str) -> dict:
        # dockers/docker-lldp/lldpmgrd: lldpcli configure ports <name> lldp portidsubtype local <alias>
        # [description <PORT description>]; the port name when the alias is empty.
        row = self.config.get("PORT", {}).get(port, {})
        return {"port_id": row.get("alias") or port, "subtype": "local", "descr": row.get("description") or None}

    def pending_state(self) -> dict:
        with self.lock:
            active = {u: s for u, s in self.units.items() if s["commit"].active}
            left = [s["commit"].remaining() for s in active.values()]
            return {"platform": "sonic", "pending_commit": bool(active), "units": sorted(active),
                    "remaining_seconds": round(min(left), 3) if left else None,
                    "checkpoints": sorted(self.checkpoints)}

    def new_shell(self, conn: Any) -> SonicShell:
        return SonicShell(self, conn)

    # --- GCU -----------------------------------------------------------------------------
    def running_all(self) -> dict:
        """show runningconfiguration all (single ASIC): CONFIG_DB plus 'bgpraw' (FRR's running config; the lab
        runs no bgpd, so the empty string -- unverified)."""
        return dict(deepcopy(self.config), bgpraw="")

    def yang_check(self, config: dict, out: list[str]) -> None:
        """sonic_yang_ext loadData on a CONFIG_DB dict; raises GcuError('Data Loading Failed\\n...') and prints what
        sonic_yang's sysLog(doPrint=True) prints."""
        without = sorted(t for t in config if t not in sonic_yang.MODELLED_TABLES and t != "bgpraw")
        if without:
            out.append(f"sonic_yang(6):Note: Below table(s) have no YANG models: {', '.join(without)}")
        try:
            sonic_yang.validate({k: v for k, v in config.items() if k in sonic_yang.MODELLED_TABLES})
        except sonic_yang.NotParsed as exc:
            table, keys, errors = exc.args
            parsed = f"All Keys are not parsed in {table}\ndict_keys({keys!r})"
            out.append(f"sonic_yang(3):{parsed}")
            out.append(f"sonic_yang(3):exceptionList:{errors!r}")
            text = f"{parsed}\nexceptionList:{errors!r}"
            out.append(f"sonic_yang(3):Data Loading Failed:{text}")
            raise GcuError(f"Data Loading Failed\n{text}") from None
        except (sonic_yang.YangError, ValueError) as exc:
            out.append(f"sonic_yang(3):Data Loading Failed:{exc}")
            raise GcuError(f"Data Loading Failed\n{exc}") from None

    @property
    def scoped(self) -> bool:
        """202405+: GCU runs per scope; its notices and errors carry 'localhost' (docs/research/sonic-gcu.md 1.3, 1.4)."""
        return sonic_gcu.rank(self.release) >= sonic_gcu.rank("202405")

    def apply_patch(self, ops: list, dry_run: bool, out: list[str]) -> None:
        """config apply-patch after the file is read (config/main.py apply_patch; 202405+ first validate_patch,
        then generic_updater.py PatchApplier.apply for the single scope 'localhost')."""
        patch = Patch(ops)
        if self.scoped:
            # validate_patch(): apply to `show runningconfiguration all`, YANG-check the result (minus bgpraw)
            try:
                target_all = patch.apply(self.running_all())
                target_all.pop("bgpraw", None)
                self.yang_check(target_all, out)
            except (JsonPatchException, JsonPointerException, GcuError, TypeError) as exc:
                raise GcuError(f"Validate json patch: {patch} failed due to:{exc}") from None
            for op in ops:
                if not op["path"]:
                    raise GcuError("Wrong patch with empty path.")   # generic_updater.py extract_scope
            try:
                self._patch_applier(patch, dry_run, out)
            except GcuError as exc:
                raise GcuError(f"Failed to apply patch on the following scopes:\n- {SCOPE}: {exc}") from None
        else:
            self._patch_applier(patch, dry_run, out)

    def _patch_applier(self, patch: Patch, dry_run: bool, out: list[str], rollback: bool = False) -> None:
        """generic_updater.py PatchApplier.apply: its notices (logger title 'Patch Applier', print_all_to_console),
        per release (docs/research/sonic-gcu.md section 1.4): up to 202311 no scope, the changes listed after the
        count line and again while applied ('sorted into' on 202211, 'converted into' on 202305/202311); 202405+
        the scope 'localhost' in every line and each change listed once."""
        say = out.append
        title = "Patch Applier"
        scoped = self.scoped
        sc = f"{SCOPE}: " if scoped else ""

        def cap(text: str) -> str:
            return text if scoped else text[:1].upper() + text[1:]
        say(f"{title}: {sc}Patch application starting.")
        say(f"{title}: {sc}Patch: {patch}")
        say(f"{title}: {SCOPE} getting current config db." if scoped else f"{title}: Getting current config db.")
        old = deepcopy(self.config)
        say(f"{title}: {sc}{cap('simulating the target full config after applying the patch.')}")
        try:
            target = patch.apply(old)
        except (JsonPatchException, JsonPointerException) as exc:
            raise GcuError(str(exc)) from None
        say(f"{title}: {sc}{cap('validating all JsonPatch operations are permitted on the specified fields')}")
        try:
            sonic_gcu.validate_field_operation(sonic_gcu.Platform(self.release, self.asic_type, self.hwsku, self.build_version),
                                               old, target)
        except sonic_gcu.IllegalPatchOperation as exc:
            self.record("gcu_refused", message=str(exc))
            raise GcuError(str(exc)) from None
        if scoped:
            say(f"{title}: {SCOPE}: validating target config does not have empty tables,\n"
                f"                            since they do not show up in ConfigDb.")
        else:
            say(f"{title}: Validating target config does not have empty tables, since they do not show up in ConfigDb.")
        empty = [t for t in target if not target[t]]
        if empty:
            if scoped:
                # the f-string's backslash continuations keep the next lines' indentation (generic_updater.py)
                pad = " " * 32
                raise GcuError(f"{SCOPE}: given patch is not valid because it will result in empty tables {pad}which is not "
                               f"allowed in ConfigDb. {pad}Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")
            raise GcuError(f"Given patch is not valid because it will result in empty tables which is not allowed in ConfigDb. "
                           f"Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")
        say(f"{title}: {sc}{cap('sorting patch updates.')}")
        # patch_sorter.py StrictPatchSorter.sort
        touched = {op["path"].split("/")[1].replace("~1", "/").replace("~0", "~") for op in patch.ops if op["path"].count("/") >= 1}
        touched.discard("")
        if any(t not in sonic_yang.MODELLED_TABLES for t in touched):
            raise GcuError("Given patch is not valid because it has changes to tables without YANG models")
        try:
            self.yang_check(target, [])
        except GcuError as exc:
            raise GcuError(f"Given patch will produce invalid config. Error: {exc}") from None
        if self.faults.get("commit_error") and not dry_run and not rollback:
            # the commit_error fault: the switch fails the change as it applies it (change_applier.py writes CONFIG_DB
            # and a service's validation fails). A dry run applies nothing (DryRunChangeApplier) and so passes; a
            # rollback's patch frees what the change took and goes through.
            raise GcuError(str(self.faults["commit_error"]))
        for leaf in leaf_changes(old, target):
            if self.rejected(leaf):
                # reject_lines fault: the switch refuses this field change (GCU's failure shape; the wording after
                # "Error:" is this simulator's, naming the change)
                self.record("fault_reject", command=leaf)
                raise GcuError(f"Given patch will produce invalid config. Error: the switch rejected: {leaf}")
        # One change per non-test operation (the real sorter may split or merge them: unverified).
        changes = [[op] for op in patch.ops if op["op"] != "test"]
        n = len(changes)
        s = "s" if n != 1 else ""
        colon = ":" if n else "."
        if scoped:
            say(f"{title}: The {SCOPE} patch was converted into {n} change{s}{colon}")
            say(f"{title}: {SCOPE}: applying {n} change{s} in order{colon}")
        else:
            verb = "sorted" if self.release == "202211" else "converted"
            say(f"{title}: The patch was {verb} into {n} change{s}{colon}")
            for change in changes:
                say(f"{title}:   * {json.dumps(change)}")
            say(f"{title}: Applying {n} change{s} in order{colon}")
        for change in changes:
            say(f"{title}:   * {json.dumps(change)}")
            if dry_run:
                say(f"** DryRun: Would apply {json.dumps(change)}")
        say(f"{title}: {sc}{cap('verifying patch updates are reflected on ConfigDB.')}")
        if not dry_run:
            # ConfigDBConnector stores every field as a string: a typed value never reads back equal (unverified
            # beyond the source reading of change_applier.py / verify_same_json).
            if _has_non_string(target):
                raise GcuError(f"{SCOPE}: after applying patch to config, there are still some parts not updated" if scoped
                               else "After applying patch to config, there are still some parts not updated")
            self.config = target
            self.buffermgrd(old)
            self.record("apply_patch", ops=len(patch.ops))
        say(f"{title}: {SCOPE} patch application completed." if scoped else f"{title}: Patch application completed.")

    # --- buffermgrd (sonic-swss cfgmgr/buffermgr.cpp, traditional buffer model) -----------------
    # pg_profile_lookup.ini stand-in: (xon, xoff, size) bytes per speed; the real files are per platform (unverified).
    PG_LOOKUP = {"400000": ("19456", "145408", "164864"), "200000": ("19456", "91136", "110592"),
                 "100000": ("19456", "63488", "82944")}

    def buffermgrd(self, old: dict) -> None:
        """doSpeedUpdateTask after CONFIG_DB changed: for each port whose PORT entry or PORT_QOS_MAP pfc_enable changed,
        with a cable length other than 0m and PFC on: the lossless PG profile is pg_lossless_<speed>_<cable>_profile,
        created only if absent (an existing one, tuned or not, is reused), and BUFFER_PG|<port>|<pgs> is pointed at it,
        replacing whatever profile it named. Mellanox with the port admin down: the default PG is removed instead.
        Nothing in the dynamic model (buffermgrd does not run it; buffermgrdyncalc.cpp computes there)."""
        config = self.config
        meta = config.get("DEVICE_METADATA", {}).get("localhost", {})
        if meta.get("buffer_model", "traditional") != "traditional":
            return
        cable = (config.get("CABLE_LENGTH") or {}).get("AZURE") or {}
        for port, row in sorted((config.get("PORT") or {}).items()):
            qos = (config.get("PORT_QOS_MAP") or {}).get(port) or {}
            before_qos = ((old.get("PORT_QOS_MAP") or {}).get(port) or {})
            if row == (old.get("PORT") or {}).get(port) and qos.get("pfc_enable") == before_qos.get("pfc_enable"):
                continue
            length = cable.get(port)
            prios = sorted({int(p) for p in (qos.get("pfc_enable") or "").split(",") if p.isdigit()})
            if not length or length == "0m" or not prios or not row.get("speed"):
                continue
            admin = row.get("admin_status") or ("down" if self.release == "master" else None)
            if admin is None:
                continue   # buffermgrd waits for the admin status (202505 and older)
            name = f"pg_lossless_{row['speed']}_{length}_profile"
            pgs = _pg_ranges(prios)
            pg_table = config.setdefault("BUFFER_PG", {})
            if admin == "down" and self.asic_type == "mellanox":
                for pg in pgs:
                    if (pg_table.get(f"{port}|{pg}") or {}).get("profile") == name:
                        del pg_table[f"{port}|{pg}"]
                continue
            profiles = config.setdefault("BUFFER_PROFILE", {})
            if name not in profiles:
                lookup = self.PG_LOOKUP.get(row["speed"])
                if lookup is None:
                    self.record("buffermgrd", error=f"No PG profile configured for speed {row['speed']} and cable length {length}")
                    continue
                xon, xoff, size = lookup
                profiles[name] = {"pool": "ingress_lossless_pool", "xon": xon, "xoff": xoff, "size": size, "dynamic_th": "0"}
            for pg in pgs:
                key = f"{port}|{pg}"
                if (pg_table.get(key) or {}).get("profile") != name:
                    pg_table[key] = {"profile": name}
                    self.record("buffermgrd", port=port, pg=pg, profile=name)

    def checkpoint(self, name: str, out: list[str]) -> None:
        say = out.append
        title = "Config Rollbacker"   # generic_updater.py FileSystemConfigRollbacker.checkpoint
        say(f"{title}: Config checkpoint starting.")
        say(f"{title}: Checkpoint name: {name}.")
        say(f"{title}: Getting current config db.")
        say(f"{title}: Getting checkpoint full-path.")
        say(f"{title}: Ensuring checkpoint directory exist.")
        say(f"{title}: Saving config db content to {CHECKPOINTS_DIR}/{name}{CHECKPOINT_EXT}.")
        self.checkpoints.pop(name, None)
        self.checkpoints[name] = deepcopy(self.config)
        say(f"{title}: Config checkpoint completed.")
        self.record("checkpoint", name=name)

    def rollback(self, name: str, dry_run: bool, out: list[str]) -> None:
        say = out.append
        title = "Config Rollbacker"
        say(f"{title}: Config rollbacking starting.")
        say(f"{title}: Checkpoint name: {name}.")
        say(f"{title}: Verifying '{name}' exists.")
        if name not in self.checkpoints:
            raise GcuError(f"Checkpoint '{name}' does not exist")
        say(f"{title}: Loading checkpoint into memory.")
        target = deepcopy(self.checkpoints[name])
        say(f"{title}: Replacing config using 'Config Replacer'.")
        rep = "Config Replacer"   # generic_updater.py ConfigReplacer.replace
        say(f"{rep}: Config replacement starting.")
        say(f"{rep}: Target config length: {len(json.dumps(target))}.")
        say(f"{rep}: Getting current config db.")
        say(f"{rep}: Generating patch between target config and current config db.")
        patch = Patch(make_patch(self.config, target))
        say(f"{rep}: Applying patch using 'Patch Applier'.")
        self._patch_applier(patch, dry_run, out, rollback=True)
        say(f"{rep}: Verifying config replacement is reflected on ConfigDB.")
        say(f"{rep}: Config replacement completed.")
        say(f"{title}: Config rollbacking completed.")
        if not dry_run:
            self.record("rollback", checkpoint=name)

    def delete_checkpoint(self, name: str, out: list[str]) -> None:
        say = out.append
        title = "Config Rollbacker"
        say(f"{title}: Deleting checkpoint starting.")
        say(f"{title}: Checkpoint name: {name}.")
        say(f"{title}: Checking checkpoint exists.")
        if name not in self.checkpoints:
            raise GcuError(f"Checkpoint '{name}' does not exist")
        say(f"{title}: Deleting checkpoint.")
        del self.checkpoints[name]
        say(f"{title}: Deleting checkpoint completed.")

    # --- transient systemd timers ---------------------------------------------------------
    def start_unit(self, unit: str, seconds: float, argv: list[str]) -> None:
        commit = ConfirmedCommit(self, lambda before, info: self._fire(unit, before))
        self.units[unit] = {"commit": commit, "argv": list(argv), "seconds": seconds,
                            "next": time.time() + seconds}
        commit.start(seconds, list(argv), unit=unit)
        self.record("timer_started", unit=unit, seconds=seconds, command=" ".join(argv))

    def _fire(self, unit: str, argv: list[str]) -> None:
        """The timer elapsed: systemd starts <unit>.service, which runs the command as root."""
        out: list[str] = []
        rc = SonicShell.run_root(self, argv, out)
        self.units.pop(unit, None)
        self.record("timer_fired", unit=unit, command=" ".join(argv), rc=rc, output="\n".join(out)[-2000:])


def leaf_changes(old: dict, new: dict) -> list[str]:
    """Every field a patch sets or removes, one JSON Patch op per field ('/TABLE/KEY/FIELD'), as json.dumps prints it:
    what the reject_lines fault is matched against (GCU's patch sorter also splits a patch into field changes)."""
    out = []
    for table in sorted(set(old) | set(new)):
        rows_old, rows_new = old.get(table) or {}, new.get(table) or {}
        for key in sorted(set(rows_old) | set(rows_new), key=natural_key):
            a, b = rows_old.get(key), rows_new.get(key)
            fields_a = a if isinstance(a, dict) else {}
            fields_b = b if isinstance(b, dict) else {}
            for field in sorted(set(fields_a) | set(fields_b), key=natural_key):
                path = f"/{escape(table)}/{escape(key)}/{escape(field)}"
                if field not in fields_b:
                    out.append(json.dumps({"op": "remove", "path": path}))
                elif fields_a.get(field) != fields_b[field]:
                    out.append(json.dumps({"op": "add", "path": path, "value": fields_b[field]}))
    return out


def _int_range(text: str, low: int, high: int, usage: tuple, name: str) -> int:
    """click.IntRange: click 7's message for a value outside the range or not a number."""
    if not re.fullmatch(r"-?\d+", text):
        raise ClickFail(*usage, f"Invalid value for {name}: {text} is not a valid integer")
    if not low <= int(text) <= high:
        raise ClickFail(*usage, f"Invalid value for {name}: {text} is not in the valid range of {low} to {high}.")
    return int(text)


def _pg_ranges(prios: list[int]) -> list[str]:
    """buffermgr.cpp: consecutive lossless priorities collapse into one PG key part ('3-4'; '3', '6')."""
    runs: list[list[int]] = []
    for p in prios:
        if runs and runs[-1][1] == p - 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return [f"{a}" if a == b else f"{a}-{b}" for a, b in runs]


def _has_non_string(config: dict) -> bool:
    for rows in config.values():
        if not isinstance(rows, dict):
            return True
        for fields in rows.values():
            if isinstance(fields, dict):
                if any(not isinstance(v, (str, dict, list)) for v in fields.values()):
                    return True
            elif not isinstance(fields, (str, list)):
                return True
    return False


def _yang_text(exc: Exception) -> str:
    if isinstance(exc, sonic_yang.NotParsed):
        table, keys, errors = exc.args
        return f"All Keys are not parsed in {table}\ndict_keys({keys!r})\nexceptionList:{errors!r}"
    return str(exc)


def _mac(name: str) -> str:
    import hashlib

    digest = hashlib.sha256(f"{name}/sonic-base-mac".encode()).digest()
    return "02:" + ":".join("%02x" % b for b in digest[:5])


# --------------------------------------------------------------------------------------------
# the shell (bash, the subset the contract uses)
# --------------------------------------------------------------------------------------------
_OPERATORS = re.compile(r"(&&|\|\||;)")
_HEREDOC = re.compile(r"<<(-?)\s*(?:'([^']*)'|\"([^\"]*)\"|([A-Za-z0-9_.-]+))")


class SonicShell(Shell):
    def __init__(self, device: SonicDevice, conn: Any) -> None:
        super().__init__(device, conn)
        self.dev: SonicDevice = device
        self.user = getattr(conn, "user", None) or device.username
        self.rc = 0
        self.heredoc: dict | None = None   # {"delim", "strip", "expand", "lines", "command", "rejected"}

    # --- prompt / banner ---------------------------------------------------------------
    def banner(self) -> str:
        return ("Linux sonic 6.1.0-29-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.123-1 (2025-01-02) x86_64\n"
                "You are on\n  ____   ___  _   _ _  ____\n / ___| / _ \\| \\ | (_)/ ___|\n"
                " \\___ \\| | | |  \\| | | |\n  ___) | |_| | |\\  | | |___\n |____/ \\___/|_| \\_|_|\\____|\n\n"
                "-- Software for Open Networking in the Cloud --\n\n"
                "Unauthorized access and/or use are prohibited.\nAll access and/or use are subject to monitoring.\n\n"
                "Help:    https://sonic-net.github.io/SONiC/\n\n")

    def prompt(self) -> str:
        if self.heredoc is not None:
            return "> "   # bash PS2
        return f"{self.user}@{self.dev.system_name()}:~$ "

    def reject(self, line: str) -> str:
        """The reject_lines fault. Inside a here-document the line is still read (bash has no error there) and the
        apply of that file fails in GCU's failure shape naming the line; a command line is not run."""
        if self.heredoc is not None:
            doc = self.heredoc
            out = self.handle(line)
            doc["rejected"] = line
            if self.heredoc is None and doc.get("target"):   # the line was the delimiter
                self.dev.files[self._path(doc["target"]) + "\0rejected"] = line
            return out
        # A command line: not run. A `config X` line fails in click's shape for X, any other line as bash
        # refuses a line it cannot parse (the fault's words: the simulator's).
        self.rc = 2
        words = line.split()
        if words[:1] == ["sudo"]:
            words = words[1:]
        if words[:1] == ["config"] and len(words) > 1:
            usage = f"config {words[1]} [OPTIONS] ..."
            return ClickFail(usage, f"config {words[1]}", f"the switch rejected: {line}").text()
        return f"-bash: syntax error near unexpected token `{words[-1] if words else 'newline'}'\n"

    # --- input -------------------------------------------------------------------------
    def handle(self, line: str) -> str:
        if self.heredoc is not None:
            return self._heredoc_line(line)
        text = line.strip()
        if not text or text.startswith("#"):
            return ""
        with self.dev.lock:
            return self._command_line(text)

    def _heredoc_line(self, line: str) -> str:
        doc = self.heredoc
        body = line.lstrip("\t") if doc["strip"] else line
        if body == doc["delim"]:
            self.heredoc = None
            content = "".join(doc["lines"])
            with self.dev.lock:
                out = self._run_list(doc["command"], stdin=content)
                if doc.get("rejected") is not None and doc.get("target"):
                    self.dev.files[self._path(doc["target"]) + "\0rejected"] = doc["rejected"]
                return out
        if doc["expand"]:
            body = self._expand(body)
        doc["lines"].append(body + "\n")
        return ""

    def _expand(self, text: str) -> str:
        """bash expansion in an unquoted here-document / double quotes: $? and unset variables (empty)."""
        text = text.replace("$?", str(self.rc))
        return re.sub(r"\\\$|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", lambda m: "$" if m.group() == "\\$" else "", text)

    def _command_line(self, text: str) -> str:
        m = _HEREDOC.search(text)
        if m and not _in_quotes(text, m.start()):
            delim = m.group(2) if m.group(2) is not None else (m.group(3) if m.group(3) is not None else m.group(4))
            command = text[:m.start()] + text[m.end():]
            self.heredoc = {"delim": delim, "strip": m.group(1) == "-", "expand": m.group(4) is not None,
                            "lines": [], "command": command, "target": _redirect_target(command)}
            return ""
        return self._run_list(text, stdin=None)

    def _run_list(self, text: str, stdin: str | None) -> str:
        """Commands joined by ; && || (left to right, as bash runs them)."""
        try:
            pieces = _split_operators(text)
        except ValueError:
            self.rc = 2
            return "-bash: syntax error: unexpected end of file\n"
        out = []
        op = ";"
        for piece, nxt in pieces:
            run = op == ";" or (op == "&&" and self.rc == 0) or (op == "||" and self.rc != 0)
            if run:
                if not piece.strip():
                    self.rc = 2
                    out.append(f"-bash: syntax error near unexpected token `{nxt or 'newline'}'\n")
                    break
                out.append(self._simple(piece, stdin))
                if self.closed:
                    break
            op = nxt or ";"
        return "".join(out)

    # --- one simple command ------------------------------------------------------------
    def _simple(self, text: str, stdin: str | None) -> str:
        if "|" in text.replace("||", "") and not _all_quoted(text, "|"):
            # Pipelines are not modelled: say so plainly rather than pretend (unverified as bash output).
            self.rc = 1
            return "-bash: switchsim: pipelines are not modelled on the SONiC simulator\n"
        try:
            tokens = shlex.split(text)
        except ValueError:
            self.rc = 2
            return "-bash: syntax error: unexpected end of file\n"
        tokens = [t.replace("$?", str(self.rc)) for t in tokens]
        redirect = None
        argv: list[str] = []
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok in (">", ">>") and i + 1 < len(tokens):
                redirect = (tok, tokens[i + 1])
                i += 2
                continue
            m = re.fullmatch(r"(>>?)(\S+)", tok)
            if m:
                redirect = (m.group(1), m.group(2))
                i += 1
                continue
            argv.append(tok)
            i += 1
        if not argv:
            if redirect:
                return self._write(redirect, "", root=False)
            return ""
        out: list[str] = []
        rc = self.run(argv, out, stdin=stdin, root=False)
        text_out = "".join(s if s.endswith("\n") else s + "\n" for s in out)
        if redirect is not None:
            self.rc = rc
            err = self._write(redirect, text_out, root=argv[0] == "sudo")
            return err
        self.rc = rc
        return text_out

    def _write(self, redirect: tuple[str, str], data: str, root: bool) -> str:
        mode, path = redirect
        path = self._path(path)
        if not _writable(path, root):
            self.rc = 1
            return f"-bash: {path}: Permission denied\n"
        if mode == ">>":
            self.dev.files[path] = self.dev.files.get(path, "") + data
        else:
            self.dev.files[path] = data
            self.dev.files.pop(path + "\0rejected", None)
        return ""

    def _path(self, path: str) -> str:
        home = f"/home/{self.user}"
        if path == "~" or path.startswith("~/"):
            path = home + path[1:]
        if not path.startswith("/"):
            path = f"{home}/{path}"
        return path

    def run(self, argv: list[str], out: list[str], stdin: str | None, root: bool) -> int:
        """Run one command; append its output (stdout and stderr, as a terminal shows them) to out; return its exit status."""
        cmd, args = argv[0], argv[1:]
        if cmd == "sudo":
            if not args:
                out.append("usage: sudo -h | -K | -k | -V")
                return 1
            while args and args[0] in ("-n", "-E", "-H"):
                args = args[1:]
            return self.run(args, out, stdin, root=True)
        if cmd in ("exit", "logout"):
            self.closed = True
            out.append("logout")
            return 0
        if cmd == "true":
            return 0
        if cmd == "false":
            return 1
        if cmd == "echo":
            out.append(" ".join(a for a in args if a != "-e"))
            return 0
        if cmd == "cat":
            return self._cat(args, out, stdin, root)
        if cmd == "rm":
            return self._rm(args, out, root)
        if cmd == "config":
            return self._config(args, out, root)
        if cmd == "show":
            return self._show(args, out)
        if cmd == "systemd-run":
            return self._systemd_run(args, out, root)
        if cmd in ("sonic-cfggen", "/usr/local/bin/sonic-cfggen"):
            return self._cfggen(args, out)
        if cmd == "systemctl":
            return self._systemctl(args, out, root)
        if cmd == "pfcwd":
            return self._pfcwd(args, out, root)
        if cmd == "ecnconfig":
            return self._ecnconfig(args, out, root)
        if cmd in ("bash", "/bin/bash") and args and not args[0].startswith("-"):
            return self._script(args[0], out, root)
        out.append(f"-bash: {cmd}: command not found" if not root else f"sudo: {cmd}: command not found")
        return 127 if not root else 1

    @staticmethod
    def run_root(dev: SonicDevice, argv: list[str], out: list[str]) -> int:
        """A command the device runs as root with no terminal (a systemd service)."""
        shell = SonicShell(dev, None)
        shell.user = "root"
        return shell.run(argv, out, stdin=None, root=True)

    # --- files -------------------------------------------------------------------------
    def _cat(self, args: list[str], out: list[str], stdin: str | None, root: bool) -> int:
        files = [a for a in args if not a.startswith("-")]
        if not files:
            if stdin:
                out.append(stdin[:-1] if stdin.endswith("\n") else stdin)
            return 0
        rc = 0
        for name in files:
            path = self._path(name)
            if path not in self.dev.files:
                out.append(f"cat: {name}: No such file or directory")
                rc = 1
                continue
            text = self.dev.files[path]
            if text:
                out.append(text[:-1] if text.endswith("\n") else text)
        return rc

    def _rm(self, args: list[str], out: list[str], root: bool) -> int:
        force = any(a.startswith("-") and "f" in a for a in args)
        rc = 0
        for name in (a for a in args if not a.startswith("-")):
            path = self._path(name)
            if path not in self.dev.files:
                if not force:
                    out.append(f"rm: cannot remove '{name}': No such file or directory")
                    rc = 1
                continue
            if not _writable(path, root):
                out.append(f"rm: cannot remove '{name}': Permission denied")
                rc = 1
                continue
            del self.dev.files[path]
            self.dev.files.pop(path + "\0rejected", None)
        return rc

    def _script(self, name: str, out: list[str], root: bool) -> int:
        """bash FILE: each line of the file as a command line (no control flow; the lab's undo files have none)."""
        path = self._path(name)
        if path not in self.dev.files:
            out.append(f"bash: {name}: No such file or directory")
            return 127
        saved = self.rc
        for line in self.dev.files[path].splitlines():
            if line.strip() and not line.strip().startswith("#"):
                text = self._run_list(line.strip(), stdin=None) if not root else self._root_line(line.strip())
                if text:
                    out.append(text.rstrip("\n"))
        rc = self.rc
        self.rc = saved
        return rc

    def _root_line(self, line: str) -> str:
        """One line of a script that runs as root (a systemd service): 'sudo' is not needed there."""
        return self._run_list(line if line.startswith("sudo ") else "sudo " + line, stdin=None)

    # --- pfcwd (sonic-utilities pfcwd/main.py) ------------------------------------------
    def _pfcwd(self, args: list[str], out: list[str], root: bool) -> int:
        """pfcwd start [--action A] [--restoration-time R] PORTS... DETECTION | stop [PORTS...]. start: for each
        port with PORT_QOS_MAP pfc_enable, PFC_WD|<port> is deleted then written {detection_time, restoration_time
        (2 x detection when not given, with a notice), action if given}; a port without pfc_enable is skipped with
        'SKIPPED: PFC is not enabled on port: X'. PFC_WD|GLOBAL is not touched. stop deletes PFC_WD|<port>."""
        try:
            if not args or args[0] not in ("start", "stop"):
                raise ClickFail("pfcwd [OPTIONS] COMMAND [ARGS]...", "pfcwd", f'No such command "{args[0] if args else ""}".')
            verb, rest = args[0], args[1:]
            usage = (f"pfcwd {verb} [OPTIONS] " + ("[PORTS]... DETECTION_TIME" if verb == "start" else "[PORTS]..."), f"pfcwd {verb}")
            action = restoration = None
            words: list[str] = []
            i = 0
            while i < len(rest):
                a = rest[i]
                if verb == "start" and a in ("--action", "-a", "--restoration-time", "-r"):
                    if i + 1 >= len(rest):
                        raise ClickFail(*usage, f"{a} option requires an argument")
                    if a in ("--action", "-a"):
                        action = rest[i + 1]
                        if action not in ("drop", "forward", "alert"):
                            raise ClickFail(*usage, f'Invalid value for "--action" / "-a": invalid choice: {action}. (choose from drop, forward, alert)')
                    else:
                        restoration = _int_range(rest[i + 1], 100, 60000, usage, '"--restoration-time" / "-r"')
                    i += 2
                    continue
                if a.startswith("-"):
                    raise ClickFail(*usage, f"no such option: {a}")
                words.append(a)
                i += 1
            all_ports = self._ports()
            if verb == "start":
                if not words:
                    raise ClickFail(*usage, 'Missing argument "DETECTION_TIME".')
                detection = _int_range(words[-1], 100, 5000, usage, '"DETECTION_TIME"')
                ports = words[:-1]
            else:
                ports = words
        except ClickFail as exc:
            out.append(exc.text().rstrip("\n"))
            return 2
        invalid = sorted(set(ports) - {"all"} - set(all_ports), key=natural_key)
        if verb == "start" and invalid:
            out.append("Failed to run command, invalid options:\n" + "\n".join(invalid))
            return 1
        if not root:
            out.append("Root privileges are required for this operation")
            return 1
        ports = all_ports if not ports or "all" in ports else [p for p in ports if p in all_ports]
        table = self.dev.config.setdefault("PFC_WD", {})
        if verb == "stop":
            for port in ports:
                table.pop(port, None)
        else:
            entry = {"detection_time": str(detection)}
            if action is not None:
                entry["action"] = action
            if restoration is None:
                restoration = 2 * detection
                out.append(f"restoration time not defined; default to 2 times detection time: {restoration} ms")
            entry["restoration_time"] = str(restoration)
            for port in ports:
                if (self.dev.config.get("PORT_QOS_MAP", {}).get(port) or {}).get("pfc_enable") is None:
                    out.append(f"SKIPPED: PFC is not enabled on port: {port}")
                    continue
                table[port] = dict(entry)
        if not table:
            del self.dev.config["PFC_WD"]   # redis: a table without keys does not exist
        self.dev.record("pfcwd", verb=verb, ports=ports)
        return 0

    # --- ecnconfig (sonic-utilities scripts/ecnconfig) -------------------------------------
    ECN_FLAGS = {"-gmin": "green_min_threshold", "--green-min": "green_min_threshold", "-gmax": "green_max_threshold",
                 "--green-max": "green_max_threshold", "-ymin": "yellow_min_threshold", "-ymax": "yellow_max_threshold",
                 "-rmin": "red_min_threshold", "-rmax": "red_max_threshold", "-gdrop": "green_drop_probability",
                 "--green-drop-prob": "green_drop_probability", "-ydrop": "yellow_drop_probability",
                 "-rdrop": "red_drop_probability"}

    def _ecnconfig(self, args: list[str], out: list[str], root: bool) -> int:
        """ecnconfig -p PROFILE [-gmin N] [-gmax N] [-gdrop P] ...: mod_entry WRED_PROFILE|PROFILE one field at a time;
        the profile must exist; thresholds non-negative integers, probabilities 0..100, min <= max per colour; silent
        on success. Errors: 'Exception caught:  <msg>' on stderr, exit 1. No GCU, no YANG (it writes CONFIG_DB)."""
        profile, values, i = None, {}, 0
        while i < len(args):
            a = args[i]
            if a in ("-p", "--profile") and i + 1 < len(args):
                profile = args[i + 1]
            elif a in self.ECN_FLAGS and i + 1 < len(args):
                values[self.ECN_FLAGS[a]] = args[i + 1]
            else:
                out.append(f"Usage: ecnconfig [OPTIONS] [COMMAND]\nTry 'ecnconfig --help' for help.\n\nError: No such option: {a}")
                return 2
            i += 2
        if not root:
            out.append("Root privileges required for this operation")
            return 1
        if profile is None:
            return 1
        if not values:
            out.append("Exception caught:  Input arguments error. Specify at least one threshold parameter to set")
            return 1
        current = (self.dev.config.get("WRED_PROFILE") or {}).get(profile)
        if current is None:
            out.append(f"Exception caught:  Input arguments error. Invalid WRED profile {profile} for namespace None")
            return 1
        merged = dict(current, **values)
        for field, value in values.items():
            if not value.isdigit() or ("probability" in field and int(value) > 100):
                out.append("Exception caught:  Input arguments error. Invalid WRED profile parameters")
                return 1
        for colour in ("green", "yellow", "red"):
            low, high = merged.get(f"{colour}_min_threshold"), merged.get(f"{colour}_max_threshold")
            if low is not None and high is not None and int(low) > int(high):
                out.append("Exception caught:  Input arguments error. Invalid WRED profile parameters")
                return 1
        current.update(values)
        self.dev.record("ecnconfig", profile=profile, values=values)
        return 0

    # --- config (sonic-utilities config/main.py) -------------------------------------
    CONFIG_COMMANDS = ("apply-patch", "checkpoint", "delete-checkpoint", "list-checkpoints", "rollback", "save", "replace")

    def _config(self, args: list[str], out: list[str], root: bool) -> int:
        usage_group = ("config [OPTIONS] COMMAND [ARGS]...", "config")
        try:
            if not args or args[0] in ("-h", "--help"):
                out.append("Usage: config [OPTIONS] COMMAND [ARGS]...\n\n  SONiC command line - 'config' command")
                return 0
            sub, rest = args[0], args[1:]
            if sub not in self.CONFIG_COMMANDS:
                raise ClickFail(*usage_group, f'No such command "{sub}".')
            if not root:
                out.append("Root privileges are required for this operation")   # config/main.py config()
                return 1
            return getattr(self, "_config_" + sub.replace("-", "_"))(rest, out)
        except ClickFail as exc:
            out.append(exc.text().rstrip("\n"))
            return 2

    @staticmethod
    def _options(args: list[str], flags: dict[str, str], usage: tuple[str, str], nargs: int) -> tuple[set, list]:
        seen, positional = set(), []
        for a in args:
            if a.startswith("-") and len(a) > 1:
                if a not in flags:
                    raise ClickFail(*usage, f"no such option: {a}")
                seen.add(flags[a])
            else:
                positional.append(a)
        if len(positional) > nargs:
            raise ClickFail(*usage, f'Got unexpected extra argument ({positional[nargs]})')
        return seen, positional

    def _config_apply_patch(self, args: list[str], out: list[str]) -> int:
        usage = ("config apply-patch [OPTIONS] PATCH_FILE_PATH", "config apply-patch")
        flags, pos = self._options(args, {"-d": "dry", "--dry-run": "dry", "-v": "verbose", "--verbose": "verbose",
                                          "-p": "parallel", "--parallel": "parallel"}, usage, 1)
        if not pos:
            raise ClickFail(*usage, 'Missing argument "PATCH_FILE_PATH".')
        dry = "dry" in flags
        if dry:
            out.append("** DRY RUN EXECUTION **")   # print_dry_run_message
        path = self._path(pos[0])
        try:
            if path not in self.dev.files:
                raise GcuError(f"[Errno 2] No such file or directory: '{pos[0]}'")
            rejected = self.dev.files.get(path + "\0rejected")
            try:
                ops = json.loads(self.dev.files[path])
            except ValueError as exc:
                raise GcuError(str(exc)) from None
            if rejected is not None:
                inner = f"Given patch will produce invalid config. Error: the switch rejected: {rejected.strip()}"
                raise GcuError(f"Failed to apply patch on the following scopes:\n- {SCOPE}: {inner}" if self.dev.scoped else inner)
            logs: list[str] = []
            try:
                self.dev.apply_patch(ops, dry, logs)
            finally:
                out.extend(logs)
        except (GcuError, JsonPatchException, JsonPointerException, TypeError) as exc:
            # config/main.py apply_patch: 202405+ 'Failed to apply patch due to: {ex}'; up to 202311 'Failed to apply patch'
            out.append(f"Failed to apply patch due to: {exc}" if self.dev.scoped else "Failed to apply patch")
            raise ClickFail(*usage, str(exc)) from None
        out.append("Patch applied successfully.")
        return 0

    def _config_checkpoint(self, args: list[str], out: list[str]) -> int:
        usage = ("config checkpoint [OPTIONS] CHECKPOINT_NAME", "config checkpoint")
        _flags, pos = self._options(args, {"-v": "verbose", "--verbose": "verbose"}, usage, 1)
        if not pos:
            raise ClickFail(*usage, 'Missing argument "CHECKPOINT_NAME".')
        if "/" in pos[0]:
            # open() of a path under a missing directory (generic_updater.py Util.save_json_file)
            out.append("Failed to create a config checkpoint")
            raise ClickFail(*usage, f"[Errno 2] No such file or directory: '{CHECKPOINTS_DIR}/{pos[0]}{CHECKPOINT_EXT}'")
        self.dev.checkpoint(pos[0], out)
        out.append("Checkpoint created successfully.")
        return 0

    def _config_rollback(self, args: list[str], out: list[str]) -> int:
        usage = ("config rollback [OPTIONS] CHECKPOINT_NAME", "config rollback")
        flags, pos = self._options(args, {"-d": "dry", "--dry-run": "dry", "-v": "verbose", "--verbose": "verbose"}, usage, 1)
        if not pos:
            raise ClickFail(*usage, 'Missing argument "CHECKPOINT_NAME".')
        if "dry" in flags:
            out.append("** DRY RUN EXECUTION **")
        try:
            self.dev.rollback(pos[0], "dry" in flags, out)
        except GcuError as exc:
            out.append("Failed to rollback config")
            raise ClickFail(*usage, str(exc)) from None
        out.append("Config rolled back successfully.")
        return 0

    def _config_delete_checkpoint(self, args: list[str], out: list[str]) -> int:
        usage = ("config delete-checkpoint [OPTIONS] CHECKPOINT_NAME", "config delete-checkpoint")
        _flags, pos = self._options(args, {"-v": "verbose", "--verbose": "verbose"}, usage, 1)
        if not pos:
            raise ClickFail(*usage, 'Missing argument "CHECKPOINT_NAME".')
        try:
            self.dev.delete_checkpoint(pos[0], out)
        except GcuError as exc:
            out.append("Failed to delete config checkpoint")
            raise ClickFail(*usage, str(exc)) from None
        out.append("Checkpoint deleted successfully.")
        return 0

    def _config_list_checkpoints(self, args: list[str], out: list[str]) -> int:
        usage = ("config list-checkpoints [OPTIONS]", "config list-checkpoints")
        flags, _pos = self._options(args, {"-t": "time", "--time": "time", "-v": "verbose", "--verbose": "verbose"}, usage, 0)
        names = list(self.dev.checkpoints)
        if "time" in flags:   # 202505: {"name", "time"} newest first (mtime, UTC isoformat)
            stamp = datetime.datetime.now(datetime.UTC).isoformat()
            data: list = [{"name": n, "time": stamp} for n in reversed(names)]
        else:
            data = names
        out.append(json.dumps(data, indent=4))
        return 0

    def _config_save(self, args: list[str], out: list[str]) -> int:
        usage = ("config save [OPTIONS] [FILENAME]", "config save")
        flags, pos = self._options(args, {"-y": "yes", "--yes": "yes"}, usage, 1)

        def do_save() -> str:
            target = pos[0] if pos else CONFIG_DB_FILE
            with self.dev.lock:
                if target == CONFIG_DB_FILE:
                    self.dev.saved = deepcopy(self.dev.config)
                    self.dev.record("config_save")
                else:
                    self.dev.files[target] = json.dumps(self.dev.config, indent=4, sort_keys=True) + "\n"
            # config/main.py save -> clicommon.run_command(display_cmd=True)
            return f"Running command: /usr/local/bin/sonic-cfggen -d --print-data > {target}\n"
        if "yes" in flags:
            out.append(do_save())
            return 0

        def answer(text: str) -> str:
            if text.strip().lower() in ("y", "yes"):
                self.rc = 0
                return do_save()
            self.rc = 1
            return "Aborted!\n"
        self.ask = ("Existing files will be overwritten, continue? [y/N]: ", answer, True)
        return 0

    def _config_replace(self, args: list[str], out: list[str]) -> int:
        raise ClickFail("config replace [OPTIONS] TARGET_FILE_PATH", "config replace",
                        "switchsim: config replace is not modelled")

    def _cfggen(self, args: list[str], out: list[str]) -> int:
        """sonic-cfggen -d --print-data (src/sonic-config-engine/sonic-cfggen: json.dumps(indent=4) of CONFIG_DB; the
        admin user reads redis as a member of the redis group, build_debian.sh). Key order: sorted (unverified)."""
        if sorted(args) != sorted(["-d", "--print-data"]):
            out.append("switchsim: only 'sonic-cfggen -d --print-data' is modelled")
            return 2
        out.append(json.dumps(json.loads(self.dev.running_config()), indent=4))
        return 0

    # --- show ----------------------------------------------------------------------------
    def _show(self, args: list[str], out: list[str]) -> int:
        words = [a for a in args if not a.startswith("-")]
        opts = {a for a in args if a.startswith("-")}
        try:
            if words[:2] == ["runningconfiguration", "all"]:
                # key order: sonic-cfggen --print-data's (sorted here: unverified), bgpraw last
                config = self.dev.running_all()
                bgpraw = config.pop("bgpraw")
                out.append(json.dumps(dict(json.loads(json.dumps(config, sort_keys=True)), bgpraw=bgpraw), indent=4))
                return 0
            if words[:2] == ["pfc", "counters"]:
                out.append(self._pfc_counters())
                return 0
            if words[:2] == ["queue", "counters"]:
                out.append(self._queue_counters(words[2] if len(words) > 2 else None, "--json" in opts, "--nonzero" in opts))
                return 0
            if words[:2] == ["queue", "wredcounters"]:
                out.append(self._wred_counters(words[2] if len(words) > 2 else None, "--json" in opts))
                return 0
            if words[:2] == ["pfcwd", "stats"]:
                out.append(self._pfcwd_stats("-e" in opts or "--empty" in opts, words[2:]))
                return 0
            if words[:2] == ["lldp", "table"]:
                out.append(self._lldp_table())
                return 0
            if words[:2] == ["lldp", "neighbors"]:
                out.append(self._lldp_neighbors(words[2] if len(words) > 2 else None))
                return 0
            if words[:2] == ["interfaces", "status"]:
                out.append(self._interfaces_status(words[2] if len(words) > 2 else None))
                return 0
            if words[:2] == ["interfaces", "description"]:
                out.append(self._interfaces_description(words[2] if len(words) > 2 else None))
                return 0
            if words[:2] == ["platform", "summary"]:
                out.append(self._platform_summary("--json" in opts))
                return 0
            if words[:1] == ["version"]:
                # show/main.py version(): these lines in this order (kernel, commit, dates, serial and docker images:
                # the simulator's placeholders)
                out.append(f"\nSONiC Software Version: SONiC.{self.dev.build_version}\nSONiC OS Version: 12\n"
                           f"Distribution: Debian 12.8\nKernel: 6.1.0-29-2-amd64\nBuild commit: 6f2a1c3d\n"
                           f"Build date: Mon Jan  6 00:00:00 UTC 2025\nBuilt by: lab@switchsim\n\n"
                           f"Platform: {self.dev.platform_name}\nHwSKU: {self.dev.hwsku}\nASIC: {self.dev.asic_type}\n"
                           f"ASIC Count: 1\nSerial Number: N/A\nModel Number: N/A\nHardware Revision: N/A\n"
                           f"Uptime: 00:00:00 up 1 day,  0:00,  1 user,  load average: 0.00, 0.00, 0.00\n"
                           f"Date: Mon 06 Jan 2025 00:00:00\n\nDocker images:\nREPOSITORY  TAG  IMAGE ID  SIZE")
                return 0
        except ClickFail as exc:
            out.append(exc.text().rstrip("\n"))
            return 2
        groups = ("runningconfiguration", "pfc", "queue", "pfcwd", "lldp", "interfaces", "platform")
        if len(words) > 1 and words[0] in groups:   # click resolves the group, then its sub-command
            fail = ClickFail(f"show {words[0]} [OPTIONS] COMMAND [ARGS]...", f"show {words[0]}", f'No such command "{words[1]}".')
        elif words and words[0] in groups:
            out.append(f"Usage: show {words[0]} [OPTIONS] COMMAND [ARGS]...")
            return 0
        else:
            fail = ClickFail("show [OPTIONS] COMMAND [ARGS]...", "show", f'No such command "{words[0] if words else ""}".')
        out.append(fail.text().rstrip("\n"))
        return 2

    def _ports(self) -> list[str]:
        return sorted(self.dev.config.get("PORT", {}), key=natural_key)

    def _pfc_counters(self) -> str:
        """scripts/pfcstat: Rx table, an empty line, Tx table."""
        rx, tx = [], []
        for port in self._ports():
            c = self.dev.counters.get(port)
            if c is None:
                continue
            rx.append([port] + [comma(c["pfc_rx"][i]) for i in range(8)])
            tx.append([port] + [comma(c["pfc_tx"][i]) for i in range(8)])
        pfc = [f"PFC{i}" for i in range(8)]
        return tabulate(rx, ["Port Rx"] + pfc) + "\n\n" + tabulate(tx, ["Port Tx"] + pfc)

    def _check_port(self, port: str | None) -> None:
        if port is not None and port not in self.dev.config.get("PORT", {}):
            raise ClickFail("show queue counters [OPTIONS] [INTERFACENAME]", "show queue counters",
                            f'Invalid value for "[INTERFACENAME]": {port} is not a valid interface')  # unverified

    def _queue_counters(self, port: str | None, as_json: bool, nonzero: bool) -> str:
        """scripts/queuestat (std header); the lab models unicast queues UC0-UC7 only (MC queues: not modelled)."""
        self._check_port(port)
        ports = [port] if port else self._ports()
        blocks, doc = [], {}
        for p in ports:
            c = self.dev.counters.get(p)
            if c is None:
                continue
            rows = []
            for q in range(8):
                # Drop/pkts is SAI_QUEUE_STAT_DROPPED_PACKETS: every drop on the queue, tail and WRED (the WRED
                # share alone is wredstat's WredDrp/pkts); drop bytes are not modelled (0)
                cells = [str(c["tx_packets"][q]), str(c["tx_bytes"][q]), str(c["queue_drops"][q] + c["wred_drops"][q]), "0"]
                if nonzero and all(x == "0" for x in cells):
                    continue
                rows.append([p, f"UC{q}"] + cells)
            if as_json:
                doc[p] = {r[1]: {"totalpacket": r[2], "totalbytes": r[3], "droppacket": r[4], "dropbytes": r[5]} for r in rows}
            elif rows:
                header = ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
                blocks.append("For namespace :\n" + tabulate(rows, header) + "\n")
        if as_json:
            return json.dumps(doc, indent=4)
        return "\n".join(blocks)

    def _wred_counters(self, port: str | None, as_json: bool) -> str:
        """scripts/wredstat (202505): per port WredDrp/EcnMarked packets and bytes (bytes: not modelled, 0)."""
        self._check_port(port)
        ports = [port] if port else self._ports()
        blocks, doc = [], {}
        for p in ports:
            c = self.dev.counters.get(p)
            if c is None:
                continue
            rows = [[p, f"UC{q}", str(c["wred_drops"][q]), "0", str(c["ecn_marked"][q]), "0"] for q in range(8)]
            if as_json:
                doc[p] = {r[1]: {"wreddroppacket": r[2], "wreddropbytes": r[3], "ecnmarkedpacket": r[4],
                                 "ecnmarkedbytes": r[5]} for r in rows}   # key names unverified
            else:
                blocks.append(tabulate(rows, ["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts",
                                              "EcnMarked/bytes"]) + "\n")
        return json.dumps(doc, indent=4) if as_json else "\n".join(blocks)

    def _pfcwd_stats(self, empty: bool, queues: list[str]) -> str:
        """pfcwd/main.py show_stats: rows with any non-zero stat (all with -e); STATUS from the watchdog
        (operational / stormed); only STORM DETECTED/RESTORED is fed by the lab counters."""
        rows = []
        wd = self.dev.config.get("PFC_WD", {})
        qos = self.dev.config.get("PORT_QOS_MAP", {})
        for port in self._ports():
            c = self.dev.counters.get(port)
            if c is None:
                continue
            # sonic-swss pfcwdorch.cpp (202205+): the watchdog watches the TCs of PORT_QOS_MAP pfcwd_sw_enable
            # (qosorch.cpp stores that mask; an absent field is mask 0: "No lossless TC found", nothing watched),
            # not pfc_enable
            watched = {int(p) for p in (qos.get(port, {}).get("pfcwd_sw_enable") or "").split(",") if p.isdigit()}
            for q in range(8):
                name = f"{port}:{q}"
                if queues and name not in queues:
                    continue
                stats = [f"{c['watchdog_storms'][q]}/{c['watchdog_restores'][q]}", "0/0", "0/0", "0/0", "0/0"]
                if stats == ["0/0"] * 5 and not empty:
                    continue
                status = "N/A"
                if port in wd and q in watched:
                    status = "stormed" if c["watchdog_status"][q] == "DEADLOCK" else "operational"
                rows.append([name, status] + stats)
        return tabulate(rows, ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP",
                               "TX LAST OK/DROP", "RX LAST OK/DROP"])

    def _lldp_table(self) -> str:
        """scripts/lldpshow summary (tabulate default format: left aligned)."""
        seen = self.dev.lldp_ports()
        rows = []
        for port in self._ports():
            peer = (seen.get(port) or {}).get("peer")
            if not peer:
                continue
            capability = "" if peer.get("subtype") == "mac" else "BR"   # a host's lldpd: none advertised (unverified)
            rows.append([port, peer["system"], peer["port_id"], capability, peer.get("descr") or ""])
        # no neighbour: lldpctl -f xml still answers (an empty <lldp/>), so lldpshow prints the header and a 0 count
        return ("Capability codes: (R) Router, (B) Bridge, (O) Other\n"
                + tabulate(rows, ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"], "left")
                + "\n" + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}")

    LLDP_RULE = "-" * 79

    def _lldp_neighbors(self, only: str | None) -> str:
        """show/main.py lldp neighbors -> 'sudo lldpshow -d [-p IF]' -> lldpctl's plain text, as sonic-utilities
        doc/Command-Reference.md "show lldp neighbors" prints it: a rule, 'LLDP neighbors:', a rule, then per
        neighbour 'Interface:    <port>, via: LLDP, RID: n, Time: d day, hh:mm:ss', its Chassis (ChassisID
        '<subtype> <id>', SysName, TTL, Capability lines) and Port (PortID '<subtype> <id>', PortDescr when sent)
        blocks and a rule. With a port (lldpshow -p): nothing when lldpctl's text does not name it. The lab's peers
        send no SysDescr or MgmtIP, and TTL 120 (lldpd's default; unverified for the far platforms)."""
        seen = self.dev.lldp_ports()
        blocks = []
        rid = 0
        for port in self._ports():
            peer = (seen.get(port) or {}).get("peer")
            if not peer or (only and port != only):
                continue
            rid += 1
            age = max(0, int(time.time() - self.dev.booted))
            days, rest = divmod(age, 86400)
            # lldpd src/client/display.c display_age: "%d day%s, %02d:%02d:%02d" ('s' above one day)
            stamp = f"{days} day{'s' if days > 1 else ''}, {rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
            lines = [f"Interface:    {port}, via: LLDP, RID: {rid}, Time: {stamp}", "  Chassis:",
                     f"    ChassisID:    mac {peer.get('chassis')}", f"    SysName:      {peer['system']}", "    TTL:          120"]
            if peer.get("subtype") != "mac":   # a switch: bridge and router, as the table's 'BR'
                lines += ["    Capability:   Bridge, on", "    Capability:   Router, on"]
            lines += ["  Port:", f"    PortID:       {peer.get('subtype')} {peer['port_id']}"]
            if peer.get("descr"):
                lines.append(f"    PortDescr:    {peer['descr']}")
            blocks.append("\n".join(lines) + "\n" + self.LLDP_RULE)
        if only and not blocks:
            return ""   # lldpshow -p: lldpctl's text does not name the port, nothing is kept
        return "\n".join([self.LLDP_RULE, "LLDP neighbors:", self.LLDP_RULE] + blocks) + "\n"

    def _interfaces_description(self, only: str | None) -> str:
        """scripts/intfutil IntfDescription: Interface, Oper, Admin, Alias, Description from APPL_DB PORT_TABLE
        (tabulate simple, stralign right); a field APPL_DB lacks is 'N/A' (appl_db_port_status_get). That a PORT without
        a description has none in APPL_DB either: unverified (portmgrd copies the CONFIG_DB fields)."""
        seen = self.dev.lldp_ports()
        rows = []
        for port in self._ports():
            if only and port != only:
                continue
            row = self.dev.config["PORT"][port]
            admin = row.get("admin_status", "down")
            oper = "up" if admin == "up" and (seen.get(port) or {}).get("oper") == "up" else "down"
            rows.append([port, oper, admin, row.get("alias") or "N/A", row.get("description") or "N/A"])
        return tabulate(rows, ["Interface", "Oper", "Admin", "Alias", "Description"])

    def _platform_summary(self, as_json: bool) -> str:
        """show/platform.py summary: Platform, HwSKU, ASIC, ASIC Count (device_info.get_platform_info), Serial Number,
        Model Number, Hardware Revision (chassis); --json dumps both dicts (the lab's keys only: get_platform_info's
        other keys are not modelled). Serial, model and revision: 'N/A' as in this simulator's 'show version'."""
        info = {"platform": self.dev.platform_name, "hwsku": self.dev.hwsku, "asic_type": self.dev.asic_type,
                "asic_count": 1, "serial": "N/A", "model": "N/A", "revision": "N/A"}
        if as_json:
            return json.dumps(info, indent=4)
        return (f"Platform: {info['platform']}\nHwSKU: {info['hwsku']}\nASIC: {info['asic_type']}\nASIC Count: 1\n"
                f"Serial Number: N/A\nModel Number: N/A\nHardware Revision: N/A")

    def _interfaces_status(self, only: str | None) -> str:
        """scripts/intfutil display_intf_status (Vlan 'routed', Type 'N/A', Asym PFC 'N/A': unverified defaults)."""
        seen = self.dev.lldp_ports()
        rows = []
        for port in self._ports():
            if only and port != only:
                continue
            row = self.dev.config["PORT"][port]
            link = seen.get(port) or {}
            admin = row.get("admin_status", "down")
            oper = "up" if admin == "up" and link.get("oper") == "up" else "down"
            mbps = speed_mbps(link.get("speed")) if oper == "up" else None
            speed = speed_text(mbps or int(row.get("speed", "0") or 0))
            rows.append([port, row.get("lanes", "N/A"), speed, row.get("mtu", "9100"), row.get("fec", "N/A"),
                         row.get("alias", port), "routed", oper, admin, "N/A", row.get("pfc_asym", "N/A")])
        return tabulate(rows, ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type",
                               "Asym PFC"])

    # --- systemd (systemd-run(1), systemctl(1)) ---------------------------------------
    def _systemd_run(self, args: list[str], out: list[str], root: bool) -> int:
        unit, on_active = None, None
        i = 0
        while i < len(args) and args[i].startswith("-"):
            a = args[i]
            if a.startswith("--unit="):
                unit = a.split("=", 1)[1]
            elif a == "--unit" and i + 1 < len(args):
                unit = args[i + 1]
                i += 1
            elif a.startswith("--on-active="):
                on_active = a.split("=", 1)[1]
            elif a == "--on-active" and i + 1 < len(args):
                on_active = args[i + 1]
                i += 1
            else:
                out.append(f"systemd-run: unrecognized option '{a}'")
                return 1
            i += 1
        argv = args[i:]
        if not argv:
            out.append("Command line to execute required.")
            return 1
        if on_active is None:
            out.append("switchsim: systemd-run without --on-active (a transient service) is not modelled")
            return 1
        seconds = parse_timespan(on_active)
        if seconds is None:
            out.append(f"Failed to parse timer value: {on_active}")
            return 1
        if not root:
            out.append("Failed to start transient timer unit: Interactive authentication required.")
            return 1
        if unit is None:
            unit = f"run-r{abs(hash((time.time(), tuple(argv)))) % 10 ** 12:012x}"
        unit = unit[:-len(".timer")] if unit.endswith(".timer") else unit
        if not NAME_RE.match(unit):
            out.append(f"Failed to start transient timer unit: Unit name {unit}.timer is not valid.")
            return 1
        if unit in self.dev.units:
            out.append(f"Failed to start transient timer unit: Unit {unit}.timer was already loaded or has a fragment file.")
            return 1
        self.dev.start_unit(unit, seconds, argv)
        out.append(f"Running timer as unit: {unit}.timer\nWill run service as unit: {unit}.service")
        return 0

    def _systemctl(self, args: list[str], out: list[str], root: bool) -> int:
        opts = [a for a in args if a.startswith("-")]
        words = [a for a in args if not a.startswith("-")]
        if not words:
            out.append("switchsim: systemctl without a verb is not modelled")
            return 1
        verb, names = words[0], words[1:]
        if verb == "list-timers":
            return self._list_timers(names, opts, out)
        if verb == "is-active":
            states = []
            for name in names:
                unit = _unit_name(name)
                states.append("active" if unit in self.dev.units and self.dev.units[unit]["commit"].active else "inactive")
            out.append("\n".join(states))
            return 0 if states and all(s == "active" for s in states) else 3
        if verb == "stop":
            if not root:
                out.append("Failed to stop " + " ".join(names) + ": Interactive authentication required.")
                return 1
            rc = 0
            for name in names:
                unit = _unit_name(name)
                if not name.endswith(".timer") and not name.endswith(".service"):
                    name = name + ".service"
                state = self.dev.units.get(unit)
                if state is None or not name.endswith(".timer"):
                    if state is None:
                        out.append(f"Failed to stop {name}: Unit {name} not loaded.")
                        rc = 5
                    continue
                if state["commit"].active:
                    state["commit"].confirm()
                self.dev.units.pop(unit, None)
                self.dev.record("timer_stopped", unit=unit)
            return rc
        out.append(f"switchsim: systemctl {verb} is not modelled")
        return 1

    def _list_timers(self, patterns: list[str], opts: list[str], out: list[str]) -> int:
        import fnmatch

        rows = []
        for unit, state in sorted(self.dev.units.items()):
            if not state["commit"].active:
                continue
            name = unit + ".timer"
            if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
                continue
            left = state["commit"].remaining()
            nxt = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=left)
            rows.append([nxt.strftime("%a %Y-%m-%d %H:%M:%S UTC"), f"{timespan(left)} left", "n/a", "n/a", name, unit + ".service"])
        legend = "--no-legend" not in opts
        header = ["NEXT", "LEFT", "LAST", "PASSED", "UNIT", "ACTIVATES"]
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
        lines = []
        if legend and rows:
            lines.append(" ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        for r in rows:
            lines.append(" ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if legend:
            if rows:
                lines.append("")
            lines.append(f"{len(rows)} timers listed.")
            if "--all" not in opts and "-a" not in opts:
                lines.append("Pass --all to see loaded but inactive timers, too.")
        if lines:
            out.append("\n".join(lines))
        return 0


def _unit_name(name: str) -> str:
    for suffix in (".timer", ".service"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def _writable(path: str, root: bool) -> bool:
    if root:
        return True
    return path.startswith("/tmp/") or path.startswith("/home/") or path.startswith("/var/tmp/")


def _redirect_target(command: str) -> str | None:
    m = re.search(r">>?\s*(\S+)", command)
    return m.group(1) if m else None


def _in_quotes(text: str, pos: int) -> bool:
    single = double = False
    for ch in text[:pos]:
        if ch == "'" and not double:
            single = not single
        elif ch == '"' and not single:
            double = not double
    return single or double


def _all_quoted(text: str, char: str) -> bool:
    return all(_in_quotes(text, i) for i, ch in enumerate(text) if ch == char)


def _split_operators(text: str) -> list[tuple[str, str | None]]:
    """[(command, operator after it)] splitting on unquoted ; && ||."""
    pieces: list[tuple[str, str | None]] = []
    start = 0
    i = 0
    single = double = False
    while i < len(text):
        ch = text[i]
        if ch == "'" and not double:
            single = not single
        elif ch == '"' and not single:
            double = not double
        elif not single and not double:
            two = text[i:i + 2]
            if two in ("&&", "||"):
                pieces.append((text[start:i], two))
                i += 2
                start = i
                continue
            if ch == ";":
                pieces.append((text[start:i], ";"))
                start = i + 1
        i += 1
    if single or double:
        raise ValueError("unterminated quote")
    tail = text[start:]
    if tail.strip() or not pieces:
        pieces.append((tail, None))
    elif pieces and pieces[-1][1] in ("&&", "||"):
        pieces.append(("", None))
    return pieces


# -- what the lab and the tests take from this grammar (switchsim/__init__.py; docs/adding-a-platform.md) --

DEVICE = SonicDevice

# Two ports of a lab switch of this platform, as a lab inventory gives them.
# SONiC names a port Ethernet<first lane index>: 8-lane 400G ports are Ethernet0, Ethernet8, ...
# One speed (two cable lengths, so two headroom profiles): on 202305-202505 (the simulator's default 202505) every
# port of a switch must share its ECN values, GCU refusing a second WRED profile, and the derived values follow the
# speed (docs/vendor-sonic.md); a plan with two speeds is refused there before any device, as it should be.
LAB_PORTS = {"Ethernet0": {"speed": "400G", "cable_length_m": 3, "description": "gpu1 mlx5_1"},
             "Ethernet8": {"speed": "400G", "cable_length_m": 10}}

# Where the transaction stops answering, per switch_config step: the command (regular expression) the
# simulator's 'hang' fault matches; the commands are the ones the driver sends in that step.
HANG_AT = {
    "connect": "login",
    "load": "^sudo config apply-patch --dry-run",
    # The checkpoint opens the session; the rollback timer is armed before the patch (a drop while it
    # applies still rolls back), so commit hangs at systemd-run; confirm stops that timer.
    "open session": "^sudo config checkpoint",
    "commit": "^sudo systemd-run",
    "read-back": "^show runningconfiguration all",
    "confirm": "^sudo systemctl stop",
}
