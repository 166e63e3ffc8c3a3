"""Generator tasks: RPCs and sleeps written like Java's blocking calls."""

import pytest

from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Node, RemotingConnectException
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import Rpc, Sleep, spawn


class Server(Node):
    def __init__(self):
        super().__init__("srv", "127.0.0.1:7000")

    def process_request(self, channel, request):
        return RemotingCommand.create_response(0, body=request.body[::-1])


def test_task_chains_rpcs_and_sleeps():
    """A task resumes with each response, sleeps in virtual time, and returns a result."""
    d = SimDriver()
    d.add_node(Server())
    c = Node("c", "")
    d.add_node(c)
    log = []

    def job():
        r = yield Rpc("127.0.0.1:7000", RemotingCommand.create_request(1, body=b"abc"), 1000)
        log.append((d.now, r.body))
        yield Sleep(50)
        r = yield Rpc("127.0.0.1:7000", RemotingCommand.create_request(1, body=b"xy"), 1000)
        log.append((d.now, r.body))
        return "done"

    t = spawn(c.ctx, job(), on_done=lambda t: log.append(("end", t.result)))
    d.run_until_idle()
    assert log == [(2, b"cba"), (54, b"yx"), ("end", "done")]
    assert t.done and t.error is None


def test_transport_error_is_thrown_at_the_yield():
    """A connect failure is raised inside the generator, where Java would throw."""
    d = SimDriver()
    c = Node("c", "")
    d.add_node(c)
    seen = []

    def job():
        try:
            yield Rpc("127.0.0.1:1", RemotingCommand.create_request(1), 1000)
        except RemotingConnectException as e:
            seen.append(type(e).__name__)
        return 7

    t = spawn(c.ctx, job(), on_done=lambda t: None)
    d.run_until_idle()
    assert seen == ["RemotingConnectException"] and t.result == 7


def test_unhandled_task_error_propagates_without_on_done():
    """With no on_done, an exception escaping the task is loud."""
    d = SimDriver()
    c = Node("c", "")
    d.add_node(c)

    def job():
        yield Sleep(1)
        raise ValueError("boom")

    spawn(c.ctx, job())
    with pytest.raises(ValueError, match="boom"):
        d.run_until_idle()
