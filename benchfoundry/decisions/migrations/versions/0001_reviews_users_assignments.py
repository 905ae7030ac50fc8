"""The review database's first schema: decisions (append-only) with each reviewer's latest per
question, users with hashed tokens, batch assignments, and the store's own markers.

Revision ID: 0001
Revises:
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("question_id", sa.String, nullable=False),
        sa.Column("reviewer", sa.String, nullable=False),
        sa.Column("role", sa.String, nullable=True),
        sa.Column("decision", sa.String, nullable=False),
        sa.Column("new_answer", sa.String, nullable=True),
        sa.Column("new_question", sa.Text, nullable=True),
        sa.Column("new_options", sa.Text, nullable=True),
        sa.Column("new_dimension", sa.String, nullable=True),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("note", sa.Text, nullable=True),
        sa.Column("tool", sa.String, nullable=False),
        sa.Column("batch_id", sa.String, nullable=True),
        sa.Column("candidate_hash", sa.String, nullable=False),
        sa.Column("decided_at", sa.String, nullable=False),
        sa.Column("lead_time_s", sa.Float, nullable=True),
        sa.Column("adjudication", sa.Boolean, nullable=False),
        sa.UniqueConstraint("question_id", "reviewer", "decided_at", name="uq_reviews_key"),
    )
    op.create_index("ix_reviews_question", "reviews", ["question_id"])
    op.create_index("ix_reviews_reviewer", "reviews", ["reviewer", "decided_at"])
    op.create_table(
        "current",
        sa.Column("question_id", sa.String, primary_key=True),
        sa.Column("reviewer", sa.String, primary_key=True),
        sa.Column("review_id", sa.Integer, nullable=False),
        sa.Column("decided_at", sa.String, nullable=False),
    )
    op.create_table(
        "users",
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("role", sa.String, nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("created_by", sa.String, nullable=True),
        sa.Column("revoked_at", sa.String, nullable=True),
    )
    op.create_table(
        "assignments",
        sa.Column("batch_id", sa.String, primary_key=True),
        sa.Column("user_name", sa.String, nullable=False),
        sa.Column("assigned_by", sa.String, nullable=True),
        sa.Column("assigned_at", sa.String, nullable=False),
    )
    op.create_table(
        "store_meta",
        sa.Column("key", sa.String, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for name in ("store_meta", "assignments", "users", "current", "reviews"):
        op.drop_table(name)
