# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""switch_config: one switch plan applied as a transaction.

    render -> connect -> open session -> load -> device diff
      empty            -> abort, changed=false
      check mode       -> abort, changed=true, the diff shows what a real run would send
      otherwise        -> commit with the rollback timer -> read back
                          missing lines -> roll back, fail
                          confirm=true  -> confirm, save
                          confirm=false -> leave pending; the device rolls itself back
                                           unless a later task confirms

Called by the action plugin (one switch per task) and usable from a thread
pool (many switches from one task): nothing here touches Ansible.
"""

from __future__ import annotations

import datetime
import re
import secrets
import time
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _text
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _checks, _contract, _devices, _schema, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _drivers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms._connection import (
    CONNECTION_SPEC,
    STEP_TIMEOUT_SPEC,
    ConnectError,
    StepGuard,
    connect,
    netmiko_text,
)

# Running configs carry secrets (EOS 'username x secret sha512 ...', Junos
# 'encrypted-password "..."', SNMP communities, TACACS/RADIUS keys): what
# follows such a keyword is masked before the text reaches a diff.
_SECRET_RE = re.compile(r"(?i)\b(secret|password|encrypted-password|community|key|pre-shared-key)(\s+(?:\d\s+|sha512\s+|7\s+)?)(\S+)")


# SNMPv3 users carry their keys after 'auth [md5|sha..]' and 'priv [aes-128|des..]', with no secret keyword:
# NX-OS 'snmp-server user NAME [GROUP] auth md5|sha KEY [priv [aes-128] KEY] [localizedkey]' (Cisco Nexus 9000
# System Management Configuration Guide, "Configuring SNMP"), EOS 'snmp-server user NAME GROUP v3 [localized ID]
# auth sha KEY priv aes KEY'. Only on snmp-server user lines: 'auth' and 'priv' mean other things elsewhere.
_SNMP_USER_RE = re.compile(r"(?im)^[ \t]*snmp-server user\b.*$")
_SNMP_KEY_RE = re.compile(r"(?i)\b(auth|priv)(\s+(?:(?:md5|sha\S*|aes\S*|3?des)\s+)?)(\S+)")


def mask_secrets(text: str | None) -> str | None:
    """The text with every value that follows a secret keyword (or an SNMPv3 user's auth/priv) replaced by ********."""
    if text is None:
        return None
    text = _SECRET_RE.sub(lambda m: m.group(1) + m.group(2) + "********", text)
    return _SNMP_USER_RE.sub(lambda line: _SNMP_KEY_RE.sub(lambda m: m.group(1) + m.group(2) + "********", line.group(0)), text)


_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")

STATES = ["merged", "rendered", "gathered", "parsed", "confirmed", "rolled_back"]

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "state": {"type": "str", "default": "merged", "choices": STATES},
    "plan": {"type": "dict"},
    "platform": {"type": "str", "choices": sorted(_drivers.DRIVERS)},
    "running_config": {"type": "str"},
    "confirm": {"type": "bool", "default": True},
    "confirm_timeout": {"type": "int", "default": 300},
    "session": {"type": "str"},
    "save": {"type": "bool", "default": True},
    "backup": {"type": "bool", "default": False},
    "fabric": {"type": "list", "elements": "str"},
    "plans": {"type": "dict"},
    "workers": {"type": "int", "default": 32},
}
ARGUMENT_SPEC.update(CONNECTION_SPEC)
ARGUMENT_SPEC.update(STEP_TIMEOUT_SPEC)

REQUIRED_IF = [
    ("state", "merged", ("plan", "plans"), True),
    ("state", "rendered", ("plan", "plans"), True),
    ("state", "parsed", ("running_config",)),
]


# -- a supplied plan, checked with the intent's own rules ------------------------------------------
# A plan normally comes from fabric_plan, which has already validated every value; a hand-written
# or edited one reaches the drivers' templates directly, so it is checked here with the same rules
# (_intent's checkers and its port-name normalisation) before any device is touched.

# The key lists come from the plan contract (_intent/_contract.py): the QoS model's keys are checked
# value by value; every other key (derived views, platform sections, unknown) is walked for unsafe strings.
_PLAN_KEYS = _contract.keys(_contract.SwitchQos)
_PLAN_REQUIRED = _contract.required(_contract.SwitchQos)
_PORT_KEYS = _contract.keys(_contract.SwitchPort)
_PORT_REQUIRED = _contract.required(_contract.SwitchPort)
_CLASS_KEYS = _contract.keys(_contract.TrafficClass)
_HEADROOM_KEYS = _contract.keys(_contract.PortHeadroom)
_INDEX_RE = re.compile(r"[0-9]{1,2}")


