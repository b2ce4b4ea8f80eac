# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim: a strict local Kubernetes API emulator on kmock for the lab (see README.md)."""
