# SPDX-License-Identifier: GPL-3.0-or-later
"""The shared CLI channel (_platforms/_channel.py) every switch driver's exchanges go through."""

from __future__ import annotations

import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _channel

PROMPT = re.compile(r"^sw1(?:\([^)\n]*\))?[#>] ?", re.M)


class _Chan:
    """netmiko's remote_conn as the channel reads it: closed / eof flags and a transport."""

    def __init__(self):
        self.closed = False
        self.eof_received = False
        self.transport = _Transport()


class _Transport:
    def __init__(self):
        self.active = True

    def is_active(self):
        return self.active


class _Conn:
    """A scripted netmiko connection: stale output before the write, then the reply chunk by chunk
    (one chunk a read; '' is a read that found nothing)."""

    def __init__(self, reply, stale=()):
        self.remote_conn = _Chan()
        self.stale = list(stale)
        self.reply = list(reply)
        self.written = []

    def write_channel(self, data):
        self.written.append(data)

    def read_channel(self):
        if not self.written:
            return self.stale.pop(0) if self.stale else ""
        return self.reply.pop(0) if self.reply else ""


def test_one_write_and_one_segment_per_command_with_the_echo_left_to_the_driver():
    conn = _Conn(["show clock\r\n12:00\r\nsw1#", "show ver\r\nEOS 4.32\r\nsw1# "])
    reply = _channel.exchange(conn, ["show clock", "show ver"], PROMPT, 5)
    assert conn.written == ["show clock\nshow ver\n"]
    assert reply.segments == ["show clock\n12:00\n", "show ver\nEOS 4.32\n"]
    assert reply.prompts == ["sw1#", "sw1# "]
    assert _channel.strip_echo("show ver", reply.segments[1]) == "EOS 4.32\n"


def test_stale_output_is_drained_before_the_write():
    conn = _Conn(["x\nsw1#"], stale=["late\nsw1#", ""])
    assert _channel.exchange(conn, ["x"], PROMPT, 5).segments == ["x\n"]


def test_a_silent_device_raises_silent_with_what_was_answered_and_read():
    conn = _Conn(["a\nout-a\nsw1#", "b\npartial"])
    with pytest.raises(_channel.Silent) as err:
        _channel.exchange(conn, ["a", "b"], PROMPT, 0.05)
    assert (err.value.answered, err.value.expected) == (1, 2)
    assert err.value.tail.endswith("b\npartial")
    assert str(err.value) == "no prompt after 0 s (1 of 2 commands answered)"
    assert isinstance(err.value, _channel.Lost) and isinstance(err.value, _channel.transport_errors())


@pytest.mark.parametrize("how", ["closed", "eof_received", "transport", "dropped"])
def test_a_closed_channel_raises_lost(how):
    conn = _Conn(["a\n"])
    if how == "transport":
        conn.remote_conn.transport.active = False
    elif how == "dropped":
        conn.remote_conn = None
    else:
        setattr(conn.remote_conn, how, True)
    with pytest.raises(_channel.Lost, match="the device closed the connection"):
        _channel.exchange(conn, ["a"], PROMPT, 5)


def test_a_stand_in_without_remote_conn_is_never_taken_for_closed():
    class Bare:
        pass

    assert not _channel.closed(Bare())


def test_settle_waits_for_the_last_echo_before_taking_a_repeated_prompt_as_the_answer():
    # The device printed its prompt twice before echoing the last command: two prompts for two
    # commands, but the second command has not answered yet.
    conn = _Conn(["a\nsw1#", "\nsw1#", "", "b\nout-b\nsw1#"])
    plain = _channel.exchange(_Conn(list(conn.reply)), ["a", "b"], PROMPT, 5)
    assert plain.segments == ["a\n", "\n"]  # without settle: answered too early
    settled = _channel.exchange(conn, ["a", "b"], PROMPT, 5, settle=True, align="end")
    assert settled.segments[-1] == "b\nout-b\n"


def test_settle_takes_a_quiet_buffer_ending_in_a_prompt_when_the_echo_never_comes():
    conn = _Conn(["a\nsw1#", "out\nsw1#"])
    reply = _channel.exchange(conn, ["a", "b"], PROMPT, 5, settle=True)
    assert reply.segments == ["a\n", "out\n"]


def test_a_prompt_not_at_the_end_of_the_buffer_is_not_settled():
    conn = _Conn(["a\nsw1#", "b\nsw1#", "trailing text"])
    with pytest.raises(_channel.Silent):
        _channel.exchange(conn, ["a", "b"], PROMPT, 0.5, settle=True)


def test_align_end_drops_a_repeated_prompt_at_the_front():
    conn = _Conn(["sw1#", "a\n1\nsw1#", "b\n2\nsw1#"])
    assert _channel.exchange(conn, ["a", "b"], PROMPT, 5, align="end").segments == ["a\n1\n", "b\n2\n"]
    conn = _Conn(["sw1#", "a\n1\nsw1#", "b\n2\nsw1#"])
    assert _channel.exchange(conn, ["a", "b"], PROMPT, 5).segments == ["", "a\n1\n"]


def test_a_lone_carriage_return_is_removed_or_ends_a_line():
    assert _channel.exchange(_Conn(["a\r\nx\ry\r\nsw1#"]), ["a"], PROMPT, 5).segments == ["a\nxy\n"]
    assert _channel.exchange(_Conn(["a\r\nx\ry\r\nsw1#"]), ["a"], PROMPT, 5, lone_cr="\n").segments == ["a\nx\ny\n"]


def test_strip_echo_removes_only_the_echo():
    assert _channel.strip_echo("nv show qos", "\nnv  show qos\nrow\n") == "row\n"
    assert _channel.strip_echo("a-very-long-command-line --with options", "a-very-long-command-lin\x08\nrow") == "row"
    assert _channel.strip_echo("show x", "other\nrow") == "other\nrow"
