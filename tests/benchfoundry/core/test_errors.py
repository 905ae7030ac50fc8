"""One base class for every error a user can cause; the CLI catches it alone."""

from __future__ import annotations

import pytest

from benchfoundry.answering.predictions import PredictionFileError
from benchfoundry.core.errors import UserError
from benchfoundry.core.packaged import PackageMissingError
from benchfoundry.core.taxonomy import TaxonomyError
from benchfoundry.decisions.reviews import ReviewError
from benchfoundry.extractors.base import ExtractorUnavailable
from benchfoundry.gateway.errors import ModelConfigError
from benchfoundry.pipeline.preflight import PreflightError
from benchfoundry.pipeline.spec import SpecError
from benchfoundry.prompts import PromptError
from benchfoundry.sources.items import SourceFormatError
from benchfoundry.storage.objects import StoreError
from benchfoundry.storage.releases import ReleaseError
from benchfoundry.storage.tables import SchemaMismatchError
from benchfoundry.tasks.evaluate.dataset import EvalDatasetError
from benchfoundry.tasks.evaluate.leaderboard import ReportError
from benchfoundry.tasks.publish.stage import PublishError
from benchfoundry.tasks.qc.stage import QCConfigError

USER_ERRORS = [
    PredictionFileError, PackageMissingError, TaxonomyError, ReviewError, ExtractorUnavailable,
    ModelConfigError, PreflightError, SpecError, PromptError, SourceFormatError, StoreError,
    ReleaseError, SchemaMismatchError, EvalDatasetError, ReportError, PublishError, QCConfigError,
]  # fmt: skip


@pytest.mark.parametrize("error", USER_ERRORS, ids=lambda e: e.__name__)
def test_every_user_error_derives_from_the_one_base(error):
    assert issubclass(error, UserError)


def test_the_cli_catches_the_base_alone():
    import inspect

    from benchfoundry.cli import common

    source = inspect.getsource(common.run)
    assert "except UserError as exc:" in source
    assert not any(e.__name__ in source for e in USER_ERRORS)
