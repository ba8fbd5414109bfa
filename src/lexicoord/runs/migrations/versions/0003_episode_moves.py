"""The answers of an unfinished campaign episode, so a long game resumes where it stopped.

Revision ID: 0003_episode_moves
Revises: 0002_rooms
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_episode_moves"
down_revision = "0002_rooms"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "episode_moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(128), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("player", sa.String(128), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_id", "key", "player", "idx"),
    )
    op.create_index("ix_episode_moves_run_key", "episode_moves", ["run_id", "key"])


def downgrade() -> None:
    op.drop_index("ix_episode_moves_run_key", "episode_moves")
    op.drop_table("episode_moves")
