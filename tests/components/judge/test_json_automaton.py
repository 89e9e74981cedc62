"""The torch judge's schema automaton (components/judge/json_automaton.py) and the GGUF
metadata reader its vocabulary comes from (components/runtime/gguf_meta.py): every reply
the automaton lets through parses as the task's schema, what the schema forbids is
refused byte by byte, Chinese is written whole UTF-8 character by character."""

from __future__ import annotations

import json
import random

import pytest

from ablate.components.judge import json_automaton as ja
from ablate.components.judge.tasks import VERDICTS, schema

SCHEMAS = {"support": schema("support", 3), "relevance": schema("relevance", 3),
           "claims": schema("claims", 3), "questions": schema("questions", 3, 2)}


def _accepts(task: str, text: str) -> bool:
    state = ja.feed(ja.compile_schema(SCHEMAS[task]), text.encode("utf-8"))
    return state is not None and ja.done(state)


@pytest.mark.parametrize("task, text", [
    ("support", '{"verdict": "yes"}'),
    ("support", '{\n  "verdict" :"no"}'),
    ("relevance", '{"verdict": "partly"}'),
    ("claims", '{"claims": ["Normandy is in France."]}'),
    ("claims", '{"claims": ["诺曼底在法国。", "It is named after the \\"Normans\\"", "\\u00e9t\\u00E9"]}'),
    ("questions", '{"questions": ["Where is Normandy?", "诺曼底在哪里？"], "noncommittal": false}'),
    ("questions", '{"questions":["a","b"],"noncommittal":true}'),
])
def test_replies_that_follow_the_schema_are_accepted_whole(task, text):
    assert _accepts(task, text)
    json.loads(text)


@pytest.mark.parametrize("task, text", [
    ("support", '{"verdict": "partly"}'),          # not in this task's list
    ("support", '{"verdict": "yes", "why": "x"}'),  # a key the schema does not have
    ("support", '{"answer": "yes"}'),
    ("support", '{"verdict": "yes"} '),             # nothing after the object
    ("support", ' {"verdict": "yes"}'),
    ("claims", '{"claims": []}'),                    # minItems 1
    ("claims", '{"claims": ["a", "b", "c", "d"]}'),  # maxItems 3
    ("claims", '{"claims": [""]}'),                  # minLength 1
    ("claims", '{"claims": ["a",]}'),
    ("claims", '{"claims": ["line\nbreak"]}'),       # a control character in a string
    ("claims", '{"claims": ["\\x"]}'),               # not a JSON escape
    ("claims", '{"claims": ["\\u00g0"]}'),
    ("questions", '{"questions": ["a"], "noncommittal": false}'),  # exactly 2
    ("questions", '{"noncommittal": false, "questions": ["a", "b"]}'),  # the schema's order
    ("questions", '{"questions": ["a", "b"], "noncommittal": "false"}'),
    ("questions", '{"questions": ["a", "b"], "noncommittal": False}'),
])
def test_what_the_schema_forbids_is_refused(task, text):
    assert not _accepts(task, text)


def test_utf8_is_taken_whole():
    start = ja.compile_schema(SCHEMAS["claims"])
    inside = ja.feed(start, b'{"claims": ["')
    assert inside is not None
    assert ja.feed(inside, "诺".encode("utf-8")[:2]) is not None  # a character in two tokens
    assert ja.feed(inside, "诺".encode("utf-8")[:2] + b'"') is None  # cut off: refused
    assert ja.feed(inside, b"\xff") is None and ja.feed(inside, b"\x80") is None
    assert ja.feed(inside, "诺\"]}".encode("utf-8")) == ()


def test_whitespace_is_bounded():
    start = ja.compile_schema(SCHEMAS["support"])
    assert ja.feed(start, b"{" + b" " * ja.WS_MAX) is not None
    assert ja.feed(start, b"{" + b" " * (ja.WS_MAX + 1)) is None


def _walk(task: str, rng: random.Random) -> str:
    """A random reply the automaton allows, leaning towards closing what is open."""
    state = ja.compile_schema(SCHEMAS[task])
    out = bytearray()
    while not ja.done(state):
        allowed = ja.allowed_bytes(state)
        assert allowed, out
        closing = [b for b in allowed if b in b'"]}:,tf']
        pick = rng.choice(closing if closing and rng.random() < 0.3 else allowed)
        nxt = ja.step(state, pick)
        assert nxt is not None
        state, out = nxt, out + bytes((pick,))
        assert len(out) < 5000
    return out.decode("utf-8")


