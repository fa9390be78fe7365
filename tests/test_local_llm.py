"""The embedded model server: found in the cache, started on loopback, stopped for good."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from yiem.local_llm import (
    LocalLlmNotInstalledError,
    LocalLlmServer,
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
