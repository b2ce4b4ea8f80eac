# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.change_window: the linear strategy, with SIGINT and SIGTERM turned into "end the window and roll
every device back" instead of "stop wherever it is"."""

from __future__ import annotations

DOCUMENTATION = r"""
name: change_window
short_description: Linear, and an interrupted change window rolls every device back before it ends
version_added: 0.1.0
description:
  - Runs a play exactly as the C(linear) strategy does (the strategy of C(playbooks/change_window.yml)).
  - On the first SIGINT (Ctrl-C) or SIGTERM, the task in flight is allowed to finish - a push is never cut in half -
    and then every host of the batch that is still in the window's block is failed into its rescue - every device is
    rolled back (switch commits, OpenSM files, NICs) and the report is written, with the signal as the reason. A host
    before the window's block (its preflight) just stops - nothing was changed.
  - The window's settle wait ends at once (the strategy creates the file its C(wait_for) waits for, named in the host
    variable C(__change_window_interrupt_file)).
  - A second signal is only reported; the third ends the run at once, as ansible-playbook does without this strategy
    (then every device is left to its own rollback timer).
  - Without this strategy, ansible-playbook ends on the first signal wherever it is, and the pending devices wait for
    their timers.
notes:
  - ansible-core 2.19 prints a deprecation warning for every strategy plugin outside C(ansible.builtin) ("Use of strategy
    plugins not included in ansible.builtin are deprecated ...", C(lib/ansible/plugins/loader.py), no removal version
    given). This plugin subclasses the C(linear) strategy and relies on its internals (C(_get_next_task_lockstep), the
    play iterator's C(mark_host_failed)); it is tested against ansible-core 2.19 only.
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402

from ansible.executor.play_iterator import IteratingStates  # noqa: E402
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategy  # noqa: E402
from ansible.utils.display import Display  # noqa: E402

display = Display()

# The signal count at which the strategy gives up and lets the run end at once.
GIVE_UP = 3


def _busy_rolling_back(state) -> bool:
    """A host already in a rescue or always section (rolling back, reporting): leave it to finish."""
    while state is not None:
        if state.run_state in (IteratingStates.RESCUE, IteratingStates.ALWAYS):
            return True
        state = state.tasks_child_state if state.run_state == IteratingStates.TASKS else None
    return False


class StrategyModule(LinearStrategy):
    """Linear; a signal is acted on between tasks, where no result is pending."""

    def __init__(self, tqm):
        super().__init__(tqm)
        self._signals: list[str] = []
        self._acted = False
        self._saved: dict[int, object] = {}
        self._interrupt_dir = None
        self._interrupt_file = None

    def _on_signal(self, signum, frame):
        name = signal.Signals(signum).name
        self._signals.append(name)
        if len(self._signals) >= GIVE_UP:
            display.warning("change window: %s again - ending now; every pending device is left to its own rollback timer" % name)
            self._restore_handlers()
            previous = self._saved.get(signum)
            if callable(previous):
                previous(signum, frame)
            raise KeyboardInterrupt()
        if len(self._signals) == 1:
            display.warning("change window: %s - the task in flight finishes, then every device is rolled back and the report written "
                            "(%d more to end at once)" % (name, GIVE_UP - 1))
            if self._interrupt_file:
                with open(self._interrupt_file, "w", encoding="utf-8") as handle:
                    handle.write(name + "\n")
        else:
            display.warning("change window: %s - already rolling back (%d more to end at once)" % (name, GIVE_UP - len(self._signals)))

    def _restore_handlers(self):
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self._saved = {}

    def run(self, iterator, play_context):
        self._interrupt_dir = tempfile.mkdtemp(prefix="lossless-fabric-window-")
        self._interrupt_file = os.path.join(self._interrupt_dir, "interrupted")
        for host in self._inventory.get_hosts(iterator._play.hosts):
            self._variable_manager.set_nonpersistent_facts(host.name, {"__change_window_interrupt_file": self._interrupt_file})
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._saved[signum] = signal.getsignal(signum)
            signal.signal(signum, self._on_signal)
        try:
            return super().run(iterator, play_context)
        finally:
            self._restore_handlers()
            shutil.rmtree(self._interrupt_dir, ignore_errors=True)

    def _get_next_task_lockstep(self, hosts, iterator):
        if self._signals and not self._acted:
            self._acted = True
            self._interrupt(hosts, iterator)
        return super()._get_next_task_lockstep(hosts, iterator)

    def _interrupt(self, hosts, iterator):
        """Fail every host into the window's rescue, the way a failed task would (lib/ansible/plugins/strategy/__init__.py,
        _process_pending_results), with the signal as the reason."""
        why = self._signals[0]
        for host in hosts:
            state = iterator.get_state_for_host(host.name)
            if _busy_rolling_back(iterator.get_host_state(host)):
                continue
            rescued = iterator.is_any_block_rescuing(state)
            self._variable_manager.set_nonpersistent_facts(host.name, {"__change_window_interrupted": why})
            iterator.mark_host_failed(host)
            if rescued:
                self._tqm._stats.increment("rescued", host.name)
                if host.name in iterator._play._removed_hosts:
                    iterator._play._removed_hosts.remove(host.name)
            else:
                self._tqm._stats.increment("failures", host.name)
                self._tqm._failed_hosts[host.name] = True
