"""The JSON and the reply flag every MCP message goes through (yiem/mcp/transport.py): orjson where it
reads and writes exactly what the json module did, the json module where it would not."""

from __future__ import annotations

import math
import threading
import time

import pytest

from tests.mcp.test_mcp_protocol import client, scripted_stdio
from yiem.mcp import McpClient
from yiem.mcp.transport import Latch, decode_message, encode_message

__all__ = ["client"]  # the fixture, used by name below

BIG = 2**70 + 1  # past 64 bits: orjson refuses to write it and would read it as a float


def test_an_integer_past_64_bits_goes_to_the_server_exactly(client: McpClient) -> None:
    assert client.call_tool("add", {"a": BIG, "b": 1}).text == str(BIG + 1)


def test_an_integer_past_64_bits_is_read_exactly() -> None:
    wire = f'{{"id": 1, "result": {{"n": {BIG}}}}}'
    assert decode_message(wire.encode()) == {"id": 1, "result": {"n": BIG}}
    assert decode_message(f'{{"n": -{BIG}}}') == {"n": -BIG}


def test_what_orjson_refuses_to_read_the_json_module_reads() -> None:
    assert math.isnan(decode_message(b'{"x": NaN}')["x"])
    assert decode_message(b'{"x": -Infinity}')["x"] == -math.inf
    assert decode_message(b'{"s": "odd \\ud800"}')["s"] == "odd \ud800"


def test_a_string_of_many_digits_is_read_as_it_was_sent() -> None:
    digits = "1234567890" * 4
    assert decode_message(f'{{"s": "{digits}", "n": 7}}'.encode()) == {"s": digits, "n": 7}


def test_what_is_not_json_is_a_value_error() -> None:
    for data in (b"{not json", b"", '{"a": 1'):
        with pytest.raises(ValueError):
            decode_message(data)


def test_a_message_is_compact_utf8_with_its_keys_in_order() -> None:
    message = {"jsonrpc": "2.0", "id": 3, "params": {"text": "héllo ✓", 2: [1.5, None, True]}}
    wire = '{"jsonrpc":"2.0","id":3,"params":{"text":"héllo ✓","2":[1.5,null,true]}}'
    assert encode_message(message) == wire.encode()
    assert encode_message({"x": "a \ud800"}) == '{"x":"a \ufffd"}'.encode()
    assert encode_message({"x": math.nan}) == b'{"x":null}'  # JSON has no NaN; servers refused the token
    with pytest.raises(TypeError):
        encode_message({"x": {1, 2}})


def test_a_latch_set_before_the_wait_passes_at_once_and_stays_set() -> None:
    latch = Latch()
    assert not latch.is_set() and not latch.wait(0.01)
    latch.set()
    latch.set()
    assert latch.is_set() and latch.wait(0) and latch.wait(None) and latch.wait(5.0)


def test_a_latch_lets_every_waiter_through_once_set() -> None:
    latch = Latch()
    passed: list[bool] = []
    waiters = [threading.Thread(target=lambda: passed.append(latch.wait(10.0))) for _ in range(8)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.05)
    assert passed == []
    latch.set()
    for waiter in waiters:
        waiter.join(10.0)
    assert passed == [True] * 8


def test_a_latch_set_twice_opens_once_for_every_waiter() -> None:
    # A reply and a cancel can both set a request's latch: the second must not open the gate again
    # (a lock released twice raises) nor leave it shut for a waiter.
    latch = Latch()
    latch.set()
    latch.set()
    assert all(latch.wait(0) for _ in range(3))
    waiter = threading.Thread(target=latch.wait)
    waiter.start()
    waiter.join(5.0)
    assert not waiter.is_alive()


def test_a_stdio_call_after_a_big_integer_still_pairs_replies_with_requests() -> None:
    with scripted_stdio() as stdio:
        assert stdio.call_tool("add", {"a": BIG, "b": BIG}).text == str(2 * BIG)
        assert stdio.call_tool("add", {"a": 2, "b": 3}).text == "5"
