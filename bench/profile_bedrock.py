"""Where a Bedrock answer's decoding time goes: strandslike's reader against botocore's, on the same bytes, no HTTP.

Decodes the 2,000-token answer of bench_providers.py (the fake's bytes, padded as Bedrock pads them) three ways:
the framing alone (`_aws_eventstream`), strandslike's whole reader (framing, JSON, normalization to botocore's
shapes), and botocore's ``EventStream``; checks that the two readers give equal events; prints the best of N runs.

    bench/.venv/bin/python bench/profile_bedrock.py [--repeats 25] [--cprofile]
"""

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import boto3
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser
from fake_llm import Reply, render_bedrock

from strandslike.models._aws_eventstream import iter_frames
from strandslike.models._bedrock_stream import ConverseStreamReader, read_events

TOKENS = 2000


class Body:
    """A raw body handing out 64 KiB chunks, as urllib3's ``stream()`` does for botocore."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, amt: int = 65536) -> Iterator[bytes]:
        for start in range(0, len(self.data), amt):
            yield self.data[start : start + amt]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--cprofile", action="store_true", help="also profile strandslike's reader")
    args = parser.parse_args()
    data = render_bedrock(Reply("tok " * (TOKENS - 1) + "end", pieces=TOKENS))
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    reader = ConverseStreamReader(client.meta.service_model)

    def framing() -> list[Any]:
        return [frame for frames in iter_frames(Body(data).stream()) for frame in frames]

    def strandslike() -> list[Any]:
        return [event for batch in read_events(Body(data), reader) for event in batch]

    def botocore() -> list[Any]:
        return list(EventStream(Body(data), reader.stream_shape, EventStreamJSONParser(), "ConverseStream"))

    assert strandslike() == botocore()
    assert reader.fallbacks == 0
    runs: dict[str, Callable[[], list[Any]]] = {"framing": framing, "strandslike": strandslike, "botocore": botocore}
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(args.repeats):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - started)
    print(f"{len(framing())} messages, {len(data)} bytes; best of {args.repeats}, ms; load {os.getloadavg()[0]:.2f}")
    for name, seconds in best.items():
        print(f"  {name:<12} {seconds * 1e3:7.2f}")
    print(f"  botocore / strandslike: {best['botocore'] / best['strandslike']:.1f}x")
    if args.cprofile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.repeats):
            strandslike()
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
