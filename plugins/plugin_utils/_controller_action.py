# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The base of the action plugins that do all their work on the controller:
no connection to the target, no file transfer, task arguments validated
against the plugin's argument spec before anything else runs."""

from __future__ import annotations

from ansible.plugins.action import ActionBase


class ControllerAction(ActionBase):
    """Subclasses set argument_spec (and required_if) and implement run_validated()."""

    TRANSFERS_FILES = False
    _requires_connection = False

    argument_spec: dict = {}
    required_if: list | None = None

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        # Unchanged until run_validated says otherwise (what ansible assumes for a result without the key).
        result["changed"] = False
        _validation, args = self.validate_argument_spec(argument_spec=self.argument_spec, required_if=self.required_if)
        return self.run_validated(args, task_vars, result)

    def run_validated(self, args: dict, task_vars: dict, result: dict) -> dict:
        """The plugin's work on validated args; fills and returns result."""
        raise NotImplementedError
