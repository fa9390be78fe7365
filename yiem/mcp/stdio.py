"""MCP over stdio: newline-delimited JSON-RPC with a child process, read by a thread."""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from yiem.mcp.errors import McpConnectionError, McpError
from yiem.mcp.transport import Message, OnFailure, OnMessage, decode_message, encode_message

logger = logging.getLogger(__name__)

# What a server inherits from our environment; the entry's `env` adds to it. Secrets in the
# app's environment (API keys) thus never reach a third-party server unless configured.
INHERITED_ENV = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
)
STDERR_LINES = 200
STDERR_LINE_CHARS = 2000
STDERR_QUOTE_CHARS = 2000


def default_environment() -> dict[str, str]:
    """The part of our environment every server gets (bash function exports left out)."""
    return {
        name: value
        for name in INHERITED_ENV
        if (value := os.environ.get(name)) is not None and not value.startswith("()")
    }


class StderrBuffer:
    """The last lines a process wrote to stderr, bounded in lines and characters per line."""

    def __init__(self, max_lines: int = STDERR_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._lock = threading.Lock()

    def append(self, line: str) -> None:
        with self._lock:
            self._lines.append(line[:STDERR_LINE_CHARS])

    def text(self) -> str:
        with self._lock:
            return "\n".join(self._lines)

    def tail(self, max_chars: int = STDERR_QUOTE_CHARS) -> str:
        """The end of stderr, short enough to quote in an error message."""
        text = self.text().strip()
        return text if len(text) <= max_chars else "…" + text[-max_chars:]


class StdioTransport:
    """Starts `command args` and exchanges one JSON message per line on its stdin and stdout."""

    # Both revisions go over stdio: `connect` probes 2026-07-28 first (False: the handshake only).
    stateless_capable = True

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = dict(env or {})
        self.cwd = cwd
        self.label = Path(command).name
        self.stderr = StderrBuffer()
        self._process: subprocess.Popen[bytes] | None = None
        self._write_lock = threading.Lock()
        self._closing = False
        self._stderr_thread: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, on_message: OnMessage, on_failure: OnFailure) -> None:
        env = {**default_environment(), **self.env}
        try:
            self._process = subprocess.Popen(
                [self.command, *self.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                # Its own session, as the MCP SDK starts servers: a Ctrl-C in the app's terminal is
                # not the server's, and Linux's scheduler gives a new session its own CPU share, so
                # on a busy machine node starts in half the time (bench/mcp.py, docs/benchmarks.md).
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            missing = "working folder" if self.cwd and not Path(self.cwd).is_dir() else "command"
            raise McpConnectionError(
                f"could not start MCP server {self.command!r}: {missing} not found ({exc.strerror})"
            ) from exc
        except OSError as exc:
            raise McpConnectionError(f"could not start MCP server {self.command!r}: {exc}") from exc
        assert self._process.stdout is not None and self._process.stderr is not None
        self._stderr_thread = threading.Thread(
            target=self._read_stderr,
            args=(self._process.stderr,),
            name=f"mcp-stderr-{self.label}",
            daemon=True,
        )
        self._stderr_thread.start()
        threading.Thread(
            target=self._read_stdout,
            args=(self._process.stdout, on_message, on_failure),
            name=f"mcp-stdout-{self.label}",
            daemon=True,
        ).start()

    def send(self, message: Message) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise McpConnectionError(f"MCP server {self.label!r} is not running")
        data = encode_message(message) + b"\n"
        try:
            with self._write_lock:
                process.stdin.write(data)
                process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise self._exit_error("closed its input") from exc

    def initialized(self, protocol_version: str) -> None:
        """stdio carries no per-message version."""

    def abandon(self, request_id: int | str) -> None:
        """A late reply on stdio is simply dropped by the client."""

    def close(self) -> None:
        process = self._process
        if process is None:
            return
        self._closing = True
        # The spec's shutdown: close stdin, wait, then SIGTERM, then SIGKILL.
        try:
            if process.stdin:
                process.stdin.close()
        except OSError:
            pass
        for step in (process.terminate, process.kill):
            try:
                process.wait(timeout=2.0)
                break
            except subprocess.TimeoutExpired:
                step()
        else:
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()

    def _read_stdout(self, stdout: IO[bytes], on_message: OnMessage, on_failure: OnFailure) -> None:
        try:
            for line in stdout:
                if not line.strip():
                    continue
                try:
                    message = decode_message(line)
                except ValueError:
                    logger.warning("MCP server %s wrote a line that is not JSON: %.200r", self.label, line)
                    continue
                if isinstance(message, list):  # a JSON-RPC batch
                    for item in message:
                        if isinstance(item, dict):
                            on_message(item)
                elif isinstance(message, dict):
                    on_message(message)
                else:
                    logger.warning("MCP server %s wrote JSON that is not a message: %.200r", self.label, line)
        except (OSError, ValueError):
            pass  # stdout closed under us by close()
        on_failure(None, self._exit_error("stopped"))

    def _read_stderr(self, stderr: IO[bytes]) -> None:
        try:
            for line in stderr:
                self.stderr.append(line.decode("utf-8", "replace").rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def _exit_error(self, what: str) -> McpError:
        process = self._process
        code = None
        if process is not None:
            try:
                code = process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        # Let the stderr reader catch the last words the process wrote before it died.
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=1.0)
        if self._closing:
            message = f"MCP server {self.label!r} was closed"
        elif code is None:
            message = f"MCP server {self.label!r} {what}"
        else:
            message = f"MCP server {self.label!r} {what}: it exited with code {code}"
        tail = self.stderr.tail()
        if tail and not self._closing:
            message += f". Its last error output:\n{tail}"
        return McpConnectionError(message, data={"exit_code": code, "stderr": tail})