def render_errors(devices: dict) -> list[str]:
    """Every switch plan of a fabric rendered by its platform's driver, as switch_config will render it: what a
    renderer refuses becomes an error of the plan, before any device, instead of a failure on that switch after
    the others have changed (issue 33). The intent's own rules (the records' watchdog_errors and the like) name
    the key first; this is the net under them, so no render-time refusal can reach a device run."""
    errors = []
    for host in sorted(devices):
        plan = devices[host]
        if not isinstance(plan, dict) or plan.get("kind") != "switch":
            continue
        try:
            _drivers.driver_class(plan.get("platform")).render(plan)
        except (_base.DeviceError, KeyError, TypeError, ValueError) as exc:
            said = str(exc).split("; device state:", 1)[0]
            errors.append("%s: platform %s cannot take this plan: %s" % (host, plan.get("platform"), said))
    return errors


def check_plan(plan: dict, platform: str, device: str) -> tuple[dict, list[str]]:
    """A switch plan checked value by value with the intent's rules: the plan
    with its port names in their one spelling, and every error (key path and
    value, prefixed by the device). Keys this check does not know are still
    walked: no string in them may carry a newline or a command separator."""
    ctx = _checks.Ctx()
    ctx.prefix = "%s: " % device
    bad = _tables.BAD
    path = "plan"
    known = {key: plan[key] for key in plan if key in _PLAN_KEYS}
    for key in sorted(set(plan) - set(_PLAN_KEYS), key=str):
        _check_strings(ctx, key, plan[key], "%s.%s" % (path, _checks.key_repr(key)))
    for key in _PLAN_REQUIRED:
        if key not in plan:
            ctx.error("%s.%s" % (path, key), "required (a switch plan from lossless.fabric.fabric_plan has it)")
    registry = _tables.platforms().get(platform, bad)
    if plan.get("kind", "switch") != "switch":
        ctx.error(path + ".kind", "%r is not 'switch'" % (plan.get("kind"),))
    if plan.get("platform", platform) != platform:
        ctx.error(path + ".platform", "%r is not the switch's platform %r" % (plan.get("platform"), platform))
    if "trust" in known:
        ctx.choice(known, "trust", path, None, ("dscp",), "a trust mode")
    if "mode" in known:
        ctx.choice(known, "mode", path, None, _schema.ROCE_MODES, "a fabric mode")
    if "dscp_map" in known:
        _check_index_map(ctx, known["dscp_map"], path + ".dscp_map", 63, "a DSCP", lambda v, p: ctx.check_int(v, p, 0, 7, "a traffic class"))
    for key in ("default_traffic_class", "ecn_queue"):
        if key in known:
            ctx.check_int(known[key], "%s.%s" % (path, key), 0, 7, "a traffic class")
    if "traffic_classes" in known:
        _check_index_map(ctx, known["traffic_classes"], path + ".traffic_classes", 7, "a traffic class", lambda v, p: _check_class(ctx, v, p))
    if "pfc_priorities" in known:
        _check_priorities(ctx, known["pfc_priorities"], path + ".pfc_priorities")
    if "cnp" in known:
        cnp = ctx.mapping(known["cnp"], path + ".cnp", _contract.keys(_contract.Cnp))
        for key, high, what in (("dscp", 63, "a DSCP"), ("priority", 7, "a priority"), ("queue", 7, "a queue")):
            if key in cnp:
                ctx.check_int(cnp[key], "%s.cnp.%s" % (path, key), 0, high, what)
        if "strict" in cnp:
            ctx.boolean(cnp, "strict", path + ".cnp", True)
    if "watchdog" in known:
        wd_path = path + ".watchdog"
        watchdog = ctx.mapping(known["watchdog"], wd_path, _contract.keys(_contract.Watchdog), required=_contract.required(_contract.Watchdog))
        if watchdog:
            ctx.boolean(watchdog, "enabled", wd_path, True)
            ctx.integer(watchdog, "detection_time_ms", wd_path, 200, 100, 5000, "a detection time in ms")
            ctx.integer(watchdog, "restoration_time_ms", wd_path, 400, 100, 60000, "a restoration time in ms")
            ctx.choice(watchdog, "action", wd_path, "drop", ("drop", "forward"), "a watchdog action")
    if "mtu" in known:
        ctx.check_int(known["mtu"], path + ".mtu", 1500, registry.max_mtu if registry is not bad else 9216, "a switch MTU")
    if known.get("queue_buffer_bytes") is not None or (registry is not bad and registry.ecn_in_percent_of_queue_buffer):
        ctx.check_int(known.get("queue_buffer_bytes"), path + ".queue_buffer_bytes", 1024, 2**40, "a buffer size in bytes")
    out = dict(plan)
    if isinstance(known.get("ports"), dict):
        out["ports"] = _check_ports(ctx, registry, known["ports"], path + ".ports")
    elif "ports" in known:
        ctx.error(path + ".ports", "%s is not a mapping of interface name to port" % _checks.type_name(known["ports"]))
    return out, ctx.errors


