"""A saved state without llama-cpp-python's unwritten score table restores the same conversation."""

from __future__ import annotations

import pytest

from lexicoord.models.providers import local
from lexicoord.models.providers.lean_state import LeanStateLlama

pytestmark = pytest.mark.embedded  # the embedded model, for real


@pytest.fixture(scope="module")
def llama() -> LeanStateLlama:
    made = LeanStateLlama(model_path=str(local.resolve_path("smollm2-135m")), n_ctx=1024, n_threads=1,
                          verbose=False)
    yield made
    made.close()


def greedy(llama: LeanStateLlama, prompt: str) -> str:
    out = llama.create_completion(prompt, max_tokens=12, temperature=0, seed=1)
    return str(out["choices"][0]["text"])


def test_a_state_keeps_one_row_of_the_table_and_the_table_stays_whole(llama: LeanStateLlama) -> None:
    greedy(llama, "A river is")
    rows = llama.scores.shape[0]
    state = llama.save_state()
    assert state.n_tokens > 1 and len(state.scores) == 1  # not the n_tokens rows llama-cpp-python copies
    assert llama.scores.shape[0] == rows > 1  # the model's own table is given back as it was
    llama.load_state(state)
    assert llama.scores.shape[0] == rows and llama.n_tokens == state.n_tokens


def test_a_restored_state_goes_on_as_the_conversation_it_saved(llama: LeanStateLlama) -> None:
    prefix = "The three largest rivers of Europe are"
    llama.reset()
    fresh = greedy(llama, prefix)
    saved = llama.save_state()
    llama.reset()
    other = greedy(llama, "Something else entirely: a recipe for bread")  # the context now holds another one
    llama.load_state(saved)
    assert llama.n_tokens == saved.n_tokens
    assert list(llama.input_ids[:saved.n_tokens]) == list(saved.input_ids[:saved.n_tokens])
    assert greedy(llama, prefix) == fresh != other  # the same prompt, from the restored tokens: the same reply


def test_a_state_saved_by_llama_cpp_python_itself_still_restores(llama: LeanStateLlama) -> None:
    greedy(llama, "A lake is")
    full = super(LeanStateLlama, llama).save_state()  # every row, as the library saves it
    assert len(full.scores) > 1
    llama.reset()
    llama.load_state(full)
    assert llama.n_tokens == full.n_tokens and llama.scores.shape[0] >= len(full.scores)


def _in_use() -> int:
    """Bytes the C library's allocator has handed out and not had back (glibc's ``mallinfo2``)."""
    import ctypes

    class Info(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                     "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    info = libc.mallinfo2()
    return int(info.uordblks + info.hblkhd)


def test_a_calls_sampler_is_freed_when_the_call_ends_not_at_the_next_full_collection(llama: LeanStateLlama) -> None:
    import gc

    from lexicoord.models.providers.grammars import grammar_for

    grammar = grammar_for({"type": "object", "properties": {"vote": {"enum": ["ana", "bo", "cy", "abstain"]}},
                           "required": ["vote"]})
    messages = [{"role": "user", "content": "You are a villager. Whom do you vote out: ana, bo or cy?"}]

    def call(seed: int) -> None:
        llama.create_chat_completion(messages=messages, grammar=grammar, max_tokens=16, temperature=0.8, seed=seed)
        assert llama._sampler is None, "the sampler is freed with the call"

    call(0)
    gc.disable()  # a long campaign's full collections are half an hour apart: none here
    try:
        before = _in_use()
        for seed in range(1, 41):
            call(seed)
        grown = _in_use() - before
    finally:
        gc.enable()
    assert grown < 1 << 20, f"40 calls kept {grown / 1024:.0f} KB until a collection"


def test_a_plain_completion_frees_its_sampler_too(llama: LeanStateLlama) -> None:
    assert greedy(llama, "A mountain is") and llama._sampler is None
