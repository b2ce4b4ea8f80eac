"""The confirmed-commit state machine every switch grammar shares.

Each platform has a commit that is pending until confirmed and rolled back by the device when
its timer runs out: EOS ``commit timer`` in a configure session, NVUE ``nv config apply
--confirm``, Junos ``commit confirmed N``. What differs is what each prints, which command
confirms or cancels, and the timer's unit (Junos counts minutes); the grammars keep their own
texts and commands and drive this object for the state:

    idle --start(amount, before, **info)--> pending
    pending --confirm()--> idle           (the new configuration stays; timer stopped)
    pending --cancel()---> idle           (returns `before`; the grammar restores it)
    pending --timer runs out--> idle      (on_expire(before, info): the grammar restores it)

The timer is the device's scaled timer (core.Device.start_timer), so the simulator's
time_scale applies. Every transition runs under the device lock; a timer that fires after its
commit was confirmed, cancelled or replaced does nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ConfirmedCommit:
    """One device's pending confirmed commit (at most one at a time).

    unit_seconds: device seconds per unit of the platform's timer argument (1 for EOS/NVUE
    seconds, 60 for Junos minutes). on_expire(before, info) runs under the device lock when the
    timer runs out, after the machine is idle again; it restores `before` the platform's way.
    """

    def __init__(self, device: Any, on_expire: Callable[[Any, dict], None], unit_seconds: float = 1.0) -> None:
        self.device = device
        self.unit_seconds = float(unit_seconds)
        self._on_expire = on_expire
        self._state: dict | None = None   # {"timer", "before", "amount", **info}

    # --- queries ---------------------------------------------------------
    @property
    def active(self) -> bool:
        return self._state is not None

    def __bool__(self) -> bool:
        return self.active

    def get(self, key: str, default: Any = None) -> Any:
        """A field given to start() ('amount', 'before' or the platform's info), None when idle."""
        return self._state.get(key, default) if self._state else default

    def __getitem__(self, key: str) -> Any:
        if self._state is None:
            raise KeyError(key)
        return self._state[key]

    def remaining(self) -> float:
        """Device seconds left before the rollback (0 when idle)."""
        return self._state["timer"].remaining() if self._state else 0.0

    # --- transitions -----------------------------------------------------
    def start(self, amount: float, before: Any, **info: Any) -> None:
        """Arm the rollback timer for `amount` units; `before` is what a rollback restores."""
        with self.device.lock:
            if self._state is not None:  # the grammar refuses or confirms first, in its own words
                raise RuntimeError(f"{self.device.name}: a confirmed commit is already pending")
            state: dict = dict(info, amount=amount, before=before)
            state["timer"] = self.device.start_timer(amount * self.unit_seconds, lambda: self._expire(state))
            self._state = state

    def confirm(self) -> dict:
        """Keep the new configuration: stop the timer. Returns the commit's fields."""
        with self.device.lock:
            return self._stop()

    def cancel(self) -> Any:
        """Roll back now: stop the timer and return `before` for the grammar to restore."""
        with self.device.lock:
            return self._stop()["before"]

    def _stop(self) -> dict:
        state = self._state
        if state is None:
            raise RuntimeError(f"{self.device.name}: no confirmed commit is pending")
        state["timer"].cancel()
        self._state = None
        return {k: v for k, v in state.items() if k != "timer"}

    def _expire(self, state: dict) -> None:
        with self.device.lock:
            if self._state is not state:  # confirmed, cancelled or replaced meanwhile
                return
            self._state = None
            info = {k: v for k, v in state.items() if k not in ("timer", "before")}
            self._on_expire(state["before"], info)