def _check_strings(ctx: Any, key: Any, value: Any, path: str) -> None:
    """No string anywhere under an unknown key (or the key itself) may reach a CLI unsafe."""
    if isinstance(key, str) and _text.unsafe_reason(key):
        ctx.error(path, "key %r contains %s" % (key, _text.unsafe_reason(key)))
    if isinstance(value, str) and _text.unsafe_reason(value):
        ctx.error(path, "%r contains %s" % (value, _text.unsafe_reason(value)))
    elif isinstance(value, dict):
        for sub, item in value.items():
            _check_strings(ctx, sub, item, "%s.%s" % (path, _checks.key_repr(sub)))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_strings(ctx, None, item, "%s[%d]" % (path, index))


def _check_index_map(ctx: Any, value: Any, path: str, high: int, what: str, check_value) -> None:
    """{'26': 3}: keys are decimal strings 0-high (ASCII digits), values checked by check_value."""
    if not isinstance(value, dict):
        ctx.error(path, "%s is not a mapping" % _checks.type_name(value))
        return
    for key, item in value.items():
        item_path = "%s[%s]" % (path, _checks.key_repr(key))
        if not (isinstance(key, str) and _INDEX_RE.fullmatch(key) and int(key) <= high):
            ctx.error(item_path, "%r is not %s (0-%d, as a decimal string)" % (key, what, high))
            continue
        check_value(item, item_path)


def _check_class(ctx: Any, value: Any, path: str) -> None:
    cls = ctx.mapping(value, path, _CLASS_KEYS, required=_contract.required(_contract.TrafficClass))
    for key in ("lossless", "ecn", "strict"):
        if key in cls:
            ctx.boolean(cls, key, path, False)
    if cls.get("bandwidth_percent") is not None:
        ctx.check_int(cls["bandwidth_percent"], path + ".bandwidth_percent", 0, 100, "a bandwidth share in percent")


def _check_priorities(ctx: Any, value: Any, path: str) -> None:
    # [] in mode ecn_only (no PFC anywhere, issue 36)
    if ctx.sequence(value, path, min_len=0, max_len=8) is _tables.BAD:
        return
    for index, prio in enumerate(value):
        checked = ctx.check_int(prio, "%s[%d]" % (path, index), 0, 7, "a priority")
        if checked is not _tables.BAD and value.index(prio) != index:
            ctx.error("%s[%d]" % (path, index), "%r is listed twice" % (prio,))


def _check_ports(ctx: Any, registry: Any, ports: dict, path: str) -> dict:
    canonical = _devices.check_port_names(ctx, registry, ports, path)
    out = {}
    for ifname, port in ports.items():
        port_path = "%s[%s]" % (path, _checks.key_repr(ifname))
        src = ctx.mapping(port, port_path, _PORT_KEYS, required=_PORT_REQUIRED)
        if "cable_length_m" in src:
            ctx.check_int(src["cable_length_m"], port_path + ".cable_length_m", 1, 10000, "a cable length in metres")
        if "description" in src:
            ctx.description(src["description"], port_path + ".description")
        if "pfc_priorities" in src:
            _check_priorities(ctx, src["pfc_priorities"], port_path + ".pfc_priorities")
        if "speed" in src:
            _devices.check_speed(ctx, src["speed"], port_path + ".speed")
        if "speed_gbps" in src:
            ctx.check_int(src["speed_gbps"], port_path + ".speed_gbps", 1, 1600, "a speed in Gb/s")
        if "ecn" in src:
            ecn_path = port_path + ".ecn"
            ecn = ctx.mapping(src["ecn"], ecn_path, _contract.keys(_contract.PortEcn), required=_contract.required(_contract.PortEcn))
            for key in ("min_threshold_bytes", "max_threshold_bytes"):
                if key in ecn:
                    ctx.check_int(ecn[key], "%s.%s" % (ecn_path, key), 1, _tables.UINT32_MAX, "a threshold in bytes")
            if ecn.get("max_probability_percent") is not None:
                ctx.check_int(ecn["max_probability_percent"], ecn_path + ".max_probability_percent", 1, 100, "a percentage")
        if "headroom" in src:
            headroom = ctx.mapping(src["headroom"], port_path + ".headroom", _HEADROOM_KEYS)
            for key, value in headroom.items():
                ctx.check_int(value, "%s.headroom.%s" % (port_path, key), 0, 2**40, "a size in bytes")
        name = canonical.get(ifname)
        out[name if isinstance(name, str) else ifname] = port
    return out


