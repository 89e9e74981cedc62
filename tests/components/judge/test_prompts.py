"""Versioned prompt files: both languages, every task, placeholders, fingerprint."""

from __future__ import annotations

import shutil

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.judge.prompts import BUNDLED, TASKS, fill, language, load_prompts


def test_bundled_v1_has_every_task_in_both_languages():
    p = load_prompts("v1")
    assert p.version == "v1" and len(p.fingerprint) == 16
    for lang in ("en", "zh"):
        for task in TASKS:
            system, user = p.render(lang, task, {
                "question": "Q?", "answer": "A", "statement": "S", "context": "[1] C",
                "passage": "P", "reference": "R", "max_claims": 4, "n_questions": 3})
            assert system and user and "{question}" not in user
            assert '{"' in user  # the JSON example survives: braces are literal
        assert "(boom)" in p.retry_note(lang, "boom") or "（boom）" in p.retry_note(lang, "boom")
    assert "Question: Q?" in p.render("en", "support", {"question": "Q?", "statement": "S",
                                                        "context": "[1] C"})[1]


def test_fill_keeps_other_braces_and_requires_values():
    assert fill('{"verdict": "yes"} {question}', {"question": "why {x}?"}) == '{"verdict": "yes"} why {x}?'
    with pytest.raises(InputError, match="no value"):
        fill("{answer}", {})


def test_language_by_script():
    assert language("auto", "法國的首都？") == "zh" and language("auto", "Capital?") == "en"
    assert language("en", "法國的首都？") == "en" and language("zh", "Capital?") == "zh"


def test_user_folder_and_fingerprint(tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(BUNDLED / "v1", mine)
    base = load_prompts("v1")
    same = load_prompts("mine", tmp_path)
    assert same.fingerprint == base.fingerprint and same.version == str(mine)
    (mine / "en.yaml").write_text((mine / "en.yaml").read_text().replace("Reply with JSON only.",
                                                                         "Reply in JSON only."))
    assert load_prompts(str(mine)).fingerprint != base.fingerprint


def test_broken_prompt_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="neither a bundled version"):
        load_prompts("v999", tmp_path)
    bad = tmp_path / "bad"
    shutil.copytree(BUNDLED / "v1", bad)
    (bad / "zh.yaml").write_text("claims: {system: s}\n")
    with pytest.raises(InputError, match="'claims' needs a system and a user"):
        load_prompts(str(bad))
