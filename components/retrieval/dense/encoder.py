"""Dense retrieval: a cached sentence-transformers encoder and exact blocked top-K search.

The encoder runs on the backend `retrieval.dense_backend` names (backends.py):
torch by default (sentence-transformers' vectors; for BERT folders such as MiniLM its
forward in plain torch, bert_torch.py), or the model exported to ONNX (float or int8).

Embeddings are L2-normalised, so cosine similarity is a dot product. Search is exact
(no ANN): the corpus is scanned in blocks of rows and each block's candidates are
merged into a running top-K, so memory is bounded by queries x (K + block) rather
than queries x corpus.
"""

from __future__ import annotations

import math
import os
import threading
import time
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from ablate.components.contract.records import Ranking
from ablate.components.retrieval.dense.backends import BACKENDS, cache_id
from ablate.components.retrieval.dense.embed_cache import EmbeddingCache, text_key
from ablate.components.retrieval.dense.span_pieces import encode_counts, load_tokenizer, span_piece_counts
from ablate.components.retrieval.latency import TimedVectors
from ablate.components.retrieval.topk import merge_topk
from ablate.components.runtime.digest import model_identity
from ablate.components.runtime.memory import release_freed_memory
from ablate.components.runtime.progress import Progress
from ablate.components.runtime.threads import torch_threads

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def model_fingerprint(model_path: Path) -> str:
    """The model folder's identity (ablate.components.runtime.digest.model_identity): its name and
    the digest of every file in it, a stable id for the embedding cache."""
    return model_identity(model_path)