def run_fabric(per_switch: dict[str, dict], workers: int, check_mode: bool = False, diff_mode: bool = False) -> dict:
    """run() for many switches from one thread pool; a result per switch.
    Netmiko sessions are independent, so the wall time is that of the
    slowest switch rather than the sum (no per-host task start-up either)."""
    # Imported here: only the fabric-wide mode needs threads.
    from concurrent.futures import ThreadPoolExecutor  # pylint: disable=import-outside-toplevel

    # Import each driver's netmiko class once, here: importing the same module
    # from several threads at once can hand a thread a half-initialised module.
    for platform in sorted({args.get("platform") for args in per_switch.values()} & set(_drivers.DRIVERS)):
        _drivers.driver_class(platform).connection_class()
    import netmiko.exceptions  # noqa: F401  # pylint: disable=import-outside-toplevel,unused-import

    def one(item):
        host, args = item
        args = dict(args)
        device = args.pop("_device", host)
        return host, run(args, device=device, check_mode=check_mode, diff_mode=diff_mode)

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(per_switch) or 1))) as pool:
        switches = dict(pool.map(one, sorted(per_switch.items())))
    failed = sorted(host for host, res in switches.items() if res.get("failed"))
    result: dict[str, Any] = {"changed": any(res.get("changed") for res in switches.values()), "switches": switches}
    if diff_mode:
        result["diff"] = [{"prepared": res["diff"]["prepared"], "before_header": host} for host, res in sorted(switches.items()) if res.get("diff")]
    if failed:
        result.update(failed=True, msg="%d of %d switches failed:\n%s" % (len(failed), len(switches), "\n".join(switches[h]["msg"] for h in failed)))
    return result


def session_name(now: float | None = None) -> str:
    """A session name every platform accepts: letters, digits and dashes. The
    random tail keeps two runs in the same second apart (EOS refuses to reuse
    the name of a committed session)."""
    stamp = datetime.datetime.fromtimestamp(now if now is not None else time.time(), tz=datetime.UTC)
    return "lossless-fabric-%s-%s" % (stamp.strftime("%Y%m%d%H%M%S"), secrets.token_hex(3))


def _fail(result: dict, msg: str, **extra: Any) -> dict:
    result.update(failed=True, msg=msg, **extra)
    return result


