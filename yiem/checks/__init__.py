"""Saved checks: tool calls kept in collections with assertions, run on the Tools page or by
`python -m yiem check`."""

from yiem.checks._assertions import Assertion, AssertionKind, check_assertion
from yiem.checks._collection import (
    COLLECTION_FORMAT,
    CheckFileError,
    CheckSetupError,
    Collection,
    CollectionTooNewError,
    SavedCall,
    collection_json,
    collection_schema,
    load_collection,
    parse_collection,
)
from yiem.checks._reports import junit_xml, run_json, run_text
from yiem.checks._runner import CallOutcome, CheckRun, run_collection
from yiem.checks._saved import CollectionNotFoundError, RunSummary, SavedChecks, StoredCollection

__all__ = [
    "COLLECTION_FORMAT",
    "Assertion",
    "AssertionKind",
    "CallOutcome",
    "CheckFileError",
    "CheckRun",
    "CheckSetupError",
    "Collection",
    "CollectionNotFoundError",
    "CollectionTooNewError",
    "RunSummary",
    "SavedCall",
    "SavedChecks",
    "StoredCollection",
    "check_assertion",
    "collection_json",
    "collection_schema",
    "junit_xml",
    "load_collection",
    "parse_collection",
    "run_collection",
    "run_json",
    "run_text",
]
