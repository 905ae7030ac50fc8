"""Choice extraction in two steps: the heuristic first, then, for undecided responses only, an
LLM judge asked for the matching option letter or Z, a bounded number of times. A response
still undecided after that is Z, extracted by "none", scored wrong and counted."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, is_

from benchfoundry.answering.choice import Extraction, Z, extract_choice
from benchfoundry.core.letters import LETTERS
from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, Request
from benchfoundry.prompts import load_for


@dataclass(frozen=True)
class ToExtract:
    question: str
    options: tuple[str, ...]
    response: str | None
    language: str = "en"  # the judge is asked in the question's language


def _judge_letter(text: str, valid: str) -> str | None:
    match = re.match(r"^\W*([A-Z])\b", text.strip())
    letter = match.group(1) if match else None
    return letter if letter is not None and (letter in valid or letter == Z) else None


def extract_all(
    items: Sequence[ToExtract],
    gateway: Gateway | None = None,
    judge: str | None = None,
    tries: int = 3,
) -> list[Extraction]:
    """Extractions in order: heuristic, then the judge for the undecided (when one is given)."""
    results = [extract_choice(item.response, item.options) for item in items]
    return judge_undecided(results, items.__getitem__, gateway, judge, tries)


def judge_undecided(
    results: list[Extraction],
    item_at: Callable[[int], ToExtract] | None = None,
    gateway: Gateway | None = None,
    judge: str | None = None,
    tries: int = 3,
) -> list[Extraction]:
    """`results` (the heuristic's, in order) with each undecided one read by the judge when one
    is given (`item_at(i)` is row i's question, options and response, asked for those rows
    only), else, like one the judge leaves undecided, Z by "none"."""
    undecided = map(is_, map(attrgetter("letter"), results), repeat(None))  # row by row in C
    pending = list(compress(range(len(results)), undecided))
    if not pending:
        return results
    if judge is None or gateway is None or item_at is None:
        for i in pending:
            results[i] = Extraction(Z, "none", f"undecided ({results[i].reason}); no judge model")
        return results
    items = {i: item_at(i) for i in pending}
    for attempt in range(tries):
        if not pending:
            break
        requests = []
        for i in pending:
            item = items[i]
            template = load_for("choice_extraction", item.language)
            prompt = template.render(
                question=item.question,
                options=list(zip(LETTERS, item.options, strict=False)),
                answer=item.response or "",
            )
            params = GenerateParams(
                max_tokens=8,
                temperature=0.0 if attempt == 0 else 0.7,
                seed=attempt,
                prompt_version=template.prompt_id,
            )
            requests.append(Request(judge, prompt, params))
        still = []
        for i, reply in zip(pending, gateway.generate_many(requests), strict=True):
            letter = (
                None
                if isinstance(reply, ModelCallError)
                else _judge_letter(reply.text, LETTERS[: len(items[i].options)])
            )
            if letter is None:
                still.append(i)
            else:
                results[i] = Extraction(letter, "llm", f"judge {judge} (try {attempt + 1})")
        pending = still
    for i in pending:
        results[i] = Extraction(
            Z, "none", f"undecided ({results[i].reason}); the judge gave no letter in {tries} tries"
        )
    return results
