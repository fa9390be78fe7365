"""The embedded model server: found in the cache, started on loopback, stopped for good."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from yiem.providers.local_llm import (
    LocalLlmNotInstalledError,
    LocalLlmServer,
    _spawn_tied_to_process,
    find_chat_template,
    find_llama_server,
    find_model,
    is_installed,
)


def test_missing_binary_says_how_to_build_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("YIEM_CACHE_DIR", str(tmp_path))
    with pytest.raises(LocalLlmNotInstalledError, match=r"make run.*setup_llama\.sh"):
        find_llama_server()
    with pytest.raises(LocalLlmNotInstalledError, match="SmolLM2"):
        find_model()
    with pytest.raises(LocalLlmNotInstalledError, match="setup_llama"):
        LocalLlmServer(progress=None).start()
    assert not is_installed()


def test_cache_dir_override_finds_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("YIEM_CACHE_DIR", str(tmp_path))
    binary = tmp_path / "llama-cpp-0.3.36" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    model = tmp_path / "smollm2-0.1.2" / "model.gguf"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"gguf")
    assert find_llama_server() == binary
    assert find_model() == model
    assert is_installed()


def test_server_that_exits_at_once_reports_its_log(tmp_path: Path) -> None:
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\necho 'error: model file is corrupt' >&2\nexit 3\n")
    fake.chmod(0o755)
    server = LocalLlmServer(binary=fake, model_path=tmp_path / "m.gguf", progress=None)
    with pytest.raises(Exception, match=r"exited with code 3[\s\S]*model file is corrupt"):
        server.start()
    assert not server.running


@pytest.mark.llama
def test_real_server_starts_on_loopback_and_stops(llama_server: LocalLlmServer) -> None:
    assert llama_server.base_url.startswith("http://127.0.0.1:")
    assert httpx.get(f"{llama_server.base_url}/health").status_code == 200
    models = httpx.get(f"{llama_server.openai_base_url}/models").json()
    assert llama_server.alias in str(models)
    model = llama_server.llm_model()
    assert model.provider == "local" and model.price_known is False and model.cost.input == 0


@pytest.mark.llama
def test_context_manager_stops_the_process() -> None:
    messages: list[str] = []
    with LocalLlmServer(progress=messages.append) as server:
        process = server._process
        url = server.base_url
        assert process is not None and server.running
    assert process.poll() is not None
    assert not server.running
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/health", timeout=1)
    assert any("ready" in line for line in messages) and any("stopping" in line for line in messages)


def test_qwen_template_is_in_the_cache_when_built() -> None:
    if not is_installed():
        pytest.fail("llama-server is not built; run scripts/setup_llama.sh")
    assert find_chat_template().name == "Qwen-Qwen2.5-7B-Instruct.jinja"


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


_OWNER = """
import sys, threading, time
from yiem.providers.local_llm import LocalLlmServer
servers = []
start = lambda: servers.append(LocalLlmServer(progress=None).start())
if sys.argv[2] == "thread":  # as Streamlit does: a script thread that ends while the server runs on
    worker = threading.Thread(target=start)
    worker.start()
    worker.join()
    time.sleep(0.5)
    assert servers[0].running, "the server stopped when the thread that started it ended"
else:
    start()
print(servers[0]._process.pid, flush=True)
if sys.argv[1] == "hang":
    time.sleep(120)
else:  # exit only once the test has seen the server alive (under load it could stop first)
    sys.stdin.readline()
"""


@pytest.mark.llama
@pytest.mark.parametrize(
    ("ending", "starter"),
    [("exit", "main"), ("hang", "main"), ("hang", "thread")],
    ids=["normal-exit", "killed", "killed-after-starting-thread-ended"],
)
def test_server_never_outlives_its_python_process(ending: str, starter: str) -> None:
    """Normal exit runs atexit; SIGKILL, where atexit cannot run, is covered by the parent-death signal."""
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER, ending, starter],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert owner.stdout is not None
    server_pid = int(owner.stdout.readline())
    assert _alive(server_pid)
    if ending == "hang":
        owner.send_signal(signal.SIGKILL)
    else:
        assert owner.stdin is not None
        owner.stdin.write("\n")
        owner.stdin.close()
    owner.wait(60)
    assert _gone_within(server_pid, 30), f"llama-server {server_pid} outlived its owner"


# A stand-in for a llama-server whose shutdown hangs: it answers /health and ignores SIGTERM.
# The real one hung 4 times in 40 on two SIGTERMs 23-30 ms apart (its second-signal exit() ran
# inside free()), and an owner that dies with several threads sends the parent-death signal once
# per thread that ends after the one that forked it (ci62, docs/seen-failing.md).
_STUBBORN_SERVER = """
import http.server, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
port = int(sys.argv[sys.argv.index("--port") + 1])
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""

