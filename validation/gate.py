"""The publish gate: a Great Expectations suite (the checks of `release_gate.yaml`) run on the
release table before anything is written. It runs in GE's ephemeral context (nothing on disk but
the Data Docs site, nothing on the network) and always writes the Data Docs to the folder it is
given, for a passing run and a failing one alike."""

from __future__ import annotations

import html
import logging
import os
import re
import shutil
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from benchfoundry.core.letters import LETTERS, is_letter_of

SITE = "benchfoundry"
SHOWN_IDS = 20  # failing rows named per check in a message


class GateCheck(BaseModel):
    id: str
    expectation: str
    means: str
    success: bool
    column: str | None
    failing: list[str]  # question ids of the failing rows (row checks)
    failing_count: int
    observed: str | None  # what an aggregate check measured
    allowed: str | None = None  # its bounds


class GateResult(BaseModel):
    success: bool
    checks: list[GateCheck]
    skipped: list[str]  # checks the options turned off (human_decision with allow_unreviewed)
    data_docs: str  # the site's index.html
    rows: int

    def failures(self) -> list[GateCheck]:
        return [c for c in self.checks if not c.success]

    def message(self) -> str:
        """Each failing check with its failing rows' ids, for the terminal."""
        lines = []
        for c in self.failures():
            what = f"{c.id} ({c.expectation}): {c.means}"
            if c.failing_count:
                shown = ", ".join(c.failing[:SHOWN_IDS])
                more = (
                    f" and {c.failing_count - SHOWN_IDS} more"
                    if c.failing_count > SHOWN_IDS
                    else ""
                )
                noun = "row" if c.failing_count == 1 else "rows"
                what += f"; {c.failing_count} {noun}: {shown}{more}"
            if c.observed is not None:
                what += f"; observed {c.observed}"
            if c.allowed is not None:
                what += f", allowed {c.allowed}"
            lines.append(what)
        return "\n".join(lines)


class GateRow(BaseModel):
    """What the gate reads of one release row."""

    index: int
    question_id: str
    question: str
    options: list[str]
    answer: str
    dimension: str
    human_reviewed: bool
    image_decodes: bool
    video_decodes: bool = True  # its clip is in the release and decodes (True without a clip)
    language: str = "en"


