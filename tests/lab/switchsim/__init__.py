# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict SSH CLI switch simulator (Arista EOS, NVIDIA Cumulus NVUE, Juniper Junos).

Lab/test tooling only; never imported by the collection's plugins.
See README.md in this directory.
"""