def run(args: dict, device: str, check_mode: bool = False, diff_mode: bool = False) -> dict:
    """Do what args say to one switch; return the task result (never raises for device trouble)."""
    result: dict[str, Any] = {"changed": False}
    args = {k: v for k, v in args.items() if k != "_device"}
    state = args["state"]
    session = args.get("session")
    if session is not None and not _SESSION_RE.fullmatch(session):
        # It reaches every platform's CLI (EOS session name, Junos commit comment): refuse it before any device.
        return _fail(result, "%s: session: %r is not a session name (letters, digits, '-' and '_', at most 64)" % (device, session))
    platform = args.get("platform")
    if not platform:
        return _fail(result, "%s: platform: not given and not found in the plan or lossless_fabric_device" % device)
    try:
        driver_cls = _drivers.driver_class(platform)
    except ValueError as exc:
        return _fail(result, "%s: %s" % (device, exc))

    if state in ("merged", "rendered"):
        if not isinstance(args.get("plan"), dict):
            return _fail(result, "%s: plan: no switch plan for this device (is it in fabric_plan_result.devices?)" % device)
        plan, errors = check_plan(args["plan"], platform, device)
        if errors:
            return _fail(result, "%s: plan: not a switch plan (%d error(s)); nothing sent:\n%s" % (device, len(errors), "\n".join(errors)), plan_errors=errors)
        try:
            lines = driver_cls.render(plan)
        except _base.DeviceError as exc:
            return _fail(result, str(exc), device_state=exc.state)
        except (KeyError, TypeError, ValueError) as exc:
            return _fail(result, "%s: plan: not a switch plan from lossless.fabric.fabric_plan (%s: %s)" % (device, type(exc).__name__, exc))
        result["commands"] = lines
        if state == "rendered":
            result["rendered"] = lines
            return result
    if state == "parsed":
        try:
            result["parsed"] = driver_cls.parse(args["running_config"])
        except ValueError as exc:
            # The parsers refuse input they do not recognise (never an empty success).
            return _fail(result, "%s: running_config: %s" % (device, exc))
        return result
    if not args.get("host"):
        return _fail(result, "%s: host: not given and the inventory has no ansible_host" % device)

    step_timeout = args.get("step_timeout")
    step_timeout = STEP_TIMEOUT_SPEC["step_timeout"]["default"] if step_timeout is None else step_timeout
    if step_timeout <= 0:
        return _fail(result, "%s: step_timeout: %r is not a number of seconds above 0" % (device, step_timeout))
    if state == "merged" and (args.get("confirm_timeout") or 0) <= 0:
        # The rollback timer of every platform takes a positive duration (EOS hh:mm:ss, Junos minutes, NVUE 5m).
        return _fail(result, "%s: confirm_timeout: %r is not a number of seconds above 0" % (device, args.get("confirm_timeout")))
    try:
        conn = connect(driver_cls, device, args)
    except ConnectError as exc:
        return _fail(result, str(exc), device_state=_base.UNCHANGED, step="connect")
    # Imported here: the sanity import test runs without netmiko.
    from netmiko.exceptions import NetmikoBaseException  # pylint: disable=import-outside-toplevel

    guard = StepGuard(conn, device, step_timeout)
    steps = _Steps(driver_cls(conn, device), guard)
    try:
        with guard.bound("connect"):
            steps.driver.prepare()
        if state == "gathered":
            running = steps.gather()
            views = steps.gather_views(running)
            try:
                result["gathered"] = driver_cls.parse(running + ("\n" + views if views else ""))
            except ValueError as exc:
                return _fail(result, "%s: the running configuration the switch returned: %s" % (device, exc), device_state=_base.UNCHANGED, step="gather")
            if args.get("backup"):
                # The change window's backup: the same read, as the device's text.
                result["backup"] = running
            return result
        if state in ("confirmed", "rolled_back"):
            return _settle(steps, args, result, state, check_mode)
        return _merge(steps, args, result, lines, check_mode, diff_mode)
    except (_base.DeviceError, OSError, EOFError, NetmikoBaseException) as exc:
        if guard.expired:
            return _sent(_hung(result, device, guard, step_timeout))
        result["step"] = guard.step
        if _lost(exc) and guard.step in _READ_BACK_STEPS and (state == "merged" or guard.step == "confirm"):
            # The command may have run with only its reply lost: what the device holds is read, not guessed.
            return _sent(_read_back(driver_cls, device, args, result, netmiko_text(exc), lines if state == "merged" else None))
        if isinstance(exc, _base.DeviceError):
            if exc.state not in (_base.PENDING, _base.UNKNOWN):
                result.pop("pending_until", None)  # nothing is left pending
            return _sent(_fail(result, netmiko_text(exc), device_state=exc.state, failed_line=exc.line, device_said=exc.device_said))
        if isinstance(exc, NetmikoBaseException):
            # netmiko's own read ran out (ReadTimeout: 'Pattern not detected') inside a driver step.
            state_left = _hung_state(guard.step, result)
            return _sent(_fail(result, "%s: no answer at step %r: %s; device state: %s"
                               % (device, guard.step, netmiko_text(exc), _state_text(state_left, result)), device_state=state_left))
        # The connection went away outside a driver step that could say more.
        state_left = _hung_state(guard.step, result)
        text = "%s: connection lost at step %r: %s; device state: %s" % (device, guard.step, exc, _state_text(state_left, result))
        return _sent(_fail(result, text, device_state=state_left))
    finally:
        try:
            conn.disconnect()
        except (OSError, EOFError, NetmikoBaseException):
            pass  # the session is already gone; nothing left to close


