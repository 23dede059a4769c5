"""Provider overhead: stream a 2,000-token answer with two tool calls from a loopback fake, three ways per provider.

- floor: the provider's SDK stream consumed with no framework (one long-lived client, every event read);
- strandslike: ``strandslike.models.<provider>`` streamed through the agent's parser (``process_stream``);
- strands: strands-agents 1.62's provider of the same name through its own ``process_stream``.

The fake (tests/fake_llm.py) serves the same bytes to all three: OpenAI SSE, Anthropic SSE, or Bedrock's
event-stream framing. Targets: strandslike <= 1.2x the floor and <= 1/2 of strands.

    bench/.venv/bin/python bench/bench_providers.py [--quick] [--repeats N] [--only bedrock]

The three are timed in turn, round after round (the order rotating), with ``gc.collect()`` before each run, so a
change in the machine's load hits all three alike; each figure is the median, and the interquartile range and the
best run are printed too.
"""

import argparse
import asyncio
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.update(
    AWS_ACCESS_KEY_ID="AKIDFAKEFAKEFAKE",
    AWS_SECRET_ACCESS_KEY="fake",
    AWS_REGION="us-east-1",
    AWS_EC2_METADATA_DISABLED="true",
)
for _name in ("AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
    os.environ.pop(_name, None)

from fake_llm import PROTOCOLS, FakeLLM, Reply, make_model  # noqa: E402

TOKENS = 2000
REPLY = Reply(
    "tok " * (TOKENS - 1) + "end",
    tools=[("call_1", "lookup", {"query": "first", "limit": 5}), ("call_2", "lookup", {"query": "second", "limit": 7})],
    pieces=TOKENS,
)
MESSAGES = [{"role": "user", "content": [{"text": "go"}]}]
TOOL_SPEC = {
    "name": "lookup",
    "description": "Look something up.",
    "inputSchema": {
        "json": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        }
    },
}


def check(message: dict[str, Any]) -> None:
    text = "".join(block.get("text", "") for block in message["content"])
    tools = [block["toolUse"]["name"] for block in message["content"] if "toolUse" in block]
    assert len(text) == len(REPLY.text), len(text)
    assert tools == ["lookup", "lookup"], tools


# -- floors ----------------------------------------------------------------------------------------------------


def floor_runner(protocol: str, url: str) -> Any:
    if protocol == "openai":
        import openai

        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-fake", max_retries=0)

        async def run() -> None:
            stream = await client.chat.completions.create(
                model="gpt-fake",
                messages=[{"role": "user", "content": "go"}],
                stream=True,
                tools=[
                    {
                        "type": "function",
                        "function": {
                            "name": "lookup",
                            "description": "d",
                            "parameters": TOOL_SPEC["inputSchema"]["json"],
                        },
                    }
                ],
                stream_options={"include_usage": True},
            )
            chars = 0
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    chars += len(chunk.choices[0].delta.content)
            assert chars == len(REPLY.text)

        return run
    if protocol == "anthropic":
        import anthropic

        client = anthropic.AsyncAnthropic(base_url=url, api_key="sk-fake", max_retries=0)

        async def run() -> None:
            chars = 0
            async with client.messages.stream(
                model="claude-fake", max_tokens=4096, messages=[{"role": "user", "content": "go"}]
            ) as stream:
                async for event in stream:
                    if event.type == "content_block_delta" and event.delta.type == "text_delta":
                        chars += len(event.delta.text)
            assert chars == len(REPLY.text)

        return run
    import boto3

    client = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1")

    async def run() -> None:
        response = client.converse_stream(
            modelId="anthropic.claude-fake", messages=[{"role": "user", "content": [{"text": "go"}]}]
        )
        chars = 0
        for event in response["stream"]:
            if "contentBlockDelta" in event and "text" in event["contentBlockDelta"]["delta"]:
                chars += len(event["contentBlockDelta"]["delta"]["text"])
        assert chars == len(REPLY.text)

    return run


# -- strandslike and strands ---------------------------------------------------------------------------------------


