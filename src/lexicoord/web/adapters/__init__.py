"""One adapter per protocol that people can play in a live room: its phases, moves, view and statistics."""
