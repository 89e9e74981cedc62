"""No component reads a config field it did not declare.

The sweep hands each stage a config projected on what its components declare (every other
field at its default), so an undeclared read can never give a stale cache hit, but it is
silently ignored, and a test through the pipeline could never see it. So each component
is called here directly, the way its stage calls it, with a config that was NOT
projected: (a) its base config (`config_cases.base_case`), then (b) the same config with
every field that its own declaration does not cover (`config_cases.own_fields`) set to
another valid value that matters on these tiny fixtures (`config_cases.changed`). The
outputs must be identical; the fields that make them differ are named in the failure.

Where a model would be slow or absent, a fake stands in that returns a function of
everything the component hands it (the dense encoder is keyed by model and backend, the
GGUF chat call and the OpenAI endpoint echo their arguments), so any input the config
shapes still shows in the output. Kinds whose callables are never handed a pipeline
config are checked by signature (`test_config_free_kinds_take_no_config`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
import pytest

from ablate.components.contract import config as config_module
from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.records import Chunk, Document, PackedContext, Passage, Question
from ablate.components.contract.registry import CATALOGUE, Declaration, registry
from ablate.components.retrieval.resources import Resources
from tests.conftest import registries_restored
from tests.contract.config_cases import (
    EXCLUDED_KINDS,
    NO_VALID,
    Case,
    base_case,
    changed,
    checked_declarations,
    covered,
    leaves,
    make_scratch,
    own_fields,
    with_value,
)

# ---- tiny fixtures ---------------------------------------------------------------------

DOCS = [
    Document("d0", "The Normans were a people in Normandy, a region in the north of France. "
                   "They gave their name to the region. Rouen is the capital of Normandy, and "
                   "its cathedral is a famous Gothic building. The Seine flows through Paris "
                   "and Rouen to the English Channel."),
    Document("d1", "Photosynthesis converts light energy into chemical energy in plants. "
                   "Chlorophyll gives plants their green colour and absorbs red and blue light; "
                   "green light is reflected, which is why leaves look green to us."),
    Document("d2", "氪铱钯锌是一个测试用的词。台北是一座城市，也是一个很大的城市。"),
]
TEXTS = ["The Normans were a people in Normandy, a region in France.",
         "Rouen is the capital of Normandy; its cathedral is in Rouen.",
         "Paris is the capital and largest city of France.",
         "The Seine flows through Paris and Rouen to the English Channel.",
         "Photosynthesis converts the energy of light into chemical energy in plants.",
         "Chlorophyll gives plants their green colour and absorbs light.",
         "氪铱钯锌是一个测试用的词。",
         "台北是一座城市，也是一个很大的城市。"]
CHUNKS = tuple(Chunk(f"c{i}", f"d{i // 2}", 0, len(t), t, len(t.split())) for i, t in enumerate(TEXTS))
QUESTIONS = (Question("q0", "What is the capital of Normandy?", ("Rouen",), True),
             Question("q1", "What makes plants green?", ("Chlorophyll",), True),
             Question("q2", "氪铱钯锌是什么？", ("词",), True))
CREDIBILITY = {"d0": 0.9, "d1": None, "d2": 0.2, "d3": None}


def _order(salt: str) -> list[tuple[str, float]]:
    """A ranking of every chunk, fixed by `salt` (a path's, a question's)."""
    ids = sorted((c.chunk_id for c in CHUNKS),
                 key=lambda cid: hashlib.sha256(f"{salt}|{cid}".encode()).hexdigest())
    return [(cid, round(1.0 - i / 10, 3)) for i, cid in enumerate(ids)]


FUSED = {q.qid: _order(q.qid) for q in QUESTIONS}
BY_ID = {c.chunk_id: c for c in CHUNKS}


def _context(q: Question) -> PackedContext:
    chunks = [BY_ID[cid] for cid, _ in FUSED[q.qid][:3]] + [CHUNKS[1], CHUNKS[5], CHUNKS[6]]
    chunks = list({c.chunk_id: c for c in chunks}.values())
    return PackedContext(tuple(c.chunk_id for c in chunks),
                         tuple(Passage(c.doc_id, c.start, c.end, c.text) for c in chunks),
                         sum(c.n_tokens for c in chunks), 512)


ITEMS = [(q, _context(q)) for q in QUESTIONS]


# ---- fakes: a function of everything they are handed ------------------------------------

class _SaltedEncoder:
    """Bag of characters plus a direction fixed by (model, backend): unit float32 rows."""

    def __init__(self, model: str, backend: str) -> None:
        seed = int(hashlib.sha256(f"{model}|{backend}".encode()).hexdigest()[:8], 16)
        self.salt = np.random.default_rng(seed).normal(size=32)

    def encode(self, texts):  # type: ignore[no-untyped-def]
        out = np.zeros((len(texts), 32))
        for i, t in enumerate(texts):
            for ch in t.lower():
                out[i, ord(ch) % 32] += 1.0
        out += self.salt
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


RES = Resources(lambda model, backend="torch": _SaltedEncoder(model, backend))


def _echo(*args: Any, **kwargs: Any) -> str:
    return json.dumps([[str(a) for a in args], {k: str(v) for k, v in sorted(kwargs.items())}],
                      ensure_ascii=False)


class _FakeCrossEncoder:
    def __init__(self, path: str) -> None:
        self.path = path

    def predict(self, pairs, **kwargs):  # type: ignore[no-untyped-def]
        return np.array([int(hashlib.sha256(_echo(self.path, q, t).encode()).hexdigest()[:6], 16)
                         for q, t in pairs], dtype=np.float64)


class _FakeLlama:
    def reset(self) -> None:
        pass

    def create_chat_completion(self, **kwargs):  # type: ignore[no-untyped-def]
        return {"choices": [{"message": {"content": _echo(**kwargs)}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3}}


def _endpoint(request: httpx.Request) -> httpx.Response:
    """An OpenAI-compatible endpoint that answers with the request it got."""
    body = json.loads(request.content)
    return httpx.Response(200, json={"choices": [{"message": {"content": _echo(str(request.url), **body)}}],
                                     "usage": {"prompt_tokens": 11, "completion_tokens": 3}})


@pytest.fixture(autouse=True)
def _fakes(monkeypatch):
    import threading

    from ablate.components.generation import llama_local, torch_gguf
    from ablate.components.retrieval import indexes
    monkeypatch.setattr(torch_gguf, "chat", lambda *a: (_echo(*a), 11, 3))
    monkeypatch.setattr(llama_local, "load_llama", lambda *a: (_FakeLlama(), threading.Lock()))
    monkeypatch.setattr(indexes, "cross_encoder", _FakeCrossEncoder)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return make_scratch(tmp_path_factory.mktemp("undeclared-reads"))


# ---- how each kind's stage calls it: inputs from the base case, the config as given -----
# (decl, base case, config to hand over) -> its output as plain data

def _chunker(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    from ablate.components.text.chunking import chunk_documents
    from ablate.components.text.tokenizer import get_tokenizer
    assert cfg.chunking.method == decl.name  # the field that chose it is keyed: held
    return [(c.chunk_id, c.n_tokens) for c in chunk_documents(DOCS, cfg.chunking, get_tokenizer())]


def _analyzer(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    """An analyzer is handed `retrieval.analyzer_options` as its factory's keyword
    arguments, and refuses others (analyzer.get_analyzer): it sees those it takes."""
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    params = inspect.signature(registry("analyzer").get(decl.name)).parameters
    options = {k: v for k, v in cfg.retrieval.analyzer_options.items() if k in params}
    analyzer = get_analyzer(decl.name, options)
    return [analyzer(t) for t in TEXTS]


def _path(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    return registry("retrieval path").get(decl.name)(CHUNKS, QUESTIONS, cfg, RES, None)


def _fuser(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    per_path = {p: _order(p) for p in base.cfg.retrieval.paths}
    return registry("fuser").get(decl.name)(per_path, cfg.fusion)


def _reranker(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    from ablate.components.retrieval.stages import RerankJob
    return registry("reranker").get(decl.name)(RerankJob(QUESTIONS, CHUNKS, FUSED, cfg, RES, CREDIBILITY))


def _signal(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    from ablate.components.retrieval.rerank import SignalContext
    ctx = SignalContext(cfg, list(CHUNKS), RES, CREDIBILITY)
    signal = registry("rerank signal").get(decl.name)
    return [signal(ctx, q, [BY_ID[c] for c, _ in FUSED[q.qid]],
                   np.array([s for _, s in FUSED[q.qid]])).tolist() for q in QUESTIONS]


def _generator(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    cls = registry("generator").get(decl.name)
    http = {"transport": httpx.MockTransport(_endpoint)} \
        if "transport" in inspect.signature(cls).parameters else {}
    gen = cls(cfg.generator, cfg.prompt, **http)
    answers = gen.generate_many(ITEMS)
    return {"identity": gen.cache_identity, "model": gen.model_key(),
            "answers": [(a.text, a.refused, a.tokens_in, a.tokens_out, a.error) for a in answers]}


def _dense_index(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    """Built as the dense path builds it (with the config's `retrieval.ann`), searched to
    the depth the dense path asks for (its own read, the base case's)."""
    vectors = RES.encoder("m").encode(TEXTS)
    index = registry("dense index").get(decl.name)([c.chunk_id for c in CHUNKS], vectors,
                                                   cfg.retrieval.ann)
    return index.search(RES.encoder("m").encode([q.question for q in QUESTIONS]),
                        base.cfg.retrieval.depth)


def _spreading(decl: Declaration, base: Case, cfg: PipelineConfig) -> Any:
    """Spread over a small fixed graph with the config's `retrieval.graph`, as the graph
    path hands it over."""
    from scipy import sparse
    adjacency = sparse.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 0.5, 0], [0, 0.5, 0, 1],
                                            [0, 0, 1, 0]]))
    seeds = np.array([[1.0], [0.0], [0.0], [0.0]])
    return registry("graph spreading").get(decl.name)(adjacency, seeds, cfg.retrieval.graph).tolist()


