# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Switch platforms: one package per switch OS (its driver and vendor table), the driver contract and the registry.

- ``_base``: the driver contract (``Driver``) and the platform record type (``Platform``);
- ``_records``: the registry's records, data only (``DRIVEN``, ``PLANNED``, ``registry()``): the intent
  validates devices with them, so importing it carries no driver code;
- ``_drivers``: a platform's ``Driver`` class by name (``DRIVERS``, ``driver_class``), for the controller;
- ``_channel``, ``_connection``, ``_indent``: what every driver shares (the CLI channel, the SSH
  connection, the indentation walker);
- ``<os>/``: ``_vendor`` (the vendor's published values, each with its source) and ``_driver``.

A new platform is its package here, its record in ``_records`` and its simulator grammar
(docs/adding-a-platform.md).
"""