class DenseEncoder:
    """Encodes texts with a local sentence-transformers model, through an embedding cache.

    `backend` names the runtime (`torch`, `onnx`, `onnx-int8`); the ONNX ones export the
    model into `export_dir` once (None: in memory, per process). The cache is kept per
    model and backend, with the seconds each vector took (`encode_timed` returns them, for
    latencies). The model is loaded lazily: a run whose texts are all cached never loads it.
    `counters`: embedded = distinct texts run through the model, reused = texts served
    without the model (cache hits and repeats), both cumulative in this process.
    """

    shard_size = 4096  # texts embedded and persisted per cache shard
    progress_slice = 512  # texts per encode call: one progress step each

    def __init__(self, model_path: Path, cache_dir: Path | None, batch_size: int = 16,
                 backend: str = "torch", export_dir: Path | None = None) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_dir():
            raise FileNotFoundError(f"dense model directory not found: {self.model_path}")
        self.batch_size = int(batch_size)
        self.backend = backend
        self._load_backend = BACKENDS.get(backend)
        self.export_dir = None if export_dir is None else Path(export_dir)
        self.fingerprint = model_fingerprint(self.model_path)
        self.model_id = cache_id(self.fingerprint, backend)
        self.cache = EmbeddingCache(None if cache_dir is None else Path(cache_dir), self.model_id)
        self._model = None
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._embedded = 0
        self._reused = 0

    @property
    def counters(self) -> dict[str, int]:
        return {"embedded": self._embedded, "reused": self._reused}

    @property
    def model(self):
        """The backend's runtime, loaded on first use (CPU, offline): for torch a BertEncoder
        (BERT folders) or a SentenceTransformer, for the ONNX backends an OnnxEmbedder; all
        with SentenceTransformer's `encode`."""
        with self._load_lock:
            if self._model is None:
                self._model = self._load_backend(self.model_path, self.fingerprint,
                                                 self.export_dir)
            return self._model

    def unload(self) -> None:
        """Drop the loaded runtime (the next use loads it again) and hand its memory back;
        nothing to do (no collection, no trim: ~0.5 s on a sweep's heap) when none is loaded."""
        import gc
        with self._load_lock:
            if self._model is None:
                return
            self._model = None
        gc.collect()
        release_freed_memory()

    def _embed(self, texts: list[str], progress: Progress | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """(embeddings, seconds per text) of `texts`, encoded in slices of `progress_slice`
        texts so that a long encoding reports its progress (count, rate, ETA) as it goes; a
        slice's model time (loading the model not included) is split evenly over its texts."""
        out, secs = [], []
        # one encode at a time: torch (or onnxruntime) already uses every core
        with self._encode_lock, torch_threads(self.backend == "torch") as threads:
            for i in range(0, len(texts), self.progress_slice):
                part = texts[i:i + self.progress_slice]
                model = self.model  # loaded (once) outside the timed call
                threads.adjust()  # the cores the machine leaves idle now
                t0 = time.perf_counter()
                vecs = model.encode(part, batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
                secs.append(np.full(len(part), (time.perf_counter() - t0) / len(part)))
                out.append(np.asarray(vecs, dtype=np.float32))
                if progress is not None:
                    progress.step(len(part))
                release_freed_memory()
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32), np.zeros(0)
        return np.concatenate(out), np.concatenate(secs)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim), L2-normalised, in input order; embeds only cache misses."""
        return self._encode(list(texts), timed=False).vectors

    def encode_timed(self, texts: Sequence[str]) -> TimedVectors:
        """The vectors of `texts` (as `encode`) with the seconds each took to compute:
        measured now for a text embedded now, else the seconds recorded with its cache
        entry (`reused` True). A cache entry without recorded seconds (written before they
        were) is embedded again for its seconds, which are stored with the cached vector
        (kept as it was). What a question's online encoding costs, warm cache or not."""
        return self._encode(list(texts), timed=True)

    def _encode(self, texts: list[str], timed: bool) -> TimedVectors:
        if not texts:
            return TimedVectors(np.zeros((0, self.dim), dtype=np.float32), np.zeros(0),
                                np.zeros(0, dtype=bool))
        keys = [text_key(t) for t in texts]
        found = self.cache.lookup_timed(keys)
        miss: dict[str, str] = {}  # key -> text, first occurrence order
        for k, t, f in zip(keys, texts, found):
            if (f is None or (timed and math.isnan(f[1]))) and k not in miss:
                miss[k] = t
        by_key: dict[str, tuple[np.ndarray, float]] = {}
        if miss:
            miss_keys, miss_texts = list(miss), list(miss.values())
            cached = {k: f[0] for k, f in zip(keys, found) if f is not None}  # timed again only
            progress = Progress(f"encode {self.model_path.name}", len(miss_texts))
            for i in range(0, len(miss_keys), self.shard_size):  # a kill loses one slab at most
                slab = miss_keys[i:i + self.shard_size]
                new, secs = self._embed(miss_texts[i:i + self.shard_size], progress)
                if cached:
                    new = np.stack([cached.get(k, v) for k, v in zip(slab, new)])
                self.cache.store(slab, new, secs)
                by_key.update((k, (v, float(s))) for k, v, s in zip(slab, new, secs))
        got: list[tuple[np.ndarray, float]] = []
        for k, f in zip(keys, found):
            # every key looked up in vain (timed: or without seconds) is in `miss`, so in `by_key`
            got.append(f if f is not None and k not in by_key else by_key[k])
        with self._lock:
            self._embedded += len(miss)
            self._reused += len(texts) - len(miss)
        return TimedVectors(np.stack([g[0] for g in got]).astype(np.float32, copy=False),
                            np.asarray([g[1] for g in got], dtype=np.float64),
                            np.asarray([k not in by_key for k in keys], dtype=bool))

    @property
    def max_seq_length(self) -> int:
        """Word pieces the model reads (incl. [CLS]/[SEP]); longer texts are silently cut.

        Read from sentence_bert_config.json, so asking does not load the model.
        """
        import json
        cfg = self.model_path / "sentence_bert_config.json"
        if cfg.is_file():
            return int(json.loads(cfg.read_text())["max_seq_length"])
        return int(self.model.max_seq_length)

    def window_stats(self, texts: Iterable[str]) -> dict[str, float]:
        """How much of `texts` the model never reads: the one embedder-window rule, used for
        the manifest and the report's warning. Counted with the model's own tokenizer
        (special tokens included) against its max_seq_length (window_summary). Texts are
        read PIECE_BLOCK at a time."""
        return window_summary(self._piece_counts(texts), self.max_seq_length)

    def span_window_stats(self, text_of: Callable[[str], str],
                          spans: Sequence[tuple[Sequence[str], Sequence[int], Sequence[int]]]
                          ) -> list[dict[str, float]]:
        """window_stats of each set of spans (document ids, starts, ends: a chunking's
        chunks) of the documents text_of gives, counted together, each document encoded
        once (span_pieces) where the model has a tokenizer.json."""
        path = self.model_path / "tokenizer.json"
        if not path.is_file():
            return [self.window_stats(text_of(d)[a:b] for d, a, b in zip(*s)) for s in spans]
        counts = span_piece_counts(load_tokenizer(path), text_of,
                                   [d for s in spans for d in s[0]],
                                   [a for s in spans for a in s[1]], [b for s in spans for b in s[2]])
        bounds = np.cumsum([0] + [len(s[0]) for s in spans])
        return [window_summary([counts[lo:hi]], self.max_seq_length)
                for lo, hi in zip(bounds[:-1], bounds[1:])]

    PIECE_BLOCK = 8192

    def _piece_counts(self, texts: Iterable[str]) -> Iterator[np.ndarray]:
        """Word pieces per text under the model's tokenizer (tokenizer.json, no model
        load), a block of texts at a time."""
        path = self.model_path / "tokenizer.json"
        if path.is_file():
            tok = load_tokenizer(path)

            def count(block: list[str]) -> list[int]:
                return encode_counts(tok, block)
        else:
            hf = self.model.tokenizer  # a model without tokenizer.json: load it

            def count(block: list[str]) -> list[int]:
                return [len(hf(t, truncation=False)["input_ids"]) for t in block]
        it = iter(texts)
        while block := list(islice(it, self.PIECE_BLOCK)):
            yield np.asarray(count(block), dtype=np.int64)

    @property
    def dim(self) -> int:
        model = self.model  # sentence-transformers 6 renamed the method; older ones lack it
        get = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension
        return int(get())


