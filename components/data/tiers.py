"""Question tiers (smoke / regression / full) and the frozen test split.

Both are deterministic from the seed and stratified by (answerable, type): within each
stratum questions are ordered by a seeded hash of their qid, and strata are interleaved
proportionally, so every prefix of the order has about the data set's mix. Tiers are
prefixes of one order, hence nested (smoke within regression within full). Fields given
by the data win: a question's own `split` places it, and its own `tier` puts it in that
tier and the larger ones (and never in a smaller one).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Iterable, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Question
from ablate.components.contract.vocab import SPLITS, TIERS


@lru_cache(maxsize=1 << 17)  # a run orders the same questions ~10 times (plan, tiers, samples)
def _key(seed: int, salt: str, qid: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}\x1f{salt}\x1f{qid}".encode()).digest()[:8], "big")


def stratified_order(questions: Iterable[Question], seed: int, salt: str) -> list[Question]:
    """All questions in a seeded order whose every prefix is proportionally stratified."""
    questions = list(questions)
    order = _stratified_positions(tuple((q.qid, q.answerable, q.type or "") for q in questions),
                                  seed, salt)
    return [questions[i] for i in order]


@lru_cache(maxsize=16)  # a run orders the same pool once per variant and tier: once here
def _stratified_positions(rows: tuple[tuple[str, bool, str], ...], seed: int,
                          salt: str) -> tuple[int, ...]:
    """stratified_order as positions in `rows` ((qid, answerable, type) per question)."""
    strata: dict[tuple[bool, str], list[int]] = {}
    for i, (_, answerable, kind) in enumerate(rows):
        strata.setdefault((answerable, kind), []).append(i)
    keyed = []
    for members in strata.values():
        members.sort(key=lambda i: (_key(seed, salt, rows[i][0]), rows[i][0]))
        n = len(members)
        for r, i in enumerate(members):
            keyed.append(((r + 0.5) / n, _key(seed, salt + "/tie", rows[i][0]), rows[i][0], i))
    keyed.sort(key=lambda t: t[:3])
    return tuple(t[3] for t in keyed)


def frozen_test_qids(questions: Sequence[Question], *, seed: int,
                     test_fraction: float) -> set[str]:
    """qids of the frozen test split: given `split` fields, else a seeded stratified share."""
    if not 0 <= test_fraction < 1:
        raise InputError(f"test_fraction must be within [0, 1), got {test_fraction}",
                         field="test_fraction")
    given = {q.qid for q in questions if q.split == "test"}
    free = [q for q in questions if q.split is None]
    n_test = round(test_fraction * len(free))
    order = stratified_order(free, seed, "split")
    return given | {q.qid for q in order[len(order) - n_test:]} if n_test else given


def select_questions(questions: Sequence[Question], *, tier: str, split: str, seed: int,
                     smoke_size: int = 50, regression_size: int = 500,
                     test_fraction: float = 0.2) -> tuple[Question, ...]:
    """The questions of one tier of one split, in data set order.

    split "dev" never includes the frozen test part; "test" is only that part; "all" is
    every question. Tiers are drawn within the chosen split.
    """
    check_options(tier=tier, split=split, smoke_size=smoke_size, regression_size=regression_size)
    pool = split_pool(questions, split=split, seed=seed, test_fraction=test_fraction)
    return tier_pick(pool, tier=tier, seed=seed, smoke_size=smoke_size,
                     regression_size=regression_size)


def check_options(*, tier: str, split: str, smoke_size: int, regression_size: int) -> None:
    if tier not in TIERS:
        raise InputError(f"unknown tier '{tier}' (known: {', '.join(TIERS)})", field="tier")
    if split not in SPLITS:
        raise InputError(f"unknown split '{split}' (known: {', '.join(SPLITS)})", field="split")
    if smoke_size < 0 or regression_size < smoke_size:
        raise InputError("tier sizes must satisfy 0 <= smoke_size <= regression_size",
                         field="regression_size")


def split_pool(questions: Sequence[Question], *, split: str, seed: int,
               test_fraction: float) -> list[Question]:
    """The questions of one split, in data set order. The test split is drawn over all of
    `questions`, so whether a question is held back never depends on a later selection."""
    if split == "all":
        return list(questions)
    test = frozen_test_qids(questions, seed=seed, test_fraction=test_fraction)
    return [q for q in questions if (q.qid in test) == (split == "test")]


def tier_pick(pool: Sequence[Question], *, tier: str, seed: int, smoke_size: int,
              regression_size: int) -> tuple[Question, ...]:
    """The questions of one tier drawn within `pool`, in pool order."""
    if tier == "full":
        return tuple(pool)
    given_smoke = {q.qid for q in pool if q.tier == "smoke"}
    given_reg = {q.qid for q in pool if q.tier == "regression"}
    order = [q.qid for q in stratified_order([q for q in pool if q.tier is None], seed, "tier")]
    smoke_fill = max(0, smoke_size - len(given_smoke))
    if tier == "smoke":
        chosen = given_smoke | set(order[:smoke_fill])
    else:
        reg_fill = max(smoke_fill, regression_size - len(given_smoke) - len(given_reg))
        chosen = given_smoke | given_reg | set(order[:reg_fill])
    return tuple(q for q in pool if q.qid in chosen)
