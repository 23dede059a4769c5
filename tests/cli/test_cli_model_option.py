"""``--model PROVIDER:MODEL_ID`` on demo, serve and resume."""

import argparse

import pytest
from fake_llm import FakeLLM, Reply

from strandslike.__main__ import main
from strandslike.cli._model_option import ModelOptionError, ModelSpec, build_model, parse_model_spec, with_model
from strandslike.models import AnthropicModel, BedrockModel, OpenAIModel, ScriptedModel


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        ("openai:gpt-4o", ModelSpec("openai", "gpt-4o")),
        ("Anthropic:claude-sonnet-4-5", ModelSpec("anthropic", "claude-sonnet-4-5")),
        (
            "bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0",
            ModelSpec("bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0"),
        ),
        ("ollama:llama3.2:3b", ModelSpec("ollama", "llama3.2:3b")),
    ],
)
def test_specs_parse(value, spec):
    assert parse_model_spec(value) == spec


@pytest.mark.parametrize("value", ["gpt-4o", "mistral:large", "openai:", ":x", ""])
def test_malformed_specs_are_usage_errors(value):
    with pytest.raises(argparse.ArgumentTypeError, match="PROVIDER:MODEL_ID"):
        parse_model_spec(value)


def test_each_provider_is_built_from_the_environment():
    openai = build_model(ModelSpec("openai", "gpt-4o"), {"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://x/v1"})
    assert isinstance(openai, OpenAIModel)
    assert openai.client_args == {"api_key": "sk-1", "base_url": "http://x/v1"}
    assert openai.get_config()["model_id"] == "gpt-4o"
    anthropic = build_model(ModelSpec("anthropic", "claude"), {"ANTHROPIC_API_KEY": "k"})
    assert isinstance(anthropic, AnthropicModel)
    assert anthropic.get_config()["model_id"] == "claude"
    ollama = build_model(ModelSpec("ollama", "llama3.2"), {})
    assert isinstance(ollama, OpenAIModel)
    assert ollama.client_args["base_url"] == "http://localhost:11434/v1"


def test_bedrock_reads_the_aws_environment(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    model = build_model(ModelSpec("bedrock", "amazon.nova-pro-v1:0"), {"AWS_REGION": "eu-west-3"})
    assert isinstance(model, BedrockModel)
    assert model.client.meta.region_name == "eu-west-3"


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_missing_key_is_a_clear_error(provider, variable):
    with pytest.raises(ModelOptionError, match=f"needs the {variable} environment variable"):
        build_model(ModelSpec(provider, "m"), {})


def test_missing_aws_credentials_are_a_clear_error(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    with pytest.raises(ModelOptionError, match="no AWS credentials"):
        build_model(ModelSpec("bedrock", "m"), {})


def test_demo_refuses_a_missing_key(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["demo", "--yes", "--model", "openai:gpt-4o"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_demo_runs_on_a_real_provider(monkeypatch, capsys):
    fake = FakeLLM(
        [
            Reply("Checking.", tools=[("c1", "inspect_files", {"paths": ["a/b/c.txt"]})]),
            Reply(tools=[("c2", "delete_files", {"paths": ["a/b/c.txt", "d/e/f.txt"]})]),
            Reply("Both files are deleted."),
        ]
    )
    with fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
        assert main(["demo", "--yes", "--model", "openai:gpt-fake"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ['The model said: "Both files are deleted."', "Files left: none."]
    assert [body["model"] for _, _, body in fake.requests] == ["gpt-fake"] * 3


def test_a_factory_gets_the_model_as_a_keyword_or_on_its_agent():
    model = ScriptedModel([])

    class Built:
        model = None

    def takes_model(session_manager, model=None):
        return ("kw", model)

    def ignores_model(session_manager):
        return Built()

    assert with_model(takes_model, model)(session_manager=None) == ("kw", model)
    assert with_model(ignores_model, model)(session_manager=None).model is model
    assert with_model(ignores_model, None) is ignores_model


def test_resume_and_serve_accept_the_option(capsys):
    assert main(["resume", "--help"]) == 0
    assert "--model" in capsys.readouterr().out
    assert main(["serve", "--help"]) == 0
    assert "--model" in capsys.readouterr().out


def test_demo_on_a_real_provider_remembers_trust_in_its_session(monkeypatch, capsys, tmp_path):
    def run(round_number, *flags):
        fake = FakeLLM(
            [
                Reply(tools=[(f"inspect{round_number}", "inspect_files", {"paths": ["a/b/c.txt", "d/e/f.txt"]})]),
                Reply(tools=[(f"delete{round_number}", "delete_files", {"paths": ["a/b/c.txt", "d/e/f.txt"]})]),
                Reply("Both files are deleted."),
            ]
        )
        with fake:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
            monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
            assert main(["demo", "--storage-dir", str(tmp_path), "--model", "openai:gpt-fake", *flags]) == 0
        return capsys.readouterr().out

    first = run(1, "--trust")
    assert "(t/y/N): t" in first
    assert "trust granted" in first
    second = run(2, "--no")  # not asked, so the --no never applies
    assert "It did this task before in this session: the old files are back." in second
    assert "(t/y/N)" not in second
    assert "trust used, granted by you" in second
    assert second.splitlines()[-2:] == ['The model said: "Both files are deleted."', "Files left: none."]
