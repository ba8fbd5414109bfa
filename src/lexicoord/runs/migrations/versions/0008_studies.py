"""Studies with people: a study's state, and its participants' sessions.

Revision ID: 0008_studies
Revises: 0007_episode_order
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_studies"
down_revision = "0007_episode_order"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
    )
    op.create_table(
        "study_participants",
        sa.Column("study_id", sa.String(128), sa.ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("pid", sa.String(64), primary_key=True),
        sa.Column("stage", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("study_participants")
    op.drop_table("studies")
