"""What the thread rule measures (components/runtime/cpu_now.py), fixed for a test: the
machine this runs on never decides a test's thread counts."""

from __future__ import annotations

from ablate.components.runtime import cpu_now


class OthersUse:
    """Other processes keep `cores` cores busy, measured over a 1-second window."""

    def __init__(self, cores: float) -> None:
        self.value = cores

    def cores(self) -> tuple[float, float]:
        return self.value, 1.0


def others_use(monkeypatch, cores: float) -> None:
    monkeypatch.setattr(cpu_now, "SAMPLER", OthersUse(cores))
