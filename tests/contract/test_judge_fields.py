"""Every field of the `judge:` section changes the judge stage's key, or is declared a
setting that cannot change a verdict (the judge's counterpart of test_config_fields.py).
`prompts` enters by the hash of the files it names, `calibration` by the hash of its file
(the calibrate stage's key)."""

from __future__ import annotations

import pytest

from ablate.components.config import PipelineConfig
from ablate.components.judge.config import SETTINGS, JudgeConfig
from ablate.flows.plan.graph import Plan, add_variant

BASE = {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]}, "labels": "span",
        "calibration": "c0"}
CHANGED = {"backend": "openai", "model": "other", "base_url": "http://x/v1",
           "json_mode": "json_object", "language": "zh", "metrics": ["faithfulness"],
           "claims": "sentences", "temperature": None}
BY_CONTENT = {"prompts": "prompts", "calibration": "calibration"}


def _keys(cfg: JudgeConfig, prompts: str = "p0", calibration: str = "c0") -> dict[str, str]:
    exp = BASE | {"judge": {"config": cfg.identity(), "prompts": prompts},
                  "calibration": calibration}
    return add_variant(Plan(), "v", PipelineConfig(), exp)


@pytest.mark.parametrize("field", sorted(JudgeConfig.model_fields))
def test_every_judge_field_changes_a_key_or_is_a_setting(field):
    base = _keys(JudgeConfig())
    if field in SETTINGS:
        value = getattr(JudgeConfig(), field)
        other = "KEY_VAR" if value is None else value + 1
        assert _keys(JudgeConfig(**{field: other})) == base
        return
    if field in BY_CONTENT:
        changed = _keys(JudgeConfig(), **{BY_CONTENT[field]: "other"})
        stage = "judge" if field == "prompts" else "calibrate"
        assert changed[stage] != base[stage]
        return
    if field == "temperature":  # fixed at 0: any other value is refused, so none can differ
        with pytest.raises(ValueError):
            JudgeConfig(temperature=0.2)
        return
    value = getattr(JudgeConfig(), field)
    other = CHANGED.get(field, value + 1 if isinstance(value, int) else None)
    assert other is not None, f"no changed value for judge.{field}"
    assert _keys(JudgeConfig(**{field: other}))["judge"] != base["judge"], field


def test_judge_section_changes_no_other_stage():
    a, b = _keys(JudgeConfig()), _keys(JudgeConfig(seed=3))
    same = {k for k in a if a[k] == b[k]}
    assert {"chunk", "label", "fuse", "rerank", "assemble", "generate"} <= same
    assert a["judge"] != b["judge"] and a["score"] != b["score"]
