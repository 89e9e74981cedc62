"""The `openai` judge backend against an in-process fake transport (no network): the
structured-output request per json_mode, the key kept out of everything logged, transport
failures as errors; the judge config's checks, and the backend's name checked where the
spec is validated."""

from __future__ import annotations

import json

import httpx
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.judge.backends import OpenAIJudge, Request, make_judge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import load_prompts
from ablate.components.judge.tasks import Ask, ask_many, schema

KEY = "sk-judge-SECRET-9"
REQ = Request("support", (("system", "s"), ("user", "u")), schema("support", 3), 20)


def _judge(handler, monkeypatch, **cfg):
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)
    c = JudgeConfig(backend="openai", base_url="http://judge.test/v1", model="big-judge",
                    api_key_env="TEST_JUDGE_KEY", max_retries=1, **cfg)
    return OpenAIJudge(c, transport=httpx.MockTransport(handler), sleep=lambda s: None)


def _reply(text, finish="stop"):
    return httpx.Response(200, json={"choices": [{"message": {"content": text}, "finish_reason": finish}],
                                     "usage": {"prompt_tokens": 50, "completion_tokens": 4}})


@pytest.mark.parametrize("mode, expected", [
    ("json_schema", {"type": "json_schema",
                     "json_schema": {"name": "support", "schema": REQ.schema, "strict": True}}),
    ("json_object_schema", {"type": "json_object", "schema": REQ.schema}),
    ("json_object", {"type": "json_object"}),
])
def test_structured_output_request(monkeypatch, mode, expected):
    seen = []

    def handler(request):
        seen.append(json.loads(request.content))
        assert request.headers["authorization"] == f"Bearer {KEY}"
        return _reply('{"verdict": "yes"}')
    judge = _judge(handler, monkeypatch, json_mode=mode, seed=5)
    [c] = judge.complete_many([REQ])
    assert c.content == '{"verdict": "yes"}' and (c.tokens_in, c.tokens_out) == (50, 4)
    body = seen[0]
    assert body["response_format"] == expected
    assert body["temperature"] == 0.0 and body["seed"] == 5 and body["max_tokens"] == 20
    assert body["model"] == "big-judge"
    assert KEY not in judge.cache_identity and KEY not in repr(judge) and KEY not in judge.model_key()


def test_cut_off_reply_and_transport_failure(monkeypatch):
    judge = _judge(lambda r: _reply('{"verdict": "y', finish="length"), monkeypatch)
    assert judge.complete_many([REQ])[0].truncated
    judge = _judge(lambda r: httpx.Response(503), monkeypatch)
    [c] = judge.complete_many([REQ])
    assert c.error == "HTTP 503 after 2 attempts" and c.content == ""
    # through the task layer: an error, not a judge failure
    [v] = ask_many(judge, load_prompts(), [Ask("support", "en", {
        "question": "q", "statement": "s", "context": "[1] c"})], 3, 20)
    assert v.error is not None and v.failure is None


def test_concurrent_requests_keep_order(monkeypatch):
    def handler(request):
        user = json.loads(request.content)["messages"][1]["content"]
        return _reply(json.dumps({"verdict": "yes" if user == "u0" else "no"}))
    judge = _judge(handler, monkeypatch, concurrency=4)
    reqs = [Request("support", (("system", "s"), ("user", f"u{i}")), REQ.schema, 20) for i in range(6)]
    out = judge.complete_many(reqs)
    assert [json.loads(c.content)["verdict"] for c in out] == ["yes"] + ["no"] * 5


def test_configuration_errors_name_judge_fields(monkeypatch):
    with pytest.raises(InputError) as e:
        make_judge(JudgeConfig(backend="openai", model="m"))
    assert e.value.field == "judge.base_url"
    monkeypatch.delenv("NO_SUCH_JUDGE_KEY", raising=False)
    with pytest.raises(InputError) as e:
        make_judge(JudgeConfig(backend="openai", model="m", base_url="http://x/v1",
                               api_key_env="NO_SUCH_JUDGE_KEY"))
    assert e.value.field == "judge.api_key_env"
    with pytest.raises(InputError) as e:
        make_judge(JudgeConfig(model="/no/such/model.gguf"))
    assert e.value.field == "judge.model"


