# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""InfiniBand: fabric facts and their verification, subnet manager files, IB links."""
