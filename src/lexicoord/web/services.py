"""What every room of a server shares: the store, the models, each protocol's item sets on offer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lexicoord.core.items import ItemSets
from lexicoord.errors import ConfigError
from lexicoord.models.pool import ModelPool
from lexicoord.runs.store import Store
from lexicoord.web.forms import ProtocolOffer, ServerOffer, protocol_fields
from lexicoord.web.persistence import RoomStore

if TYPE_CHECKING:
    from lexicoord.web.adapters.base import RoomAdapter


@dataclass
class Services:
    store: Store
    models: ModelPool
    #: Models people may seat agents on: only these, so a browser can never point the server elsewhere.
    model_names: list[str]
    default_agents: int = 2
    #: Protocols people may open rooms for (each needs a live-room adapter).
    protocols: list[str] = field(default_factory=lambda: ["coordination"])
    #: Item sets people may choose from, by protocol and by the name the operator gave them (see
    #: :func:`lexicoord.core.items.load_items`); checked once, at start.
    items: ItemSets = field(default_factory=dict)
    rooms: RoomStore = field(init=False)

    def __post_init__(self) -> None:
        self.rooms = RoomStore(self.store)
        if not self.model_names:
            raise ConfigError("The server needs at least one model for agents (--model).")

    def item_sets(self, protocol: str) -> list[str]:
        """The names of the sets ``protocol``'s rooms may draw from, as the room form offers them."""
        return list(self.items.get(protocol, {}))

    def items_of(self, protocol: str, name: str) -> Sequence[Any]:
        """The set ``name`` of ``protocol``'s items, or an error naming the ones this server has."""
        sets = self.items.get(protocol, {})
        try:
            return sets[name]
        except KeyError:
            known = ", ".join(sets) or "none (the operator gave none)"
            raise ConfigError(f"No {protocol} items '{name}' on this server; choose one of: {known}.") from None

    def adapter(self, protocol: str) -> type[RoomAdapter]:
        """The live-room adapter of ``protocol``, if the operator offers it and it has one."""
        from lexicoord.core.registry import get_protocol

        if protocol not in self.protocols:
            raise ConfigError(f"This server does not offer '{protocol}' rooms; choose one of: {', '.join(self.protocols)}.")
        entry = get_protocol(protocol)
        if not entry.room:
            raise ConfigError(f"Protocol '{protocol}' cannot be played in a live room.")
        return entry.room_adapter()

    def offer(self) -> ServerOffer:
        """The start page's offer: each protocol under a title a newcomer can read, the coordination game
        (the project's first game) first and chosen; the others in the order the operator gave."""
        from lexicoord.core.registry import get_protocol

        offers = []
        for name in sorted(self.protocols, key=lambda n: n != FIRST_PROTOCOL):
            adapter = self.adapter(name)
            entry = get_protocol(name)
            summary = entry.summary
            offers.append(ProtocolOffer(name=name, title=protocol_title(name, summary, entry.title), summary=summary,
                                        fields=protocol_fields(adapter.settings_model, adapter.settings_model.choices(self))))
        return ServerOffer(models=self.model_names, protocols=offers, default_agents=self.default_agents,
                           default_protocol=offers[0].name if offers else None)


#: The protocol a newcomer meets first on the start page.
FIRST_PROTOCOL = "coordination"
def protocol_title(name: str, summary: str, title: str | None = None) -> str:
    """A protocol's title: the one it registered, else its summary's head (before its colon), else its id."""
    if title:
        return title
    head = summary.split(":", 1)[0].strip()
    return head if head and len(head) <= 60 else name
