"""``python -m strandslike sessions check``: verify a storage directory, and repair what a crash can leave behind.

For every session (or the one named): the session record, every agent and orchestrator log (each line's
checksum, each record's shape), and the files around them. It reports

- **repairs** a crash can make necessary and that are safe: a torn last record or an append that never
  completed (dropped), a last record that lost its final newline (kept, the newline restored), logs in an
  earlier format (rewritten with checksums), temporary files of interrupted atomic writes (removed). Without
  ``--repair`` it only says what it would do; with ``--repair`` it does it, each log under its claim, so it is
  safe next to running agents (a log in use is skipped and reported);
- **damage** it never repairs: a line whose checksum does not match, a record that is not valid, a symlink, FIFO
  or other non-regular file planted in the storage directory. Those need an operator (restore from a backup, or
  move the session away).

Exit codes: 0 healthy (or everything repaired); 1 repairs needed (run again with ``--repair``) or a log was busy;
2 damage found, or bad input.
"""

import argparse
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..session.file_session_manager import SESSION_PREFIX
from ..types.exceptions import SessionConflictError, SessionCorruptError
from . import _common as common
from ._common import CliError, out

_TEMPORARY = (".tmp",)

DESCRIPTION = """\
Verify the sessions of a storage directory: each session record, every agent and
orchestrator log (each line's checksum, each record's shape) and the files around
them. Without --repair it says what a crash left that is safe to repair: a torn
last record or an append that never completed (dropped), a last record that lost
its final newline (kept, the newline restored), logs in an earlier format
(rewritten with checksums), temporary files of interrupted writes (removed).
With --repair it makes those repairs, each log under its claim, so it is safe
next to running agents (a log in use is reported busy and left alone).

Damage is never repaired, only reported with the file and line: a line whose
checksum does not match, a record that is not valid, a symlink, FIFO or other
non-regular file inside the storage directory. Those need an operator.
"""

EPILOG = """\
exit codes: 0 healthy (or everything repaired); 1 repairs needed (run again with
--repair) or a log was busy; 2 damage found, or bad input
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``check`` under ``sessions``.

    Args:
        subparsers: The ``sessions`` parser's subparsers.
        storage: A parent parser holding ``--storage-dir``.
    """
    parser = subparsers.add_parser(
        "check",
        parents=[storage],
        help="verify stored sessions; say (or, with --repair, do) what a crash left to repair",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("session_id", metavar="SESSION_ID", nargs="?", help="only this session (default: all)")
    parser.add_argument("--repair", action="store_true", help="make the safe repairs, each log under its claim")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    parser.set_defaults(handler=check)


@dataclass
class _Report:
    """What checking one session found."""

    session_id: str
    repairs: list[str] = field(default_factory=list)  # needed (or made, with --repair)
    busy: list[str] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)
    repaired: bool = False

    @property
    def status(self) -> str:
        if self.damage:
            return "damaged"
        if self.busy:
            return "busy"
        if self.repairs:
            return "repaired" if self.repaired else "needs repair"
        return "ok"


def check(args: argparse.Namespace) -> int:
    """Check (and optionally repair) the sessions of a storage directory; print what was found."""
    storage = common.storage_path(args.storage_dir)
    reports: list[_Report] = []
    if args.session_id is None:
        stray = _check_root(storage)
        if stray.damage or stray.repairs:
            reports.append(stray)
        session_ids = common.session_ids(storage)
    else:
        session_ids = [args.session_id]
    for session_id in session_ids:
        report = _check_session(storage, session_id, args.repair)
        report.repaired = args.repair
        reports.append(report)
    _print(reports, args)
    if any(report.damage for report in reports):
        return common.EXIT_USAGE
    if any(report.busy for report in reports) or (not args.repair and any(report.repairs for report in reports)):
        return common.EXIT_FAILURE
    return common.EXIT_OK


def _check_root(storage: Path) -> _Report:
    report = _Report("(storage directory)")
    for entry in sorted(storage.iterdir()):
        if entry.name.startswith(SESSION_PREFIX) and entry.is_symlink():
            report.damage.append(f"{entry}: is a symbolic link; sessions are never read or written through it")
    return report


def _check_session(storage: Path, session_id: str, repair: bool) -> _Report:
    report = _Report(session_id)
    directory = storage / f"{SESSION_PREFIX}{session_id}"
    try:
        manager = common.open_session(storage, session_id)
    except SessionCorruptError as exc:
        report.damage.append(str(exc))
        return report
    except CliError as exc:
        report.damage.append(str(exc))
        return report
    try:
        _check_files(directory, report, repair)
        try:
            refs = manager.list_logs(session_id)
        except SessionCorruptError as exc:
            report.damage.append(str(exc))
            return report
        for ref in refs:
            label = f"{ref.kind.replace('_', '-')} {ref.owner_id}"
            try:
                findings = manager.check_log(ref, repair=repair)
                if ref.kind == "agent":
                    manager.load_agent(session_id, ref.owner_id)  # every record's shape, not only its checksum
                else:
                    manager.read_multi_agent(session_id, ref.owner_id)
            except SessionCorruptError as exc:
                report.damage.append(f"{label}: {exc}")
                continue
            except SessionConflictError:
                report.busy.append(f"{label}: in use by a running process; not repaired, check again later")
                continue
            report.repairs.extend(f"{label}: {finding}" for finding in findings)
    finally:
        manager.close()
    return report


def _check_files(directory: Path, report: _Report, repair: bool) -> None:
    """Report planted (non-regular) files and leftovers of interrupted atomic writes inside a session."""
    for root, directories, files in os.walk(directory):
        for name in sorted(directories + files):
            path = Path(root) / name
            status = os.lstat(path)
            if stat.S_ISLNK(status.st_mode):
                report.damage.append(f"{path}: is a symbolic link; it is never followed")
            elif stat.S_ISDIR(status.st_mode):
                continue
            elif not stat.S_ISREG(status.st_mode):
                report.damage.append(f"{path}: is not a regular file (a FIFO, socket or device); remove it")
            elif name.startswith(".") and name.endswith(_TEMPORARY):
                report.repairs.append(f"{path}: a temporary file of an interrupted write; it is removed")
                if repair:
                    path.unlink(missing_ok=True)


def _print(reports: list[_Report], args: argparse.Namespace) -> None:
    if args.json:
        out(
            common.to_json(
                [
                    {
                        "session_id": report.session_id,
                        "status": report.status,
                        "repairs": report.repairs,
                        "busy": report.busy,
                        "damage": report.damage,
                    }
                    for report in reports
                ]
            )
        )
        return
    verb = "repaired" if args.repair else "would repair"
    for report in reports:
        out(f"session {report.session_id}: {report.status}")
        for line in report.repairs:
            out(f"  {verb}: {line}")
        for line in report.busy:
            out(f"  busy: {line}")
        for line in report.damage:
            out(f"  DAMAGED: {line}")
    if not reports:
        out(f"no sessions in {args.storage_dir}")
        return
    statuses = ("ok", "repaired", "needs repair", "busy", "damaged")
    counts = {status: sum(1 for report in reports if report.status == status) for status in statuses}
    summary = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
    out(f"{len(reports)} checked: {summary}")
    if not args.repair and counts["needs repair"]:
        out("Run again with --repair to make the repairs (each log under its claim; safe next to running agents).")
