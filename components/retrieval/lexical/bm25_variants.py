"""The BM25 variants an index can score with: the per-(term, document) weight of each.

Every variant is a sum over the query's terms found in a document of one precomputed
weight w(t, d) (times the term's count in the query), so BM25Index keeps one sparse
matrix whatever the variant; only these functions differ.

- `okapi`: rank-bm25's BM25Okapi (the default): idf ln((N - n + 0.5) / (n + 0.5)) with
  negative idf floored at epsilon x mean idf; idf * tf * (k1 + 1) / (tf + k1 * L), where
  L = 1 - b + b * dl / avgdl.
- `lucene`: Lucene 8+ `BM25Similarity` exactly as Lucene computes it: idf
  log(1 + (N - n + 0.5) / (n + 0.5)) (in double, then float), no (k1 + 1) factor, the
  document length stored in one byte (`SmallFloat.intToByte4`) and read back through its
  256-entry table, avgdl = float(total terms / N), and every step in float32 in
  Lucene's order: weight - weight / (1 + tf * cache[norm]) with
  cache[i] = 1 / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)).
- `bm25plus`: Lv & Zhai's BM25+ (CIKM 2011): idf ln((N + 1) / n), and delta added to the
  saturated tf of every term the document contains.
- `bm25l`: Lv & Zhai's BM25L: c = tf / L, idf ln((N + 1) / (n + 0.5)),
  idf * (k1 + 1) * (c + delta) / (k1 + c + delta).
"""

from __future__ import annotations

import math

import numpy as np

VARIANTS = ("okapi", "lucene", "bm25plus", "bm25l")
DEFAULT_DELTA = {"bm25plus": 1.0, "bm25l": 0.5}


def check(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown BM25 variant {variant!r} (known: {', '.join(VARIANTS)})")
    return variant


def delta_of(variant: str, delta: float | None) -> float:
    """The delta a variant scores with (its published default when None; 0 without one)."""
    if variant not in DEFAULT_DELTA:
        return 0.0
    return DEFAULT_DELTA[variant] if delta is None else float(delta)


# ---- Lucene's one-byte document length (org.apache.lucene.util.SmallFloat) ----------------

def _long_to_int4(i: int) -> int:
    """A non-negative integer as 4 significant bits (3 stored) and a shift (SmallFloat.longToInt4)."""
    bits = i.bit_length()
    if bits < 4:
        return i
    shift = bits - 4
    return ((i >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_long(i: int) -> int:
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_MAX_INT4 = _long_to_int4(2**31 - 1)
NUM_FREE_VALUES = 255 - _MAX_INT4  # lengths below this are stored exactly (24)


def int_to_byte4(i: int) -> int:
    """SmallFloat.intToByte4 as an unsigned byte (0..255): exact below NUM_FREE_VALUES,
    then 4 significant bits, rounded down."""
    if i < 0:
        raise ValueError("length must be non-negative")
    if i < NUM_FREE_VALUES:
        return i
    return NUM_FREE_VALUES + _long_to_int4(i - NUM_FREE_VALUES)


def byte4_to_int(byte: int) -> int:
    """SmallFloat.byte4ToInt of an unsigned byte."""
    if byte < NUM_FREE_VALUES:
        return byte
    return NUM_FREE_VALUES + _int4_to_long(byte - NUM_FREE_VALUES)


# BM25Similarity.LENGTH_TABLE: the decoded length of every byte, as float32
LENGTH_TABLE = np.array([byte4_to_int(i) for i in range(256)], dtype=np.float32)
# the smallest length that encodes to each byte: encoding is searchsorted on these
_BYTE_START = np.array([byte4_to_int(i) for i in range(256)], dtype=np.int64)


def encode_lengths(lengths: np.ndarray) -> np.ndarray:
    """intToByte4 of every length (vectorised: the byte whose decoded value is the largest
    not above the length, since the encoding rounds down and is monotone)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return (np.searchsorted(_BYTE_START, lengths, side="right") - 1).astype(np.int64)


# ---- idf and weights -------------------------------------------------------------------------

def okapi_idf(df: np.ndarray, n: int, epsilon: float) -> np.ndarray:
    """rank-bm25's BM25Okapi idf, with its floor for negative idf: epsilon times the mean
    idf over the vocabulary (summed exactly, so it does not depend on the terms' order)."""
    if df.size == 0:
        return df.astype(np.float64)
    idf = np.log(n - df + 0.5) - np.log(df + 0.5)
    eps = epsilon * (math.fsum(idf.tolist()) / idf.size)
    return np.where(idf < 0, eps, idf)


def idf(variant: str, df: np.ndarray, n: int, epsilon: float) -> np.ndarray:
    """Each term's idf under `variant` (float64 arrays; lucene's values are float32's)."""
    df = np.asarray(df, dtype=np.float64)
    if variant == "okapi":
        return okapi_idf(df, n, epsilon)
    if variant == "lucene":
        return np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32).astype(np.float64)
    if variant == "bm25plus":
        return np.log((n + 1.0) / df) if df.size else df
    if variant == "bm25l":
        return np.log((n + 1.0) / (df + 0.5)) if df.size else df
    raise ValueError(f"unknown BM25 variant {variant!r}")


def avgdl(variant: str, total_len: float, n: int) -> float:
    """The mean document length a variant scores with (1.0 for an empty collection);
    Lucene's is float(total / N)."""
    value = float(total_len) / n if n and total_len > 0 else 1.0
    return float(np.float32(value)) if variant == "lucene" else value


def weights(variant: str, idf_t: np.ndarray, tf: np.ndarray, dl: np.ndarray, avg: float,
            k1: float, b: float, delta: float) -> np.ndarray:
    """w(t, d) of each (term, document) pair: the term's idf, its count in the document,
    the document's length (tokens), all as arrays of the pairs."""
    tf = np.asarray(tf, dtype=np.float64)
    if variant == "lucene":
        return lucene_weights(idf_t, tf, dl, avg, k1, b)
    norm = 1.0 - b + b * np.asarray(dl, dtype=np.float64) / avg
    if variant == "okapi":
        return idf_t * tf * (k1 + 1.0) / (tf + k1 * norm)
    if variant == "bm25plus":
        return idf_t * (tf * (k1 + 1.0) / (tf + k1 * norm) + delta)
    if variant == "bm25l":
        c = tf / norm
        return idf_t * (k1 + 1.0) * (c + delta) / (k1 + c + delta)
    raise ValueError(f"unknown BM25 variant {variant!r}")


def lucene_cache(avg: float, k1: float, b: float) -> np.ndarray:
    """BM25Similarity's per-byte cache: 1 / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)),
    each operation in float32, in Lucene's order."""
    f = np.float32
    k1f, bf, avgf = f(k1), f(b), f(avg)
    with np.errstate(divide="ignore"):
        return f(1.0) / (k1f * ((f(1.0) - bf) + bf * LENGTH_TABLE / avgf))


def lucene_weights(idf_t: np.ndarray, tf: np.ndarray, dl: np.ndarray, avg: float,
                   k1: float, b: float) -> np.ndarray:
    """weight - weight / (1 + freq * cache[byte(dl)]) in float32 (BM25Scorer.score with
    boost 1), returned as float64 holding float32 values."""
    f = np.float32
    cache = lucene_cache(avg, k1, b)
    inv = cache[encode_lengths(dl)]
    w = np.asarray(idf_t).astype(f)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = w - w / (f(1.0) + np.asarray(tf).astype(f) * inv)
    return out.astype(np.float64)
