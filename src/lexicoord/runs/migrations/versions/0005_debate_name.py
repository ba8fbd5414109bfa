"""The leader-follower debate has one name: runs and rooms stored as "ambiguity" become "debate".

Revision ID: 0005_debate_name
Revises: 0004_episode_claims
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_debate_name"
down_revision = "0004_episode_claims"
branch_labels = None
depends_on = None


def _rename(old: str, new: str) -> None:
    bind = op.get_bind()
    bind.execute(sa.text("UPDATE runs SET protocol = :new WHERE protocol = :old"), {"old": old, "new": new})
    # A room's protocol is a key of its JSON config; read and written back as JSON, whatever the dialect.
    rooms = sa.table("rooms", sa.column("id", sa.String), sa.column("config", sa.JSON))
    for room_id, config in bind.execute(sa.select(rooms.c.id, rooms.c.config)).all():
        if isinstance(config, dict) and config.get("protocol") == old:
            bind.execute(rooms.update().where(rooms.c.id == room_id).values(config={**config, "protocol": new}))


def upgrade() -> None:
    _rename("ambiguity", "debate")


def downgrade() -> None:
    _rename("debate", "ambiguity")
