"""The embedder-truncation finding says how much text the window cuts, not only how many
chunks it touches."""

from __future__ import annotations

import polars as pl

from ablate.components.report.findings import warnings

EMPTY = pl.DataFrame(schema={"variant": pl.Utf8, "metric": pl.Utf8, "significant": pl.Boolean,
                             "mde": pl.Float64, "delta": pl.Float64, "wins": pl.Int64,
                             "losses": pl.Int64})


def _manifest(**entry):
    return {"chunkings": {"k": {"chunking": {"size": 256}, "chunks": 100,
                                "share_over_embedder_window": 0.93, **entry}}}


def test_a_cut_of_two_pieces_is_said_to_be_small():
    man = _manifest(embedder_window=256, pieces_cut_mean=1.9, pieces_cut_max=2,
                    share_of_pieces_unseen=0.0061)
    (line,) = warnings(EMPTY, [], [], man)
    assert "93% of chunks with chunking size 256" in line
    assert "256 word pieces" in line and "by 1.9 on average (at most 2)" in line
    assert "never reads 0.6% of this chunking's text" in line
    assert "only their start" not in line


def test_a_large_cut_is_said_to_be_large():
    man = _manifest(embedder_window=256, pieces_cut_mean=120.5, pieces_cut_max=146,
                    share_of_pieces_unseen=0.3012)
    (line,) = warnings(EMPTY, [], [], man)
    assert "by 120.5 on average (at most 146)" in line and "30.1%" in line


def test_older_manifest_without_amounts():
    (line,) = warnings(EMPTY, [], [], _manifest())
    assert "does not read their ends" in line


def test_below_five_percent_no_finding():
    assert warnings(EMPTY, [], [], _manifest(share_over_embedder_window=0.04)) == []