def ours_runner(protocol: str, fake: FakeLLM) -> Any:
    from strandslike.models._streaming import process_stream

    model = make_model(protocol, fake)

    async def run() -> None:
        result = await process_stream(model.stream(MESSAGES, [TOOL_SPEC]))
        check(result.message)

    return run


def strands_runner(protocol: str, url: str) -> Any:
    from strands.event_loop.streaming import process_stream

    if protocol == "openai":
        from strands.models.openai import OpenAIModel

        model: Any = OpenAIModel(
            client_args={"base_url": f"{url}/v1", "api_key": "sk-fake", "max_retries": 0}, model_id="gpt-fake"
        )
    elif protocol == "anthropic":
        from strands.models.anthropic import AnthropicModel

        model = AnthropicModel(
            client_args={"base_url": url, "api_key": "sk-fake", "max_retries": 0},
            model_id="claude-fake",
            max_tokens=4096,
        )
    else:
        from strands.models.bedrock import BedrockModel

        model = BedrockModel(endpoint_url=url, region_name="us-east-1", model_id="anthropic.claude-fake")

    async def run() -> None:
        last: Any = None
        async for event in process_stream(model.stream(MESSAGES, [TOOL_SPEC])):
            last = event
        check(last["stop"][1])

    return run


async def measure(runs: dict[str, Any], repeats: int) -> dict[str, list[float]]:
    """Time each runner ``repeats`` times, interleaved (a rotating order per round), so load drift hits all alike."""
    for run in runs.values():
        await run()  # warm up: imports, first connection
    names = list(runs)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            started = time.perf_counter()
            await runs[name]()
            samples[name].append(time.perf_counter() - started)
    return samples


def quartiles(values: list[float]) -> tuple[float, float]:
    q1, _, q3 = statistics.quantiles(values, n=4)
    return q1, q3


async def main(repeats: int, protocols: list[str]) -> int:
    failures = 0
    print(f"provider overhead: a {TOKENS}-token answer with two tool calls, median of {repeats} runs (ms)")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")
    print(f"{'provider':<10} {'floor':>8} {'strandslike':>12} {'strands':>9} {'vs floor':>9} {'vs strands':>11}")
    spreads = []
    with FakeLLM(repeat=REPLY) as fake:
        for protocol in protocols:
            samples = await measure(
                {
                    "floor": floor_runner(protocol, fake.url),
                    "strandslike": ours_runner(protocol, fake),
                    "strands": strands_runner(protocol, fake.url),
                },
                repeats,
            )
            floor, ours, theirs = (statistics.median(samples[name]) for name in ("floor", "strandslike", "strands"))
            vs_floor, vs_strands = ours / floor, ours / theirs
            ok = vs_floor <= 1.2 and vs_strands <= 0.5
            failures += not ok
            print(
                f"{protocol:<10} {floor * 1e3:8.1f} {ours * 1e3:12.1f} {theirs * 1e3:9.1f} {vs_floor:8.2f}x "
                f"{vs_strands:10.2f}x  {'ok' if ok else 'MISSED'}"
            )
            spreads.append(
                f"{protocol:<10} "
                + "  ".join(
                    f"{name} {q1 * 1e3:.1f}-{q3 * 1e3:.1f} (min {min(samples[name]) * 1e3:.1f})"
                    for name in ("floor", "strandslike", "strands")
                    for q1, q3 in [quartiles(samples[name])]
                )
            )
    print("interquartile ranges, ms:")
    print("\n".join(spreads))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="5 runs per figure instead of 15")
    parser.add_argument("--repeats", type=int, help="runs per figure (overrides --quick)")
    parser.add_argument("--only", action="append", choices=PROTOCOLS, help="measure only this provider (repeatable)")
    parser.add_argument("--report", action="store_true", help="accepted for run.sh; ignored")
    args = parser.parse_args()
    repeats = args.repeats or (5 if args.quick else 15)
    sys.exit(asyncio.run(main(repeats, args.only or list(PROTOCOLS))))
