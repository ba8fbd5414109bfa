"""What a run's processes share about model calls: the response cache of a store on a server, and each model's
rate budget per run.

Revision ID: 0012_shared_calls
Revises: 0011_event_types
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_shared_calls"
down_revision = "0011_event_types"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "responses",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("output", sa.Text, nullable=False),
    )
    op.create_table(
        "rate_buckets",
        sa.Column("run_id", sa.String(128), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model", sa.String(256), primary_key=True),
        sa.Column("requests_rate", sa.Float, nullable=True),
        sa.Column("requests_cap", sa.Float, nullable=False),
        sa.Column("requests", sa.Float, nullable=False),
        sa.Column("tokens_rate", sa.Float, nullable=True),
        sa.Column("tokens_cap", sa.Float, nullable=False),
        sa.Column("tokens", sa.Float, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("spent_requests", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("spent_tokens", sa.BigInteger, nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("rate_buckets")
    op.drop_table("responses")
