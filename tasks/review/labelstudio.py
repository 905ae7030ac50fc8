"""Label Studio round trip: a batch as Label Studio tasks with a labelling configuration, and
Label Studio's JSON export read back as review decisions.

A task's `data` carries the image (inline as a data URI), hint, question, the options as text,
and `question_id`, `batch_id`, `reviewer` (a twin's task also its `language` and its English
item's question and options, shown beside it); quality control's decision goes in as a prediction so
the Data Manager can sort by it. From an export, each annotation that was not cancelled becomes a
decision: `decision` (choices), `answer` and `dimension` (choices), `new_question`, `new_options`
(one option per line) and `reason` (text areas); `lead_time` is kept.

The reviewer is the annotator, so that two annotators of one task are two reviewers: a reviewers
map (Label Studio e-mail, or user id, -> reviewer name) names them first; else their e-mail where
the export has it (`annotations__completed_by` not `only_id`, a snapshot export); else, for an
export that gives only user ids (Label Studio's plain JSON export), the task's `reviewer` when one
Label Studio user alone annotated that reviewer's tasks. Two user ids on one reviewer's tasks
with no map is refused: it would merge two people into one."""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from benchfoundry.core.errors import UserError
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import REVIEW_DECISIONS
from benchfoundry.decisions.reviews import Decision
from benchfoundry.decisions.twins import TWIN_DECISIONS


def label_config(
    dimensions: list[str], n_letters: int = 10, videos: bool = False, twins: bool = False
) -> str:
    """The labelling configuration (XML) for review tasks; with `videos`, a Video player for
    the tasks of questions on a clip (their `video` and the `stretch` asked about); with
    `twins`, for a batch of twins: the English item's text beside the twin's, and only the
    decisions a twin takes (accept, reject, edit: it keeps its item's key and dimension)."""
    decisions = list(TWIN_DECISIONS if twins else REVIEW_DECISIONS)

    def choices(values: list[str]) -> str:
        return "".join(f"<Choice value={quoteattr(v)}/>" for v in values)

    return (
        "<View>\n"
        + (
            '  <Video name="video" value="$video"/>\n  <Text name="stretch" value="$stretch"/>\n'
            if videos
            else ""
        )
        + '  <Image name="image" value="$image"/>\n'
        '  <Text name="hint" value="$hint"/>\n'
        '  <Text name="question" value="$question"/>\n'
        '  <Text name="options" value="$options_text"/>\n'
        '  <Text name="key" value="$key_text"/>\n'
        + (
            '  <Header value="The English item"/>\n'
            '  <Text name="english_question" value="$english_question"/>\n'
            '  <Text name="english_options" value="$english_options_text"/>\n'
            if twins
            else ""
        )
        + f'  <Choices name="decision" toName="question" choice="single" required="true">{choices(decisions)}</Choices>\n'
        + (
            ""
            if twins
            else f'  <Choices name="answer" toName="question" choice="single">{choices(list(LETTERS[:n_letters]))}</Choices>\n'
            f'  <Choices name="dimension" toName="question" choice="single">{choices(dimensions)}</Choices>\n'
        )
        + '  <TextArea name="new_question" toName="question" placeholder="the edited question"/>\n'
        '  <TextArea name="new_options" toName="question" placeholder="edited options, one per line"/>\n'
        '  <TextArea name="reason" toName="question" placeholder="why (required to reject)"/>\n'
        "</View>\n"
    )


def tasks(
    samples: list[dict[str, Any]],
    images: dict[str, tuple[str, bytes]],
    batch: Any,
    clips: Mapping[str, tuple[str, bytes]] | None = None,
) -> list[dict[str, Any]]:
    """Label Studio tasks for a batch's samples (as the review app shows them); `images` maps
    image id -> (media type, bytes), `clips` clip id -> (media type, bytes) for the samples
    that ask about a clip (the task carries it inline, with the stretch asked about)."""
    out = []
    for s in samples:
        clip = (clips or {}).get(s["meta"].get("clip_id", ""))
        media, raw = images[s["image_id"]]
        options = "\n".join(f"{o['letter']}. {o['text']}" for o in s["options"])
        task = {
            "data": {
                "image": f"data:{media};base64,{base64.b64encode(raw).decode('ascii')}",
                "hint": s["hint"] or "",
                "question": s["question"],
                "options_text": options,
                "key_text": f"key: {s['answer']}",
                "question_id": s["question_id"],
                "batch_id": batch.batch_id,
                "reviewer": batch.reviewer,
                "dimension": s["dimension"],
                "qc_decision": s["decision"] or "",
                "hits_text": s["hits_text"],
                "hits_vlm": s["hits_vlm"],
                **(
                    {
                        "language": s["language"],
                        "english_question_id": s["english"]["question_id"],
                        "english_question": s["english"]["question"],
                        "english_options_text": "\n".join(
                            f"{o['letter']}. {o['text']}" for o in s["english"]["options"]
                        ),
                    }
                    if s.get("english")
                    else {}
                ),
                **(
                    {
                        "video": f"data:{clip[0]};base64,{base64.b64encode(clip[1]).decode('ascii')}",
                        "stretch": f"{s['meta']['video']}: {s['meta']['start']} to "
                        f"{s['meta']['end']} s asked about",
                    }
                    if clip
                    else {}
                ),
            },
            "predictions": [
                {
                    "model_version": "benchfoundry-qc",
                    "result": [
                        {
                            "from_name": "decision",
                            "to_name": "question",
                            "type": "choices",
                            "value": {
                                "choices": ["accept" if s["decision"] == "selected" else "reject"]
                            },
                        }
                    ],
                }
            ],
        }
        out.append(task)
    return out


