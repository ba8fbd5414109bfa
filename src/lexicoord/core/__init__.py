"""The contract between the runner and the protocols, and nothing above it.

Events and their registry, audiences, episode specs, the recorder, the episode
context, requests and seats, the protocol base class and the protocol registry.
``runs/`` and ``protocols/`` both depend on this package and never on each other.

The names below are imported when first used (see lexicoord/exports.py): the protocol registry is read on every
command, ``lexicoord --help`` included, and needs none of the rest.
"""

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from lexicoord.core.audience import EVERYONE, Audience, Viewer, can_see, visible
    from lexicoord.core.context import Control, EpisodeContext, SeatMaker
    from lexicoord.core.events import (
        ChoiceEvent,
        ErrorEvent,
        Event,
        MessageEvent,
        OutcomeEvent,
        RoundClosedEvent,
        event_from_dict,
        event_type,
    )
    from lexicoord.core.protocol import Protocol
    from lexicoord.core.recorder import Recorder
    from lexicoord.core.registry import ProtocolEntry, get_protocol, protocols, register_protocol
    from lexicoord.core.seat import Answer, Request, Seat
    from lexicoord.core.spec import AgentSpec, EpisodeSpec

__getattr__ = lazy(__name__, {
    **dict.fromkeys(("EVERYONE", "Audience", "Viewer", "can_see", "visible"), "audience"),
    **dict.fromkeys(("Control", "EpisodeContext", "SeatMaker"), "context"),
    **dict.fromkeys(("ChoiceEvent", "ErrorEvent", "Event", "MessageEvent", "OutcomeEvent", "RoundClosedEvent",
                     "event_from_dict", "event_type"), "events"),
    "Protocol": "protocol",
    "Recorder": "recorder",
    **dict.fromkeys(("ProtocolEntry", "get_protocol", "protocols", "register_protocol"), "registry"),
    **dict.fromkeys(("Answer", "Request", "Seat"), "seat"),
    **dict.fromkeys(("AgentSpec", "EpisodeSpec"), "spec"),
})

__all__ = [
    "EVERYONE", "AgentSpec", "Answer", "Audience", "ChoiceEvent", "Control", "EpisodeContext", "EpisodeSpec",
    "ErrorEvent", "Event", "MessageEvent", "OutcomeEvent", "Protocol", "ProtocolEntry", "Recorder", "Request",
    "RoundClosedEvent", "Seat", "SeatMaker", "Viewer", "can_see", "event_from_dict", "event_type", "get_protocol",
    "protocols", "register_protocol", "visible",
]