class _Steps:
    """The driver's device methods, each run as a named step under the guard's bound."""

    def __init__(self, driver: _base.Driver, guard: StepGuard):
        self.driver = driver
        self.guard = guard
        self.device = driver.device

    def _call(self, step: str, method: str, *args: Any) -> Any:
        with self.guard.bound(step):
            return getattr(self.driver, method)(*args)

    def gather(self) -> str:
        return self._call("gather", "gather")

    def gather_views(self, running: str) -> str:
        # The operational views a platform reads beside its configuration (NVUE: docs/vendor-nvue.md).
        if not hasattr(self.driver, "gather_views"):
            return ""
        return self._call("gather", "gather_views", running)

    def open_session(self, name: str) -> None:
        self._call("open session", "open_session", name)

    def load(self, lines: list[str]) -> None:
        self._call("load", "load", lines)

    def diff(self) -> str:
        return self._call("diff", "diff")

    def abort(self) -> None:
        self._call("abort", "abort")

    def commit(self, timeout: int) -> None:
        self._call("commit", "commit", timeout)

    def readback_missing(self, lines: list[str]) -> list[str]:
        return self._call("read-back", "readback_missing", lines)

    def confirm(self, session: str | None) -> None:
        self._call("confirm", "confirm", session)

    def save(self) -> None:
        self._call("save", "save")

    def rollback(self, session: str | None) -> None:
        self._call("rollback", "rollback", session)

    def pending(self) -> dict | None:
        return self._call("pending", "pending")


# Steps after which a lost connection leaves the device's state to be read back: the command may have run.
_READ_BACK_STEPS = ("commit", "confirm")
# Steps at or after which a commit (or a confirm, or a roll-back) was sent to the device.
_SENT_STEPS = ("commit", "read-back", "confirm", "save", "rollback")


def _sent(result: dict) -> dict:
    """changed is true once a commit was sent and the device is left holding it, pending it, or unknown
    (issue 33: NVUE and SONiC said changed=false while a commit was pending after a drop)."""
    if result.get("step") in _SENT_STEPS and result.get("device_state") in (_base.PENDING, _base.UNKNOWN, _base.COMMITTED):
        result["changed"] = True
    return result


def _lost(exc: BaseException) -> bool:
    """The connection went away (the device closed it, the transport failed), directly or under a driver's DeviceError."""
    errors = _channel.transport_errors()
    if isinstance(exc, _base.DeviceError):
        exc = exc.__cause__ or exc.__context__
    return isinstance(exc, errors)


