"""The two search_many paths of BM25Index (numba kernel, numpy blocks), as a fixture."""

from __future__ import annotations

import importlib.util

import pytest

from ablate.components.retrieval.lexical import bm25_numba

PATHS = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])


@pytest.fixture(params=PATHS)
def bm25_path(request, monkeypatch):
    """Runs the test once per path: with numba (when installed) and with numpy."""
    monkeypatch.setattr(bm25_numba, "ENABLED", request.param == "numba")
    monkeypatch.setattr(bm25_numba, "MIN_WORK", 0)  # the kernel even for tiny test batches
    return request.param
