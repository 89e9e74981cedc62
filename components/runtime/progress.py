"""Throttled per-item progress for long stages (encoding, generation, judging): count, rate and ETA as a few
log lines per stage, on the `ablate.progress` logger (Prefect shows it in the task's logs
through `logging.extra_loggers` in prefect.toml; the terminal through Prefect's console)."""

from __future__ import annotations

import logging
import time
from typing import Callable

LOGGER = logging.getLogger("ablate.progress")


class Progress:
    """Call `step()` after each item. A line is logged when a further quarter of the items
    is done or `every_s` seconds passed since the last line, never more than once per
    `min_gap_s`; the last item logs unless the whole stage took less than `min_gap_s`.
    Stages of fewer than `min_items` stay quiet."""

    def __init__(self, label: str, total: int, every_s: float = 60.0, min_gap_s: float = 5.0,
                 min_items: int = 8, clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], None] | None = None) -> None:
        self.label, self.total, self.every_s, self.min_gap_s = label, total, every_s, min_gap_s
        self.quiet = total < min_items
        self.clock = clock
        self.log = log or LOGGER.info
        self.done = 0
        self.logged = 0
        self.t0 = self.last_t = clock()
        self.next_quarter = 1

    def step(self, n: int = 1) -> None:
        self.done += n
        if self.quiet:
            return
        now = self.clock()
        last = self.done >= self.total
        quarter = self.done * 4 >= self.next_quarter * self.total
        due = quarter or now - self.last_t >= self.every_s
        # a stage over within min_gap_s says nothing: its stage line is enough
        if (last and (self.logged or now - self.t0 >= self.min_gap_s)) or (
                not last and due and now - self.last_t >= self.min_gap_s):
            while self.done * 4 >= self.next_quarter * self.total and self.next_quarter <= 4:
                self.next_quarter += 1
            self.last_t = now
            self.logged += 1
            self.log(self.line(now))

    def line(self, now: float) -> str:
        elapsed = max(now - self.t0, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        eta = "done" if self.done >= self.total else f"ETA {left:.0f}s"
        return (f"{self.label}: {self.done}/{self.total} ({100 * self.done / self.total:.0f}%), "
                f"{rate:.2f}/s, {elapsed:.0f}s elapsed, {eta}")