def _read_back(driver_cls: Any, device: str, args: dict, result: dict, lost: str, lines: list[str] | None) -> dict:
    """After the connection was lost at the commit or the confirm, connect again and read what the device holds:
    its pending commit (``pending()``) and, for a merge, whether the running configuration holds the plan. A confirm
    that ran with only its reply lost is then a kept change (saved now when asked), not "pending confirmation"."""
    step = result["step"]
    session = result.get("session") or args.get("session")
    try:
        conn = connect(driver_cls, device, args)
    except ConnectError as exc:
        state = _base.UNKNOWN
        return _fail(result, "%s: connection lost at step %r (%s); reading the device back failed too (%s); device state: %s"
                     % (device, step, lost, exc, _state_text(state, result)), device_state=state)
    from netmiko.exceptions import NetmikoBaseException  # pylint: disable=import-outside-toplevel
    guard = StepGuard(conn, device, args.get("step_timeout") or STEP_TIMEOUT_SPEC["step_timeout"]["default"])
    steps = _Steps(driver_cls(conn, device), guard)
    try:
        with guard.bound("connect"):
            steps.driver.prepare()
        pending = steps.pending()
        if pending and session and pending.get("session") == session and pending.get("certain") is False and step == "confirm":
            # the OS shows a live change it cannot say is still under its timer (NX-OS): after a confirm, pending or kept
            state, what = _base.UNKNOWN, ("the change of session %s is live and the switch shows no timer state, so it cannot tell "
                                          "whether the confirm went through: confirm it again (state: confirmed, session: %s) to keep it"
                                          % (session, session))
        elif pending and session and pending.get("session") == session:
            state, what = _base.PENDING, "the commit of session %s is pending confirmation" % session
        elif pending:
            state, what = _base.UNKNOWN, "a commit is pending that is not this run's (the device names %r)" % pending.get("session")
        elif lines is None:
            state, what = _base.UNKNOWN, "no commit is pending: the confirm went through, or the timer already rolled the commit back"
        else:
            missing = steps.readback_missing(lines)
            if not missing:
                state, what = _base.COMMITTED, "no commit is pending and the running configuration holds the plan: the %s went through" % step
            elif step == "commit":
                state, what = _base.UNCHANGED, "no commit is pending and the running configuration lacks %d line(s) of the plan" % len(missing)
            else:
                state, what = _base.ROLLED_BACK, "no commit is pending and the running configuration lacks %d line(s) of the plan: rolled back" % len(missing)
        if state == _base.COMMITTED and step == "confirm":
            result.pop("pending_until", None)
            result.update(device_state=state, read_back=what,
                          warnings=["%s: the connection was lost after the confirm (%s); read back: %s" % (device, lost, what)])
            result.pop("step", None)
            if args.get("save"):
                steps.save()
            return result
        if state not in (_base.PENDING, _base.UNKNOWN):
            result.pop("pending_until", None)  # nothing is left pending
        return _fail(result, "%s: connection lost at step %r (%s); read back: %s; device state: %s"
                     % (device, step, lost, what, _state_text(state, result)), device_state=state, read_back=what)
    except (_base.DeviceError, OSError, EOFError, NetmikoBaseException) as exc:
        state = _base.UNKNOWN
        return _fail(result, "%s: connection lost at step %r (%s); reading the device back failed (%s); device state: %s"
                     % (device, step, lost, netmiko_text(exc), _state_text(state, result)), device_state=state)
    finally:
        try:
            conn.disconnect()
        except (OSError, EOFError, NetmikoBaseException):
            pass


def _hung_state(step: str | None, result: dict) -> str:
    """What the device holds when ``step`` never finished."""
    if step in ("commit", "confirm", "rollback"):
        return _base.UNKNOWN
    if step == "save":
        return _base.COMMITTED
    # Before the commit nothing reached the running config; after it, the commit is pending.
    return result.get("device_state") or _base.UNCHANGED


def _state_text(state: str, result: dict) -> str:
    """The state, with what happens next when a rollback timer is running."""
    until, step = result.get("pending_until"), result.get("step")
    if not until or state not in (_base.PENDING, _base.UNKNOWN):
        return state
    if state == _base.PENDING:
        return "%s (the device rolls the commit back by itself at %s unless it is confirmed)" % (state, until)
    if step == "confirm":
        return "%s (committed if the confirm went through; if not, the device rolls the commit back by itself at %s)" % (state, until)
    if step == "rollback":
        return "%s (rolled back, or the device rolls the commit back by itself at %s)" % (state, until)
    return "%s (if the commit went through, the device rolls it back by itself at %s unless it is confirmed)" % (state, until)


def _hung(result: dict, device: str, guard: StepGuard, step_timeout: float) -> dict:
    step = guard.expired
    state = _hung_state(step, result)
    result["step"] = step
    return _fail(
        result,
        "%s: the device stopped answering at step %r: nothing for %s s (step_timeout); the connection was closed; device state: %s"
        % (device, step, step_timeout, _state_text(state, result)),
        device_state=state,
    )


def _merge(driver: _Steps, args: dict, result: dict, lines: list[str], check_mode: bool, diff_mode: bool) -> dict:
    before = driver.gather() if (args.get("backup") or diff_mode) else None
    if args.get("backup"):
        result["backup"] = before
    name = args.get("session") or session_name()
    driver.open_session(name)
    driver.load(lines)
    device_diff = driver.diff()
    result["device_diff"] = device_diff
    if diff_mode:
        # The device's own diff, and the running config before (and, once committed, after).
        result["diff"] = {"prepared": mask_secrets(device_diff), "before": mask_secrets(before), "after": mask_secrets(before),
                          "before_header": "running (before)",
                          "after_header": "running (after)"}
    if not device_diff.strip():
        driver.abort()
        result.update(changed=False, device_state=_base.UNCHANGED)
        return result
    if check_mode:
        driver.abort()
        result.update(changed=True, device_state=_base.UNCHANGED)
        return result

    timeout = args["confirm_timeout"]
    # Known before the commit is sent: a commit that hangs may still have started its timer.
    until = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=timeout)
    result["pending_until"] = until.isoformat(timespec="seconds")
    result["session"] = name  # a commit lost on the wire is found again by its session (_read_back)
    driver.commit(timeout)
    result.update(changed=True, session=name, device_state=_base.PENDING)
    missing = driver.readback_missing(lines)
    if missing:
        driver.rollback(name)
        result.pop("pending_until")
        result["readback_missing"] = missing
        return _fail(
            result,
            "%s: read-back after commit lacks %d line(s) of the plan (first: %r); the commit was rolled back" % (driver.device, len(missing), missing[0]),
            device_state=_base.ROLLED_BACK,
        )
    result["readback_missing"] = []
    if diff_mode:
        result["diff"]["after"] = mask_secrets(driver.gather())
    if args["confirm"]:
        driver.confirm(name)
        result.pop("pending_until")
        result["device_state"] = _base.COMMITTED
        if args["save"]:
            driver.save()
    return result


