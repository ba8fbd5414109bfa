"""llama-cpp-python's state save and restore without its score table.

A ``Llama`` keeps a table of logits of ``n_batch`` rows by the vocabulary (100 MB for SmolLM2's 49k tokens),
written only when the model is loaded with ``logits_all``, which lexicoord never sets: sampling reads
llama.cpp's own logits. Its ``save_state`` copies the rows up to the tokens evaluated all the same, and
``load_state`` writes them back and scans the rest: with the RAM prompt cache, every call saved one state and
many restored one, and moved up to 200 MB of nothing to do it (a fifth of a short call's time on two cores,
and most of the memory a long campaign churned). Here both see a one-row view of the table, so a state keeps one
row (``load_state`` broadcasts what it has) and the model state itself is saved and restored as before.

Each call also builds a sampler chain (with the grammar's parse state when the reply is constrained) that
llama-cpp-python keeps until the next call and frees only from ``__del__`` of an object in a reference cycle: so
only when Python's full collection runs, which on a campaign's large heap is every half hour or more. Its native
memory piled up between those collections (74 MB freed at once, measured on a Werewolf campaign): it is freed
here as soon as the call ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from llama_cpp import Llama, LlamaState


class LeanStateLlama(Llama):
    def create_completion(self, *args: Any, **kwargs: Any) -> Any:
        """Every completion, a chat's included (its handler comes here), frees its sampler when it is done."""
        reply = super().create_completion(*args, **kwargs)
        if isinstance(reply, Iterator):  # streamed: the sampler is in use until the stream ends
            return reply
        self.release_sampler()
        return reply

    def release_sampler(self) -> None:
        """Free the last call's native sampler now rather than at the next full garbage collection."""
        sampler = getattr(self, "_sampler", None)
        if sampler is not None:
            self._sampler = None
            sampler.close()

    def save_state(self) -> LlamaState:
        if self._logits_all:  # the table is written, and a restore needs it: as llama-cpp-python does it
            return super().save_state()
        table = self.scores
        self.scores = table[:1]
        try:
            return super().save_state()
        finally:
            self.scores = table

    def load_state(self, state: LlamaState) -> None:
        if self._logits_all or len(state.scores) > 1:
            super().load_state(state)
            return
        table: Any = self.scores
        self.scores = table[:1]
        try:
            super().load_state(state)
        finally:
            self.scores = table
