"""COGENT's coin-share-use lifecycle as a layer any protocol can use (the debate, Werewolf, clarifications).

- :mod:`~lexicoord.lexicon.coining`: a coining turn read into its parts, and every ``term = definition``
  candidate accepted or rejected with its reason.
- :mod:`~lexicoord.lexicon.board`: entries with provenance and an audience (the coiner, a faction, everyone);
  sharing is an audience change, recorded with a snapshot.
- :mod:`~lexicoord.lexicon.uses`: where known terms are used, whole words or phrases, longest match first.
- :mod:`~lexicoord.lexicon.events`: the events all of it is recorded as.

It knows nothing of any protocol: a protocol passes text, seats and audiences in, and emits the events.
"""

from lexicoord.lexicon.board import Board, Entry, Provenance
from lexicoord.lexicon.coining import CoiningRules, Turn, judge_turn, read_declared_terms, read_turn
from lexicoord.lexicon.uses import Use, find_uses

__all__ = ["Board", "CoiningRules", "Entry", "Provenance", "Turn", "Use", "find_uses", "judge_turn",
           "read_declared_terms", "read_turn"]
