# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Switch-side controller work over the drivers: configuration transactions, counters, links."""
