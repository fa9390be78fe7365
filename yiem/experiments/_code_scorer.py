"""Code scorers: a person's Python function, run in a subprocess with a time and memory limit.

Never in the app's process: a scorer that hangs, eats memory, exits or raises is that one cell's
error, said in words, and nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from yiem.experiments._scorer_base import BrokenScorerError

# Runs in the child: limits first, then the person's file, then one call; the last stdout line is
# the answer. The function's own prints go to stderr so they cannot be taken for the answer.
_RUNNER = r"""
import importlib.util, json, resource, sys, traceback
path, function, memory = sys.argv[1], sys.argv[2], int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
payload = json.load(sys.stdin)
answer, sys.stdout = sys.stdout, sys.stderr
try:
    spec = importlib.util.spec_from_file_location("yiem_code_scorer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, function, None)
    if not callable(fn):
        result = {"error": f"{path} has no function named {function}."}
    else:
        result = {"value": fn(payload["output"], payload["expected"], payload["item"])}
except MemoryError:
    result = {"error": "memory"}
except BaseException as error:
    frame = traceback.extract_tb(error.__traceback__)[-1]
    result = {"error": f"{type(error).__name__}: {error} (line {frame.lineno})"}
try:
    line = json.dumps(result)
except (TypeError, ValueError):
    line = json.dumps({"error": f"it returned {type(result.get('value')).__name__}, which is not a number"})
answer.write("\n" + line + "\n")
"""


class CodeScorerError(BrokenScorerError):
    """A code scorer gave no score: no file, it hung, ran out of memory, raised or returned junk."""


def run_code_scorer(
    path: str,
    function: str,
    payload: dict[str, Any],
    *,
    timeout_s: float,
    memory_mb: int,
) -> tuple[float, str]:
    """Call `function(output, expected, item)` from the file in a fresh Python; its score and reason."""
    file = Path(path)
    if not file.is_file():
        raise CodeScorerError(f"The code scorer's file {path} does not exist (or is not a file).")
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                _RUNNER,
                str(file.resolve()),
                function,
                str(memory_mb * 1024 * 1024),
            ],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise CodeScorerError(
            f"The code scorer {file.name}:{function} took longer than {timeout_s:g} s and was stopped."
        ) from None
    lines = done.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        result = {}
    if result.get("error") == "memory" or (
        not result and done.returncode != 0 and "MemoryError" in done.stderr
    ):
        raise CodeScorerError(
            f"The code scorer {file.name}:{function} used more than {memory_mb} MB and was stopped."
        )
    if "error" in result:
        raise CodeScorerError(f"The code scorer {file.name}:{function} failed: {result['error']}")
    if "value" not in result:
        raise CodeScorerError(
            f"The code scorer {file.name}:{function} ended without a score (exit code {done.returncode})."
        )
    return _read_value(result["value"], f"{file.name}:{function}")


def _read_value(value: Any, name: str) -> tuple[float, str]:
    # A bool, a number in [0, 1], [score, reason], or {"score": ..., "reason": ...}.
    reason = ""
    if isinstance(value, dict):
        value, reason = value.get("score"), str(value.get("reason", ""))
    elif isinstance(value, list) and len(value) == 2:
        value, reason = value[0], str(value[1])
    if isinstance(value, bool):
        return float(value), reason or ("passed" if value else "failed")
    if isinstance(value, int | float) and 0.0 <= float(value) <= 1.0:
        return float(value), reason or f"scored {float(value):g}"
    raise CodeScorerError(
        f"The code scorer {name} returned {value!r}; return True/False, a number from 0 to 1, "
        'or {"score": ..., "reason": ...}.'
    )
