"""The command line: ``strandslike`` (the console script) or ``python -m strandslike``; ``--help`` lists commands."""

import sys


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Run the command line; return the exit code.

    Args:
        argv: The arguments after the program name (default: ``sys.argv[1:]``).
        prog: The program name shown in help and printed commands (default: ``strandslike`` when started as the
            console script, else ``python -m strandslike``).
    """
    from .types.exceptions import UnsupportedPlatformError

    try:
        from .cli import main as cli_main
    except UnsupportedPlatformError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    return cli_main(argv, prog=prog)


if __name__ == "__main__":
    sys.exit(main(prog="python -m strandslike"))
