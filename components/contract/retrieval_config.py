"""The retrieval section of a variant's config: the paths, their depth and analyzer, and
each path family's own settings (BM25's, the approximate dense index's, the knowledge
graph's). Stages read only the fields their components declare."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializationInfo, field_validator, model_serializer

from ablate.components.contract.frozen import ALL_FIELDS, Frozen


class BM25Config(Frozen):
    """BM25 formula and parameters (docs/bm25-variants.md)."""

    k1: float = Field(1.5, ge=0)
    """Term-frequency saturation."""
    b: float = Field(0.75, ge=0, le=1)
    """Length normalisation."""
    epsilon: float = Field(0.25, ge=0)
    """`okapi`: floor for negative idf, as a fraction of the mean idf."""
    variant: Literal["okapi", "lucene", "bm25plus", "bm25l"] = "okapi"
    """`okapi` (rank-bm25's BM25Okapi, the default), `lucene` (Lucene 8+'s
    BM25Similarity, as Elasticsearch/OpenSearch/Solr score: its idf, one-byte lengths,
    float32), `bm25plus` (BM25+) or `bm25l` (BM25L)."""
    delta: float | None = Field(None, ge=0)
    """`bm25plus`/`bm25l`: the lower bound added to the saturated tf (unset: 1.0 for
    bm25plus, 0.5 for bm25l); the other variants ignore it."""

    @model_serializer(mode="wrap")
    def _drop_unset_variant(self, handler: Any, info: SerializationInfo) -> Any:
        """`variant: okapi` and an unset `delta` are left out of the dump, so the stage
        keys (which hash the dumped `retrieval.bm25`) of configs from before variants
        existed stay as they were; a dump with `context={ALL_FIELDS: True}` keeps them
        (the sweep planner's view of which fields exist)."""
        data = handler(self)
        if isinstance(data, dict) and not (info.context or {}).get(ALL_FIELDS):
            if data.get("variant") == "okapi":
                data.pop("variant")
            if data.get("delta") is None:
                data.pop("delta", None)
        return data


class AnnConfig(Frozen):
    """Build and search parameters of the approximate dense indexes (FAISS), read only by
    the index that `dense_index` names: `hnsw_*` by `hnsw`, `ivf_*` by `ivf`; the exact
    `flat` index reads none of them."""

    hnsw_m: int = Field(32, ge=2, le=256)
    """`hnsw`: links per vector in the graph (M; twice as many on the bottom layer): more
    gives higher recall, a slower build and more memory."""
    hnsw_ef_construction: int = Field(64, ge=1, le=4096)
    """`hnsw`: candidates kept while inserting a vector (efConstruction)."""
    hnsw_ef_search: int = Field(64, ge=1, le=65536)
    """`hnsw`: candidates kept while searching (efSearch); at least `depth` is used."""
    ivf_nlist: int = Field(0, ge=0, le=1_000_000)
    """`ivf`: k-means cells the vectors are split into; 0 (the default) picks 4·sqrt(chunks),
    at most chunks/39 and 1,024, at least 1; never more than the chunks."""
    ivf_nprobe: int = Field(8, ge=1, le=1_000_000)
    """`ivf`: cells searched per question, nearest first (all cells: the exact ranking)."""


class GraphConfig(Frozen):
    """The `graph` retrieval path (docs/graph-path.md): a term/entity graph built per
    chunking without an LLM, searched by spreading from the question's nodes."""

    extractor: str = "terms"  # a `graph node extractor` (retrieval/graph/nodes.py)
    """What becomes a node: `terms` (the default: capitalised spans such as names and
    titles; for Chinese, analyzer words of two or more characters), `words` (every analyzer
    term but function words and numbers), or a plugin's extractor."""
    spreading: str = "ppr"  # a `graph spreading` rule (retrieval/graph/spread.py)
    """How mass spreads from the question's nodes: `ppr` (Personalized PageRank, the
    default) or `hops` (one hop along the edges), or a plugin's rule."""
    damping: float = Field(0.5, gt=0, lt=1)
    """`ppr`: the share of mass that follows an edge at each step (the rest returns to the
    question's nodes); HippoRAG uses 0.5."""
    min_pmi: float = Field(0.0, ge=0, lt=1)
    """An edge is kept when the normalised PMI (NPMI, -1..1) of its two nodes' co-occurrence
    within a chunk is above this."""
    min_count: int = Field(1, ge=1)
    """An edge is kept when its two nodes share at least this many chunks."""
    max_df: float = Field(0.05, gt=0, le=1)
    """A term in more than this share of the chunks is no node (a term in one chunk always
    may be)."""


class RetrievalConfig(Frozen):
    """First-stage retrieval: one ranking per path, fused when there are several."""

    paths: tuple[str, ...] = ("bm25", "dense")
    """Retrieval paths; one path is used as is, several are fused (`fusion`). Order does not matter."""
    depth: int = Field(50, ge=1, le=10000)
    """Candidates each path returns per question."""
    analyzer: str = "auto"
    """Text analyzer (tokenisation) of BM25 and of the graph path's node names: `auto`
    (the default) picks `zh` for a mostly-CJK corpus, else `default`; or any registered
    analyzer (`default`, `english`, `english_stem`, `zh`, `cjk_bigram`)."""
    analyzer_options: dict[str, str] = Field(default_factory=dict)
    """Options of the analyzer, e.g. `{user_dict: path}` for `zh`."""
    bm25: BM25Config = BM25Config()
    """BM25 parameters."""
    dense_model: str = "all-MiniLM-L6-v2"
    """Sentence-transformers model: the bundled `all-MiniLM-L6-v2`, or a local model folder."""
    dense_backend: str = "onnx"  # a `dense backend` (dense/backends.py), checked by preflight
    """Runtime of the dense model (dense path and `semantic` signal): `onnx` (the default:
    the model exported locally to ONNX once per machine, run by onnxruntime, each text
    alone), `torch` (sentence-transformers' vectors, the reference; BERT folders with mean
    pooling such as MiniLM run without importing it, bitwise the same; models the ONNX
    export does not reproduce, e.g. with a Dense layer, need it) or `onnx-int8` (the
    export with int8 weights). Their vectors differ slightly, so sweep it to measure the
    effect."""
    dense_index: str = "flat"  # a `dense index` (ann.py), checked by preflight
    """Index the dense path searches: `flat` (exact, the default), `flat16` (exact over the
    vectors stored in float16: half the memory, slightly different scores), or an
    approximate FAISS index, `hnsw` (a graph) or `ivf` (k-means cells); the recall of any
    but `flat` against `flat` is the metric `dense/ann_recall_at_k`, its build and search
    seconds are in timings.parquet (`index/`) and MLflow."""
    ann: AnnConfig = AnnConfig()
    """Parameters of the approximate indexes (`dense_index` `hnsw` or `ivf`)."""
    graph: GraphConfig = GraphConfig()
    """The `graph` path's settings."""

    @field_validator("paths")
    @classmethod
    def _paths_ok(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("at least one retrieval path is needed")
        if len(set(v)) != len(v):
            raise ValueError("retrieval paths repeat")
        return tuple(sorted(v))


