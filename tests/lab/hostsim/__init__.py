# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU-host lab: per-host sysfs/configfs/debugfs trees and strict tool shims."""
