"""The Experiments page's "Export the spec as a file" in Chromium: the downloaded file runs with
`python -m yiem experiments run`, and the run shows on the page like one started there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, open_tab
from tests.scripted_http import ScriptedServer, openai_text_reply
from yiem.__main__ import cli
from yiem.experiments import (
    Dataset,
    DatasetItem,
    ExperimentDraft,
    ExperimentStore,
    Variant,
    load_spec_file,
    scorers,
)
from yiem.store import create_store_engine

pytestmark = [pytest.mark.browser]


def test_the_exported_spec_runs_from_the_command_line_and_its_run_shows_on_the_page(
    streamlit_app: StreamlitApp, page: Any, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    store = ExperimentStore(create_store_engine(streamlit_app.database_url))
    draft = ExperimentDraft(
        name="Exported",
        dataset=Dataset(items=[DatasetItem(id=f"c{i}", input="Say yes.", expected="yes") for i in range(3)]),
        variants=[
            Variant(name="scripted", provider="vllm", base_url=f"{scripted_server.url}/v1", model_id="s")
        ],
        scorers=[scorers.contains()],
        concurrency=1,
    )
    experiment_id = store.save_experiment(draft.name, draft.model_dump(mode="json", exclude={"name"}))
    open_app(page, f"{streamlit_app.url}/experiments?e={experiment_id}")
    expect(page.get_by_text("No runs yet")).to_be_visible()
    open_tab(page, "Run")
    with page.expect_download() as download:
        page.get_by_role("button", name="Export the spec as a file").click()
    assert download.value.suggested_filename == "Exported.spec.json"
    spec_path = tmp_path / download.value.suggested_filename
    download.value.save_as(spec_path)
    exported = load_spec_file(spec_path)
    assert exported.experiment_id == experiment_id and exported.experiment == "Exported"
    assert [v.name for v in exported.variants] == ["scripted"] and len(exported.dataset.items) == 3

    scripted_server.script(openai_text_reply("yes"), openai_text_reply("no"), openai_text_reply("yes"))
    ran = CliRunner().invoke(
        cli,
        ["experiments", "run", str(spec_path), "--database", streamlit_app.database_url],
        env={"CI": "true"},
    )
    assert ran.exit_code == 0, ran.output
    assert "2 / 3" in ran.stdout
    [run] = store.list_runs(experiment_id)  # the experiment it was exported from, not a new one

    open_app(page, f"{streamlit_app.url}/experiments?e={experiment_id}")
    expect(page.get_by_text("finished · 3 / 3 items")).to_be_visible()
    assert run.status == "finished" and run.done == 3
