"""TREC topics, qrels and collections that are not UTF-8 (issue 58.4): one line naming
the file and line (`FILE:LINE: not UTF-8 (...; set encoding: latin-1 ...)`), exit 2, in
`ablate reproduce`, `ablate validate` and `ablate check`; `encoding: latin-1` reads them,
and the encoding changes the data set's fingerprint when it changes the text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.data import load_dataset, trec
from tests.specs import data_set, write_experiment

CAFE = "café crème"  # é è: one byte each in Latin-1, not UTF-8


def _trec_folder(tmp_path: Path, encoding: str, bad: str = "topics") -> Path:
    """A TREC folder (topics, qrels, corpus/) whose `bad` file is written in `encoding`."""
    folder = tmp_path / "trec"
    (folder / "corpus").mkdir(parents=True)
    enc = {k: (encoding if k == bad else "utf-8") for k in ("topics", "qrels", "corpus")}
    docs = {"d1": f"the {CAFE} recipe", "d2": "apples and pears", "d3": "tea"}
    (folder / "corpus" / "docs.jsonl").write_bytes("".join(
        json.dumps({"id": k, "contents": v}, ensure_ascii=False) + "\n"
        for k, v in docs.items()).encode(enc["corpus"]))
    (folder / "topics.tsv").write_bytes(f"1\tapples\n2\t{CAFE}\n".encode(enc["topics"]))
    (folder / "qrels.txt").write_bytes("1 0 d2 1\n2 0 d1 1\n2 0 d3 0\n".encode(enc["qrels"]))
    return folder


def test_readers_name_the_line_and_offer_latin_1(tmp_path):
    f = tmp_path / "q.txt"
    f.write_bytes("1 0 d1 1\n1 0 caf\xe9 1\n".encode("latin-1"))
    with pytest.raises(InputError) as info:
        trec.read_qrels(f)
    assert (info.value.path, info.value.line) == (str(f), 2)
    assert info.value.one_line().startswith(f"{f}:2: not UTF-8 (")
    assert "at byte 16" in info.value.message and "set encoding: latin-1" in info.value.message
    assert trec.read_qrels(f, "latin-1") == {"1": {"d1": 1, "café": 1}}
    t = tmp_path / "t.txt"
    t.write_bytes(f"<top>\n<num> 1\n<title> apple\n</top>\n<top>\n<num> 2\n<title> {CAFE}\n</top>\n"
                  .encode("latin-1"))
    with pytest.raises(InputError) as info:
        trec.read_topics(t)
    assert info.value.line == 7
    assert trec.read_topics(t, encoding="latin-1")["2"] == CAFE
    c = tmp_path / "c.jsonl"
    c.write_bytes((json.dumps({"id": "d1", "contents": "x"}) + "\n" +
                   json.dumps({"id": "d2", "contents": CAFE}, ensure_ascii=False) + "\n")
                  .encode("latin-1"))
    with pytest.raises(InputError) as info:
        trec.read_collection(c)
    assert info.value.line == 2
    assert trec.read_collection(c, encoding="latin-1")[1].contents == CAFE
    h = tmp_path / "html"
    h.mkdir()
    (h / "a.html").write_bytes(f"<p>one</p>\n<p>{CAFE}</p>\n".encode("latin-1"))
    with pytest.raises(InputError) as info:
        trec.read_collection(h, "html")
    assert info.value.line == 2
    assert trec.read_collection(h, "html", "latin-1")[0].contents.split() == ["one", "café", "crème"]


def test_the_encoding_is_part_of_the_fingerprint(tmp_path):
    """UTF-8 bytes read as Latin-1 are other text: another fingerprint (stage keys hold it)."""
    folder = _trec_folder(tmp_path, "utf-8")
    utf8 = load_dataset(folder, format="trec")
    latin = load_dataset(folder, format="trec", encoding="latin-1")
    assert utf8.fingerprint != latin.fingerprint
    assert "cafÃ©" in latin.questions[1].question or "cafÃ©" in latin.questions[0].question


def test_an_unknown_or_ascii_incompatible_encoding_is_refused(tmp_path):
    folder = _trec_folder(tmp_path, "utf-8")
    for name in ("klingon", "utf-16"):
        with pytest.raises(InputError) as info:
            load_dataset(folder, format="trec", encoding=name)
        assert info.value.field == "encoding"
    with pytest.raises(InputError, match="TREC"):
        load_dataset(tmp_path, format="jsonl", encoding="latin-1")


@pytest.mark.parametrize("bad,line", [("topics", 2), ("qrels", 3), ("corpus", 1)])
def test_validate_latin_1_exit_2_then_reads_with_encoding(tmp_path, run_cli, capsys, bad, line):
    folder = _trec_folder(tmp_path, "latin-1", bad)
    if bad == "qrels":  # a Latin-1 document id in the qrels (and the collection, as UTF-8)
        (folder / "qrels.txt").write_bytes("1 0 d2 1\n2 0 d1 1\n2 0 caf\xe9 0\n".encode("latin-1"))
    assert run_cli("validate", str(folder)) == 2
    err = capsys.readouterr().err
    name = {"topics": "topics.tsv", "qrels": "qrels.txt", "corpus": "corpus/docs.jsonl"}[bad]
    assert err.startswith(f"ablate: error: {folder / name}:{line}: not UTF-8 (")
    assert "set encoding: latin-1" in err and len(err.splitlines()) == 1
    if bad != "corpus":  # the other files are UTF-8 of ASCII only, the same in Latin-1
        return
    assert run_cli("validate", str(folder), "--encoding", "latin-1") == 0
    assert capsys.readouterr().out.startswith("OK trec:")


def test_check_names_the_file_and_reads_with_dataset_encoding(tmp_path, run_cli, capsys):
    from ablate.flows.run.context import forget_contexts
    folder = _trec_folder(tmp_path, "latin-1", "corpus")
    spec = write_experiment(tmp_path, "latin", dataset=data_set(folder, "trec"), tier="full",
                            split="all")
    forget_contexts()
    assert run_cli("check", str(spec)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ablate: error: {folder / 'corpus' / 'docs.jsonl'}:1: not UTF-8 (")
    assert len(err.splitlines()) == 1
    spec = write_experiment(tmp_path, "latin", dataset={**data_set(folder, "trec"),
                                                        "encoding": "latin-1"},
                            tier="full", split="all")
    forget_contexts()
    code = run_cli("check", str(spec))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "3 documents" in out


def test_check_refuses_an_encoding_for_other_formats(tmp_path, run_cli, capsys):
    from tests.specs import TINY_SQUAD
    spec = write_experiment(tmp_path, "latin", dataset={**data_set(TINY_SQUAD, "squad"),
                                                        "encoding": "latin-1"})
    assert run_cli("check", str(spec)) == 2
    err = capsys.readouterr().err
    assert f"{spec}:" in err and "dataset.encoding" in err and len(err.splitlines()) == 1


def test_utf8_is_left_out_of_the_spec_dump_so_sweep_ids_stay():
    from ablate.flows.plan.spec import DatasetSpec
    assert "encoding" not in DatasetSpec(path="x").model_dump(mode="json")
    assert DatasetSpec(path="x", encoding="latin-1").model_dump(mode="json")["encoding"] == "latin-1"
