"""Who fills a seat: a model (:class:`LLMSeat`), a person (:class:`HumanSeat`), and the factory for line-ups."""

from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.llm import LLMSeat

__all__ = ["HumanSeat", "LLMSeat", "SeatFactory"]
