"""Answers and references of different lengths: the extractive generator's answers (before
and after whole-answer spans, issue 54.2) and what token F1 and the length-robust content
F1 (components/metrics/answer_content.py, issue 54.1) give them, on short references (the
SQuAD / DRCD gold answers) and on a long-reference set built from the same data.

The long-reference set: each answerable question's reference is the whole gold sentence
(the sentence of its paragraph holding the first gold answer's start), as in support
data sets whose references are ~50-word sentences. Its answers:

- `extractive` (RAG): the extractive generator reading the gold paragraph (threshold 0);
- `restated`: the question restated ("Who wrote X?" -> "Who wrote X"), what a closed-book
  model often returns;
- `invented`: the restatement with an invented entity ("John Smith" / 張三) appended;
- `gold`: the gold short answer (a correct answer, short).

    python benchmarks/answer_lengths.py                      # both data sets, 400 questions each
    python benchmarks/answer_lengths.py --n 200 --old 62832c9 # the generator at another commit
    python benchmarks/answer_lengths.py --embed               # and MiniLM similarity (torch)

Prints one table per data set; no model runs (the extractive generator is model-free).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = {"squad2-dev-half": ROOT / "experiments/data/squad2-dev-half/dev-v2.0.json",
        "drcd-dev": ROOT / "experiments/data/drcd-dev/DRCD_dev.json"}
INVENTED = {"en": "John Smith", "zh": "張三"}


def old_extractive(rev: str):
    """The extractive module's functions as they were at git revision `rev` (its source
    up to the generator's registration, which the current module holds)."""
    src = subprocess.run(["git", "show", f"{rev}:components/generation/extractive.py"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    src = src.split("\nExtractiveSettings = ")[0]
    path = Path(tempfile.mkdtemp()) / "extractive_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("extractive_old", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["extractive_old"] = mod  # (dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def cases(path: Path, n: int):
    """(question, paragraph context, gold sentence) of `n` answerable questions, evenly
    spaced over the file's answerable questions."""
    from ablate.components.contract.records import PackedContext, Passage
    from ablate.components.data.load import load_dataset
    from ablate.components.text.sentences import sentence_spans
    data = load_dataset(path, "squad")
    docs = data.doc_by_id()
    answerable = [q for q in data.questions if q.answerable and q.evidence]
    step = max(1, len(answerable) // n)
    out = []
    for q in answerable[::step][:n]:
        span = q.evidence[0][0]
        text = docs[span.doc_id].text
        sentence = next((text[a:b] for a, b in sentence_spans(text, latin="capital")
                         if a <= span.start < b), text)
        ctx = PackedContext((span.doc_id,), (Passage(span.doc_id, 0, len(text), text),),
                            len(text.split()), 10**6)
        out.append((q, ctx, sentence))
    return out


def restate(question: str) -> str:
    return question.strip().rstrip("?？").strip()


@functools.lru_cache(maxsize=1)
def _minilm():
    from sentence_transformers import SentenceTransformer

    from ablate.components.runtime.models import minilm_path
    return SentenceTransformer(str(minilm_path()), device="cpu")


def minilm_similarity(pairs: list[tuple[str, str]]) -> list[float]:
    """Cosine similarity of the bundled MiniLM's embeddings of (answer, reference) pairs."""
    model = _minilm()
    a = model.encode([p[0] for p in pairs], normalize_embeddings=True, batch_size=64)
    b = model.encode([p[1] for p in pairs], normalize_embeddings=True, batch_size=64)
    return [float(x) for x in (a * b).sum(axis=1)]


def table(name: str, rows, old, embed: bool = False) -> list[str]:
    from ablate.components.generation.extractive import extract_answer
    from ablate.components.metrics.answer import exact_match, resolve_normalizer, token_f1
    from ablate.components.metrics.answer_content import content_scores
    from ablate.components.text.cjk import has_cjk
    from ablate.components.text.tokenizer import get_tokenizer
    tok = get_tokenizer()
    answers: dict[str, list[str]] = {"extractive before": [], "extractive after": [],
                                     "restated": [], "invented": [], "gold": []}
    for q, ctx, _ in rows:
        lang = "zh" if has_cjk(q.question) else "en"
        answers["extractive before"].append(old.extract_answer(q.question, ctx, 0.0)[0] or "")
        answers["extractive after"].append(extract_answer(q.question, ctx, 0.0)[0] or "")
        answers["restated"].append(restate(q.question))
        answers["invented"].append(f"{restate(q.question)} {INVENTED[lang]}")
        answers["gold"].append(q.answers[0])
    out = [f"### {name}: {len(rows)} answerable questions, gold paragraph as context",
           "", "| answer | <= 3 chars | 1 char | mean chars | mean tokens | EM | F1 | long ref: F1 | "
           "long ref: F1 >= 0.5 | long ref: content F1 | long ref: content F1 >= 0.5 |"
           + (" long ref: MiniLM cosine |" if embed else ""),
           "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if embed else "")]
    for label, texts in answers.items():
        em, f1, lf1, cf1 = [], [], [], []
        for (q, _, sentence), a in zip(rows, texts):
            norm = resolve_normalizer("auto", q.answers, q.question)
            em.append(exact_match(a, q.answers, norm))
            f1.append(token_f1(a, q.answers, norm))
            lf1.append(token_f1(a, [sentence], norm))
            cf1.append(content_scores(a, [sentence], q.question, norm)["content_f1"])
        cf1 = [x for x in cf1 if x == x]  # NaN: the sentence holds nothing but the question's words
        out.append(
            f"| {label} | {sum(len(a.strip()) <= 3 for a in texts) / len(texts):.1%} | "
            f"{sum(len(a.strip()) <= 1 for a in texts) / len(texts):.1%} | "
            f"{statistics.fmean(len(a) for a in texts):.1f} | "
            f"{statistics.fmean(tok.count(a) for a in texts):.2f} | {statistics.fmean(em):.3f} | "
            f"{statistics.fmean(f1):.3f} | {statistics.fmean(lf1):.3f} | "
            f"{sum(x >= 0.5 for x in lf1) / len(lf1):.1%} | {statistics.fmean(cf1):.3f} | "
            f"{sum(x >= 0.5 for x in cf1) / len(cf1):.1%} |"
            + (f" {statistics.fmean(minilm_similarity([(a, s) for (_, _, s), a in zip(rows, texts)])):.3f} |"
               if embed else ""))
    frag = [a for a in answers["extractive before"] if len(a.strip()) <= 3]
    out += ["", f"Answers of <= 3 characters before: {sorted(set(frag))[:20]}",
            f"after: {sorted({a for a in answers['extractive after'] if len(a.strip()) <= 3})[:20]}",
            ""]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400, help="answerable questions per data set")
    ap.add_argument("--old", default="62832c9", help="git revision of the 'before' generator")
    ap.add_argument("--embed", action="store_true",
                    help="also the MiniLM cosine of answer and long reference (loads torch)")
    args = ap.parse_args(argv)
    old = old_extractive(args.old)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    print(f"answer_lengths.py --n {args.n} --old {args.old}{' --embed' if args.embed else ''} "
          f"at {head}\n")
    for name, path in DATA.items():
        print("\n".join(table(name, cases(path, args.n), old, args.embed)))


if __name__ == "__main__":
    sys.exit(main())
