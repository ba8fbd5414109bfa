"""The agreement gate's checks: request, verdict as it stands, the person's page token, the idempotency key.

Revision ID: 0010_gates
Revises: 0009_game_places
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_gates"
down_revision = "0009_game_places"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gates",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("key", sa.String(200), nullable=True),
        sa.Column("episode_key", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=True),
        sa.Column("owner", sa.String(32), nullable=True),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.JSON(), nullable=False),
        sa.UniqueConstraint("run_id", "key", name="uq_gates_run_key"),
    )


def downgrade() -> None:
    op.drop_table("gates")
