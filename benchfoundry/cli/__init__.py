"""The `benchfoundry` command line: one module per command group, one shared module
(`common`) for the app, options and output. Importing this package registers every command, in
the order `--help` lists them."""

# ruff: noqa: I001  (the import order is the order of the commands in --help)
from benchfoundry.cli import stages  # noqa: F401  build, ingest, extract, generate
from benchfoundry.cli import qc  # noqa: F401  filter, consensus, select
from benchfoundry.cli import runs  # noqa: F401  status, synth
from benchfoundry.cli import models  # noqa: F401  models, cache, serve-test
from benchfoundry.cli import review  # noqa: F401  review export|serve|import|status|adjudicate
from benchfoundry.cli import review_users  # noqa: F401  review users|assign
from benchfoundry.cli import publish  # noqa: F401  publish, releases
from benchfoundry.cli import evaluate  # noqa: F401  score
from benchfoundry.cli import explore  # noqa: F401  explore
from benchfoundry.cli.common import app

__all__ = ["app"]
