"""`python -m yiem`: the loop on ScriptedLlm with one Python tool, events printed."""

from __future__ import annotations

import io
import subprocess
import sys

from yiem.__main__ import main


def test_demo_prints_the_whole_run() -> None:
    out = io.StringIO()
    assert main(out) == 0
    text = out.getvalue()
    assert "[tool_execution_end] get_weather -> ok: 31°C in Bangkok" in text
    assert "[tool_execution_end] get_weather -> error: No weather for Paris" in text
    assert "Bangkok is at 31°C today." in text
    assert text.rstrip().endswith("[agent_end] stop_reason=end_turn messages=4")


def test_demo_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "yiem"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "[agent_end]" in done.stdout
