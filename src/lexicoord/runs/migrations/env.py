"""Alembic environment: migrations run on the connection the store hands over."""

from alembic import context

from lexicoord.runs.tables import METADATA

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=METADATA, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
