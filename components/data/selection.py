"""Which questions an experiment runs on: split, id list, answerable only, at most N, tier.

Each step works within the previous one:

1. split: the frozen test split is drawn over the whole data set (`split_share` of it,
   seeded and stratified; a question's own `split` field wins), so whether a question is
   held back never depends on the other steps. `dev` keeps the rest, `test` only the
   held-back share, `all` both.
2. ids: only the questions an id file lists (an id the data set does not hold is an
   error naming the id file and its line).
3. answerable_only: only answerable questions.
4. max: at most N questions, a seeded sample stratified by (answerable, type).
5. tier: `smoke` / `regression` (nested seeded prefixes) or `full`.

The result keeps data set order; `Selected.steps` holds the count after each step, for
`ablate check` and the manifest.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Question
from ablate.components.data.tiers import check_options, split_pool, stratified_order, tier_pick


@dataclass(frozen=True)
class IdList:
    """Question ids read from a file, each with its 1-based line."""

    path: Path
    ids: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Selected:
    questions: tuple[Question, ...]
    steps: tuple[tuple[str, int], ...]  # (step, questions after it), in order
    pool: tuple[Question, ...] = ()  # the questions before the tier (samples draw from it)


def sample(pool: Sequence[Question], *, tier: str | None, n: int | None, seed: int,
           smoke_size: int, regression_size: int) -> tuple[Question, ...]:
    """A sweep's own sample of `pool`: a tier, or the first `n` of the order the tiers are
    prefixes of (ablate.components.data.tiers), so samples are nested: a smaller one is a subset
    of a larger one (questions the data places in a tier excepted)."""
    if n is not None:
        return tier_pick(pool, tier="smoke", seed=seed, smoke_size=n,
                         regression_size=max(n, regression_size))
    return tier_pick(pool, tier=tier or "smoke", seed=seed, smoke_size=smoke_size,
                     regression_size=regression_size)


def read_ids(path: Path) -> IdList:
    """One id per line; blank lines and lines starting with `#` are skipped, spaces around
    an id are ignored. A repeated id or a file without ids is an error."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", path=str(path)) from None
    first: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        qid = raw.strip()
        if not qid or qid.startswith("#"):
            continue
        if qid in first:
            raise InputError(f"question id '{qid}' is listed twice (first on line {first[qid]})",
                             path=str(path), line=lineno)
        first[qid] = lineno
    if not first:
        raise InputError("holds no question ids (one per line)", path=str(path))
    return IdList(Path(path), tuple(first.items()))


def check_ids(ids: IdList, questions: Sequence[Question]) -> None:
    """Every listed id is a question of the data set (else an error at its line)."""
    known = {q.qid for q in questions}
    for qid, line in ids.ids:
        if qid not in known:
            near = difflib.get_close_matches(qid, sorted(known), n=1, cutoff=0.8)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise InputError(f"question id '{qid}' is not in the data set{hint}",
                             path=str(ids.path), line=line)


def select(questions: Sequence[Question], *, split: str, split_share: float, tier: str,
           seed: int, smoke_size: int = 50, regression_size: int = 500,
           ids: IdList | None = None, answerable_only: bool = False,
           max_questions: int | None = None) -> Selected:
    """The experiment's questions (module doc), with the count after each step."""
    check_options(tier=tier, split=split, smoke_size=smoke_size, regression_size=regression_size)
    steps: list[tuple[str, int]] = [("data set", len(questions))]
    pool = split_pool(questions, split=split, seed=seed, test_fraction=split_share)
    steps.append((f"split {split}" + ("" if split == "all" else f" (split_share {split_share:g})"),
                  len(pool)))
    if ids is not None:
        check_ids(ids, questions)
        listed = {qid for qid, _ in ids.ids}
        pool = [q for q in pool if q.qid in listed]
        steps.append((f"ids_file ({len(listed)} listed)", len(pool)))
    if answerable_only:
        pool = [q for q in pool if q.answerable]
        steps.append(("answerable_only", len(pool)))
    if max_questions is not None and len(pool) > max_questions:
        keep = {q.qid for q in stratified_order(pool, seed, "max")[:max_questions]}
        pool = [q for q in pool if q.qid in keep]
    if max_questions is not None:
        steps.append((f"max {max_questions}", len(pool)))
    chosen = tier_pick(pool, tier=tier, seed=seed, smoke_size=smoke_size,
                       regression_size=regression_size)
    sizes = {"smoke": f" (smoke_size {smoke_size})", "regression": f" (regression_size {regression_size})"}
    steps.append((f"tier {tier}" + sizes.get(tier, ""), len(chosen)))
    return Selected(chosen, tuple(steps), tuple(pool))
