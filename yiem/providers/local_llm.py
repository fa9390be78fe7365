"""The embedded default model: llama.cpp's `llama-server` with SmolLM2, started and stopped by yiem.

The binary and the model are prepared by `scripts/setup_llama.sh` (run by `make run` and
`make test`) under a cache folder keyed by version; this module only finds and runs them.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from yiem.errors import YiemError
from yiem.types import LlmModel, ModelCost

# Keep in step with scripts/setup_llama.sh: the cache layout is shared.
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
SMOLLM2_VERSION = "0.1.2"
LOCAL_MODEL_ALIAS = "smollm2"
LOCAL_PROVIDER = "local"
QWEN25_TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"
_SETUP_HINT = "run `make run` (or `scripts/setup_llama.sh`) once to build it"


class LocalLlmError(YiemError, RuntimeError):
    """The embedded model server could not be found or started."""


class LocalLlmNotInstalledError(LocalLlmError):
    """The llama-server binary, the SmolLM2 model or a chat template is not in the cache."""


class LocalLlmStartError(LocalLlmError):
    """llama-server exited or did not become healthy in time."""


def cache_dir() -> Path:
    """The cache root: `YIEM_CACHE_DIR`, else `~/.cache/yiem`."""
    override = os.environ.get("YIEM_CACHE_DIR")
    return Path(override) if override else Path.home() / ".cache" / "yiem"


def llama_dir() -> Path:
    """Where setup_llama.sh puts the llama-server build of this version."""
    return cache_dir() / f"llama-cpp-{LLAMA_CPP_PYTHON_VERSION}"


def find_llama_server() -> Path:
    """The cached `llama-server` binary, or LocalLlmNotInstalledError saying how to build it."""
    binary = llama_dir() / "bin" / "llama-server"
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise LocalLlmNotInstalledError(
            f"llama-server is not built yet (looked for {binary}); {_SETUP_HINT}."
        )
    return binary


def find_model() -> Path:
    """The cached SmolLM2 `.gguf` file, or LocalLlmNotInstalledError saying how to fetch it."""
    model_dir = cache_dir() / f"smollm2-{SMOLLM2_VERSION}"
    models = sorted(model_dir.glob("*.gguf"))
    if not models:
        raise LocalLlmNotInstalledError(
            f"The SmolLM2 model is not downloaded yet (looked in {model_dir}); {_SETUP_HINT}."
        )
    return models[0]


def find_chat_template(name: str = QWEN25_TEMPLATE) -> Path:
    """A chat template from llama.cpp's source tree, copied into the cache by setup_llama.sh."""
    template = llama_dir() / "templates" / name
    if not template.is_file():
        raise LocalLlmNotInstalledError(f"Chat template {name} is not in {template.parent}; {_SETUP_HINT}.")
    return template


def is_installed() -> bool:
    """True when both the binary and the model are in the cache."""
    try:
        find_llama_server()
        find_model()
    except LocalLlmNotInstalledError:
        return False
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_PR_SET_PDEATHSIG = 1


@functools.cache
def _die_with_parent_hook() -> Callable[[], None] | None:
    """What the child runs before exec so it dies with this process (Linux only, see below).

    libc's prctl is loaded here, in the parent, once: loading a library in a child forked from a
    threaded process can deadlock on a lock another thread held at the fork."""
    try:
        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def die_with_parent() -> None:
        # The kernel kills the server if the process that started it dies, even by SIGKILL,
        # where atexit never runs. Applied only from one long-lived thread (below), because the
        # signal fires when the starting *thread* ends. SIGKILL, not SIGTERM: a dying owner sends
        # the signal once per thread that ends after that one, and llama-server's second-SIGTERM
        # exit() can deadlock inside free() (ci62), leaving it orphaned; an orphan has nothing to save.
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return die_with_parent


_Spawn = Callable[[Callable[[], None] | None], "subprocess.Popen[bytes]"]
_spawn_requests: queue.SimpleQueue[tuple[_Spawn, Future[subprocess.Popen[bytes]]]] = queue.SimpleQueue()
_spawner_lock = threading.Lock()
_spawner: threading.Thread | None = None


def _spawn_tied_to_process(spawn: _Spawn) -> subprocess.Popen[bytes]:
    """Start a child that the kernel stops when this process dies, even by SIGKILL.

    The parent-death signal fires when the *thread* that forked the child ends, so a server
    started from a short-lived thread (Streamlit runs each page in one) would be stopped too
    soon, or, without the signal, orphaned. Children are therefore forked by one daemon thread
    that lives exactly as long as the process.
    """
    if sys.platform != "linux":
        return spawn(None)
    if threading.current_thread() is threading.main_thread():
        return spawn(_die_with_parent_hook())
    global _spawner
    with _spawner_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_serve_spawns, name="yiem-spawner", daemon=True)
            _spawner.start()
    result: Future[subprocess.Popen[bytes]] = Future()
    _spawn_requests.put((spawn, result))
    return result.result()


def _serve_spawns() -> None:
    while True:
        spawn, result = _spawn_requests.get()
        try:
            result.set_result(spawn(_die_with_parent_hook()))
        except BaseException as error:  # handed to the caller's thread, which raises it
            result.set_exception(error)


def _print_progress(text: str) -> None:
    print(f"yiem: {text}", file=sys.stderr, flush=True)


