"""One conformance suite parametrised over every entry of every registry (the way
scikit-learn checks every estimator): the declaration is well formed, and the component
honours its kind's contract on a small fixed input. A plugin's components can be run
through the same checks (`check_component`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.records import Answer, Chunk, Document, PackedContext, Passage, Question, Span
from ablate.components.contract.registry import CATALOGUE, Declaration, all_declarations, registry
from ablate.components.metrics.registry import DIRECTIONS, PathView, QuestionView

DOC = Document("d0", "Paris is the capital of France. Berlin is the capital of Germany. "
                     "Rome is in Italy.")
CHUNKS = [Chunk("d0:0-31", "d0", 0, 31, DOC.text[0:31], 8),
          Chunk("d0:32-65", "d0", 32, 65, DOC.text[32:65], 8),
          Chunk("d0:66-83", "d0", 66, 83, DOC.text[66:83], 5)]
QUESTIONS = [Question("q1", "What is the capital of France?", ("Paris",), True,
                      ((Span("d0", 0, 5),),)),
             Question("q2", "Where is Rome?", (), False)]


class FakeEncoder:
    """A deterministic bag-of-letters embedder (no model)."""

    max_seq_length = 256

    def encode(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def _resources():
    from ablate.components.retrieval.resources import Resources
    return Resources.fixed(FakeEncoder())


def _is_ranking(r) -> bool:
    scores = [s for _, s in r]
    return all(isinstance(c, str) for c, _ in r) and all(
        (a > b) or (a == b and ca < cb) for (ca, a), (cb, b) in zip(r, r[1:])) and \
        all(math.isfinite(s) for s in scores)


def check_declaration(d: Declaration) -> None:
    from ablate.components.judge.config import JudgeConfig
    # a judge backend reads the experiment's `judge:` section; every other kind the pipeline
    data = ({"judge": JudgeConfig().model_dump(mode="json")} if d.kind == "judge"
            else PipelineConfig().model_dump(mode="json"))
    assert d.name and isinstance(d.version, str) and d.version
    for f in d.reads + d.settings + tuple(u for u, _ in d.uses):
        assert f.split(".")[0] == "options" or get_dotted(data, f, KeyError) is not KeyError, f
    for _, kind in d.uses:
        assert kind in CATALOGUE, kind
    assert not set(d.reads) & set(d.settings), "a field is either read or a setting"
    for module, extra in d.requires:
        assert module and extra in _extras(), (d.identity, extra)
    if not d.produces:
        _check_never_planned(d)


def _extras() -> set[str]:
    import tomllib
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    return set(tomllib.loads((root / "pyproject.toml").read_text())["project"]
               ["optional-dependencies"])


def _check_never_planned(d: Declaration) -> None:
    """A component that produces nothing: a pipeline naming it has no stage running it."""
    from ablate.flows.plan.graph import Plan, add_variant
    fld = registry(d.kind).config_field
    assert fld, f"{d.identity}: produces nothing but no config field chooses it"
    data = PipelineConfig().model_dump(mode="json")
    node = data
    for part in fld.split(".")[:-1]:
        node = node[part]
    node[fld.split(".")[-1]] = d.name
    plan = Plan()
    add_variant(plan, "v", PipelineConfig.model_validate(data),
                {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]},
                 "labels": "span"})
    for n in plan.nodes.values():
        assert d.identity not in {c.identity for c in n.resolved.components}, n.label


def _check_chunker(d):
    from ablate.components.text.chunking import chunk_documents
    from ablate.components.text.tokenizer import get_tokenizer
    cfg = PipelineConfig.model_validate({"chunking": {"method": d.name, "size": 8, "overlap": 2}})
    chunks = chunk_documents([DOC], cfg.chunking, get_tokenizer())
    # a chunker that does not read chunking.size (document: each document whole) has no budget
    limit = 8 if "chunking.size" in d.reads else float("inf")
    assert chunks and all(c.text == DOC.text[c.start:c.end] and 0 < c.n_tokens <= limit
                          for c in chunks)


def _check_analyzer(d):
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    try:
        analyzer = get_analyzer(d.name)
    except Exception as exc:  # a meta-analyzer resolved per corpus (auto) says so clearly
        assert "resolve" in str(exc).lower() or "corpus" in str(exc).lower(), exc
        return
    toks = analyzer(DOC.text)
    assert toks and all(isinstance(t, str) and t for t in toks) and analyzer(DOC.text) == toks


def _check_path(d):
    from ablate.components.retrieval.stages import retrieve_path
    cfg = PipelineConfig.model_validate({"retrieval": {"paths": [d.name], "depth": 2}})
    latency: dict[str, float] = {}
    out = retrieve_path(d.name, CHUNKS, QUESTIONS, cfg, _resources(), latency=latency)
    assert list(out) == [q.qid for q in QUESTIONS] and set(latency) == set(out)
    assert all(v >= 0 for v in latency.values())
    assert all(len(r) <= 2 and _is_ranking(r) for r in out.values())
    assert retrieve_path(d.name, CHUNKS, QUESTIONS, cfg, _resources()) == out


def _check_fuser(d):
    from ablate.components.retrieval.fusion import FUSERS
    per = {"a": [("x", 3.0), ("y", 2.0)], "b": [("y", 0.9), ("z", 0.1)]}
    if d.name == "passthrough":
        per = {"a": per["a"]}
    cfg = PipelineConfig.model_validate({"fusion": {"method": d.name}}).fusion
    out = FUSERS.get(d.name)(per, cfg)
    assert _is_ranking(out) and {c for c, _ in out} == {c for r in per.values() for c, _ in r}
    assert FUSERS.get(d.name)(dict(reversed(list(per.items()))), cfg) == out  # path order


def _check_signal(d):
    from ablate.components.retrieval.rerank import SIGNALS, SignalContext
    if d.name == "cross_encoder":
        pytest.skip("needs a local CrossEncoder model (tests/components/retrieval/test_cross_encoder.py)")
    cfg = PipelineConfig()
    ctx = SignalContext(cfg, CHUNKS, _resources(), {"d0": 0.7})
    fused = np.array([3.0, 2.0, 1.0])
    vals = SIGNALS.get(d.name)(ctx, QUESTIONS[0], CHUNKS, fused)
    assert vals.shape == (3,) and np.isfinite(vals).all()
    np.testing.assert_allclose(SIGNALS.get(d.name)(ctx, QUESTIONS[0], CHUNKS, fused), vals)
    rev = SIGNALS.get(d.name)(ctx, QUESTIONS[0], CHUNKS[::-1], fused[::-1])
    np.testing.assert_allclose(rev[::-1], vals, atol=1e-9)  # order-equivariant


def _check_reranker(d):
    from ablate.components.retrieval.stages import rerank_rankings
    cfg = PipelineConfig.model_validate({"rerank": {"method": d.name, "weights": {"fusion": 1.0}}})
    fused = {"q1": [("d0:0-31", 0.5), ("d0:32-65", 0.4)], "q2": [("d0:66-83", 0.2)]}
    out = rerank_rankings(QUESTIONS, CHUNKS, fused, cfg, _resources(), {})
    assert set(out) == set(fused) and all(_is_ranking(r) for r in out.values())


def _check_generator(d):
    from ablate.components.generation import GENERATORS, BaseGenerator
    cls = GENERATORS.get(d.name)
    assert isinstance(cls, type) and issubclass(cls, BaseGenerator)
    assert cls.declaration is d  # the class reads its own declaration (context use)
    from ablate.components.generation.settings import settings_model
    model = settings_model(d)  # its typed settings: each with a default and a docstring
    assert all(not f.is_required() and f.description for f in model.model_fields.values())
    if not d.produces:
        return  # never planned (check_declaration)
    if d.name != "extractive":
        pytest.skip("model or endpoint needed: tests/components/generation covers it")
    cfg = PipelineConfig()
    gen = cls(cfg.generator, cfg.prompt)
    ctx = PackedContext(("d0:0-31",), (Passage("d0", 0, 31, DOC.text[0:31]),), 8, 512)
    answers = gen.generate_many([(QUESTIONS[0], ctx), (QUESTIONS[1], None)])
    assert len(answers) == 2 and all(isinstance(a, Answer) for a in answers)


# What a judge stage gives a question, for the metrics that need judgments: q1 judged on
# every metric, q2 (unanswerable, refused) undefined or failed.
JUDGMENTS = {
    "q1": {"faithfulness": {"status": "ok", "claims": ["a", "b"], "verdicts": ["yes", "no"]},
           "answer_relevancy": {"status": "ok", "verdicts": ["Where?", "What?"],
                                "noncommittal": False, "cosines": [0.9, -0.1]},
           "addresses_question": {"status": "ok", "verdicts": ["partly"]},
           "context_precision": {"status": "ok", "verdicts": ["no", "yes", "yes"]},
           "context_recall": {"status": "ok", "claims": ["Paris"], "verdicts": ["yes"]}},
    "q2": {"faithfulness": {"status": "undefined", "reason": "refusal or empty answer"},
           "answer_relevancy": {"status": "ok", "verdicts": [], "noncommittal": True},
           "addresses_question": {"status": "failed", "failure": "empty reply"},
           "context_precision": {"status": "undefined", "reason": "no reference answer"},
           "context_recall": {"status": "undefined", "reason": "no reference answer"}},
}


def _check_metric(d):
    from ablate.components.metrics.registry import METRICS
    m = METRICS.get(d.name)
    assert m.direction in DIRECTIONS and m.low <= m.high and m.stages
    ctx = PackedContext(("d0:0-31",), (Passage("d0", 0, 31, DOC.text[0:31]),), 8, 512)
    for q, ans in ((QUESTIONS[0], Answer("Paris", False, 10, 1)),
                   (QUESTIONS[1], Answer("I don't know.", True, 10, 3))):
        view = QuestionView(q, [{"d0:0-31": 1.0}] if q.evidence else [],
                            {"candidates": ["d0:0-31"], "reranked": ["d0:0-31"], "final": ["d0:0-31"]},
                            ctx, ctx, ans, {"ks": [1, 5], "gain": "linear", "label_threshold": 0.5,
                                            "correct_f1": 0.5, "pricing": {},
                                            "trec": True},  # a TREC collection's measures
                            {"fuse": 0.01}, judgments=JUDGMENTS[q.qid],
                            # every built-in path's own output, an approximate dense index's
                            paths={"bm25": PathView(("d0:0-31",), build_s=0.1, search_s=0.01),
                                   "dense": PathView(("d0:0-31",), ("d0:0-31",), 0.2, 0.02)})
        # a pipeline without a stage a column needs (no judge, retrieval only) scores no
        # such column at all
        needed = {s for _, stages in m.needs for s in stages}
        assert needed <= {"assemble", "generate", "judge"}, needed
        assert set(m.feedable(("assemble", "generate", "judge"))) == set(m.stages)
        if needed:
            assert set(m.feedable(())) < set(m.stages)
        out = m.compute(view)
        if m.name != "*":
            assert set(out) == set(m.columns([1, 5])), (d.name, sorted(out))
        for col, v in out.items():
            assert math.isnan(v) or m.low <= v <= m.high, (col, v)


def _check_judge(d):
    from ablate.components.contract.errors import InputError
    from ablate.components.judge.backends import JUDGES, BaseJudge, Completion, Request
    from ablate.components.judge.config import JudgeConfig
    cls = JUDGES.get(d.name)
    assert isinstance(cls, type) and issubclass(cls, BaseJudge)
    assert not d.reads_context  # a judge reads no pipeline field, only `judge.*` ones
    assert all(f.startswith("judge.") for f in d.reads + d.settings + d.files), d
    try:
        judge = cls(JudgeConfig(backend=d.name))
    except InputError as exc:  # an endpoint backend needs a URL: tests/components/judge
        assert exc.field and exc.field.startswith("judge"), exc
        pytest.skip(f"needs configuration ({exc.message})")
    ident = judge.cache_identity
    assert ident == cls(JudgeConfig(backend=d.name)).cache_identity  # stable
    assert ident != cls(JudgeConfig(backend=d.name, seed=7)).cache_identity  # seed in it
    assert isinstance(judge.model_key(), str) and judge.model_key()
    assert judge.complete_many([]) == []
    if d.name == "llama_cpp":
        return  # one real completion: tests/components/judge/test_llama_judge.py
    req = Request("support", (("system", "s"), ("user", "u")), {"type": "object"}, 8)
    out = judge.complete_many([req, req])
    assert len(out) == 2 and all(isinstance(c, Completion) for c in out)


def _check_test(d):
    from ablate.components.stats.abilities import check_abilities
    from ablate.components.stats.clusters import cluster_ttest
    from ablate.components.stats.paired_tests import TESTS, abilities
    from ablate.components.stats.self_test_nulls import cr2_p
    from ablate.components.stats.signflip import montecarlo_pvalues, signflip_pvalues
    rng = np.random.default_rng(0)
    S = rng.normal(0.2, 1, size=(30, 3))       # cluster sums: here one question each
    N = np.ones_like(S)
    test = TESTS.get(d.name)
    p, how, used = test(S, N, resamples=999, seed=0, alpha=0.05)
    assert p.shape == (3,) and ((0 <= p) & (p <= 1)).all() and len(how) == 3 and used.shape == (3,)
    # its abilities (ablate.components.stats.abilities): every one declared, and true of it
    check_abilities(d)
    able = abilities(d.name)
    skewed = np.array([[3.0, 0.1, 0.2, 0.1, 0.3, 0.2]]).T  # sign-flip p 0.03, t p 0.23
    for x in (S, skewed):
        px = test(x, np.ones_like(x), resamples=999, seed=0, alpha=0.05)[0]
        if able.inverts == "t":  # its p is the cluster t's, whose interval inverts it
            np.testing.assert_allclose(px, cluster_ttest(x, np.ones_like(x), 0.05)[1])
        if able.inverts == "signflip":  # ... the sign-flip test's
            np.testing.assert_allclose(px, signflip_pvalues(x, resamples=999, seed=0)[0])
        if able.self_test_p == "cr2":  # the self-test runs the CR2 t in its place
            np.testing.assert_allclose(px, cr2_p(x, np.ones_like(x)))
        if able.self_test_p == "signflip-mc":  # ... or the sign-flip test by Monte Carlo
            np.testing.assert_allclose(px, montecarlo_pvalues(x, 4000, 1), atol=0.02)
    if able.smallest_p is not None:  # no p below its floor, even with every cluster up
        for g in (3, 5, 8):
            up = np.arange(1.0, g + 1)[:, None]
            low = test(up, np.ones_like(up), resamples=999, seed=0, alpha=0.05)[0][0]
            assert low >= float(able.smallest_p.of(g)) - 1e-12, (g, low)
            assert str(g) in able.smallest_p.formula.format(g=g)
    rows = _compared(d.name, "inversion")
    if able.inverts is not None:  # its interval excludes 0 exactly when it is significant
        assert set(rows["ci_method"]) == {able.inversion}
        excludes = (rows["ci_low"] > 0) | (rows["ci_high"] < 0)
        assert (excludes == rows["significant"]).all(), rows
    if able.wilcoxon_column:  # its p is the Wilcoxon signed-rank p the column holds
        np.testing.assert_allclose(rows["p_wilcoxon"].to_numpy(), rows["p_value"].to_numpy())


def _compared(test: str, ci_method: str):
    """compare_variants with `test` on 24 independent questions and three variants (one
    with no effect, one small, one large)."""
    import polars as pl

    from ablate.components.stats import compare_variants
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 0.8, 24)
    rows = [{"variant": "b", "qid": f"q{i}", "m/x": float(x)} for i, x in enumerate(base)]
    for v, shift in (("none", 0.0), ("small", 0.05), ("large", 0.3)):
        rows += [{"variant": v, "qid": f"q{i}", "m/x": float(x + shift + rng.normal(0, 0.1))}
                 for i, x in enumerate(base)]
    return compare_variants(pl.DataFrame(rows), baseline="b", metrics=["m/x"], test=test,
                            ci_method=ci_method, resamples=999, seed=0)


def _check_correction(d):
    from ablate.components.stats.correction import adjust_pvalues, smallest_threshold
    p = np.array([0.001, 0.02, 0.04, 0.3, np.nan])
    adj = adjust_pvalues(p, d.name)
    ok = ~np.isnan(p)
    assert np.isnan(adj[~ok]).all() and (adj[ok] >= p[ok] - 1e-15).all() and (adj[ok] <= 1).all()
    assert 0 < smallest_threshold(d.name, 4, 0.05) <= 0.05


def _check_normalization(d):
    from ablate.components.retrieval.fusion import NORMALIZERS
    out = NORMALIZERS.get(d.name)(np.array([3.0, 1.0, 2.0]))
    assert out.shape == (3,) and np.isfinite(out).all() and out[0] > out[2] > out[1]


def _check_dense_backend(d):
    """A backend's runtime embeds like SentenceTransformer.encode: float32 L2-normalised
    rows in input order, each a function of its text alone (what the cache assumes)."""
    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.runtime.models import minilm_path
    missing = d.missing_requirement()
    if missing is not None:
        pytest.skip(f"needs {missing[0]} (pip install 'ablate[{missing[1]}]')")
    enc = DenseEncoder(minilm_path(), None, batch_size=2, backend=d.name)
    texts = [DOC.text, QUESTIONS[0].question, "今天天气很好。The weather is fine today."]
    vecs = enc.encode(texts)
    assert vecs.dtype == np.float32 and vecs.shape == (3, enc.dim)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    again = enc.model.encode(texts[::-1], batch_size=3, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)
    np.testing.assert_allclose(again[::-1], vecs, atol=1e-5)  # order, batch mates
    assert float(vecs[1] @ vecs[0]) > float(vecs[1] @ vecs[2])  # the question is about DOC


def _check_dense_index(d):
    """An index built from ids and vectors (in any order) gives the top k (id, score) per
    query, best first, ties by id, at most every chunk; an approximate one keeps the exact
    index over the same vectors (`exact`), whose top 1 it finds on these few vectors."""
    from ablate.components.contract.config import AnnConfig
    from ablate.components.retrieval.dense.ann import DENSE_INDEXES
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((12, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs[3] = vecs[7]  # a tie: c03 before c07
    ids = [f"c{i:02d}" for i in range(12)][::-1]
    vecs = vecs[::-1].copy()
    index = DENSE_INDEXES.get(d.name)(ids, vecs, AnnConfig())
    found = index.search(vecs[[4]], 20)[0]  # c07's vector: rows reversed
    assert len(found) <= 12 and [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    ranked = [c for c, _ in found]
    assert ranked[:2] == ["c03", "c07"], ranked
    exact = getattr(index, "exact", None)
    assert d.neutral == (exact is None)  # flat is the exact one
    if exact is not None:
        assert [c for c, _ in exact.search(vecs[[4]], 2)[0]] == ["c03", "c07"]


def _check_gguf_engine(d):
    """An engine of the local GGUF generators: says whether it batches, names itself in
    the generation's identity (answers differ between engines), and chats."""
    from ablate.components.generation.llama_local import GGUF_ENGINES
    engine = GGUF_ENGINES.get(d.name)
    assert isinstance(engine.batched, bool) and callable(engine.chat) and engine.declaration is d
    if d.missing_requirement() is not None:
        pytest.skip(f"needs {d.missing_requirement()[0]}")
    assert engine.identity().startswith(f"{d.name}/")


