"""Alembic migrations of the store: named, append-only."""
