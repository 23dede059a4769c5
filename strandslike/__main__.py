"""Command line: ``python -m strandslike demo|sessions|resume|serve`` (``--help`` on each for its options)."""

import sys


def main(argv: list[str] | None = None) -> int:
    """Dispatch a subcommand; return the exit code.

    ``demo`` and ``serve`` are handed their arguments straight away, so they do not load the operator commands.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["demo"]:
        from ._demo import run

        try:
            return run(args[1:])
        except SystemExit as exc:  # --help, or a usage error argparse already printed
            return exc.code if isinstance(exc.code, int) else 2
    if args[:1] == ["serve"]:
        from .cli.serve import serve

        return serve(args[1:])
    from .cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