INVOKERS: dict[str, Callable[[Declaration, Case, PipelineConfig], Any]] = {
    "chunker": _chunker, "analyzer": _analyzer, "retrieval path": _path, "fuser": _fuser,
    "reranker": _reranker, "rerank signal": _signal, "generator": _generator,
    "dense index": _dense_index, "graph spreading": _spreading,
}
# Kinds whose callables are never handed a pipeline config (checked by signature below).
CONFIG_FREE = {
    "dense backend": "a model folder, its fingerprint and an export folder",
    "gguf engine": "a GGUF file, chat messages and the decoding settings its generator declares",
    "score normalization": "one path's scores",
    "metric": "a QuestionView (its params: the experiment's metrics, the score stage's reads)",
    "statistical test": "the paired differences",
    "correction": "p-values",
    "graph node extractor": "a text and the analyzer",
}
SKIP = {("analyzer", "auto"): "not an analyzer: `auto` is resolved per corpus before any stage "
                              "runs (flows/plan/sweep_plan.py); the one it picks is checked by name"}


def _outcome(run: Callable[[], Any]) -> tuple:
    try:
        return ("ok", run())
    except Exception as exc:  # noqa: BLE001 - an error is an output too: no field may change it
        return ("raised", type(exc).__name__, str(exc))


