"""Log lines written the way `docs/exactly-once.md` and `strandslike/session/_log_file.py` describe the format.

Computed here independently of the implementation, so tests that plant records also check the format itself.
"""

import json
import zlib
from typing import Any


def checksummed(record: Any, *, more: bool = False) -> str:
    """Return one format-2 line (without its newline): the record's compact JSON plus ``"c"``: CRC-32 and flag."""
    body = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    flag = "+" if more else ""
    crc = zlib.crc32((body + flag).encode())
    return f'{body[:-1]},"c":"{crc:08x}{flag}"}}'


def body_of(line: str) -> dict[str, Any]:
    """Return the record a format-2 line holds (checking its checksum)."""
    head, _, tail = line.rpartition(',"c":"')
    crc, flag = tail[:8], tail[8:-2]
    body = head + "}"
    assert int(crc, 16) == zlib.crc32((body + flag).encode()), f"bad checksum in {line!r}"
    record: dict[str, Any] = json.loads(body)
    return record
