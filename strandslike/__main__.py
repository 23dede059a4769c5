"""Command line: ``python -m strandslike demo``."""

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Dispatch a subcommand; return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m strandslike")
    parser.add_argument("command", choices=["demo"], help="demo: the approval scenario on the scripted model")
    known, rest = parser.parse_known_args(args[:1])
    if known.command == "demo":
        from ._demo import run

        return run(args[1:] + rest)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
