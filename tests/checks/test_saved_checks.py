"""Collections in the store: each person's own, shared by the owner, runs kept for the pass-rate chart."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect

from tests.fixtures.mcp import StdioServer
from yiem.checks import (
    Assertion,
    AssertionKind,
    CollectionNotFoundError,
    SavedCall,
    SavedChecks,
    load_collection,
    run_collection,
)
from yiem.checks._collection import collection_json
from yiem.store import create_store_engine


def test_saved_calls_are_each_persons_own_until_shared(tmp_path: Path, everything_stdio: StdioServer) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'store.db'}")
    assert {"check_collections", "check_runs"} <= set(inspect(engine).get_table_names())
    ana, ben = SavedChecks(engine, "ana"), SavedChecks(engine, "ben")
    call = SavedCall(
        server="everything",
        tool="echo",
        arguments={"message": "hi"},
        assertions=[Assertion(kind=AssertionKind.TEXT_CONTAINS, value="hi")],
    )
    ana.add_call("smoke", call)
    assert [c.name for c in ana.collections()] == ["smoke"]
    assert ben.collections() == []
    with pytest.raises(CollectionNotFoundError, match="no collection named “smoke”"):
        ben.get("smoke")
    stored = ana.save(ana.get("smoke").collection, shared=True)
    assert ben.get("smoke").owner == "ana"

    # Export and import as one file, then run against the real server and keep the run.
    exported = tmp_path / "smoke.json"
    exported.write_text(collection_json(stored.collection))
    imported = load_collection(exported)
    imported.servers["everything"] = {
        "command": everything_stdio.command,
        "args": list(everything_stdio.args),
    }
    run = run_collection(imported)
    assert run.passed == 1
    assert run.outcomes[0].result is not None
    ana.keep_run(stored, run)
    assert [r.pass_rate for r in ana.runs(stored)] == [1.0]

    # Accepting a result adds a snapshot that the next run compares with.
    accepted = ana.accept_snapshot("smoke", call.id, run.outcomes[0].result)
    kinds = [a.kind for a in accepted.collection.calls[0].assertions]
    assert kinds == [AssertionKind.TEXT_CONTAINS, AssertionKind.SNAPSHOT]
    with pytest.raises(CollectionNotFoundError, match="Only the owner"):
        ben.accept_snapshot("smoke", call.id, run.outcomes[0].result)
