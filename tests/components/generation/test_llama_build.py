"""The llama.cpp build that scripts/install.sh ships is portable, and ablate's loader stays
off the path that crashes on AVX-512/AMX CPUs (extra buffer types), with the same answers.

CI installs llama-cpp-python with `scripts/install.sh --test`, built from source with the
portable options (never from pip's wheel cache; from ablate's own cache of that same portable
build when an earlier install on the machine made it), so these check the build a new user
gets, on whatever CPU CI has."""

import platform

import llama_cpp
import pytest

from ablate.components.generation import llama_local
from ablate.components.runtime.models import smollm2_gguf_path

pytestmark = pytest.mark.slow


def test_build_has_no_avx512_or_amx_code():
    info = llama_cpp.llama_print_system_info().decode()
    assert "AMX" not in info and "AVX512" not in info, info
    if platform.machine() == "x86_64":
        assert "AVX2 = 1" in info, info  # the x86-64-v3 baseline: portable, still fast


def test_loader_turns_extra_buffer_types_off():
    llm, _ = llama_local.load_llama(smollm2_gguf_path(), llama_local.N_CTX)
    assert llm.model_params.use_extra_bufts is False


def test_extra_buffer_types_do_not_change_answers():
    """The answers with the crash-prone path turned off are the answers llama.cpp gives with
    its defaults (what ablate's loader did before), where those run."""
    messages = [{"role": "system", "content": "Answer in a few words."},
                {"role": "user", "content": "Normandy is a region in France. In what country "
                                            "is Normandy located?"}]
    texts = []
    for extra in (True, False):  # set as the loader sets it (Llama() swallows the keyword)
        with llama_local.extra_buffer_types(extra):
            llm = llama_cpp.Llama(model_path=str(smollm2_gguf_path()), n_ctx=512, n_threads=2,
                                  seed=0, verbose=False)
        assert llm.model_params.use_extra_bufts is extra  # each load ran as asked
        out = llm.create_chat_completion(messages=messages, max_tokens=16, temperature=0.0, seed=0)
        texts.append(out["choices"][0]["message"]["content"])
        llm.close()
    assert texts[0] == texts[1] and texts[0]
