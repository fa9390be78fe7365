"""The Chat page under Streamlit's AppTest, chatting with ScriptedLlm (no network, no model server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from yiem.mcp import McpConnectionError
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.tool_registry import ToolRegistry
from yiem.types import LlmModel, ModelCost, TextContent, UserMessage

ROOT = Path(__file__).resolve().parents[2]
PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)


def _app(llm: ScriptedLlm, model: LlmModel = PRICED, **state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, model)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _texts(at: AppTest, role: str) -> list[str]:
    found = []
    for message in at.chat_message:
        if message.name == role:
            found.append("\n".join(str(block.value) for block in message.markdown))
    return found


def _store(db_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(db_url))


def test_a_message_and_its_streamed_reply_with_cost_caption(db_url: str) -> None:
    usage = {"inputTokens": 1000, "outputTokens": 200}
    at = _app(ScriptedLlm([{"role": "assistant", "content": "Hello from the script!", "usage": usage}]))
    assert not at.exception
    at.chat_input[0].set_value("Hi there").run()
    assert not at.exception, at.exception
    assert _texts(at, "user") == ["Hi there"]
    assert _texts(at, "assistant") == ["Hello from the script!"]
    captions = [caption.value for caption in at.caption]
    # 1000 × $3/M + 200 × $15/M = $0.006
    assert any("1,000 in · 200 out · 0 cached · $0.006000" in caption for caption in captions), captions
    conversation_id = at.query_params["c"]
    saved = _store(db_url).load_messages(conversation_id)
    assert [m.role for m in saved] == ["user", "assistant"]
    assert _store(db_url).get(conversation_id).title == "Hi there"


def test_a_reply_of_a_model_without_price_says_price_unknown(db_url: str) -> None:
    local = LlmModel(id="smollm2", provider="local", price_known=False)
    at = _app(ScriptedLlm(["ok"]), local)
    at.chat_input[0].set_value("hello").run()
    assert any("price unknown" in caption.value for caption in at.caption)


def test_a_tool_call_is_drawn_with_arguments_and_result(db_url: str) -> None:
    registry = ToolRegistry()

    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    registry.add_function(add)
    llm = ScriptedLlm(
        [
            {"content": "", "toolCalls": [{"id": "call_1", "name": "add", "arguments": {"a": 2, "b": 3}}]},
            "The sum is 5.",
        ]
    )
    at = _app(llm, tool_registry=registry, mcp_clients={}, mcp_errors={}, enabled_tools={"add"})
    at.chat_input[0].set_value("What is 2 + 3?").run()
    assert not at.exception, at.exception
    assert llm.requests[0].tool_names == ["add"]
    # After the run the page is drawn again from the store: a finished call is an expander.
    calls = [expander for expander in at.expander if "add" in expander.label]
    assert [e.label for e in calls] == ["Tool `add`"] and calls[0].icon == ":material/check_circle:"
    codes = [json.loads(code.value) for code in calls[0].code]
    assert {"a": 2, "b": 3} in codes and 5 in codes
    assert "The sum is 5." in _texts(at, "assistant")
    # Reopened from the store, the call and its result are drawn the same way.
    at.run()
    assert [e.label for e in at.expander if "add" in e.label] == ["Tool `add`"]


def test_a_failing_tool_is_marked_failed(db_url: str) -> None:
    registry = ToolRegistry()

    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(f"broken: {reason}")

    registry.add_function(explode)
    llm = ScriptedLlm(
        [{"toolCalls": [{"id": "c1", "name": "explode", "arguments": {"reason": "disk"}}]}, "It failed."]
    )
    at = _app(llm, tool_registry=registry, mcp_clients={}, mcp_errors={}, enabled_tools={"explode"})
    at.chat_input[0].set_value("go").run()
    failed = [e for e in at.expander if "explode" in e.label]
    assert failed and failed[0].icon == ":material/error:" and "failed" in failed[0].label
    assert "broken: disk" in json.dumps([code.value for code in failed[0].code])


def test_a_provider_error_is_shown_in_words_and_the_chat_goes_on(db_url: str) -> None:
    error = {"content": "", "stop_reason": "error", "error_message": "HTTP 401 from api: Invalid API key"}
    at = _app(ScriptedLlm([error, "Back to normal."]))
    at.chat_input[0].set_value("first").run()
    assert not at.exception
    assert any("HTTP 401 from api: Invalid API key" in e.value for e in at.error)
    at.chat_input[0].set_value("second").run()
    assert not at.exception
    assert "Back to normal." in _texts(at, "assistant")
    assert _texts(at, "user") == ["first", "second"]


def test_settings_that_cannot_reach_a_model_keep_the_prompt(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    assert at.session_state["settings"].provider == "openai"
    at.chat_input[0].set_value("keep me").run()
    assert not at.exception
    assert any("OPENAI_API_KEY" in e.value for e in at.error)
    saved = _store(db_url).load_messages(at.query_params["c"])
    assert [m.content[0].text for m in saved if isinstance(m, UserMessage)] == ["keep me"]  # type: ignore[union-attr]


def test_conversations_switch_through_the_url_and_the_sidebar(db_url: str) -> None:
    store = _store(db_url)
    first = store.create(title="First talk")
    store.append_message(first.id, UserMessage(content=[TextContent(text="about apples")]))
    second = store.create(title="Second talk")
    store.append_message(second.id, UserMessage(content=[TextContent(text="about pears")]))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["c"] = first.id
    at.run()
    assert _texts(at, "user") == ["about apples"]
    at.sidebar.button(key=f"open-{second.id}").click().run()
    assert _texts(at, "user") == ["about pears"]
    assert at.query_params["c"] == second.id
    at.sidebar.button(key="new-chat").click().run()
    assert _texts(at, "user") == []
    assert "c" not in at.query_params


def test_search_rename_and_delete_in_the_sidebar(db_url: str) -> None:
    store = _store(db_url)
    keep = store.create(title="Holiday plans")
    gone = store.create(title="Tax questions")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.text_input(key="search").set_value("holiday").run()
    labels = [button.label for button in at.sidebar.button if button.key and button.key.startswith("open-")]
    assert labels == ["Holiday plans"]
    at.sidebar.text_input(key="search").set_value("").run()
    at.sidebar.text_input(key=f"title-{keep.id}").set_value("Summer holiday").run()
    at.sidebar.button(key=f"rename-{keep.id}").click().run()
    assert store.get(keep.id).title == "Summer holiday"
    at.sidebar.button(key=f"delete-{gone.id}").click().run()
    at.button(key="confirm-delete").click().run()
    assert not at.exception
    assert not store.exists(gone.id)
    assert [b.label for b in at.sidebar.button if b.key and b.key.startswith("open-")] == ["Summer holiday"]


def test_a_stale_link_opens_a_new_chat_with_a_notice(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["c"] = "no-such-id"
    at.run()
    assert any("no longer exists" in w.value for w in at.warning)
    assert not at.exception


def test_regenerate_keeps_the_last_reply_beside_the_new_one(db_url: str) -> None:
    llm = ScriptedLlm(["first answer", "second answer"])
    at = _app(llm)
    at.chat_input[0].set_value("question").run()
    at.button(key="regenerate").click().run()
    assert not at.exception
    assert _texts(at, "assistant") == ["second answer"]
    assert _texts(at, "user") == ["question"]  # the prompt is answered again, not sent twice
    tree = _store(db_url).load_tree(at.query_params["c"])
    assert [m.role for m in tree.messages] == ["user", "assistant", "assistant"]
    assert tree.parents == [None, 0, 0]  # the old reply is kept as an alternative


def test_edit_a_message_and_resend_from_there(db_url: str) -> None:
    llm = ScriptedLlm(["one", "two", "edited reply"])
    at = _app(llm)
    at.chat_input[0].set_value("first").run()
    at.chat_input[0].set_value("second").run()
    where = f"{at.query_params['c']}-0"
    at.button(key=f"edit-{where}").click().run()
    at.text_area(key=f"edit-text-{where}").set_value("first, edited").run()
    at.button(key=f"edit-send-{where}").click().run()
    assert not at.exception
    assert _texts(at, "user") == ["first, edited"]
    assert _texts(at, "assistant") == ["edited reply"]
    tree = _store(db_url).load_tree(at.query_params["c"])  # the first version and its replies are kept
    assert [m.text for m in tree.messages if isinstance(m, UserMessage)] == [
        "first",
        "second",
        "first, edited",
    ]


def test_an_attached_image_is_sent_with_the_prompt(db_url: str) -> None:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8"
        "cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
    )
    llm = ScriptedLlm(["A tiny image."])
    at = _app(llm, PRICED.model_copy(update={"input": ["text", "image"]}))
    at.chat_input[0].set_value("what is this?").upload("dot.png", png, "image/png").run()
    assert not at.exception
    sent = llm.requests[0].messages[-1]
    assert isinstance(sent, UserMessage)
    assert [block.type for block in sent.content] == ["text", "image"]
    assert len(at.get("image")) >= 1


def test_a_text_only_model_offers_no_attachments(db_url: str) -> None:
    at = _app(ScriptedLlm([]))
    assert at.chat_input[0].proto.accept_file == 0  # ChatInput.AcceptFile.NONE


def test_export_buttons_serve_the_conversation_built_on_click(
    db_url: str, downloads: Callable[[Any], str]
) -> None:
    at = _app(ScriptedLlm(["exported reply"]))
    at.chat_input[0].set_value("export me").run()
    buttons = list(at.sidebar.get("download_button"))
    assert [button.label for button in buttons] == ["Export JSON", "Export Markdown"]
    # Deferred: a long conversation is not serialised on every rerun of the page.
    assert all(button.proto.HasField("deferred_file_id") for button in buttons)
    body = json.loads(downloads(buttons[0]))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][1]["stopReason"] and "apiKey" not in json.dumps(body)
    markdown = downloads(buttons[1])
    assert "export me" in markdown and "exported reply" in markdown


def test_an_export_reads_the_store_when_clicked_not_on_every_rerun(
    db_url: str, downloads: Callable[[Any], str]
) -> None:
    # A rerun must not read the whole tree back: what is exported is what the store holds at the click.
    at = _app(ScriptedLlm(["first reply"]))
    at.chat_input[0].set_value("export me later").run()
    buttons = list(at.sidebar.get("download_button"))
    _store(db_url).append_message(at.query_params["c"], UserMessage.from_text("written after the draw"))
    body = json.loads(downloads(buttons[0]))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert "written after the draw" in downloads(buttons[1])


def test_a_typed_api_key_is_never_written(db_url: str, tmp_path: Path) -> None:
    at = _app(ScriptedLlm(["fine"]))
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    at.sidebar.text_input(key="set-key-openai").set_value("sk-secret-key-12345").run()
    assert at.session_state["settings"].api_key == "sk-secret-key-12345"
    at.chat_input[0].set_value("hello").run()
    assert not at.exception
    from yiem.chat import export_json, export_markdown

    chat = at.session_state["chat"]
    exported = export_json(chat.transcript()) + export_markdown(chat.transcript())
    assert "sk-secret-key-12345" not in exported
    database = Path(db_url.removeprefix("sqlite:///"))
    for path in database.parent.glob(database.name + "*"):  # the file, its WAL and shared memory
        assert b"sk-secret-key-12345" not in path.read_bytes()


def test_a_server_that_is_down_is_reported_in_words(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.sidebar.selectbox(key="set-provider").set_value("llamacpp").run()
    at.sidebar.text_input(key="set-url-llamacpp").set_value("http://127.0.0.1:9/v1").run()
    at.sidebar.text_input(key="set-model-id-llamacpp").set_value("smollm2").run()
    at.chat_input[0].set_value("anyone there?").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and "127.0.0.1:9" in errors[0], errors
    assert _texts(at, "user") == ["anyone there?"]


def test_reasoning_is_in_a_collapsed_expander(db_url: str) -> None:
    llm = ScriptedLlm([{"content": "Paris.", "reasoning_content": "The capital of France is Paris."}])
    at = _app(llm)
    at.chat_input[0].set_value("Capital of France?").run()
    expanders = [e for e in at.expander if e.label == "Reasoning"]
    assert len(expanders) == 1 and not expanders[0].proto.expanded
    assert expanders[0].markdown[0].value == "The capital of France is Paris."
    assert "Paris." in _texts(at, "assistant")[0]


def test_import_a_json_export_from_the_sidebar(db_url: str) -> None:
    from yiem.chat import Transcript, export_json

    exported = export_json(
        Transcript(
            title="Imported talk",
            messages=[
                UserMessage(content=[TextContent(text="old question")]),
                {"role": "assistant", "content": [{"type": "text", "text": "old answer"}]},  # type: ignore[list-item]
            ],
        )
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.file_uploader(key="import-file").set_value(
        ("talk.json", exported.encode(), "application/json")
    ).run()
    at.sidebar.button(key="import").click().run()
    assert not at.exception
    assert _texts(at, "user") == ["old question"] and _texts(at, "assistant") == ["old answer"]
    assert _store(db_url).get(at.query_params["c"]).title == "Imported talk"


def test_a_bad_import_is_explained(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.file_uploader(key="import-file").set_value(
        ("bad.json", b'{"messages": 3}', "application/json")
    ).run()
    at.sidebar.button(key="import").click().run()
    assert not at.exception
    assert any("cannot be imported" in e.value and "messages" in e.value for e in at.sidebar.error)


def test_mcp_servers_from_mcp_json_give_the_chat_real_tools(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, everything_stdio: Any
) -> None:
    """SP-009/SP-010 in the app: server-everything's get-sum is called from the chat and drawn."""
    config = {
        "mcpServers": {
            "everything": {"command": everything_stdio.command, "args": list(everything_stdio.args)},
            "broken": {"command": str(tmp_path / "no-such-server")},
        }
    }
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "mcp.json"))
    llm = ScriptedLlm(
        [{"toolCalls": [{"id": "c1", "name": "get-sum", "arguments": {"a": 19, "b": 23}}]}, "It is 42."]
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, PRICED)
    at.run()
    assert set(at.session_state["mcp_clients"]) == {"everything"}
    assert "broken" in at.session_state["mcp_errors"]
    assert any("`broken` is not available" in w.value for w in at.sidebar.warning)
    at.sidebar.multiselect(key="set-tools").set_value(["get-sum"]).run()
    at.chat_input[0].set_value("19 + 23?").run()
    assert not at.exception
    assert llm.requests[0].tool_names == ["get-sum"]
    status = next(e for e in at.expander if "get-sum" in e.label)
    assert status.icon == ":material/check_circle:"
    assert "42" in " ".join(code.value for code in status.code)
    client = at.session_state["mcp_clients"]["everything"]
    del at, status
    import gc

    gc.collect()
    # The session's MCP server ended with the session: its client refuses requests.
    with pytest.raises(McpConnectionError, match="closed"):
        client.ping(timeout=5)


