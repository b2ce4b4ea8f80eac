# SPDX-License-Identifier: GPL-3.0-or-later
"""_switch_connection._host_keys: the lookup paramiko's SSHClient would do in a
known hosts file, from a copy parsed once per file version."""

from __future__ import annotations

import os

import paramiko

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _connection as sc


def _key():
    return paramiko.ECDSAKey.generate(bits=256)


def test_plain_bracketed_and_hashed_names_resolve_as_paramiko_does(tmp_path):
    a, b, c, d = _key(), _key(), _key(), _key()
    hashed = paramiko.HostKeys.hash_host("[10.0.0.3]:2222")
    path = tmp_path / "known_hosts"
    path.write_text(
        "# comment\n\n"
        "10.0.0.1 %s %s\n" % (a.get_name(), a.get_base64())
        + "[10.0.0.2]:2200 %s %s\n" % (b.get_name(), b.get_base64())
        + "%s %s %s\n" % (hashed, c.get_name(), c.get_base64())
        + "not a key line\n"
        + "10.0.0.9,[10.0.0.2]:2201 %s %s\n" % (d.get_name(), d.get_base64())
    )
    sc._KNOWN_HOSTS.clear()  # pylint: disable=protected-access
    assert [k.get_base64() for k in sc._host_keys(str(path), "10.0.0.1", 22)] == [a.get_base64()]  # pylint: disable=protected-access
    assert [k.get_base64() for k in sc._host_keys(str(path), "10.0.0.2", 2200)] == [b.get_base64()]  # pylint: disable=protected-access
    assert [k.get_base64() for k in sc._host_keys(str(path), "10.0.0.3", 2222)] == [c.get_base64()]  # pylint: disable=protected-access
    assert [k.get_base64() for k in sc._host_keys(str(path), "10.0.0.2", 2201)] == [d.get_base64()]  # pylint: disable=protected-access
    # Not there, or there under another port: no key (paramiko then refuses the unknown host).
    assert sc._host_keys(str(path), "10.0.0.1", 2222) == []  # pylint: disable=protected-access
    assert sc._host_keys(str(path), "10.0.0.2", 22) == []  # pylint: disable=protected-access
    # The same answers as paramiko's own HostKeys for every name asked.
    clean = tmp_path / "clean"
    clean.write_text("".join(line for line in path.read_text().splitlines(True) if line != "not a key line\n"))
    ref = paramiko.HostKeys(str(clean))
    for name, host, port in (("10.0.0.1", "10.0.0.1", 22), ("[10.0.0.2]:2200", "10.0.0.2", 2200), ("[10.0.0.3]:2222", "10.0.0.3", 2222)):
        ours = sc._host_keys(str(path), host, port)  # pylint: disable=protected-access
        assert [k.get_base64() for k in ref.lookup(name).values()] == [k.get_base64() for k in ours]


def test_a_changed_file_is_read_again(tmp_path):
    first, second = _key(), _key()
    path = tmp_path / "known_hosts"
    path.write_text("[h]:2000 %s %s\n" % (first.get_name(), first.get_base64()))
    sc._KNOWN_HOSTS.clear()  # pylint: disable=protected-access
    assert [k.get_base64() for k in sc._host_keys(str(path), "h", 2000)] == [first.get_base64()]  # pylint: disable=protected-access
    path.write_text("[h]:2000 %s %s\n# rotated\n" % (second.get_name(), second.get_base64()))
    os.utime(path, ns=(1, 1))
    assert [k.get_base64() for k in sc._host_keys(str(path), "h", 2000)] == [second.get_base64()]  # pylint: disable=protected-access