class LocalLlmServer:
    """A `llama-server` process on 127.0.0.1 and a free port; use as a context manager.

    `base_url` is `http://127.0.0.1:PORT` (Anthropic clients), `openai_base_url` adds `/v1`.
    `context_size` is each slot's window; `parallel` slots answer at once (llama-server's `-np`);
    `reply_limit` caps a reply's tokens when the request names no limit of its own.
    """

    def __init__(
        self,
        *,
        binary: Path | None = None,
        model_path: Path | None = None,
        alias: str = LOCAL_MODEL_ALIAS,
        chat_template: Path | str | None = None,
        context_size: int = 4096,
        # One thread: SmolLM2-135M is too small to gain from two, and two threads spin on each
        # other, so on a busy 2-core machine a reply took 5-60x longer (docs/benchmarks.md).
        threads: int = 1,
        parallel: int = 1,
        # SmolLM2-135M often falls into repeating itself; uncapped, such a reply runs until its
        # window is full, minutes on a busy machine, while a person waits for Stop.
        reply_limit: int = 1024,
        startup_timeout: float = 120.0,
        progress: Callable[[str], None] | None = _print_progress,
    ) -> None:
        self.binary = binary
        self.model_path = model_path
        self.alias = alias
        self.chat_template = chat_template
        self.context_size = context_size
        self.threads = threads
        self.parallel = parallel
        self.reply_limit = reply_limit
        self.startup_timeout = startup_timeout
        self._progress = progress
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._port: int | None = None
        self._lock = threading.Lock()

    # --- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the running server listens on."""
        if self._port is None:
            raise LocalLlmError("The local model server is not running; call start() first.")
        return self._port

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, the root that serves `/health`, `/v1/...` and `/v1/messages`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI-compatible base URL (`.../v1`)."""
        return f"{self.base_url}/v1"

    @property
    def running(self) -> bool:
        """True while the process is alive."""
        return self._process is not None and self._process.poll() is None

    def llm_model(self) -> LlmModel:
        """The `LlmModel` for this server: free to run, so its price is marked unknown, never guessed."""
        return LlmModel(
            id=self.alias,
            name="SmolLM2 135M Instruct (local toy model)",
            provider=LOCAL_PROVIDER,
            base_url=self.openai_base_url,
            api="openai-completions",
            context_window=self.context_size,
            max_tokens=self.reply_limit,
            cost=ModelCost(),
            price_known=False,
            price_source="local model: no price",
        )

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> LocalLlmServer:
        """Start the server and wait until `/health` answers; raises LocalLlmError with the log tail."""
        with self._lock:
            if self.running:
                return self
            binary = self.binary or find_llama_server()
            model_path = self.model_path or find_model()
            template = self._template_path()
            self._say(f"starting local model {model_path.name} with llama-server...")
            last_error: LocalLlmStartError | None = None
            # The free port is picked before llama-server binds it, so another process can
            # take it in between; a second port settles that.
            for _attempt in range(3):
                try:
                    self._launch(binary, model_path, template)
                    self._wait_healthy()
                except LocalLlmStartError as error:
                    last_error = error
                    self._terminate()
                    if "bind" not in str(error).lower():
                        raise
                    continue
                self._say(f"local model ready at {self.base_url}")
                return self
            assert last_error is not None
            raise last_error

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after `timeout` seconds); safe to call twice."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                self._say("stopping local model")
            self._terminate(timeout)

    def __enter__(self) -> LocalLlmServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # --- internals ---------------------------------------------------------------------------

    def _template_path(self) -> Path | None:
        if self.chat_template is None:
            return None
        template = Path(self.chat_template)
        if template.is_file():
            return template
        return find_chat_template(str(self.chat_template))

    def _launch(self, binary: Path, model_path: Path, template: Path | None) -> None:
        port = _free_port()
        command = [
            str(binary),
            "-m",
            str(model_path),
            "--alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            str(self.context_size * self.parallel),  # llama-server splits -c across its slots
            "-t",
            str(self.threads),
            "-np",
            str(self.parallel),
            "-n",
            str(self.reply_limit),  # the default: a request's own max_tokens overrides it
            "--jinja",
        ]
        if template is not None:
            command += ["--chat-template-file", str(template)]
        # Kept open for the server's lifetime (closed in _terminate); its tail explains failures.
        self._log = tempfile.TemporaryFile(prefix="yiem-llama-")  # noqa: SIM115
        log = self._log
        self._process = _spawn_tied_to_process(
            lambda preexec: subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=preexec,
            )
        )
        self._port = port
        _live_servers.add(self)

    def _wait_healthy(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        url = f"http://127.0.0.1:{self._port}/health"
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                code = self._process.poll()
                if code is not None:
                    raise LocalLlmStartError(
                        f"llama-server exited with code {code} while starting.\n{self._log_tail()}"
                    )
                try:
                    if client.get(url).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                time.sleep(0.05)
        raise LocalLlmStartError(
            f"llama-server did not become healthy within {self.startup_timeout:g} s.\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        self._log.seek(0)
        text = self._log.read().decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    def _terminate(self, timeout: float = 5.0) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        self._port = None
        _live_servers.discard(self)

    def _say(self, text: str) -> None:
        if self._progress is not None:
            self._progress(text)


_live_servers: set[LocalLlmServer] = set()


@atexit.register
def _stop_all() -> None:
    # A server must never outlive the Python process that started it.
    for server in list(_live_servers):
        with contextlib.suppress(Exception):
            server._progress = None
            server.stop()


def count_tokens(server_url: str, text: str, timeout: float = 5.0) -> int:
    """How many tokens llama-server's own tokenizer makes of `text` (its `/tokenize` endpoint).

    `server_url` is the server's root (`LocalLlmServer.base_url`); raises `httpx.HTTPError` or
    `LocalLlmError` when the server cannot answer.
    """
    response = httpx.post(f"{server_url.rstrip('/')}/tokenize", json={"content": text}, timeout=timeout)
    response.raise_for_status()
    tokens = response.json().get("tokens")
    if not isinstance(tokens, list):
        raise LocalLlmError(f"llama-server's /tokenize answered without a token list: {response.text[:200]}")
    return len(tokens)
