"""The Tools page's Checks tab under AppTest, against real server-everything processes over stdio: a
collection file imported, shared and unshared, run twice (the second time against another connected
entry of the same server), and the pass-rate chart of the two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_connect import loopback  # noqa: F401  (the app bound to 127.0.0.1)
from yiem.checks import Assertion, AssertionKind, Collection, SavedCall, SavedChecks, collection_json
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import create_store_engine

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "tools.py")
TIMEOUT = 60


def _collection() -> Collection:
    # The echo holds on any server-everything; the environment check only on the "next" entry's.
    echo = Assertion(kind=AssertionKind.TEXT_CONTAINS, value="Echo: hello")
    release = Assertion(kind=AssertionKind.TEXT_MATCHES, value='"CHECKS_RELEASE": "next"')
    return Collection(
        name="release",
        calls=[
            SavedCall(server="everything", tool="echo", arguments={"message": "hello"}, assertions=[echo]),
            SavedCall(server="everything", tool="get-env", assertions=[release]),
        ],
    )


def _texts(at: AppTest) -> list[str]:
    return [e.value for e in [*at.markdown, *at.caption, *at.error, *at.success, *at.text]]


def _charts(at: AppTest) -> list[list[float]]:
    """Each line chart's pass rates, read from the data the chart is drawn from."""
    rates = []
    for chart in at.get("vega_lite_chart"):
        (dataset,) = chart.proto.datasets
        rates.append(pa.ipc.open_stream(dataset.data.data).read_all().column("Pass rate").to_pylist())
    return rates


def test_import_share_and_two_runs_against_two_entries_draw_the_pass_rate(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    everything_stdio: StdioServer,
    loopback: None,  # noqa: F811
) -> None:
    entry = {"command": everything_stdio.command, "args": list(everything_stdio.args)}
    servers = {"everything": entry, "everything-next": {**entry, "env": {"CHECKS_RELEASE": "next"}}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "mcp.json"))
    database = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("YIEM_DATABASE_URL", database)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    try:
        for name in servers:  # the bootstrap connects mcp.json's servers; connect any it left
            if name not in at.session_state["mcp_clients"]:
                at.selectbox(key="tools-server").set_value(name).run()
                at.button(key="tools-connect").click().run()
        assert set(at.session_state["mcp_clients"]) == set(servers), at.exception
        at.session_state["tools-tab"] = "Checks"
        at.run()
        assert not at.exception, at.exception
        assert "No collections yet. Save a call from the History tab to start one." in _texts(at)

        # Import: a bad file is refused in words, the exported file becomes the person's collection.
        upload = at.file_uploader(key="checks-import")
        upload.set_value(("broken.json", b'{"name": "x", "calls": [{"tool": "echo"}]}', "application/json"))
        at.run()
        (refused,) = at.error
        assert refused.value.startswith("The collection was not imported: broken.json is not a valid")
        assert "server" in refused.value
        upload = at.file_uploader(key="checks-import")
        exported = _collection()
        upload.set_value(("release.json", collection_json(exported).encode(), "application/json"))
        at.run()
        assert not at.exception, at.exception
        assert "Imported “release”." in _texts(at)
        assert "2 saved calls on everything." in _texts(at)
        engine = create_store_engine(database)
        mine, ben = SavedChecks(engine), SavedChecks(engine, "ben")
        stored = mine.get("release")
        assert stored.owner == LOCAL_OWNER_ID and stored.collection == exported
        # What changes after the import stays: the file, still in the uploader, is not imported again.
        mine.add_call("release", SavedCall(server="everything", tool="get-sum", arguments={"a": 1, "b": 2}))
        at.run()
        assert "Imported “release”." not in _texts(at)
        assert "3 saved calls on everything." in _texts(at)
        mine.save(exported)
        at.run()

        # Shared with the team, then not: another person sees it only while it is shared.
        share = at.toggle(key=f"checks-share-{stored.id}")
        assert share.value is False and ben.collections() == []
        share.set_value(True).run()
        assert [(c.name, c.owner) for c in ben.collections()] == [("release", LOCAL_OWNER_ID)]
        at.toggle(key=f"checks-share-{stored.id}").set_value(False).run()
        assert ben.collections() == []

        # The first run, against the entry of the collection's own name: the release check fails.
        against = at.selectbox(key=f"checks-against-{stored.id}-everything")
        assert against.value == "everything" and against.options == ["everything", "everything-next"]
        at.button(key="checks-run").click().run()
        assert not at.exception, at.exception
        assert "**1 passed, 1 failed** of 2 calls." in _texts(at)
        assert any(text.startswith('text matches "\\"CHECKS_RELEASE') for text in _texts(at))
        assert _charts(at) == [], "one run draws no chart"

        # The second, against the other connected entry: both hold, and the chart shows both runs.
        at.selectbox(key=f"checks-against-{stored.id}-everything").set_value("everything-next").run()
        at.button(key="checks-run").click().run()
        assert not at.exception, at.exception
        assert "**2 passed, 0 failed** of 2 calls." in _texts(at)
        assert "Pass rate per run" in _texts(at)
        assert _charts(at) == [[0.5, 1.0]]
        assert [r.pass_rate for r in mine.runs(stored)] == [0.5, 1.0]
        assert at.session_state["checks-last-run"][1].servers == {"everything": "everything-next"}
    finally:
        for client in at.session_state["mcp_clients"].values():
            client.close()
