"""Decisions on twins: a decision records the language of the twin it is about (`<question_id>@
<language>`), empty for an English item, so that status and agreement count each language.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reviews") as batch:
        batch.add_column(sa.Column("language", sa.String, nullable=True))
    # decisions stored before this were all on English items: their language stays empty
    op.create_index("ix_reviews_language", "reviews", ["language"])


def downgrade() -> None:
    op.drop_index("ix_reviews_language", "reviews")
    with op.batch_alter_table("reviews") as batch:
        batch.drop_column("language")