def window_summary(lengths: Iterable[np.ndarray], window: int) -> dict[str, float]:
    """Of texts of these word-piece lengths (blocks of them), against a window of that many
    pieces: `share` of texts cut, `mean_cut` / `max_cut` pieces beyond the window among
    the cut ones, and `unseen_share` of all pieces."""
    n = total = n_cut = cut_sum = cut_max = 0
    for block in lengths:
        n += block.size
        total += int(block.sum())
        cut = block[block > window] - window
        n_cut += cut.size
        cut_sum += int(cut.sum())
        cut_max = max(cut_max, int(cut.max(initial=0)))
    return {"share": n_cut / n if n else 0.0,
            "mean_cut": cut_sum / n_cut if n_cut else 0.0,
            "max_cut": float(cut_max),
            "unseen_share": cut_sum / total if total else 0.0}


class DenseIndex:
    """Normalised vectors of documents held in id order, searched exactly in blocks.

    A score is `exact_scores`' value, a function of the two vectors alone: BLAS sums a
    float32 matrix product in an order that depends on the matrix shapes (the block, the
    other queries), so the same pair can score differently in the last bit over a shard,
    a smaller corpus or another batch of questions. The float32 product only selects the
    candidates, with a margin wider than its error bound; the candidates are then scored
    exactly, so one index over the whole corpus and the merge of shard indexes
    (components/retrieval/shards.py) give the same rankings, scores and all.

    `dtype` float16 stores the vectors at half the memory; each block is widened to
    float32 to be searched, and scores are those of the widened vectors (so they differ
    slightly from float32's: `retrieval.dense_index: flat16` measures by how much)."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray, block: int = 4096,
                 dtype: str = "float32") -> None:
        if len(ids) != vectors.shape[0]:
            raise ValueError(f"{len(ids)} ids for {vectors.shape[0]} vectors")
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        self.ids = [ids[i] for i in order]
        store = np.dtype(dtype)
        if store not in (np.float32, np.float16):
            raise ValueError(f"dense vectors are stored as float32 or float16, not {dtype}")
        if all(i == j for i, j in enumerate(order)):  # in id order already: no copy (a
            # memory-mapped file stays on disk, read a block at a time by search)
            self.vectors = np.asarray(vectors, dtype=store)
        else:  # reordered a block at a time (no whole float32 copy beside a float16 one)
            self.vectors = np.empty((len(order), vectors.shape[1]), dtype=store)
            for a in range(0, len(order), block):
                self.vectors[a:a + block] = vectors[order[a:a + block]]
        self.block = int(block)
        # the largest norm, a block at a time (a memory-mapped matrix is not read whole)
        self._max_norm = max((float(np.linalg.norm(self.vectors[a:a + self.block]
                                                   .astype(np.float64), axis=1).max())
                              for a in range(0, len(self.ids), self.block)), default=0.0)

    def search(self, queries: np.ndarray, k: int, query_block: int = 256) -> list[Ranking]:
        """Top-k (id, cosine) per query row, best first, ties by id (scores as
        `exact_scores`)."""
        n = len(self.ids)
        k = min(int(k), n)
        out: list[Ranking] = []
        for q0 in range(0, queries.shape[0], query_block):
            q = np.asarray(queries[q0:q0 + query_block], dtype=np.float32)
            if k <= 0:
                out.extend([] for _ in range(q.shape[0]))
                continue
            margin = 2.0 * product_error(q, self._max_norm)  # per query
            best_s = np.empty((q.shape[0], 0), dtype=np.float32)
            best_p = np.empty((q.shape[0], 0), dtype=np.int64)
            rows, cols, vals = [], [], []
            for c0 in range(0, n, self.block):
                s = block_product(q, self.vectors[c0:c0 + self.block].astype(np.float32,
                                                                           copy=False))
                p = np.broadcast_to(np.arange(c0, c0 + s.shape[1], dtype=np.int64), s.shape)
                best_s, best_p = merge_topk(np.concatenate([best_s, s], axis=1),
                                            np.concatenate([best_p, p], axis=1), k)
                # the k-th product so far is at most the final one: whatever can reach the
                # exact top k passes
                r, c = np.nonzero(s >= (best_s[:, -1].astype(np.float64) - margin)[:, None])
                rows.append(r)
                cols.append(c + c0)
                vals.append(s[r, c])
            r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
            keep = v >= best_s[r, -1].astype(np.float64) - margin[r]
            r, c = r[keep], c[keep]
            exact = exact_scores(q[r], self.vectors[c])
            order = np.lexsort((c, -exact, r))  # by query, score descending, then position
            r, c, exact = r[order], c[order], exact[order]
            starts = np.searchsorted(r, np.arange(q.shape[0] + 1))
            for i in range(q.shape[0]):
                a, b = starts[i], min(starts[i + 1], starts[i] + k)
                out.append([(self.ids[p], float(x)) for p, x in zip(c[a:b].tolist(),
                                                                    exact[a:b].tolist())])
        return out


def block_product(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """The float32 matrix product that selects candidates (BLAS: its summation order, so
    its last bit, depends on the shapes; tests replace it with one that is forced to)."""
    return queries @ vectors.T


def exact_scores(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Row-wise dot products of float32 pairs as float32, a function of each pair alone:
    the float64 products are exact, summed by a fixed pairwise tree (elementwise adds, so
    no BLAS or reduction order is involved), then rounded once to float32."""
    prods = queries.astype(np.float64) * vectors.astype(np.float64)
    while prods.shape[1] > 1:
        half = prods.shape[1] // 2
        folded = prods[:, :half] + prods[:, half:2 * half]
        if prods.shape[1] % 2:
            folded = np.concatenate([folded, prods[:, 2 * half:]], axis=1)
        prods = folded
    total = prods[:, 0] if prods.shape[1] else np.zeros(prods.shape[0])
    return total.astype(np.float32)


def product_error(queries: np.ndarray, max_norm: float) -> np.ndarray:
    """Per query row, a bound on |float32 matrix product - exact_scores| for any document
    of norm <= max_norm, whatever order BLAS sums in (gamma_d * |q| * |v| for the product,
    half a float32 step for the rounding, the float64 tree's error)."""
    d = queries.shape[1]
    u32, u64 = 2.0 ** -24, 2.0 ** -53
    gamma = d * u32 / (1 - d * u32)
    scale = np.linalg.norm(queries.astype(np.float64), axis=1) * max_norm
    return (gamma + 2 * u32 + 2 * d * u64) * scale + 1e-30
