"""A hello the client cannot talk to is refused naming what actually differs: 'this gpu-train-monitor speaks
protocol 1, the one on gpu-box speaks 1' (the text "1", or true) named no difference at all; an agent that speaks
this protocol and refuses all the same has its own words said."""

from __future__ import annotations

import json
import sys
import time

import pytest

from gpu_train_monitor.remote.client.link import AgentLink, VersionMismatch
from gpu_train_monitor.remote.client.target import RemoteTarget
from gpu_train_monitor.remote.wire import protocol


def agent_answering(hello: dict, answer: dict | None = None) -> RemoteTarget:
    """A transport that says `hello`, then answers the client's hello with `answer` (when given) and reads on."""
    code = f"import sys; print({json.dumps({'hello': hello})!r}, flush=True); sys.stdin.readline()\n"
    if answer is not None:
        code += f"print({json.dumps(answer)!r}, flush=True)\n"
    code += "sys.stdin.read()\n"
    return RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", code))


def refusal(target: RemoteTarget) -> str:
    link = AgentLink(target, connect_timeout_s=20.0)
    started = time.monotonic()
    with pytest.raises(VersionMismatch) as raised:
        link.connect()
    assert time.monotonic() - started < 10 and not link.alive
    message = str(raised.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("theirs", "shown"), [("1", '"1" (text)'), (True, "true (a yes/no value)")])
def test_a_protocol_that_only_looks_like_this_one_is_refused_naming_it(theirs: object, shown: str) -> None:
    """`true` passed as protocol 1 before (True == 1 in Python); "1" was refused as 'speaks 1'."""
    message = refusal(agent_answering({"protocol": theirs, "app": "9.9.9", "host": "h", "store": "s"}))
    assert f"the gpu-train-monitor on gpu-box gives its protocol as {shown}" in message
    assert "on gpu-box 9.9.9" in message


def test_the_same_protocol_refused_all_the_same_says_why_in_the_agent_s_words() -> None:
    hello = {"protocol": protocol.PROTOCOL_VERSION, "app": "7.0.0", "host": "h", "store": "s"}
    answer = {"id": 0, "ok": False, "error": "this agent talks to gpu-train-monitor 7 only", "kind": "version"}
    message = refusal(agent_answering(hello, answer))
    assert f"both speak protocol {protocol.PROTOCOL_VERSION}" in message
    assert "(this agent talks to gpu-train-monitor 7 only)" in message and "on gpu-box 7.0.0" in message
    assert "speaks 1" not in message
