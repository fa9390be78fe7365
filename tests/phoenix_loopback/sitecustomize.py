"""Imported at start-up by the tests' Phoenix (on its PYTHONPATH): its OTLP gRPC receiver listens on
127.0.0.1. Phoenix writes `[::]:PORT` into its code (phoenix/server/grpc_server.py) with no setting
for the host, and servers the tests start bind loopback only."""

from grpc.aio import _server

_add_insecure_port = _server.Server.add_insecure_port


def _on_loopback(self: _server.Server, address: str) -> int:
    return _add_insecure_port(self, address.replace("[::]:", "127.0.0.1:", 1))


_server.Server.add_insecure_port = _on_loopback  # type: ignore[method-assign]