def _set_up(at: AppTest, system_prompt: str, temperature: float, max_tokens: int) -> None:
    at.sidebar.text_area(key="set-system").set_value(system_prompt).run()
    at.sidebar.checkbox(key="set-temp-default").uncheck().run()
    at.sidebar.slider(key="set-temp").set_value(temperature).run()
    at.sidebar.number_input(key="set-max-tokens").set_value(max_tokens).run()
    at.sidebar.radio(key="set-mode").set_value("sequential").run()


def _shown_setup(at: AppTest) -> tuple[str, float, int, str]:
    return (
        at.sidebar.text_area(key="set-system").value,
        at.sidebar.slider(key="set-temp").value,
        at.sidebar.number_input(key="set-max-tokens").value,
        at.sidebar.radio(key="set-mode").value,
    )


def test_reopening_a_conversation_restores_its_own_setup(db_url: str) -> None:
    store = _store(db_url)
    other = store.create(title="Other talk")
    store.append_message(other.id, UserMessage(content=[TextContent(text="about pears")]))
    replies = [{"role": "assistant", "content": f"Arr {n}"} for n in range(3)]
    at = _app(ScriptedLlm(replies), enabled_tools={"calc"})
    _set_up(at, "Answer like a pirate.", 0.3, 512)
    at.chat_input[0].set_value("ahoy").run()
    assert not at.exception, at.exception
    first = at.query_params["c"]
    at.sidebar.button(key=f"open-{other.id}").click().run()
    assert at.sidebar.text_area(key="set-system").value == ""
    at.query_params["c"] = first
    at.run()
    assert _shown_setup(at) == ("Answer like a pirate.", 0.3, 512, "sequential")
    # A new browser session opening the link finds the same setup, and sending keeps it.
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    fresh.session_state["llm_override"] = (ScriptedLlm(replies), PRICED)
    fresh.query_params["c"] = first
    fresh.run()
    assert _shown_setup(fresh) == ("Answer like a pirate.", 0.3, 512, "sequential")
    assert fresh.session_state["enabled_tools"] == {"calc"}
    fresh.chat_input[0].set_value("again").run()
    assert not fresh.exception, fresh.exception
    assert store.get(first).system_prompt == "Answer like a pirate."
    assert _texts(fresh, "user") == ["ahoy", "again"]