@pytest.mark.parametrize("task", sorted(SCHEMAS))
def test_every_reply_the_automaton_allows_parses_as_the_schema(task):
    rng = random.Random(f"walk-{task}")
    for _ in range(60):
        data = json.loads(_walk(task, rng))
        props = SCHEMAS[task]["properties"]
        assert list(data) == list(props)
        if task in VERDICTS:
            assert data["verdict"] in VERDICTS[task]
        elif task == "claims":
            assert 1 <= len(data["claims"]) <= 3 and all(c for c in data["claims"])
        else:
            assert len(data["questions"]) == 2 and all(data["questions"])
            assert isinstance(data["noncommittal"], bool)


def test_an_unsupported_schema_names_its_part():
    with pytest.raises(ValueError, match=r"schema\.score: type \['string', 'null'\]"):
        ja.compile_schema({"type": "object", "properties": {"score": {"type": ["string", "null"]}},
                           "required": ["score"], "additionalProperties": False})
    with pytest.raises(ValueError, match="require exactly its properties"):
        ja.compile_schema({"type": "object", "properties": {"a": {"type": "string"}}})


def test_gguf_metadata_is_read_without_the_tensors(tmp_path):
    gguf = pytest.importorskip("gguf")
    from ablate.components.runtime.gguf_meta import read_metadata
    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string("general.name", "tiny 诺曼")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["a", "Ġb", "诺", "<|im_end|>"])
    writer.add_token_types([1, 1, 1, 3])
    writer.add_uint32("test.number", 7)
    writer.add_array("test.nested", [[1, 2], [3]])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    meta = read_metadata(path, ["tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
                                "general.name", "test.number", "tokenizer.ggml.model", "absent"])
    assert meta == {"tokenizer.ggml.tokens": ["a", "Ġb", "诺", "<|im_end|>"],
                    "tokenizer.ggml.token_type": [1, 1, 1, 3], "general.name": "tiny 诺曼",
                    "test.number": 7, "tokenizer.ggml.model": "gpt2"}
    (tmp_path / "not.gguf").write_bytes(b"GGML" + bytes(20))
    with pytest.raises(ValueError, match="not a GGUF file"):
        read_metadata(tmp_path / "not.gguf", ["x"])


@pytest.mark.parametrize("bad", [b"\xed\xa0\x80", b"\xe0\x80\x80", b"\xf0\x80\x80\x80",
                                 b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xf5\x80\x80\x80"])
def test_ill_formed_utf8_is_refused(bad):
    """Surrogates, overlong forms, code points above U+10FFFF: a reply always decodes."""
    inside = ja.feed(ja.compile_schema(SCHEMAS["claims"]), b'{"claims": ["')
    assert inside is not None and ja.feed(inside, bad) is None


@pytest.mark.parametrize("text, ok", [
    ('{}', True), ('{"a": 1, "b": [true, null, -0.5e+3], "c": {"d": "诺"}}', True),
    ('{"a": 01}', False), ('{"a": 1.}', False), ('{"a": -}', False), ('{a: 1}', False),
    ('{"a": 1,}', False), ('{"a": [1, 2,]}', False), ('{"a": nul}', False),
])
def test_an_object_without_properties_is_any_json_object(text, ok):
    """{"type": "object"} (what a caller asks of any judge backend): any JSON object."""
    state = ja.feed(ja.compile_schema({"type": "object"}), text.encode("utf-8"))
    assert (state is not None and ja.done(state)) == ok
    if ok:
        json.loads(text)


def test_integers_and_numbers():
    def accepts(kind: str, text: str) -> bool:
        sch = {"type": "object", "properties": {"n": {"type": kind}}, "required": ["n"],
               "additionalProperties": False}
        state = ja.feed(ja.compile_schema(sch), f'{{"n": {text}}}'.encode())
        return state is not None and ja.done(state)
    assert accepts("integer", "-12") and not accepts("integer", "1.5")
    assert accepts("number", "1.5E-3") and accepts("number", "0") and not accepts("number", "1e")
