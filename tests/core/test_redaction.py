"""One redaction function: every secret the server knows becomes *** in any text, JSON or log record."""

from __future__ import annotations

import json
import logging
import uuid

import pytest

from yiem.redaction import add_secrets, header_secrets, install_log_redaction, redact, redact_data


def test_a_registered_secret_is_masked_everywhere_in_a_text() -> None:
    secret = f"sk-{uuid.uuid4().hex}"
    assert redact(f"a {secret} b") == f"a {secret} b"
    add_secrets(secret, "short", None, "")
    assert redact(f"a {secret} b {secret}") == "a *** b ***"
    assert redact("short words stay") == "short words stay"  # under 8 characters is not a secret
    assert redact_data({"k": [secret, 3, {"x": f"<{secret}>"}]}) == {"k": ["***", 3, {"x": "<***>"}]}


def test_a_secret_with_json_characters_is_found_in_json_text() -> None:
    secret = f'pa"ss\\{uuid.uuid4().hex[:8]}'
    add_secrets(secret)
    assert secret not in redact(json.dumps({"error": secret}))
    assert json.loads(redact(json.dumps({"error": secret}))) == {"error": "***"}


def test_a_bearer_header_gives_its_token_as_a_secret_too() -> None:
    assert header_secrets("Bearer abc.def") == ["Bearer abc.def", "abc.def"]
    assert header_secrets("abc") == ["abc"]


def test_log_records_are_masked_message_arguments_and_traceback(caplog: pytest.LogCaptureFixture) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    add_secrets(secret)
    install_log_redaction()
    logger = logging.getLogger("yiem.test_redaction")
    with caplog.at_level(logging.INFO):
        logger.info("sending %s", secret)
        try:
            raise RuntimeError(f"server said {secret}")
        except RuntimeError:
            logger.exception("failed")
    assert secret not in caplog.text
    assert "sending ***" in caplog.text and "server said ***" in caplog.text
