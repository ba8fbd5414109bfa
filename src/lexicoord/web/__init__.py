"""Live web rooms: people in browsers and LLM agents play the coordination game together."""