def _values(result: list[dict[str, Any]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for item in result:
        value = item.get("value") or {}
        found[item.get("from_name", "")] = list(value.get("choices") or value.get("text") or [])
    return found


class LabelStudioExportError(UserError, ValueError):
    """A Label Studio export or reviewers map that cannot be read as decisions."""


def read_reviewers_map(path: Path) -> dict[str, str]:
    """A reviewers map file: a JSON object, Label Studio e-mail (or user id) -> reviewer name."""
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LabelStudioExportError(f"reviewers map {path}: not readable JSON ({exc})") from None
    if not isinstance(loaded, dict) or not all(
        isinstance(v, str) and v.strip() for v in loaded.values()
    ):
        raise LabelStudioExportError(
            f"reviewers map {path}: give a JSON object of Label Studio e-mail (or user id) -> "
            'reviewer name, e.g. {"ann@example.org": "ann"}'
        )
    return {str(k).strip(): v.strip() for k, v in loaded.items()}


def _annotator(annotation: dict[str, Any]) -> tuple[str | None, str | None]:
    """(user id, e-mail) of an annotation's `completed_by`, a user id or an expanded user."""
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        user = who.get("id")
        return (None if user is None else str(user)), (who.get("email") or None)
    return (None if who is None else str(who)), None


def _reviewer_of(
    user: str | None,
    email: str | None,
    task_reviewer: str,
    reviewers: Mapping[str, str],
    users_of: Mapping[str, set[str]],
) -> str:
    for key in (email, user):
        if key is not None and key in reviewers:
            return reviewers[key]
    if email:
        return email
    others = users_of.get(task_reviewer, set())
    if user is not None and others != {user}:
        raise LabelStudioExportError(
            f"Label Studio users {', '.join(sorted(others, key=lambda u: (len(u), u)))} annotated "
            f"tasks of '{task_reviewer}' and the export names user {user} by id only: name each "
            'user with --reviewers-map (a JSON object such as {"7": "ann"}), or export with the '
            "annotators' e-mails"
        )
    return task_reviewer


def decisions_from_export(
    tasks_: list[dict[str, Any]], reviewers: Mapping[str, str] | None = None
) -> list[Decision]:
    """Decisions from Label Studio's JSON export (cancelled annotations are skipped); the
    reviewer of each as the module docstring says."""
    reviewers = reviewers or {}
    # Which Label Studio users annotated each batch reviewer's tasks.
    users_of: dict[str, set[str]] = defaultdict(set)
    for task in tasks_:
        for annotation in task.get("annotations") or []:
            user, email = _annotator(annotation)
            if annotation.get("was_cancelled"):
                continue
            if user is not None:
                users_of[str((task.get("data") or {}).get("reviewer", ""))].add(user)
    out = []
    for task in tasks_:
        data = task.get("data") or {}
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled"):
                continue
            values = _values(annotation.get("result") or [])
            user, email = _annotator(annotation)
            reviewer = _reviewer_of(user, email, str(data.get("reviewer", "")), reviewers, users_of)
            options = [
                o.strip()
                for o in "\n".join(values.get("new_options", [])).splitlines()
                if o.strip()
            ]
            question = "\n".join(values.get("new_question", [])).strip()
            out.append(
                Decision(
                    question_id=str(data.get("question_id", "")),
                    reviewer=reviewer,
                    decision=(values.get("decision") or [""])[0],
                    new_answer=(values.get("answer") or [None])[0],
                    new_question=question or None,
                    new_options=options or None,
                    new_dimension=(values.get("dimension") or [None])[0],
                    reason="\n".join(values.get("reason", [])).strip() or None,
                    batch_id=data.get("batch_id"),
                    lead_time_s=annotation.get("lead_time"),
                    decided_at=annotation.get("updated_at") or annotation.get("created_at"),
                )
            )
    return out
