"""``--model PROVIDER:MODEL_ID`` for ``demo``, ``serve`` and ``resume``: parse it and build the model.

Providers and the credentials they read from the environment:

- ``openai:MODEL_ID``: ``OPENAI_API_KEY`` (required), ``OPENAI_BASE_URL`` (optional, any OpenAI-compatible server).
- ``anthropic:MODEL_ID``: ``ANTHROPIC_API_KEY`` (required), ``ANTHROPIC_BASE_URL`` (optional).
- ``bedrock:MODEL_ID``: boto3's usual sources (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``,
  ...), region from ``AWS_REGION``.
- ``ollama:MODEL_ID``: the OpenAI provider on Ollama's local server, ``http://localhost:11434/v1`` (or
  ``OLLAMA_HOST``); no key needed.

A factory given to ``serve`` or ``resume`` receives the model as ``factory(session_manager=..., model=...)`` when it
accepts a ``model`` keyword (or ``**kwargs``); otherwise the agent it returns gets ``agent.model`` set to it.
"""

import argparse
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models.model import Model
from ..types.exceptions import ProviderNotInstalledError, StrandslikeError

PROVIDERS = ("openai", "anthropic", "bedrock", "ollama")
OLLAMA_BASE_URL = "http://localhost:11434/v1"
HELP = "use a real model: openai:MODEL_ID, anthropic:MODEL_ID, bedrock:MODEL_ID or ollama:MODEL_ID"


class ModelOptionError(StrandslikeError, ValueError):
    """``--model`` is malformed, or the provider's credentials or SDK are missing."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value."""

    provider: str
    model_id: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model_id}"


def parse_model_spec(value: str) -> ModelSpec:
    """Parse ``PROVIDER:MODEL_ID`` (the model id may itself hold colons, as Bedrock and Ollama ids do).

    Raises:
        argparse.ArgumentTypeError: The value is malformed (argparse reports it as a usage error).
    """
    provider, sep, model_id = value.partition(":")
    provider = provider.strip().lower()
    if not sep or provider not in PROVIDERS or not model_id.strip():
        raise argparse.ArgumentTypeError(
            f"{value!r} is not PROVIDER:MODEL_ID with PROVIDER one of {', '.join(PROVIDERS)} "
            "(e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0, "
            "ollama:llama3.2)"
        )
    return ModelSpec(provider, model_id.strip())


def add_model_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--model`` to ``parser`` (its value is a `ModelSpec`, or None when not given)."""
    parser.add_argument("--model", metavar="PROVIDER:MODEL_ID", type=parse_model_spec, default=None, help=HELP)


def _require(environ: Mapping[str, str], name: str, provider: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise ModelOptionError(
            f"--model {provider}:... needs the {name} environment variable, which is not set. "
            f"Set it (export {name}=...) and run the command again."
        )
    return value


def build_model(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> Model:
    """Build the provider ``spec`` names, with credentials from ``environ`` (default: the process environment).

    Raises:
        ModelOptionError: A required credential is missing, or the provider's SDK is not installed.
    """
    env = os.environ if environ is None else environ
    try:
        if spec.provider in ("openai", "ollama"):
            from ..models.openai import OpenAIModel, _openai

            _openai()  # a missing SDK is reported now, not at the first model call
            if spec.provider == "ollama":
                host = env.get("OLLAMA_HOST", "").strip()
                base_url = f"{host.rstrip('/')}/v1" if host.startswith("http") else OLLAMA_BASE_URL
                return OpenAIModel(client_args={"base_url": base_url, "api_key": "ollama"}, model_id=spec.model_id)
            client_args = {"api_key": _require(env, "OPENAI_API_KEY", "openai")}
            if env.get("OPENAI_BASE_URL"):
                client_args["base_url"] = env["OPENAI_BASE_URL"]
            return OpenAIModel(client_args=client_args, model_id=spec.model_id)
        if spec.provider == "anthropic":
            from ..models.anthropic import AnthropicModel, _anthropic

            client_args = {"api_key": _require(env, "ANTHROPIC_API_KEY", "anthropic")}
            if env.get("ANTHROPIC_BASE_URL"):
                client_args["base_url"] = env["ANTHROPIC_BASE_URL"]
            _anthropic()
            return AnthropicModel(client_args=client_args, model_id=spec.model_id, max_tokens=4096)
        return _bedrock(spec, env)
    except ProviderNotInstalledError as exc:
        raise ModelOptionError(str(exc)) from exc


def _bedrock(spec: ModelSpec, env: Mapping[str, str]) -> Model:
    from ..models.bedrock import BedrockModel, _boto3

    boto3 = _boto3()
    session = boto3.Session()
    try:
        credentials = session.get_credentials()
    except Exception as exc:  # a configured source (profile, container role, ...) failed
        raise ModelOptionError(f"--model bedrock:... could not load AWS credentials: {exc}") from exc
    if credentials is None:
        raise ModelOptionError(
            "--model bedrock:... found no AWS credentials. Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "(and AWS_SESSION_TOKEN for temporary ones), or AWS_PROFILE, and run the command again."
        )
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
    return BedrockModel(boto_session=session if region is None else None, region_name=region, model_id=spec.model_id)


def with_model(factory: Callable[..., Any], model: Model | None) -> Callable[..., Any]:
    """Return ``factory`` made to build its agents on ``model`` (``factory`` itself when ``model`` is None)."""
    if model is None:
        return factory
    try:
        parameters = inspect.signature(factory).parameters.values()
        accepts = any(p.name == "model" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    except (TypeError, ValueError):
        accepts = False

    def build(**kwargs: Any) -> Any:
        if accepts:
            return factory(**kwargs, model=model)
        built = factory(**kwargs)
        if hasattr(built, "model"):
            built.model = model
        return built

    return build
