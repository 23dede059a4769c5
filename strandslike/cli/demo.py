"""``demo``: the approval scenario of the Strands interrupts guide, on the built-in scripted model."""

import argparse
from typing import Any

from ._common import EXIT_USAGE, CliError
from ._model_option import ModelOptionError, add_model_option, build_model

DESCRIPTION = """\
The approval scenario of the Strands interrupts guide, on the built-in scripted
model (no network, no API key), or on a real one with --model.

An agent asked to delete old files inspects them and calls delete_files. Its
approvals are HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True):
inspect_files runs freely, and delete_files pauses the agent to ask you: y
approves once, t approves and trusts delete_files from now on (kept in
agent.state), anything else denies. The demo then says what ran, who decided,
and what the model answered.

With --storage-dir DIR the agent is saved in a file session and works on files
under DIR/demo-files/SESSION_ID/. Stop at the prompt (Ctrl-C, end of input, or
--stop-at-prompt) and it prints the resume command that answers the question
from another process later; running the demo again with the same directory
picks up at the prompt. Once a run has finished, running it again gives the
session the same task on fresh copies of the old files: after t it does not
ask again, until the trust is revoked (sessions trust revoke).
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``demo``.

    Args:
        subparsers: The top-level subparsers.
        storage: The shared ``--storage-dir`` parent (unused: the demo saves nothing unless asked to).
    """
    parser = subparsers.add_parser(
        "demo",
        help="run the human-in-the-loop approval demo on the scripted model",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    answers = parser.add_mutually_exclusive_group()
    answers.add_argument("--yes", action="store_const", const="y", dest="answer", help="approve without asking")
    answers.add_argument(
        "--trust", action="store_const", const="t", dest="answer", help="approve and trust delete_files from now on"
    )
    answers.add_argument("--no", action="store_const", const="N", dest="answer", help="deny without asking")
    answers.add_argument(
        "--stop-at-prompt", action="store_true", help="stop at the first question, as if the input ended there"
    )
    parser.add_argument(
        "--storage-dir", metavar="DIR", help="save the agent in a file session in DIR so a later process can resume"
    )
    parser.add_argument("--session-id", default="demo", help="the session to use in DIR (default: %(default)s)")
    add_model_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; return the exit code.

    Raises:
        CliError: ``--session-id`` without ``--storage-dir``, or a ``--model`` that cannot be built (exit code 2).
    """
    if args.storage_dir is None and args.session_id != "demo":
        raise CliError("--session-id needs --storage-dir (without it the demo saves nothing)", EXIT_USAGE)
    try:
        args.built_model = build_model(args.model) if args.model is not None else None
    except ModelOptionError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    from .._demo import run as run_demo

    return run_demo(args)


__all__ = ["DESCRIPTION", "add_parser", "run"]
