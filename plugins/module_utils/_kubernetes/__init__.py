# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The k8s_rdma role's apply plan: which rendered objects go to the API server in which call."""
