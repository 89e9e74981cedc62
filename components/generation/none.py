"""`none`: no generator, for retrieval-only studies.

Its declaration says it produces nothing (`produces=False`), so a variant that names it
has no generate stage and no metrics that need one (components/pipeline.py). The context
is still assembled under the token budget, so the report and MLflow show the retrieval
metrics at the candidates, reranked and final stages, and `final/*` compares chunkings
of different sizes on the same number of tokens.
"""

from __future__ import annotations

from ablate.components.generation.base import GENERATORS, BaseGenerator
from ablate.components.generation.settings import GeneratorSettings


class NoSettings(GeneratorSettings):
    """No answers: a retrieval-only study."""


@GENERATORS.register("none", produces=False, settings_model=NoSettings)
class NoGenerator(BaseGenerator):
    """Produces no answers; its stage is never planned, so it is never called."""

    version = "1"

    @property
    def cache_identity(self) -> str:
        return "none"

    def generate_many(self, items, cache=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("the 'none' generator produces no answers: no generate stage "
                           "should run it")
