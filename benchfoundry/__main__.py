"""`python -m benchfoundry` runs the command line."""

from benchfoundry.cli import app

app()