def _check_node_extractor(d):
    from ablate.components.retrieval.graph.nodes import NODE_EXTRACTORS
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    extract = NODE_EXTRACTORS.get(d.name)
    names = extract(DOC.text, get_analyzer("default"))
    assert names and all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)
    assert extract(DOC.text, get_analyzer("default")) == names


def _check_spreading(d):
    from scipy import sparse

    from ablate.components.contract.config import GraphConfig
    from ablate.components.retrieval.graph.spread import SPREADING
    adjacency = sparse.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float))
    seeds = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # one seeded question, one not
    mass = SPREADING.get(d.name)(adjacency, seeds, GraphConfig())
    assert mass.shape == seeds.shape and np.all(mass >= 0) and np.all(np.isfinite(mass))
    assert mass[0, 0] > 0 and mass[1, 0] > 0 and not mass[:, 1].any()  # spreads, from seeds only
    alone = SPREADING.get(d.name)(adjacency, seeds[:, :1], GraphConfig())
    assert np.array_equal(alone[:, 0], mass[:, 0])  # a question's mass is its own


CONTRACTS = {
    "graph node extractor": _check_node_extractor, "graph spreading": _check_spreading,
    "gguf engine": _check_gguf_engine,
    "dense index": _check_dense_index,
    "chunker": _check_chunker, "analyzer": _check_analyzer, "retrieval path": _check_path,
    "fuser": _check_fuser, "rerank signal": _check_signal, "reranker": _check_reranker,
    "generator": _check_generator, "metric": _check_metric, "statistical test": _check_test,
    "correction": _check_correction, "score normalization": _check_normalization,
    "judge": _check_judge, "dense backend": _check_dense_backend,
}


def check_component(d: Declaration) -> None:
    check_declaration(d)
    CONTRACTS[d.kind](d)


@pytest.mark.parametrize("decl", all_declarations(), ids=lambda d: d.identity)
def test_conformance(decl):
    check_component(decl)


def test_every_kind_has_a_contract():
    all_declarations()
    assert set(CATALOGUE) <= set(CONTRACTS), sorted(set(CATALOGUE) - set(CONTRACTS))
    assert registry("metric").names()  # built-ins registered
