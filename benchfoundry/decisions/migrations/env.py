"""alembic's environment for the review database: always run from `store.migrate` with an open
connection (no alembic.ini; the URL never leaves the process)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
