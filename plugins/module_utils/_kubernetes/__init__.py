# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The k8s_rdma role's apply plan: which rendered objects go to the API server in which call (_apply); the tenants'
namespaces, networks and RBAC, and their isolation check (_tenants)."""
