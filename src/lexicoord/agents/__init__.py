"""Participants: LLM agents, human seats, and (in protocols) simulated and symbolic agents."""

from lexicoord.agents.base import Agent, AgentSpec
from lexicoord.agents.human import HumanSeat, SeatTimeout
from lexicoord.agents.llm import LLMAgent
from lexicoord.agents.prompting import fence, render_prompt

__all__ = ["Agent", "AgentSpec", "HumanSeat", "LLMAgent", "SeatTimeout", "fence", "render_prompt"]
