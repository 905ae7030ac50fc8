"""A release card's results (`publish.card_results`): when the run holds an evaluation of the
same questions (the run manifest's `evaluate` summary, of a release version with the rows this
publish would release), the card reports it: each model's accuracy per language, vanilla and
under CircularEval with their 95% intervals, and each model's loss from English to another
language on the same items (the paired bootstrap interval and the exact McNemar p). A version is
never rewritten, so a card with results is a new version, a child of the one evaluated, with the
same data; its manifest names the version whose questions it holds (`base_version`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.card import _cell

MANIFEST = "manifest.json"


def evaluation_of(run: RunFolder, base: str, folder: Path) -> dict[str, Any] | None:
    """The run's latest evaluation summary when it evaluated a version holding the rows whose
    version (without results) is `base`: that version itself, or a card-with-results child of it
    in `folder` (<to>/<name>). None otherwise: no evaluation, or one of other questions."""
    summary = (run.read_manifest().get("evaluate") or {}).get("summary")
    if not isinstance(summary, dict) or not summary.get("scores"):
        return None
    evaluated = (summary.get("dataset") or {}).get("version")
    if evaluated == base:
        return summary
    manifest = folder / str(evaluated) / MANIFEST
    child = evaluated and manifest.is_file()
    if child and json.loads(manifest.read_text(encoding="utf-8")).get("base_version") == base:
        return summary
    return None


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _with_interval(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("accuracy") is None:
        return "-"
    low, high = entry.get("low"), entry.get("high")
    span = f" [{low:.1%}, {high:.1%}]" if low is not None and high is not None else ""
    return f"{entry['accuracy']:.1%}{span}"


def results_lines(summary: dict[str, Any]) -> list[str]:
    """The card's results section (Markdown lines, every value from data escaped)."""
    dataset = summary.get("dataset") or {}
    scores = sorted(
        summary.get("scores") or [],
        key=lambda s: (not s.get("with_image", True), str(s.get("model"))),
    )
    languages = sorted({lang for s in scores for lang in (s.get("by_language") or {"en": 0})})
    header = ["model", "sees"] + [
        f"{lang} {mode}" for lang in languages for mode in ("vanilla", "circular")
    ]
    lines = [
        "## Results",
        "",
        f"Evaluated by benchfoundry on version `{_cell(dataset.get('version'))}` (the same "
        f"questions, {_cell(dataset.get('questions'))} items asked): accuracy with its 95% "
        "interval, per language, vanilla and under CircularEval (a question counts only if every "
        "rotation of its options is answered right).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for s in scores:
        by_language = s.get("by_language") or {"en": {"vanilla": s.get("vanilla"),
                                                      "circular": s.get("circular")}}  # fmt: skip
        cells = [
            _with_interval((by_language.get(lang) or {}).get(mode))
            for lang in languages
            for mode in ("vanilla", "circular")
        ]
        with_image = s.get("with_image", True)
        model = f"{s.get('model')}{'' if with_image else ' (no image)'}"
        sees = (s.get("sees") or "the image") if with_image else "nothing"
        lines.append("| " + " | ".join(_cell(c) for c in [model, sees, *cells]) + " |")
    gaps = summary.get("language_gaps") or []
    if gaps:
        lines += [
            "",
            "Each model's loss from one language to another on the same items (paired bootstrap "
            "95% interval, clustered by image; exact McNemar test):",
            "",
            "| model | from | to | items | accuracy | loss | 95% interval | McNemar p |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for g in gaps:
            model = f"{g.get('model')}{'' if g.get('with_image', True) else ' (no image)'}"
            interval = f"[{g['low']:+.1%}, {g['high']:+.1%}]" if g.get("low") is not None else "-"
            p = "-" if g.get("p_value") is None else f"{g['p_value']:.3g}"
            accuracy = f"{_share(g.get('accuracy_from'))} -> {_share(g.get('accuracy_to'))}"
            loss = "-" if g.get("difference") is None else f"{g['difference']:+.1%}"
            row = [model, g.get("from"), g.get("to"), g.get("items"), accuracy, loss, interval, p]
            lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return lines + [""]