def test_a_new_chat_starts_from_the_last_used_setup(db_url: str) -> None:
    at = _app(ScriptedLlm([{"role": "assistant", "content": "Done."}]))
    _set_up(at, "Be terse.", 1.2, 256)
    at.chat_input[0].set_value("hello").run()
    assert not at.exception, at.exception
    at.sidebar.button(key="new-chat").click().run()
    assert _shown_setup(at) == ("Be terse.", 1.2, 256, "sequential")
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert "c" not in fresh.query_params
    assert _shown_setup(fresh) == ("Be terse.", 1.2, 256, "sequential")


def test_a_typed_key_does_not_follow_a_reopened_conversation_to_another_server(db_url: str) -> None:
    at = _app(ScriptedLlm([]))
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    at.sidebar.text_input(key="set-key-openai").input("sk-typed-here-only-123456").run()
    assert at.session_state["settings"].api_key == "sk-typed-here-only-123456"
    # Saved by someone else, after this session started: same provider, another server.
    elsewhere = _store(db_url).create(
        title="Elsewhere",
        setup={"provider": "openai", "model_id": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"},
    )
    at.query_params["c"] = elsewhere.id
    at.run()
    assert at.session_state["settings"].base_url == "http://127.0.0.1:9/v1"
    assert at.session_state["settings"].api_key == ""
    assert at.sidebar.text_input(key="set-key-openai").value == ""
