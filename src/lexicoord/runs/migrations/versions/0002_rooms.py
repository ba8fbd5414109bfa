"""Live rooms and the moves of their game in progress.

Revision ID: 0002_rooms
Revises: 0001_initial
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_rooms"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rooms",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("code", sa.String(32), nullable=False, unique=True),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
    )
    op.create_table(
        "room_moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("room_id", sa.String(32), sa.ForeignKey("rooms.id", ondelete="CASCADE"), nullable=False),
        sa.Column("game", sa.Integer, nullable=False),
        sa.Column("player", sa.String(128), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.UniqueConstraint("room_id", "game", "player", "idx"),
    )
    op.create_index("ix_room_moves_room_id", "room_moves", ["room_id"])


def downgrade() -> None:
    op.drop_index("ix_room_moves_room_id", "room_moves")
    op.drop_table("room_moves")
    op.drop_table("rooms")
