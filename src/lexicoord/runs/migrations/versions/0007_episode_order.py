"""Episodes are read in grid order, a page at a time (reports, the run viewer): an index in that order.

Without it every page of a run's episodes sorted the whole run again, so reading a run of 38,000 episodes
took minutes instead of seconds.

Revision ID: 0007_episode_order
Revises: 0006_one_journal
"""

from alembic import op

revision = "0007_episode_order"
down_revision = "0006_one_journal"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_episodes_run_position_id", "episodes", ["run_id", "position", "id"])


def downgrade() -> None:
    op.drop_index("ix_episodes_run_position_id", table_name="episodes")
