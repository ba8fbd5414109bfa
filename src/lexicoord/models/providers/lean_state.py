"""llama-cpp-python's state save and restore without its score table.

A ``Llama`` keeps a table of logits of ``n_batch`` rows by the vocabulary (100 MB for SmolLM2's 49k tokens),
written only when the model is loaded with ``logits_all``, which lexicoord never sets: sampling reads
llama.cpp's own logits. Its ``save_state`` copies the rows up to the tokens evaluated all the same, and
``load_state`` writes them back and scans the rest: with the RAM prompt cache, every call saved one state and
many restored one, and moved up to 200 MB of nothing to do it (a fifth of a short call's time on two cores,
and most of the memory a long campaign churned). Here both see a one-row view of the table, so a state keeps one
row (``load_state`` broadcasts what it has) and the model state itself is saved and restored as before.
"""

from __future__ import annotations

from typing import Any

from llama_cpp import Llama, LlamaState


class LeanStateLlama(Llama):
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