def undeclared_reads(decl: Declaration, scratch) -> tuple[list[str], list[str]]:
    """(the fields outside `decl`'s declaration that change its output, the fields varied)."""
    base = base_case(decl, scratch)
    assert base is not None, f"no stage runs {decl.identity}: see config_cases.ENABLERS"
    run = INVOKERS[decl.kind]
    expected = _outcome(lambda: run(decl, base, base.cfg))
    assert expected[0] == "ok", f"{decl.identity} fails on its base config: {expected}"
    held = own_fields(decl, base)
    data, varied = base.data, []
    for leaf in leaves():  # in model order: paths before fusion weights, analyzer before options
        new = NO_VALID if covered(leaf, held) else changed(leaf, data, scratch)
        if new is not NO_VALID:
            data = with_value(data, leaf, new)
            varied.append(leaf)
    cfg = PipelineConfig.model_validate(data)  # not projected: every varied field reaches it
    if _outcome(lambda: run(decl, base, cfg)) == expected:
        return [], varied
    culprits = []  # which of them: each alone
    for leaf in varied:
        new = changed(leaf, base.data, scratch)
        alone = PipelineConfig.model_validate(with_value(base.data, leaf, new)) \
            if new is not NO_VALID else None
        if alone is not None and _outcome(lambda c=alone: run(decl, base, c)) != expected:
            culprits.append(leaf)
    return culprits or ["(only in combination) " + ", ".join(varied)], varied


