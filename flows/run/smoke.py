"""`python -m ablate.flows.run.smoke [torch] [llama_cpp]`: the install's last step, one real
generation by the bundled SmolLM2 on each named backend (a llama.cpp build is first tried
in a child process, ablate.flows.run.native_probe). Prints one line per backend; on a failure, one
line saying what failed and exit code 1."""

from __future__ import annotations

import sys
import time

CONTEXT = "Paris is the capital and largest city of France."


def smoke(backend: str) -> str:
    from ablate.components import catalogue
    from ablate.components.contract.config import GeneratorConfig, PromptConfig
    from ablate.components.contract.records import PackedContext, Passage, Question
    from ablate.components.generation import make_generator
    catalogue.load()
    if backend == "llama_cpp":
        from ablate.flows.run.native_probe import ensure_safe
        ensure_safe("llama_cpp", "install smoke check")
    gen = make_generator(GeneratorConfig(name="smollm2", backend=backend, max_new_tokens=8),
                         PromptConfig())
    ctx = PackedContext(("c",), (Passage("d", 0, len(CONTEXT), CONTEXT),), n_tokens=12, budget=64)
    t0 = time.perf_counter()
    (ans,) = gen.generate_many([(Question("smoke", "What is the capital of France?", ("Paris",),
                                          True), ctx)])
    if ans.error is not None or ans.tokens_out < 1:
        raise RuntimeError(f"no answer ({ans.error or 'no tokens generated'})")
    return f"{ans.text!r} in {time.perf_counter() - t0:.1f} s"


def main(backends: list[str]) -> int:
    from ablate.components.contract.errors import RunFailed
    for backend in backends or ["torch"]:
        try:
            print(f"smoke check: SmolLM2 on {backend} answered {smoke(backend)}", flush=True)
        except Exception as exc:  # noqa: BLE001 - one line, whatever it was
            text = exc.one_line() if isinstance(exc, RunFailed) else f"{type(exc).__name__}: {exc}"
            print(f"smoke check FAILED: SmolLM2 on {backend}: {text}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
