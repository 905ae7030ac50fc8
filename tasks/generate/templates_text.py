"""The template that asks what text is written in the image: the longest line both OCR engines
read alike, against near words a careless reader could take for it."""

from __future__ import annotations

from collections.abc import Sequence

from benchfoundry.core.records import OcrLine, VisualFactsRecord
from benchfoundry.tasks.generate.templates import Asked, Draw, Question, each

READ_CONFIDENCE = 0.9  # an OCR line read with less confidence is no answer key
# Letters a reader can mistake for one another (and that common fonts still tell apart): a
# distractor is the line with one of them changed, a near word a careless reader could pick.
CONFUSABLE = (
    ("rn", "m"), ("m", "rn"), ("cl", "d"), ("d", "cl"), ("vv", "w"), ("w", "vv"),
    ("o", "a"), ("a", "o"), ("e", "c"), ("c", "e"), ("n", "h"), ("h", "n"), ("u", "v"),
    ("v", "u"), ("t", "f"), ("f", "t"), ("b", "h"), ("g", "q"), ("q", "g"), ("i", "j"),
    ("a", "e"), ("e", "a"), ("E", "F"), ("F", "E"), ("C", "G"), ("G", "C"), ("B", "8"),
    ("8", "B"), ("S", "5"), ("5", "S"), ("H", "M"), ("M", "H"), ("N", "H"), ("P", "R"),
    ("R", "P"), ("U", "V"), ("V", "U"), ("3", "8"), ("6", "8"), ("y", "v"), ("v", "y"),
    ("k", "h"), ("r", "n"), ("i", "l"), ("l", "i"), ("Y", "V"), ("V", "Y"), ("M", "N"),
    ("N", "M"), ("H", "N"), ("K", "X"), ("O", "Q"), ("Q", "O"), ("D", "O"), ("O", "D"),
)  # fmt: skip


def near_words(text: str) -> list[str]:
    """The text with one confusable letter (or pair) changed, every way it can be."""
    out = []
    for old, new in CONFUSABLE:
        start = text.find(old)
        while start >= 0:
            out.append(text[:start] + new + text[start + len(old) :])
            start = text.find(old, start + 1)
    return out


def text_questions(draw: Draw, facts: VisualFactsRecord, agreed: Sequence[OcrLine]) -> Asked:
    """The longest line read with confidence, against texts that are not written in the image
    but that a reader could take for it: the line with one word replaced by another word of the
    image, and near words (one confusable letter changed: YAMAHA, YAMAMA). Only the `agreed`
    lines are keys (both OCR engines read them alike, as whole words: `agreement`), and of
    those only a line read with `READ_CONFIDENCE` (an OCR misreading would be the answer).
    Drawn from the image's own lines alone, so the question (and its id) stays the same when a
    build grows."""
    read = [line for line in agreed if 2 <= len(line.text) <= 60]
    if not read:
        return Asked(why_not="no_text")
    lines = [line.text for line in read if line.score >= READ_CONFIDENCE]
    if not lines:
        return Asked(why_not="unsure_text")
    correct = max(lines, key=lambda t: (len(t), t))
    written = " ".join(line.text for line in facts.ocr_lines).casefold()
    words = correct.split()
    image_words = sorted(
        {w for t in lines if t != correct for w in t.split() if len(w) > 1} - set(words)
    )
    swapped = [
        " ".join(words[:k] + [other] + words[k + 1 :])
        for k in range(len(words))
        for other in image_words
        if len(words) > 1
    ]
    near = [
        " ".join(words[:k] + [variant] + words[k + 1 :])
        for k in range(len(words))
        for variant in near_words(words[k])
    ]
    rng = draw({}, {"text": correct})
    rng.shuffle(swapped)
    rng.shuffle(near)
    distractors: list[str] = []
    for text in swapped[:1] + near + swapped[1:]:
        folded = text.casefold()
        if folded not in written and folded not in (d.casefold() for d in distractors):
            distractors.append(text)
        if len(distractors) == 3:
            break
    if len(distractors) < 3:
        return Asked(why_not="no_distractor")
    return Asked(
        [
            Question(
                "read_text",
                {},
                {"text": correct},
                each("text", distractors),
                [
                    f'OCR line "{correct}" (confidence {max(x.score for x in read if x.text == correct):.2f})'
                ],
            )
        ]
    )
