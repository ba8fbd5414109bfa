"""An episode's events of some types, in order (the run viewer's term board): an index on episode, type and seq.

Without it the board of an episode read every event of the episode to find its few lexicon events, so its
cost grew with the episode (a 100,000-event episode's board took 25 ms where a 100-event one took 1).

Revision ID: 0011_event_types
Revises: 0010_gates
"""

from alembic import op

revision = "0011_event_types"
down_revision = "0010_gates"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_events_episode_type_seq", "events", ["episode_id", "type", "seq"])


def downgrade() -> None:
    op.drop_index("ix_events_episode_type_seq", table_name="events")
