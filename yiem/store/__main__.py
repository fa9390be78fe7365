"""`python -m yiem.store seed-demo N`: fill the store with N rows of demo usage."""

from __future__ import annotations

import argparse
import sys

from yiem.store._demo_data import seed_demo
from yiem.store._engine import create_store_engine


def main(argv: list[str] | None = None) -> int:
    """Run the command in `argv` (default: the process's arguments); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m yiem.store")
    commands = parser.add_subparsers(dest="command", required=True)
    seed = commands.add_parser("seed-demo", help="add N rows of realistic demo usage (and conversations)")
    seed.add_argument("rows", type=int, help="how many usage rows to add")
    seed.add_argument("--days", type=int, default=180, help="spread them over this many days up to now")
    seed.add_argument("--seed", type=int, default=7, help="random seed (same seed, same data)")
    args = parser.parse_args(argv)
    if args.rows < 0 or args.days < 1:
        parser.error("rows must be 0 or more and days 1 or more")

    engine = create_store_engine()
    written = seed_demo(
        engine,
        args.rows,
        days=args.days,
        seed=args.seed,
        progress=lambda n: print(f"\r{n:,} / {args.rows:,} rows", end="", file=sys.stderr, flush=True),
    )
    print(f"\nAdded {written:,} demo usage rows to {engine.url.render_as_string(hide_password=True)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
