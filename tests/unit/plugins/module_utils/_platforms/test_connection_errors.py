# SPDX-License-Identifier: GPL-3.0-or-later
"""_connection.connect names why a switch could not be reached (issue 33 point 8): a refused port is
"connection refused", not "connection timed out" (netmiko raises its timeout exception for both)."""

from __future__ import annotations

import socket

import pytest
from netmiko.exceptions import NetmikoTimeoutException

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _connection as sc
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _drivers


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("platform", sorted(_drivers.DRIVERS))
def test_a_port_nothing_listens_on_is_connection_refused(platform):
    port = _free_port()  # closed again: the kernel answers a SYN to it with RST
    with pytest.raises(sc.ConnectError) as err:
        sc.connect(_drivers.driver_class(platform), "leaf9", {"host": "127.0.0.1", "port": port, "username": "admin", "password": "x",
                                                              "host_key_checking": False, "timeout": 5})
    text = str(err.value)
    assert text.startswith("leaf9 (127.0.0.1:%d): connection refused" % port), text
    assert "timed out" not in text


def _raised_while_handling(cause):
    try:
        try:
            raise cause
        except OSError:
            raise NetmikoTimeoutException("TCP connection to device failed.\n\nCommon causes of this problem are:")  # noqa: B904 - as netmiko raises it
    except NetmikoTimeoutException as exc:
        return exc


@pytest.mark.parametrize("cause, expected", [
    (ConnectionRefusedError(111, "Connection refused"), ConnectionRefusedError),
    (TimeoutError("timed out"), TimeoutError),
    (OSError(113, "No route to host"), OSError),
])
def test_the_socket_error_under_netmikos_timeout_is_found(cause, expected):
    found = sc._tcp_error(_raised_while_handling(cause))  # pylint: disable=protected-access
    assert isinstance(found, expected) and found is cause


def test_a_timeout_with_no_socket_error_under_it_stays_a_timeout():
    assert sc._tcp_error(NetmikoTimeoutException("Pattern not detected")) is None  # pylint: disable=protected-access