def _run_cases() -> list:
    return [pytest.param(d, id=f"{d.kind}:{d.name}") for d in checked_declarations()
            if d.kind not in CONFIG_FREE]


@pytest.mark.parametrize("decl", _run_cases())
def test_component_reads_nothing_it_did_not_declare(decl, scratch):
    assert decl.kind in INVOKERS, (f"no way to run kind '{decl.kind}' here: add how its stage "
                                   f"calls it to INVOKERS, or to CONFIG_FREE with the reason")
    if not decl.produces:
        pytest.skip("produces nothing: no stage runs it (test_conformance checks it is never planned)")
    if (decl.kind, decl.name) in SKIP:
        pytest.skip(SKIP[(decl.kind, decl.name)])
    missing = decl.missing_requirement(base_case(decl, scratch).data)
    if missing is not None:
        pytest.skip(f"needs {missing[0]} (ablate[{missing[1]}]); test_config_fields covers its keys")
    culprits, varied = undeclared_reads(decl, scratch)
    assert varied, f"nothing outside the declaration of {decl.identity} was varied"
    assert not culprits, (f"{decl.identity} reads {culprits} without declaring them: add them to "
                          f"its `reads` (or `settings`, if they cannot change an output)")


def _config_types() -> set[str]:
    return {n for n, o in vars(config_module).items()
            if isinstance(o, type) and o.__module__ == config_module.__name__}


def _callables(obj: Any) -> list[Callable]:
    if isinstance(obj, type):
        return [obj.__init__]
    if inspect.isroutine(obj):
        return [obj]
    return [v for v in vars(obj).values() if inspect.isroutine(v)]  # a Metric, a Correction


@pytest.mark.parametrize("decl", [pytest.param(d, id=f"{d.kind}:{d.name}")
                                  for d in checked_declarations() if d.kind in CONFIG_FREE])
def test_config_free_kinds_take_no_config(decl):
    """A component of these kinds is handed no pipeline config, so it cannot read a field."""
    types = _config_types()
    fns = _callables(registry(decl.kind).get(decl.name))
    assert fns, decl.identity
    for fn in fns:
        for p in inspect.signature(fn).parameters.values():
            ann = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
            assert p.name not in ("cfg", "config") and not any(t in ann for t in types), (
                f"{decl.identity} takes {p.name}: {ann}; it is handed "
                f"{CONFIG_FREE[decl.kind]}, or move its kind to INVOKERS")


def test_every_kind_is_run_or_config_free():
    """A registry added later is picked up: it needs an invoker (or a reason)."""
    kinds = {d.kind for d in checked_declarations()}
    assert kinds <= set(INVOKERS) | set(CONFIG_FREE), sorted(kinds - set(INVOKERS) - set(CONFIG_FREE))
    assert set(CATALOGUE) - kinds <= EXCLUDED_KINDS


def test_an_undeclared_read_is_caught(tmp_path):
    """The check above fails on components that read a field they did not declare: a
    chunker that reads `chunking.size` and a rerank signal that reads `context.budget`."""
    from ablate.components.retrieval.rerank import SIGNALS
    from ablate.components.text.chunking import CHUNKERS, token_window

    with registries_restored():
        @CHUNKERS.register("sneaky_window", reads=("chunking.overlap",))
        def sneaky_window(text, offsets, cfg):  # type: ignore[no-untyped-def]
            return token_window(text, offsets, cfg)  # reads cfg.size too

        @SIGNALS.register("sneaky_budget")
        def sneaky_budget(ctx, q, cands, fused):  # type: ignore[no-untyped-def]
            return np.full(len(cands), float(ctx.cfg.context.budget))

        scratch = make_scratch(tmp_path)
        assert undeclared_reads(CHUNKERS.declaration("sneaky_window"), scratch)[0] == \
            ["chunking.size"]
        assert undeclared_reads(SIGNALS.declaration("sneaky_budget"), scratch)[0] == \
            ["context.budget"]