def checks_file() -> list[dict[str, Any]]:
    text = files(__package__).joinpath("release_gate.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)["checks"]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _appears(needle: str, haystack: str) -> bool:
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def answer_in_question(question: str, options: Sequence[str], answer: str) -> bool:
    """The answer's text is written in the question while no other option's is (a question that
    names its options, `is it red or blue?`, gives nothing away)."""
    if not is_letter_of(answer, len(options)):
        return False
    q = _norm(question)
    right = _norm(options[LETTERS.index(answer)])
    others = [_norm(o) for i, o in enumerate(options) if LETTERS[i] != answer]
    return _appears(right, q) and not any(_appears(o, q) for o in others)


def answer_is_longest(options: Sequence[str], answer: str) -> bool:
    if not is_letter_of(answer, len(options)):
        return False
    lengths = [len(o.strip()) for o in options]
    mine = lengths.pop(LETTERS.index(answer))
    return all(mine > other for other in lengths)


def _safe(text: str) -> str:
    """Text from the data as the gate's frame holds it: HTML-escaped, because Data Docs put the
    values of failing rows into their pages as they are (escaping is one-to-one, so uniqueness
    and set membership read the same)."""
    return html.escape(text, quote=True)


def gate_frame(rows: Sequence[GateRow]) -> Any:
    """The release table as the gate sees it: its own scalar columns (text escaped, `_safe`) and
    those computed per row."""
    import pandas as pd

    records = []
    english = {r.question_id: r.answer for r in rows if r.language == "en"}
    for r in rows:
        n = len(r.options)
        record: dict[str, Any] = {
            "index": r.index,
            "language": _safe(r.language),
            # a twin shares its item's id: ids are unique within a language
            "question_id": _safe(
                r.question_id if r.language == "en" else f"{r.question_id}@{r.language}"
            ),
            "twin_pairs": r.language == "en" or english.get(r.question_id) == r.answer,
            "question": _safe(r.question),
            "answer": _safe(r.answer),
            "dimension": _safe(r.dimension),
            "human_reviewed": r.human_reviewed,
            "image_decodes": r.image_decodes,
            "video_decodes": r.video_decodes,
            "n_options": n,
            "distinct_options": len({_norm(o) for o in r.options if o.strip()}),
            "answer_in_options": is_letter_of(r.answer, n),
            "answer_in_question": answer_in_question(r.question, r.options, r.answer),
            "answer_is_longest": int(answer_is_longest(r.options, r.answer)),
        }
        for letter in LETTERS:
            record[f"answer_is_{letter}"] = int(r.answer == letter)
        records.append(record)
    return pd.DataFrame.from_records(records)


def chance_shares(rows: Sequence[GateRow]) -> dict[str, float]:
    """Each letter's expected share of answers if every question's answer were drawn uniformly
    among its options."""
    if not rows:
        return {}
    shares = dict.fromkeys(LETTERS, 0.0)
    for r in rows:
        for letter in LETTERS[: len(r.options)]:
            shares[letter] += 1 / len(r.options) / len(rows)
    return {k: v for k, v in shares.items() if v > 0}


def _fill(value: Any, values: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return values[value[1:]]
    if isinstance(value, str) and "$" in value:
        return re.sub(r"\$(\w+)", lambda m: str(values[m.group(1)]), value)
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def suite_entries(
    rows: Sequence[GateRow],
    dimensions: Sequence[str],
    letter_tolerance: float,
    longest_answer_share: float,
    allow_unreviewed: bool,
) -> tuple[list[tuple[dict[str, Any], str, dict[str, Any]]], list[str]]:
    """(check, expectation type, filled keyword arguments) for each expectation, and the ids of
    the checks the options turn off."""
    values: dict[str, Any] = {
        "dimensions": sorted(_safe(d) for d in dimensions),
        "max_options": len(LETTERS),
        "longest_answer_share": longest_answer_share,
        "allow_unreviewed": allow_unreviewed,
    }
    out, skipped = [], []
    for check in checks_file():
        if check.get("unless") and values[check["unless"]]:
            skipped.append(check["id"])
            continue
        if check.get("each_letter"):
            for letter, chance in chance_shares(rows).items():
                bounds = {
                    "letter": letter,
                    "letter_min": round(max(0.0, chance - letter_tolerance), 6),
                    "letter_max": round(min(1.0, chance + letter_tolerance), 6),
                }
                kwargs = {k: _fill(v, {**values, **bounds}) for k, v in check["kwargs"].items()}
                out.append(
                    ({**check, "id": f"{check['id']}[{letter}]"}, check["expectation"], kwargs)
                )
            continue
        kwargs = {k: _fill(v, values) for k, v in check["kwargs"].items()}
        out.append((check, check["expectation"], kwargs))
    return out, skipped


def _measured(value: Any) -> str | None:
    if value is None:
        return None
    return f"{float(value):.3f}" if isinstance(value, int | float) else str(value)


def _bounds(kwargs: dict[str, Any]) -> str | None:
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    if low is None and high is None:
        return None
    return f"{'-inf' if low is None else f'{low:.3f}'}..{'inf' if high is None else f'{high:.3f}'}"


def _quiet() -> None:
    """No analytics and no progress bars from Great Expectations."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)


def run_gate(
    rows: Sequence[GateRow],
    *,
    dimensions: Sequence[str],
    docs: Path,
    letter_tolerance: float,
    longest_answer_share: float,
    allow_unreviewed: bool,
    name: str = "release",
) -> GateResult:
    """Validate the release rows; write the Data Docs site to `docs` (replacing an earlier one)."""
    _quiet()
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.data_context.types.base import ProgressBarsConfig

    entries, skipped = suite_entries(
        rows, dimensions, letter_tolerance, longest_answer_share, allow_unreviewed
    )
    frame = gate_frame(rows)
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir(parents=True, exist_ok=True)
    context = gx.get_context(mode="ephemeral")
    # The ephemeral context's own site is a temporary folder it makes at once: not ours to keep.
    for site in (context.variables.data_docs_sites or {}).values():
        base = site.get("store_backend", {}).get("base_directory")
        if base and Path(base).name.startswith("tmp"):
            shutil.rmtree(base, ignore_errors=True)
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    context.add_data_docs_site(
        site_name=SITE,
        site_config={
            "class_name": "SiteBuilder",
            "store_backend": {
                "class_name": "TupleFilesystemStoreBackend",
                "base_directory": str(docs),
            },
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        },
    )
    batch = (
        context.data_sources.add_pandas("release")
        .add_dataframe_asset(name)
        .add_batch_definition_whole_dataframe("whole release")
    )
    suite = context.suites.add(gx.ExpectationSuite(name="publish_gate"))
    by_id = {}
    for check, kind, kwargs in entries:
        expectation = getattr(gxe, kind)(
            **kwargs, meta={"check": check["id"], "means": check["means"]}
        )
        suite.add_expectation(expectation)
        by_id[check["id"]] = check
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name="publish gate", data=batch, suite=suite)
    )
    checkpoint = context.checkpoints.add(
        gx.Checkpoint(
            name="publish",
            validation_definitions=[definition],
            actions=[gx.checkpoint.UpdateDataDocsAction(name="data docs", site_names=[SITE])],
            result_format={
                "result_format": "COMPLETE",
                "unexpected_index_column_names": ["question_id"],
            },
        )
    )
    outcome = checkpoint.run(batch_parameters={"dataframe": frame})
    results = []
    for run in outcome.run_results.values():
        for one in run.results:
            config = one.expectation_config
            check = by_id[config.meta["check"]]
            found = one.result or {}
            failing = [
                html.unescape(str(i.get("question_id")))
                for i in found.get("unexpected_index_list") or []
            ]
            observed = found.get("observed_value")
            results.append(
                GateCheck(
                    id=check["id"],
                    expectation=config.type,
                    means=check["means"],
                    success=bool(one.success),
                    column=config.kwargs.get("column") or config.kwargs.get("column_A"),
                    failing=sorted(set(failing)),
                    failing_count=len(set(failing)),
                    observed=_measured(observed),
                    allowed=_bounds(config.kwargs) if observed is not None else None,
                )
            )
    return GateResult(
        success=bool(outcome.success),
        checks=results,
        skipped=skipped,
        data_docs=str(docs / "index.html"),
        rows=len(rows),
    )
