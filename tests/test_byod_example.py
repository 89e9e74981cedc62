"""The "bring your own data" example (docs/bring-your-own-data.md): the converter in
examples/byod turns NQ-like records (UTF-8 byte offsets, several annotators, a Chinese
record, an unanswerable one) into native JSONL that `ablate validate` accepts and whose
character offsets select the answers the annotators marked. The page shows the script as
it is in the repository, its upstream record is the fixture's, its multi-sentence
questions and token-offset snippet work, and the retrieval-only example of
docs/experiment-file.md passes `ablate check` with the budget (assemble) stage planned."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "byod"
PAGE = ROOT / "docs" / "bring-your-own-data.md"

MOVED = ("She moved to Paris in 1891 to study at the University of Paris, because women "
         "could not enter university in Russian-ruled Warsaw.")
# qid -> (answerable, reference answers, the text each group's alternative spans select)
EXPECTED = {
    "nq-en-1": (True, ["1903", "the 1903 Nobel Prize in Physics"],
                [{"1903", "the 1903 Nobel Prize in Physics"}]),
    "nq-en-2": (True, [], [{MOVED}]),  # long answers only: two annotators, one span
    "nq-zh-1": (True, ["1949年", "1949年10月1日"], [{"1949年", "1949年10月1日"}]),
    "nq-en-3": (False, [], []),
}


def _convert(tmp_path):
    out = tmp_path / "mydata"
    subprocess.run([sys.executable, str(EXAMPLE / "convert_nq_like.py"),
                    str(EXAMPLE / "nq_like.jsonl"), str(out)], check=True, timeout=60)
    return out


def test_converted_data_validates(tmp_path, run_cli, capsys):
    out = _convert(tmp_path)
    assert run_cli("validate", str(out)) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("OK jsonl:"), line
    # the page "Marie Curie" of two records is one document
    assert "3 documents, 4 questions (3 answerable, 1 unanswerable)" in line, line


def test_offsets_select_the_annotated_text(tmp_path):
    from ablate.components.data import load_dataset
    ds = load_dataset(_convert(tmp_path), format="jsonl")
    texts = {d.doc_id: d.text for d in ds.documents}
    got = {}
    for q in ds.questions:
        groups = [{texts[s.doc_id][s.start:s.end] for s in group} for group in q.evidence]
        got[q.qid] = (q.answerable, list(q.answers), groups)
    assert got == EXPECTED
    # questions on one page are one cluster for the bootstrap
    assert {q.qid: q.cluster for q in ds.questions} == {
        "nq-en-1": "Marie Curie", "nq-en-2": "Marie Curie", "nq-zh-1": "中华人民共和国",
        "nq-en-3": "Mars"}


def test_page_shows_the_converter_as_it_is():
    page = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    script = (EXAMPLE / "convert_nq_like.py").read_text(encoding="utf-8")
    assert script in blocks, "docs/bring-your-own-data.md: copy examples/byod/convert_nq_like.py"


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_page_upstream_record_is_the_fixture_record():
    records = [line for block in _blocks("json") for line in block.splitlines()
               if '"example_id"' in line]
    fixture = (EXAMPLE / "nq_like.jsonl").read_text(encoding="utf-8").splitlines()
    assert records and all(r in fixture for r in records)


def test_page_multi_sentence_questions_validate_on_the_converted_corpus(tmp_path):
    """The page's question records point at whole sentences of the converted document."""
    from ablate.components.data import load_dataset
    out = _convert(tmp_path)
    shown = [line for block in _blocks("json") for line in block.splitlines()
             if line.startswith('{"qid"')]
    assert len(shown) == 2
    (out / "questions.jsonl").write_text("\n".join(shown) + "\n", encoding="utf-8")
    ds = load_dataset(out, format="jsonl")
    text = {d.doc_id: d.text for d in ds.documents}["Marie Curie"]
    sentences = {"She shared the 1903 Nobel Prize in Physics with Pierre Curie and Henri Becquerel.",
                 "In 1911 she alone won the Nobel Prize in Chemistry."}
    by_qid = {q.qid: [{text[s.start:s.end] for s in g} for g in q.evidence] for q in ds.questions}
    assert by_qid == {"curie-all": [{t} for t in sorted(sentences, key=text.index)],
                      "curie-any": [sentences]}


def test_page_token_offset_snippet():
    namespace: dict = {}
    exec(next(b for b in _blocks("python") if "def token_spans" in b), namespace)
    text = "<P> Marie  Curie won in 1903 </P>"
    spans = namespace["token_spans"](text)
    tokens = text.split()
    assert [text[s:e] for s, e in spans] == tokens
    s, e = 5, 7  # tokens [5, 7): "1903", "</P>"
    assert text[spans[s][0]:spans[e - 1][1]] == "1903 </P>"


def test_retrieval_only_example_of_the_experiment_file_checks(tmp_path, run_cli, capsys):
    """The `generator: none` chunk-size study of docs/experiment-file.md passes `ablate
    check` on the converted data, and its plan keeps the assemble (budget) stage."""
    page = (ROOT / "docs" / "experiment-file.md").read_text(encoding="utf-8")
    section = page.split("## Retrieval-only studies", 1)[1].split("\n## ", 1)[0]
    spec = re.search(r"```yaml\n(.*?)```", section, flags=re.S).group(1)
    assert "generator: {name: none}" in spec
    _convert(tmp_path)
    path = tmp_path / "exp.yaml"
    path.write_text(spec.replace("path: data/mydata", "path: mydata"), encoding="utf-8")
    assert run_cli("check", str(path)) == 0
    out = capsys.readouterr().out
    # stage counts: one assemble per chunking, no generate stage
    assert "assemble 3 (" in out and not re.search(r"\bgenerate \d", out), out


def test_pages_link_the_page():
    for name in ("README.md", "data-format.md"):
        assert "](bring-your-own-data.md)" in (ROOT / "docs" / name).read_text(encoding="utf-8")
