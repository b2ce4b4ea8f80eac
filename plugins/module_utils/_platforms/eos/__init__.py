# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Arista EOS: the driver (configuration sessions, commit timer) and its vendor table."""
