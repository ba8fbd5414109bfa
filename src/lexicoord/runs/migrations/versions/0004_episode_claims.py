"""Claims on a run's episodes, so several processes or machines share one run.

Revision ID: 0004_episode_claims
Revises: 0003_episode_moves
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_episode_claims"
down_revision = "0003_episode_moves"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "episode_claims",
        sa.Column("run_id", sa.String(128), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("owner", sa.String(128), nullable=True),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_episode_claims_run_position", "episode_claims", ["run_id", "position"])


def downgrade() -> None:
    op.drop_index("ix_episode_claims_run_position", "episode_claims")
    op.drop_table("episode_claims")
