"""The inversion interval's pattern counts run in blocks of columns, and the enumerated
p-values share their sign matrices: the same numbers as the direct formulas."""

from __future__ import annotations

import numpy as np

from ablate.components.stats import inversion
from ablate.components.stats.inversion import REL_TOL, SignPatterns
from ablate.components.stats.signflip import enum_pvalue, sign_matrix_blocks, signflip_pvalues


def _direct(pat: SignPatterns, S: np.ndarray, N: np.ndarray, t: np.ndarray,
            cols: np.ndarray) -> np.ndarray:
    """The p of the formula, on whole matrices (patterns x columns)."""
    a, c = pat.a_t.T, pat.c_t.T
    observed = np.abs(S.sum(axis=0)[cols] - t * N.sum(axis=0)[cols])
    spread = np.abs(S[:, cols] - t * N[:, cols]).sum(axis=0)
    tol = REL_TOL * spread + 1e-300
    hits = (np.abs(a[:, cols] - t * c[:, cols]) >= observed - tol).sum(axis=0)
    return hits / a.shape[0] if pat.exact else (hits + 1.0) / (a.shape[0] + 1.0)


def test_blocked_counts_equal_the_formula(monkeypatch):
    monkeypatch.setattr(inversion, "BLOCK_COLUMNS", 5)  # several blocks, a partial last one
    rng = np.random.default_rng(3)
    for g, ncol in ((18, 37), (9, 21)):  # Monte-Carlo patterns, then every pattern
        S = rng.normal(size=(g, ncol)).round(2)
        N = rng.integers(1, 4, size=(g, ncol)).astype(float)
        pat = SignPatterns(S, N, resamples=3000, seed=1)
        for cols in (np.arange(ncol), np.array([5, 1, 2, 3, 20, 19, 0, 7, 8, 9, 10, 4])):
            # shifts at the estimate, where counts tie with the observed statistic, and beyond
            theta = S[:, cols].sum(axis=0) / N[:, cols].sum(axis=0)
            for t in (theta, theta + rng.normal(scale=0.3, size=cols.size), np.zeros(cols.size)):
                assert np.array_equal(pat.pvalue(t, cols), _direct(pat, S, N, t, cols))


def test_enumeration_shares_sign_matrices_with_the_same_p():
    rng = np.random.default_rng(4)
    kept: dict = {}
    for n in (3, 9, 9, 12, 3):
        d = rng.normal(size=n).round(3)
        assert enum_pvalue(d, kept) == enum_pvalue(d)
    assert sorted({k[0] for k in kept}) == [3, 9, 12]
    D = rng.normal(size=(40, 6)) * (rng.random((40, 6)) < 0.25)
    p, method = signflip_pvalues(D, resamples=2000, seed=0)
    assert "exact-enum" in method
    for j, m in enumerate(method):
        if m == "exact-enum":
            assert p[j] == enum_pvalue(D[:, j])


def test_columns_where_no_question_differs_count_as_the_formula():
    # such a column (every cluster sum 0) is counted from its distinct c, weighted
    rng = np.random.default_rng(5)
    for g in (18, 9):  # Monte-Carlo patterns, then every pattern
        S = rng.normal(size=(g, 8)).round(2)
        S[:, [0, 3, 4, 7]] = 0.0
        N = rng.integers(1, 4, size=(g, 8)).astype(float)
        N[:, 7] = 1.0
        pat = SignPatterns(S, N, resamples=3000, seed=2)
        assert pat.zero.tolist() == [True, False, False, True, True, False, False, True]
        # a column may stand twice (two shifts of one column in one call)
        for cols in (np.arange(8), np.array([7, 1, 0, 4]), np.array([3, 0]), np.array([0, 3, 0, 1, 0])):
            for t in (np.zeros(cols.size), rng.normal(scale=1e-12, size=cols.size),
                      rng.normal(scale=0.5, size=cols.size)):
                assert np.array_equal(pat.pvalue(t, cols), _direct(pat, S, N, t, cols))


def _one_matrix(S: np.ndarray, N: np.ndarray, resamples: int, seed: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """a_t and c_t as built before they were written block by block: every pattern's
    products in one patterns x columns matrix, then transposed."""
    g = S.shape[0]
    blocks = ([inversion.all_signs(g)] if 2**g <= inversion.EXACT_PATTERNS
              else list(sign_matrix_blocks(g, resamples, seed)))
    a = np.concatenate([signs @ S for signs in blocks], axis=0)
    c = np.concatenate([signs @ N for signs in blocks], axis=0)
    return np.ascontiguousarray(a.T), np.ascontiguousarray(c.T)


def test_pattern_sums_written_block_by_block_are_the_one_matrix_bit_for_bit():
    rng = np.random.default_rng(6)
    # every pattern; Monte-Carlo in one block, in whole blocks, with a partial last one
    for g, resamples in ((9, 3000), (14, 100), (16, 2048), (18, 5000), (16, 10_000)):
        S = rng.normal(size=(g, 23)) * (rng.random((g, 23)) < 0.6)
        S[:, 4] = 0.0
        N = rng.integers(0, 5, size=(g, 23)).astype(float)
        pat = SignPatterns(S, N, resamples=resamples, seed=7)
        a_t, c_t = _one_matrix(S, N, resamples, 7)
        assert pat.a_t.flags.c_contiguous and pat.c_t.flags.c_contiguous
        assert pat.a_t.tobytes() == a_t.tobytes()
        assert pat.c_t.dtype == np.int16 and np.array_equal(pat.c_t, c_t)  # whole counts
        assert pat.patterns == a_t.shape[1] == (2**g if pat.exact else resamples)


def test_counts_held_as_float64_where_int16_would_not_be_exact(monkeypatch):
    monkeypatch.setattr(inversion, "BLOCK_COLUMNS", 3)
    rng = np.random.default_rng(8)
    for g, scale in ((18, 0.5), (9, 0.5), (18, 3000.0), (9, 3000.0)):
        S = rng.normal(size=(g, 7)).round(2)
        S[:, 2] = 0.0
        N = rng.integers(1, 4, size=(g, 7)) * scale  # halves, or sums over int16's range
        pat = SignPatterns(S, N, resamples=3000, seed=9)
        assert pat.c_t.dtype == np.float64
        assert np.array_equal(pat.c_t, _one_matrix(S, N, 3000, 9)[1])
        cols = np.arange(7)
        for t in (np.zeros(7), S.sum(axis=0) / N.sum(axis=0), rng.normal(scale=0.3, size=7)):
            assert np.array_equal(pat.pvalue(t, cols), _direct(pat, S, N, t, cols))