_OWNER_WITH_THREADS = """
import sys, threading, time
from pathlib import Path
from yiem.providers.local_llm import LocalLlmServer
for _ in range(4):  # threads that end after the spawner when the owner is killed
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
server = LocalLlmServer(binary=Path(sys.argv[1]), model_path=Path(sys.argv[2]), progress=None).start()
print(server._process.pid, flush=True)
time.sleep(120)
"""


def test_a_server_whose_shutdown_hangs_is_still_gone_when_its_owner_is_killed(tmp_path: Path) -> None:
    fake = tmp_path / "llama-server"
    fake.write_text(f"#!{sys.executable}\n{_STUBBORN_SERVER}")
    fake.chmod(0o755)
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER_WITH_THREADS, str(fake), str(tmp_path / "m.gguf")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert owner.stdout is not None
    server_pid = int(owner.stdout.readline())
    try:
        assert _alive(server_pid)
        owner.send_signal(signal.SIGKILL)
        owner.wait(60)
        assert _gone_within(server_pid, 30), f"the server {server_pid} outlived its owner"
    finally:
        if _alive(server_pid):
            os.kill(server_pid, signal.SIGKILL)


def test_each_slot_gets_the_whole_window(tmp_path: Path) -> None:
    # A fake server that prints its arguments and exits: the failure message quotes them.
    fake = tmp_path / "llama-server"
    fake.write_text('#!/bin/sh\necho "args: $*" >&2\nexit 3\n')
    fake.chmod(0o755)
    server = LocalLlmServer(binary=fake, model_path=tmp_path / "m.gguf", parallel=2, progress=None)
    with pytest.raises(Exception, match=r"-c 8192 .*-np 2"):
        server.start()


@pytest.mark.llama
def test_the_app_embedded_server_answers_two_at_once_each_with_the_whole_window() -> None:
    # Two Compare columns (or two tabs) on the embedded model stream at once only with two slots.
    from yiem.model_setup import local_model

    base_url, model = local_model()
    props = httpx.get(f"{base_url.removesuffix('/v1')}/props", timeout=30).json()
    assert props["total_slots"] == 2, props
    assert props["default_generation_settings"]["n_ctx"] == model.context_window == 4096, props


@pytest.mark.llama
def test_a_reply_stops_at_the_reply_limit_when_the_request_names_none() -> None:
    # A toy model that repeats itself would otherwise write until its 4,096-token window is full.
    with LocalLlmServer(reply_limit=12, progress=None) as server:

        def completion_tokens(**limit: int) -> tuple[int, str]:
            body = {
                "model": server.alias,
                "messages": [{"role": "user", "content": "Write a very long story about a cat."}],
                "temperature": 0,
                **limit,
            }
            reply = httpx.post(f"{server.openai_base_url}/chat/completions", json=body, timeout=120).json()
            return reply["usage"]["completion_tokens"], reply["choices"][0]["finish_reason"]

        assert completion_tokens() == (12, "length")
        assert completion_tokens(max_tokens=5) == (5, "length")
        assert completion_tokens(max_tokens=20) == (20, "length")
        assert server.llm_model().max_tokens == 12


_READ_PDEATHSIG = """
import ctypes
signal = ctypes.c_int()
ctypes.CDLL("libc.so.6").prctl(2, ctypes.byref(signal))  # PR_GET_PDEATHSIG
print(signal.value)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_the_child_is_tied_to_its_owner_without_loading_a_library_after_the_fork(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Loading a library (dlopen) in a child forked from a threaded process can deadlock on a lock
    # another thread held at the fork, so libc's prctl is found before it; here a load in the child fails.
    _spawn_tied_to_process(lambda hook: subprocess.Popen(["true"], preexec_fn=hook)).wait(30)  # finds prctl

    def no_loading(*args: object, **kwargs: object) -> None:
        raise OSError("a library was loaded in the forked child")

    monkeypatch.setattr(ctypes, "CDLL", no_loading)
    child = _spawn_tied_to_process(
        lambda hook: subprocess.Popen(
            [sys.executable, "-c", _READ_PDEATHSIG], preexec_fn=hook, stdout=subprocess.PIPE
        )
    )
    out, _ = child.communicate(timeout=30)
    assert int(out) == signal.SIGKILL
