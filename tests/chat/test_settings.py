"""Chat settings to a live client: defaults from configured keys, errors in words, the real local server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from yiem.agent import Agent
from yiem.events import AgentEndEvent
from yiem.model_setup import ModelSettingsError, ModelSetup, available_models, connect, default_settings
from yiem.providers import secrets_file_value
from yiem.providers.local_llm import LocalLlmServer

ROOT = Path(__file__).resolve().parents[2]


def test_no_key_means_the_local_model() -> None:
    assert default_settings(lambda _name: "").provider == "local"


def test_a_configured_key_picks_its_provider() -> None:
    settings = default_settings(lambda name: "sk-test" if name == "ANTHROPIC_API_KEY" else "")
    # The server's key stays on the server: `connect` looks it up for its own base URL only.
    assert (settings.provider, settings.api_key) == ("anthropic", "")
    assert settings.model_id and settings.base_url.startswith("https://")
    # The key is never part of what settings serialise to.
    assert "sk-test" not in settings.model_dump_json() and "sk-test" not in repr(settings)


def test_secrets_toml_is_read_without_streamlit(tmp_path: Path) -> None:
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text('OPENAI_API_KEY = "sk-from-file"\n')
    assert secrets_file_value("OPENAI_API_KEY", tmp_path) == "sk-from-file"
    assert secrets_file_value("GROQ_API_KEY", tmp_path) == ""


def test_a_missing_key_says_where_to_put_it() -> None:
    settings = ModelSetup(provider="openai", model_id="gpt-4o-mini")
    with pytest.raises(ModelSettingsError, match="OPENAI_API_KEY") as caught:
        connect(settings)
    assert "secrets.toml" in str(caught.value)


def test_a_missing_model_or_url_says_so() -> None:
    with pytest.raises(ModelSettingsError, match="Choose a model"):
        connect(ModelSetup(provider="llamacpp", model_id=""))
    with pytest.raises(ModelSettingsError, match="base URL"):
        connect(ModelSetup(provider="my-own-server", model_id="m"))


@pytest.mark.llama
def test_a_llama_cpp_server_from_the_settings_answers(llama_server: LocalLlmServer) -> None:
    settings = ModelSetup(provider="llamacpp", base_url=llama_server.openai_base_url, model_id="smollm2")
    models, problem = available_models(settings)
    assert problem is None and "smollm2" in models
    client, model = connect(settings)
    assert model.price_known is False
    agent = Agent(client, model)
    events = list(agent.prompt("Say hi."))
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.error_message is None
    assert agent.state.messages[-1].role == "assistant"


def test_a_server_that_is_down_is_reported_by_the_model_list() -> None:
    _, problem = available_models(ModelSetup(provider="llamacpp", base_url="http://127.0.0.1:9/v1"))
    assert problem and "127.0.0.1:9" in problem


def _configured(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "yiem.chat", "configured-provider"],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_make_run_asks_which_provider_is_configured(tmp_path: Path) -> None:
    assert _configured({}, tmp_path).returncode == 1
    found = _configured({"OPENAI_API_KEY": "sk-x"}, tmp_path)
    assert (found.returncode, found.stdout.strip()) == (0, "openai")


def test_a_server_on_this_machine_starts_without_a_url_and_is_not_asked() -> None:
    from yiem.model_setup import starting_base_url

    nothing: dict[str, str] = {}
    assert starting_base_url("llamacpp", nothing.get) == ""
    assert starting_base_url("openai", nothing.get) == "https://api.openai.com/v1"
    moved = {"LLAMA_BASE_URL": "http://10.0.0.5:8080/v1"}
    assert starting_base_url("llamacpp", moved.get) == "http://10.0.0.5:8080/v1"  # the operator's own
    # Nothing typed: no request to localhost's default port, so no problem to report either.
    assert available_models(ModelSetup(provider="llamacpp", base_url=""), nothing.get) == ([], None)
