"""What every room of a server shares: the store, the models, the datasets on offer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lexicoord.errors import ConfigError
from lexicoord.models.pool import ModelPool
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import AmbiguityItem
from lexicoord.web.forms import ProtocolOffer, ServerOffer, protocol_fields
from lexicoord.web.persistence import RoomStore


@dataclass
class Services:
    store: Store
    models: ModelPool
    #: Datasets people may choose from, by the name the operator gave them; loaded once, at start.
    datasets: dict[str, list[AmbiguityItem]]
    #: Models people may seat agents on: only these, so a browser can never point the server elsewhere.
    model_names: list[str]
    default_agents: int = 2
    #: Protocols people may open rooms for (each needs a live-room adapter).
    protocols: list[str] = field(default_factory=lambda: ["coordination"])
    #: Benchmark items COGENT rooms may draw from, by task (``gsm8k``, ``folio``, ``mmlu``), loaded at start.
    benchmarks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rooms: RoomStore = field(init=False)

    def __post_init__(self) -> None:
        self.rooms = RoomStore(self.store)
        if not self.model_names:
            raise ConfigError("The server needs at least one model for agents (--model).")
        if not self.datasets:
            raise ConfigError("The server needs at least one dataset (--dataset).")

    def dataset(self, name: str) -> list[AmbiguityItem]:
        try:
            return self.datasets[name]
        except KeyError:
            raise ConfigError(f"No dataset '{name}' on this server; choose one of: {', '.join(self.datasets)}.") from None

    def offer(self) -> ServerOffer:
        from lexicoord.core.registry import get_protocol
        from lexicoord.web.registry import adapter_for

        offers = []
        for name in self.protocols:
            adapter = adapter_for(name, self)
            offers.append(ProtocolOffer(name=name, summary=get_protocol(name).summary,
                                        fields=protocol_fields(adapter.settings_model, adapter.choices(self))))
        return ServerOffer(models=self.model_names, protocols=offers, default_agents=self.default_agents)