def _settle(driver: _Steps, args: dict, result: dict, state: str, check_mode: bool) -> dict:
    """Confirm or roll back a pending commit left by confirm=false."""
    pending = driver.pending()
    result["pending"] = pending
    if not pending:
        # Nothing pending: confirmed already, or the timer rolled it back. Say which we cannot tell.
        result.update(changed=False, device_state=_base.UNCHANGED, msg="%s: no pending commit" % driver.device)
        return result
    session = args.get("session") or pending.get("session")
    if args.get("session") and pending.get("session") != args["session"]:
        # Issue 15: a run settles only the commit it made; the pending one is another run's (or unnamed).
        result.update(changed=False, device_state=_base.PENDING,
                      msg="%s: the pending commit is not session %s (the device names %r); left alone for its owner or its timer"
                      % (driver.device, args["session"], pending.get("session")))
        return result
    if check_mode:
        result.update(changed=True, device_state=_base.PENDING, session=session)
        return result
    if state == "confirmed":
        driver.confirm(session)
        if args["save"]:
            driver.save()
        result.update(changed=True, device_state=_base.COMMITTED, session=session)
    else:
        driver.rollback(session)
        result.update(changed=True, device_state=_base.ROLLED_BACK, session=session)
    return result


def drift(plan: dict, gathered: dict) -> list[str]:
    """Where a device's gathered QoS config differs from its plan, one line per
    difference ('' list when it holds the plan). Values a platform cannot read
    back (None in gathered) are not judged."""
    found: list[str] = []

    def differ(where: str, key: str, device: Any, want: Any) -> None:
        if device is not None and device != want:
            found.append("%s: %s: device has %r, plan has %r" % (where, key, device, want))

    differ("global", "dscp_map", gathered.get("dscp_map"), plan["dscp_map"])
    interfaces = gathered.get("interfaces") or {}
    for ifname, port in plan["ports"].items():
        have = interfaces.get(ifname)
        if have is None:
            found.append("%s: not configured on the device" % ifname)
            continue
        differ(ifname, "trust", have.get("trust"), plan["trust"])
        differ(ifname, "mtu", have.get("mtu"), plan["mtu"])
        differ(ifname, "cable_length_m", have.get("cable_length_m"), port["cable_length_m"])
        differ(ifname, "pfc_priorities", sorted(have["pfc_priorities"]) if have.get("pfc_priorities") is not None else None, port["pfc_priorities"])
        if plan["cnp"]["strict"] and have.get("strict_queues") is not None and plan["cnp"]["queue"] not in have["strict_queues"]:
            found.append("%s: queue %d is not strict on the device" % (ifname, plan["cnp"]["queue"]))
        ecn = (have.get("ecn") or {}).get(str(plan["ecn_queue"]))
        if "ecn" not in port:
            # mode pfc_only: the port marks no ECN
            if ecn is not None:
                found.append("%s: ECN on queue %d, the plan (mode %s) marks none" % (ifname, plan["ecn_queue"], plan.get("mode", "lossless")))
            ecn = None
        elif ecn is None and have.get("ecn") is not None:
            found.append("%s: no ECN on queue %d" % (ifname, plan["ecn_queue"]))
        for key, want in (port.get("ecn") or {}).items():
            differ(ifname, "ecn[%d].%s" % (plan["ecn_queue"], key), (ecn or {}).get(key), want)
        if plan["watchdog"]["enabled"]:
            differ(ifname, "watchdog", have.get("watchdog"), True)
    return found
