"""The Experiments page under AppTest: a run made from Python shows in the page (summary, matrix,
comparison), and the page's editors build the draft it runs."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from ui.experiments.run import progress_text
from ui.state import experiment_picker
from yiem import LlmUsage, ScriptedLlm
from yiem.experiments import (
    Dataset,
    ExperimentStore,
    ItemOutcome,
    Progress,
    Score,
    Variant,
    run_experiment,
    scorers,
)
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, TextContent, UserMessage

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "ui" / "pages" / "experiments.py")
APP = str(ROOT / "app.py")
TIMEOUT = 60


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("YIEM_DATABASE_URL", url)
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    return url


def _python_run(url: str) -> tuple[str, str]:
    store = ExperimentStore(create_store_engine(url))
    data = Dataset.from_records([{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(4)])
    good = Variant(name="good", llm=ScriptedLlm([str(n) for n in range(4)]))
    bad = Variant(name="bad", llm=ScriptedLlm(["0", "x", "x", "3"]))
    result = run_experiment(data, [good, bad], [scorers.contains()], name="quiz", store=store, concurrency=1)
    return store.list_experiments()[0].id, result.run_id


def _text(at: AppTest) -> str:
    parts: list[Any] = [*at.markdown, *at.caption, *at.text, *at.info, *at.warning, *at.success]
    return "\n".join(str(part.value) for part in parts)


def test_a_python_run_shows_in_the_page(db_url: str) -> None:
    experiment_id, _run_id = _python_run(db_url)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["e"] = experiment_id
    at.run()
    assert not at.exception, at.exception
    assert at.text_input(key="exp_w_name").value == "quiz"
    summary = next(d.value for d in at.dataframe if "pass rate" in d.value.columns)
    assert list(summary["variant"]) == ["good", "bad"]
    assert list(summary["passed"]) == ["4 / 4", "2 / 4"]
    assert summary["pass rate"][1] == "50% (15%–85%)"
    text = _text(at)
    assert ":green-badge[contains 1.00]" in text and ":red-badge[contains 0.00]" in text
    # Against a baseline: 'bad' against 'good' in the same run regresses two items.
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Improved"], metrics["Regressed"], metrics["Unchanged"]) == ("0", "2", "2")
    at.toggle(key=f"exp_only_regressions_{_run_id}").set_value(True).run()
    changes = next(d.value for d in at.dataframe if "change" in d.value.columns)
    assert list(changes["item"]) == ["say 1", "say 2"]
    assert f"(costs?experiment={experiment_id}&period=All+time)" in _text(at)


def test_empty_page_explains_what_to_do(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    assert "No runs yet" in _text(at)
    at.button(key="exp_run").click().run()
    assert not at.exception, at.exception
    assert any("Add at least one variant" in str(e.value) for e in at.error)


def test_cost_so_far_says_price_unknown_never_zero() -> None:
    started = Progress(done=0, total=8, errors=0, cost=0.0, elapsed_s=0.0)
    assert progress_text(started) == "0 / 8 items · estimating…"
    local = Progress(done=2, total=8, errors=0, cost=0.0, elapsed_s=4.0, unpriced=2)
    assert progress_text(local) == "2 / 8 items · about 12 s left · cost so far: price unknown"
    mixed = Progress(done=4, total=8, errors=1, cost=0.0012, elapsed_s=4.0, unpriced=1)
    assert progress_text(mixed) == (
        "4 / 8 items · about 4 s left · $0.001200 so far (+1 items of unknown price) · 1 errors"
    )
    # A priced reply judged by a model of unknown price: its dollars are not all known either.
    judged = Score(
        scorer="rubric", score=1, passed=True, reason="ok", judge_usage=LlmUsage(), judge_cost=None
    )
    assert not ItemOutcome(item_id="a", variant="v", cost=0.001, scores=[judged]).price_known
    assert ItemOutcome(item_id="a", variant="v", cost=0.001).price_known


def test_a_remote_image_in_a_transcript_is_a_link_never_an_image(db_url: str) -> None:
    # A reply (and the scorer's reason quoting it) may carry an image URL that leaks data when fetched.
    leak = "![x](http://127.0.0.1:9/leak.png)"
    store = ExperimentStore(create_store_engine(db_url))
    data = Dataset.from_records([{"id": "q0", "input": "draw", "expected": "x"}])
    variant = Variant(name="v", llm=ScriptedLlm([f"Here: {leak}"]))
    result = run_experiment(data, [variant], [scorers.regex(r"!\[x\]\([^)]*\)")], name="img", store=store)
    # The whole app, so the transcript's link to the Chat page has its page.
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.query_params["e"] = store.list_experiments()[0].id
    at.switch_page("ui/pages/experiments.py").run()
    at.button(key=f"exp_open_{result.run_id}_q0_v").click().run()
    assert not at.exception, at.exception
    shown = [str(m.value) for m in at.markdown]
    reply = next(m for m in shown if m.startswith("Here:"))
    reason = next(m for m in shown if "matched" in m)
    for drawn in (reply, reason):
        assert "![x]" not in drawn.replace("\\![", "")
        assert "[:material/image: image: x](<http://127.0.0.1:9/leak.png>)" in drawn


def test_a_run_of_another_persons_shows_its_scores_but_not_its_transcript(db_url: str) -> None:
    # Ann ran it (with sign-in on); the page's person here is the local user, who is not Ann.
    store = ExperimentStore(create_store_engine(db_url), "ann@example.com")
    data = Dataset.from_records([{"id": "q0", "input": "Ann's question", "expected": "x"}])
    variant = Variant(name="v", llm=ScriptedLlm(["Ann's answer x"]))
    result = run_experiment(data, [variant], [scorers.contains()], name="ann's", store=store)
    store.share(store.experiment_named("ann's"), "read")  # hers, shared with the team to read
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.query_params["e"] = store.list_experiments()[0].id
    at.switch_page("ui/pages/experiments.py").run()
    at.button(key=f"exp_open_{result.run_id}_q0_v").click().run()
    assert not at.exception, at.exception
    assert any("stays with the person who ran it" in i.value for i in at.info)
    assert ":green-badge[contains 1.00]" in _text(at)
    assert not at.chat_message and not [link for link in at.get("page_link") if "Continue" in str(link.proto)]


def _timeline_charts(at: AppTest) -> list[dict[str, Any]]:
    charts = [chart for chart in at.get("plotly_chart") if "exp-timeline-" in str(chart.proto.id)]
    return [json.loads(chart.proto.spec) for chart in charts]


def test_a_transcript_has_a_timeline_under_each_reply_drawn_when_opened(db_url: str) -> None:
    experiment_id, run_id = _python_run(db_url)
    outcome = next(
        o
        for o in ExperimentStore(create_store_engine(db_url)).outcomes(run_id)
        if (o.item_id, o.variant) == ("q1", "good")
    )
    # The app, not the page alone: the transcript links to the Chat page, which only the app knows.
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["e"] = experiment_id
    at.switch_page("ui/pages/experiments.py").run()
    at.button(key=f"exp_open_{run_id}_q1_good").click().run()
    assert not at.exception, at.exception
    assert [e.label for e in at.expander].count("Timeline") == 1  # one reply, closed
    assert _timeline_charts(at) == []
    # What a click on the expander sets (a dialog's own rerun cannot be driven from AppTest).
    at.session_state[f"exp-timeline-{outcome.conversation_id}-good-0-1"] = True
    at.button(key=f"exp_open_{run_id}_q1_good").click().run()
    assert not at.exception, at.exception
    (chart,) = _timeline_charts(at)
    assert chart["data"][0]["y"] == ["model"]
    assert chart["data"][1]["text"] == ["TTFT"]


def test_items_are_added_from_saved_conversations(db_url: str) -> None:
    chats = ConversationStore(create_store_engine(db_url))
    quiz = chats.create(title="quiz night")
    for message in [
        UserMessage.from_text("Capital of France?"),
        AssistantMessage(content=[TextContent(text="Paris.")]),
        UserMessage.from_text("Two plus two?"),
        AssistantMessage(content=[TextContent(text="Four.")]),
    ]:
        chats.append_message(quiz.id, message)
    other = chats.create(title="small talk")
    chats.append_message(other.id, UserMessage.from_text("Hello"))

    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    picker = at.multiselect(key="exp_w_chats")
    # Newest first, named by title and when.
    assert [option.split(" · ")[0] for option in picker.options] == ["small talk", "quiz night"]
    picker.set_value([quiz.id]).run()
    at.button(key="exp_w_add_chats").click().run()
    assert not at.exception, at.exception
    items = at.session_state["exp_draft"].dataset.items
    assert [(item.input, item.expected) for item in items] == [
        ("Capital of France?", "Paris."),
        ("Two plus two?", "Four."),
    ]
    assert any(c.value.startswith("2 items") for c in at.caption)
    # Adding the same conversation again adds none of its turns twice.
    at.multiselect(key="exp_w_chats").set_value([quiz.id, other.id]).run()
    at.button(key="exp_w_add_chats").click().run()
    items = at.session_state["exp_draft"].dataset.items
    assert [item.input for item in items] == ["Capital of France?", "Two plus two?", "Hello"]
    assert items[2].expected is None
    assert any("Added 1 items" in str(s.value) for s in at.success)


def _widget(widgets: Any, label: str, nth: int = 0) -> Any:
    return [w for w in widgets if w.label == label][nth]


def test_the_rubric_judge_may_be_a_model_no_variant_uses(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    at.button(key="exp_w_add_variant").click().run()
    at.button(key="exp_w_add_scorer").click().run()
    _widget(at.selectbox, "Kind").set_value("rubric").run()
    _widget(at.text_area, "Rubric").set_value("Is it polite?").run()
    judge = _widget(at.selectbox, "Judge")
    assert judge.options == ["variant 1", "Another model…"]
    # By default a variant's model judges, as before.
    assert at.session_state["exp_draft"].scorers[0].judge.variant.name == "judge (variant 1)"
    judge.set_value("Another model…").run()
    assert not at.exception, at.exception
    # The same provider and model fields as a variant's: a second "Provider" appears, for the judge.
    _widget(at.selectbox, "Provider", 1).set_value("openai").run()
    # The variant's embedded model has no Model field: the only one is the judge's.
    _widget(at.text_input, "Model").set_value("gpt-4.1-mini").run()
    scorer = at.session_state["exp_draft"].scorers[0]
    assert (scorer.kind, scorer.rubric) == ("rubric", "Is it polite?")
    assert (scorer.judge.variant.provider, scorer.judge.variant.model_id) == ("openai", "gpt-4.1-mini")
    assert at.session_state["exp_draft"].variants[0].provider == "local"  # the variant is untouched

    # Saved and opened again, the judge is still that model.
    at.text_input(key="exp_w_name").set_value("judged").run()
    at.button(key="exp_save").click().run()
    again = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    again.query_params["e"] = ExperimentStore(create_store_engine(db_url)).list_experiments()[0].id
    again.run()
    assert not again.exception, again.exception
    assert _widget(again.selectbox, "Judge").value == "Another model…"
    assert _widget(again.text_input, "Model").value == "gpt-4.1-mini"
    assert again.session_state["exp_draft"].scorers[0].judge.variant.provider == "openai"


def test_a_json_schema_scorer_left_empty_checks_each_variants_response_schema(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    at.button(key="exp_w_add_scorer").click().run()
    _widget(at.selectbox, "Kind").set_value("json_schema").run()
    field = _widget(at.text_area, "JSON Schema (empty: each variant's response schema)")
    # Not typed again: empty means the schema each variant already asks the model for.
    assert field.value == ""
    assert at.session_state["exp_draft"].scorers[0].json_schema is None
    field.set_value('{"type": "object", "required": ["city"]}').run()
    assert at.session_state["exp_draft"].scorers[0].json_schema == {"type": "object", "required": ["city"]}
    _widget(at.text_area, "JSON Schema (empty: each variant's response schema)").set_value("").run()
    assert not at.exception, at.exception
    assert at.session_state["exp_draft"].scorers[0].json_schema is None


def _png(colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_images_attached_to_an_item_are_kept_and_reach_the_model(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url))
    data = Dataset.from_records([{"id": "a", "input": "What colour?"}, {"id": "b", "input": "And this?"}])
    experiment_id = store.save_experiment("colours", {"dataset": data.model_dump(mode="json")})
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["e"] = experiment_id
    at.run()
    at.selectbox(key="exp_w_image_item").set_value("b").run()
    uploader = next(u for u in at.get("file_uploader") if u.label == "Image files")
    uploader.set_value([("red.png", _png((255, 0, 0)), "image/png")]).run()
    at.button(key="exp_w_attach_images").click().run()
    assert not at.exception, at.exception
    assert any("Attached 1 image to b" in str(s.value) for s in at.success)
    items = at.session_state["exp_draft"].dataset.items
    assert [len(item.images) for item in items] == [0, 1]
    assert items[1].images[0].mime_type == "image/png"
    table = next(d.value for d in at.dataframe if "images" in d.value.columns)
    assert list(table["images"]) == ["", "1"]

    # A damaged file is refused in words, and nothing is attached.
    uploader = next(u for u in at.get("file_uploader") if u.label == "Image files")
    uploader.set_value([("broken.png", b"not a picture", "image/png")]).run()
    at.button(key="exp_w_attach_images").click().run()
    assert any("broken.png was not attached" in str(e.value) for e in at.error)
    assert len(at.session_state["exp_draft"].dataset.items[1].images) == 1

    # Saved, opened again and run: the image goes to the model after the item's text.
    at.button(key="exp_save").click().run()
    again = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    again.query_params["e"] = experiment_id
    again.run()
    dataset = again.session_state["exp_draft"].dataset
    llm = ScriptedLlm(["red", "?"])
    run_experiment(dataset, [Variant(name="v", llm=llm)], concurrency=1)
    sent = {r.messages[0].text: r.messages[0].content for r in llm.requests}  # type: ignore[union-attr]
    assert [block.type for block in sent["What colour?"]] == ["text"]
    assert [block.type for block in sent["And this?"]] == ["text", "image"]
    assert sent["And this?"][1].data == items[1].images[0].data  # type: ignore[union-attr]

    # Removed again, the item has none.
    again.selectbox(key="exp_w_image_item").set_value("b").run()
    again.button(key="exp_w_remove_images").click().run()
    assert again.session_state["exp_draft"].dataset.items[1].images == []


def test_csv_upload_with_an_images_column_attaches_them(db_url: str) -> None:
    picture = base64.b64encode(_png((0, 0, 255))).decode()
    shots = f"data:image/png;base64,{picture} {picture}"
    csv_text = f'question,answer,shots\nWhat colour?,blue,"{shots}"\nNo picture,x,\n'
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    uploader = next(u for u in at.get("file_uploader") if u.label == "Upload CSV or JSONL")
    uploader.set_value([("quiz.csv", csv_text.encode(), "text/csv")]).run()
    assert not at.exception, at.exception
    at.selectbox(key="exp_w_map_input").set_value("question").run()
    at.selectbox(key="exp_w_map_expected").set_value("answer").run()
    assert _widget(at.selectbox, "Images column").options == ["(none)", "shots"]
    at.selectbox(key="exp_w_map_images").set_value("shots").run()
    assert "shots" not in at.multiselect(key="exp_w_map_vars").options
    at.radio(key="exp_w_map_mode").set_value("Replace the dataset").run()
    at.button(key="exp_w_import").click().run()
    assert not at.exception, at.exception
    items = at.session_state["exp_draft"].dataset.items
    assert [(item.input, item.expected, len(item.images)) for item in items] == [
        ("What colour?", "blue", 2),
        ("No picture", "x", 0),
    ]
    assert items[0].images[0].mime_type == "image/png"
    table = next(d.value for d in at.dataframe if "images" in d.value.columns)
    assert list(table["images"]) == ["2", ""]


def test_csv_upload_with_a_cell_that_is_not_a_picture_says_which_row(db_url: str) -> None:
    fake = base64.b64encode(b"plain words").decode()
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    uploader = next(u for u in at.get("file_uploader") if u.label == "Upload CSV or JSONL")
    uploader.set_value([("quiz.csv", f"input,images\nfine,\nbad,{fake}\n".encode(), "text/csv")]).run()
    assert at.selectbox(key="exp_w_map_images").value == "images"  # a column named images is picked
    at.button(key="exp_w_import").click().run()
    assert any(
        "Row 2 has image 1 that cannot be used: its data is not a picture" in str(e.value) for e in at.error
    )
    assert at.session_state["exp_draft"].dataset.items == []


def test_a_pick_in_the_picker_is_opened_by_the_page_run_itself(db_url: str) -> None:
    # No on_change handler: with a rerun queued, Streamlit stops a handler at its first session-state
    # access (ci36 lost a pick). The run reads the picker, whose key names the experiment it was drawn for.
    store = ExperimentStore(create_store_engine(db_url))
    first, second = (
        store.save_experiment(name, {"dataset": Dataset().model_dump(mode="json")})
        for name in ("first", "second")
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["e"] = first
    at.run()
    assert at.text_input(key="exp_w_name").value == "first"
    at.selectbox(key=experiment_picker(first).name).set_value(second).run()
    assert not at.exception, at.exception
    assert at.text_input(key="exp_w_name").value == "second"
    assert at.query_params["e"] == second
    assert at.selectbox(key=experiment_picker(second).name).value == second  # drawn anew on the one now open
    at.selectbox(key=experiment_picker(second).name).set_value("").run()
    assert at.text_input(key="exp_w_name").value == "Untitled experiment"
    assert "e" not in at.query_params