def test_judge_config_checks():
    with pytest.raises(ValueError):
        JudgeConfig(temperature=0.7)  # greedy, always
    with pytest.raises(ValueError, match="unknown judged metric 'vibes' \\(known: faithfulness, "
                                         "answer_relevancy, addresses_question, context_precision, "
                                         "context_recall\\)"):
        JudgeConfig(metrics=("faithfulness", "vibes"))
    assert JudgeConfig(metrics=("context_recall", "faithfulness")).metrics == \
        ("faithfulness", "context_recall")


def test_unknown_backend_is_refused_where_the_spec_is_validated(tmp_path):
    from pydantic import ValidationError

    from ablate.flows.plan.spec import ExperimentSpec
    from ablate.flows.plan.spec_load import load_spec
    spec = {"name": "x", "dataset": {"path": "d"}, "judge": {"backend": "gpt"}}
    with pytest.raises(ValidationError, match="unknown judge backend 'gpt'") as e:
        ExperimentSpec.model_validate(spec)
    assert e.value.errors()[0]["loc"] == ("judge", "backend")
    assert ExperimentSpec.model_validate(spec | {"judge": {"backend": "openai"}}).judge.backend == "openai"
    path = tmp_path / "exp.yaml"
    path.write_text("name: x\ndataset: {path: d}\njudge:\n  seed: 1\n  backend: lama_cpp\n")
    with pytest.raises(InputError) as e:
        load_spec(path)
    assert str(e.value) == (f"{path}:5: field 'judge.backend': unknown judge backend 'lama_cpp'; "
                            "did you mean llama_cpp? (known: llama_cpp, openai, torch)")


def test_the_judge_and_the_generator_share_one_openai_client_config(monkeypatch):
    """Each builds the same typed client config from its own section: the judge's own
    timeout, retries and concurrency reach its client, and the section is the judge's."""
    from ablate.components.contract.config import GeneratorConfig, PromptConfig
    from ablate.components.generation.openai_client import OpenAIClientConfig
    from ablate.components.generation.openai_http import OpenAIGenerator
    judge = _judge(lambda r: _reply("{}"), monkeypatch, timeout_s=7.5, concurrency=3)
    assert judge.client_config == OpenAIClientConfig(
        section="judge", base_url="http://judge.test/v1", model="big-judge",
        api_key_env="TEST_JUDGE_KEY", timeout_s=7.5, max_retries=1, concurrency=3)
    gen = OpenAIGenerator(GeneratorConfig(name="openai", base_url="http://g/v1", model="g"),
                          PromptConfig())
    assert gen.client_config == OpenAIClientConfig(
        section="generator", base_url="http://g/v1", model="g", api_key_env=None,
        timeout_s=60.0, max_retries=3, concurrency=2)


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refused_request_names_the_judge_section(monkeypatch, status):
    """An endpoint refusing the key, model or URL while judging stops the run with an error
    about the judge's section (it named the generator's before the client was shared)."""
    judge = _judge(lambda r: httpx.Response(status, json={"error": f"no {KEY}"}), monkeypatch)
    with pytest.raises(InputError) as e:
        judge.complete_many([REQ])
    assert e.value.field == "judge"
    assert f"HTTP {status}" in str(e.value) and "'big-judge'" in str(e.value)
    assert KEY not in str(e.value)


def test_a_missing_judge_key_is_one_line_at_its_yaml_line(tmp_path, monkeypatch):
    """`ablate check`'s form: file, line and `judge.api_key_env`, never `generator`."""
    from ablate.flows.plan.spec_load import load_spec
    from ablate.flows.plan.sweep_plan import judge_files
    monkeypatch.delenv("NO_SUCH_JUDGE_KEY", raising=False)
    path = tmp_path / "exp.yaml"
    path.write_text("name: x\ndataset: {path: d}\njudge:\n  backend: openai\n"
                    "  base_url: http://127.0.0.1:9/v1\n  model: m\n"
                    "  api_key_env: NO_SUCH_JUDGE_KEY\n")
    with pytest.raises(InputError) as e:
        judge_files(load_spec(path))
    assert str(e.value) == (f"{path}:7: field 'judge.api_key_env': environment variable "
                            "NO_SUCH_JUDGE_KEY is not set")
