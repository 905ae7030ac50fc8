"""The shortcuts of reading a whole file at once read what the row-by-row rules read: the batch
reading (`extract_many`), the short-response path (`_words_only`), the plain forms made all at
once (`_plain_all`) and the column readers of `score_predictions`."""

import random
import re
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from benchfoundry.answering import choice, choice_batch
from benchfoundry.answering.choice import extract_choice, normalise
from benchfoundry.answering.choice_batch import extract_many
from benchfoundry.answering.predictions import (
    _WHITESPACE,
    _may_need_trim,
    _text,
    _texts,
    score_predictions,
)
from benchfoundry.core.letters import LETTERS
from tests.benchfoundry.answering.test_choice import TABLE

SETS = [
    ["a cat", "a dog", "a bird", "a fish"],
    ["2", "3", "4", "5"],
    ["yes", "no"],
    ["red", "green", "blue", "yellow", "black"],
    ["cat", "black cat", "dog"],
    ["苹果", "香蕉", "橙子", "葡萄"],
    ["红色", "深红色", "蓝色"],
    ["The Eiffel Tower", "Big Ben", "the Colosseum"],
    ["left", "right", "", "above"],
]
WORDS = ["It", "is", "the", "a", "I", "A", "B", "b", "(C)", "D.", "cat", "dog", "can", "not"]
WORDS += ["option", "answer", "is:", "choose", "17", "three", "Dog", "none", "taxi", "x,", "E"]


def _responses(options: list[str], rng: random.Random) -> list[str]:
    """Responses of every shape models write, for one option set."""
    letter = rng.choice(LETTERS[: len(options)])
    text = options[LETTERS.index(letter)] or "nothing"
    other = options[0] or "nothing"
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
    return [
        letter,
        letter.lower(),
        f"({letter})",
        f"{letter}.",
        f"**{letter}**",
        f"The answer is {letter}.",
        f"Answer: {letter}",
        f"{letter}. {text}",
        f"{letter}) {text.lower()}",
        f"A. {text}",
        f"I. {text}",
        f"E. {text}",
        f"It is the {text}.",
        f"it is {text}, not {other}",
        text,
        text.upper(),
        f"Not {text}.",
        "I cannot determine the answer from the image.",
        "None of the options.",
        f"答案是{letter}",
        f"是{text}",
        f"不是{text}",
        f"{letter} or {LETTERS[0]}",
        f"A) {other} B) {text}",
        f"not {letter}",
        "three",
        "It's 4.",
        f"Looking at the image carefully, the {text} in question matches the description "
        f"best, so I would pick ({letter}) from the list.",
        f"Looking closely, I see {text} and maybe {other}; the image is not clear, so I "
        f"cannot be sure, but option {letter} is the most likely answer here.",
        words,
        words.lower(),
        f"{letter}. {words}",
        "",
        "  ",
        "...",
    ]


def _sample(seed: int = 0) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    sample = [(r, o) for r, o, _ in TABLE]
    for options in SETS * 20:
        sample += [(r, options) for r in _responses(options, rng)]
    return sample


def test_the_batch_reading_is_the_row_by_row_reading():
    sample = _sample()
    assert len(sample) > 6_000
    expected = [extract_choice(r, o) for r, o in sample]
    got = extract_many(
        [r for r, _ in sample],
        [len(o) for _, o in sample],
        lambda rows: [sample[i][1] for i in rows],
    )
    assert got == expected
    kinds = {e.reason for e in expected}  # the sample reaches every kind of decision
    assert {"letter", "bare letter", "answer marker", "option text", "yes/no", "number"} <= kinds
    assert {"option text within the response", "refusal or cannot determine"} <= kinds
    assert any(e.letter is None for e in expected) and any(e.letter == "Z" for e in expected)


def test_the_short_response_path_agrees_with_the_full_rules():
    rng = random.Random(1)
    plain = ["cat", "dog", "the", "a", "is", "it", "17", "x,", "red.", "i", "can't", "taxi"]
    labels = ["", "B. ", "E) ", "A. ", "I: ", "(C) ", "b. ", "It ", "D ", "C, ", "A ", "I "]
    texts = [normalise(r) for r, _ in _sample()]
    for _ in range(20_000):
        words = WORDS if rng.random() < 0.3 else plain
        body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 13)))
        texts.append(normalise(rng.choice(labels) + body))
    taken = []
    for text in filter(None, texts):
        for count in (2, 4):
            valid = LETTERS[:count]
            quick = choice._words_only(text, valid)
            if quick is not None:
                taken.append(quick)
                assert quick == choice._by_rules(text, valid), text
    # The path is taken, for labels (valid or not) and for words read by content.
    assert sum(isinstance(q, str) for q in taken) > 2_000
    assert sum(not isinstance(q, str) and q.decided for q in taken) > 1_000
    assert sum(not isinstance(q, str) and not q.decided for q in taken) > 100


def test_plain_forms_made_at_once_are_those_made_one_by_one():
    texts = ["It is the Cat.", "", "  a  b ", "...", "black-cat (2)", "x", "A. dog!", "don't"]
    assert choice_batch._plain_all(texts) == [choice._plain(t) for t in texts]
    padded = choice_batch._plain_all(texts, padded=True)
    assert padded == [f" {choice._plain(t)} " for t in texts]
    assert choice_batch._plain_all([]) == []
    assert choice_batch._plain_all(["是香蕉", "a"]) is None
    assert choice_batch._plain_all(["a\tb"]) is None
    assert choice_batch._plain_all(["a\nb"]) is None
    # Option columns joined row by row by Arrow: a row's options, then the next row's.
    columns = [pa.array(texts[:4]), pa.array(texts[4:])]
    lines = choice_batch._lines([c.slice(1) for c in columns])
    assert lines == "\n".join(t for row in zip(texts[1:4], texts[5:], strict=True) for t in row)
    assert choice_batch._plain_joined(lines, 6) == [
        choice._plain(t) for row in zip(texts[1:4], texts[5:], strict=True) for t in row
    ]
    assert choice_batch._lines([]) == choice_batch._lines([pa.array([], pa.string())]) == ""


def test_the_white_space_arrow_trims_is_what_str_strip_removes():
    every = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
    assert sorted(_WHITESPACE) == sorted(every)


@pytest.mark.parametrize("dtype", ["str", "object"])
def test_a_column_is_read_as_text_reads_each_value(dtype):
    clean = ["B", "", "The answer is C.", "苹果", "", "x y"]  # nothing to strip: kept as it is
    edges = ["\u3000苹果", "B\xa0", " B", "C\n", "\u2028", "\x85x", "a\u202f", "\t"]
    frame = pd.DataFrame({"clean": clean * 3, "edges": (edges + [None] * 10)[:18]}, dtype=dtype)
    frame["nulls"] = pd.Series(["a", None, " b "] * 6, dtype=dtype)
    for column in frame.columns:
        got = _texts(frame, column)
        assert got.type == pa.string()
        assert got.to_pylist() == [_text(v) for v in frame[column].tolist()]
    assert not _may_need_trim(_texts(frame, "clean"))
    for text in edges:  # a text whose first or last byte may be white space is trimmed
        assert _may_need_trim(pa.array(["a", text, ""]))
    assert not _may_need_trim(pa.array(["", "", "é", "a"])[3:])  # sliced: the bytes it holds
    for column in ("edges", "clean"):  # sliced, with nulls and without
        assert _texts(frame.iloc[5:], column).to_pylist() == [
            _text(v) for v in frame[column].iloc[5:].tolist()
        ]


def _frame(sample: list[tuple[str, list[str]]], rng: random.Random) -> pd.DataFrame:
    records = []
    for i, (response, options) in enumerate(sample):
        record = {"index": i, "question": f" Q{i}? ", "answer": rng.choice("abcdE ")}
        record["prediction"] = f" {response}\n" if i % 7 == 0 else response
        for letter, text in zip(LETTERS[:5], options + [""] * 5, strict=False):
            record[letter] = text
        record["category"] = rng.choice(["x", "y", "", None])
        records.append(record)
    return pd.DataFrame(records)


@pytest.mark.parametrize("dtype", ["str", "object"])
def test_score_reads_each_row_as_extract_choice_does(dtype):
    rng = random.Random(2)
    sample = _sample()[:3_000]
    frame = _frame(sample, rng)
    if dtype == "object":
        frame = frame.astype(object)
        frame.loc[5, "prediction"] = np.nan  # read as an empty response
        frame.loc[6, "B"] = 3  # a number read as its text
    rows, scores = score_predictions(frame)
    assert len(rows) == len(frame) == scores.rows == scores.questions
    for row, record in zip(rows, frame.to_dict("records"), strict=True):
        prediction = record["prediction"]
        prediction = "" if not isinstance(prediction, str | int) else str(prediction).strip()
        options = [str(record[x]).strip() for x in LETTERS[:5]]
        while options and not options[-1]:
            options.pop()
        expected = extract_choice(prediction, options)
        assert row.prediction == prediction
        assert row.question == record["question"].strip()
        assert (row.extracted, row.extracted_by) == (
            (expected.letter, "heuristic") if expected.decided else ("Z", "none")
        )
        assert row.hit == (row.extracted == record["answer"].strip().upper())
        category = record["category"]
        assert row.category == (category if isinstance(category, str) and category else None)
    assert scores.vanilla_accuracy == sum(r.hit for r in rows) / len(rows)
    by_category = scores.by_category
    assert sum(v["questions"] for v in by_category.values()) == len(rows)
    assert by_category["uncategorised"]["questions"] == sum(r.category is None for r in rows)


def test_responses_arrow_cannot_hold_are_read_too():
    responses = ["\ud800 B", "B", None, "It is the cat."]
    options = [["a cat", "a dog"]] * 4
    got = extract_many(responses, [2] * 4, lambda rows: [options[i] for i in rows])
    assert got == [extract_choice(r, o) for r, o in zip(responses, options, strict=True)]


def test_the_arrow_kinds_are_what_the_short_response_path_reads():
    rng = random.Random(3)
    pieces = ["cat", "Dog", "B.", "A", "I", "(C)", "*x*", "a_b", "`c`", "x,", "17", "not", "can"]
    pieces += ["it's", "E)", "答", "\t", "", "  ", "-", "[D]", "i"]
    texts = [r for r, _ in _sample()] + [None, "", " B", "B ", "B  c", "B\nc", "B. c d"]
    texts += ["B' is it", "B's cat", "C1 dog", "Dx cat", "E- cat", "F9 cat", "G_ cat"]
    for _ in range(20_000):
        texts.append(" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))))
    kinds = choice_batch._kinds(pa.array(texts, pa.string())).tolist()
    for text, kind in zip(texts, kinds, strict=True):
        if kind == choice_batch._RULES:
            continue  # the full rules: always right
        assert normalise(text) == text, text
        for valid in ("AB", "ABCD"):
            quick = choice._words_only(text, valid)
            if kind == choice_batch._WORDS:
                assert quick == text
            else:
                assert quick == choice._decide({text[0]}, valid, "letter"), text
    assert kinds.count(choice_batch._WORDS) > 300 and kinds.count(choice_batch._LABEL) > 300


def test_bracketed_letters_are_what_a_search_finds():
    rng = random.Random(4)
    pattern = re.compile(r"[\(\[]([A-Z])[\)\]]")
    for _ in range(20_000):
        text = "".join(rng.choice("([)]ABZaz1 (B)") for _ in range(rng.randint(0, 12)))
        assert choice._bracketed_letters(text) == set(pattern.findall(text)), text


def test_score_reads_ascii_rows_with_their_options_taken_at_once():
    # All ASCII (no row sends the whole file row by row): the option texts of the rows read by
    # content come from the columns at once, with options left empty inside and past a row's.
    sample = [(r, o) for r, o in _sample(5) if r.isascii() and all(map(str.isascii, o))]
    frame = _frame(sample, random.Random(6))
    rows, _ = score_predictions(frame)
    for row, (response, options) in zip(rows, sample, strict=True):
        expected = extract_choice(response.strip(), [o.strip() for o in options])
        if expected.decided:
            assert (row.extracted, row.reason) == (expected.letter, expected.reason), response
        else:
            assert (row.extracted, row.reason) == (
                "Z",
                f"undecided ({expected.reason}); no judge model",
            )
    assert sum(r.reason == "option text within the response" for r in rows) > 100


def test_a_long_response_has_a_leading_label_only_where_the_rules_look_for_one():
    rng = random.Random(7)
    heads = ["B", "(B", "[B", "*B", "**B", "B)", "B.", "B:", "B,", "B-", "Bo", "B ", "b.", "(b)"]
    tails = ["", ")", "]", "*", ".", " ", ":", "-", " x", "y"]
    body = " and".join([" the cat sits on the mat"] * 3)
    for _ in range(5_000):
        text = normalise(rng.choice(heads) + rng.choice(tails) + rng.choice(tails) + body)
        assert text.count(" ") > 11
        if choice._LEADING.match(text) is not None:
            assert text[0] in "([*" or text[1] in ")]*.:,-", text


LONG_WORDS = ["I", "I'd", "i", "would", "pick", "go", "with", "choose", "say", "best", "final"]
LONG_WORDS += ["answer", "answers", "answer:", "correct", "right", "option", "optionB", "choice"]
LONG_WORDS += ["not", "isn't", "never", "except", "rather", "than", "instead", "of", "no", "none"]
LONG_WORDS += ["cannot", "can", "can't", "be", "determined", "tell", "sorry", "don't", "know"]
LONG_WORDS += ["unable", "impossible", "way", "(B)", "[C]", "(d)", "A", "B.", "C,", "\\boxed{D}"]
LONG_WORDS += ["<answer>A</answer>", "the", "cat", "dog", "image", "it's", "clearly", "3", "x"]


def _long_responses(count: int, seed: int, loose: float = 0.2) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = [rng.choice(LONG_WORDS) for _ in range(rng.randint(10, 40))]
        if rng.random() < loose:  # some of them written as `normalise` would change them
            words[rng.randrange(len(words))] = rng.choice(["**B**", "two  spaces", "tab\there"])
        texts.append(" ".join(words))
    return texts


@pytest.mark.parametrize("loose", [0.2, 0.0])
def test_long_responses_read_at_once_are_read_as_one_by_one(loose):
    texts = _long_responses(4_000, 3, loose)
    # With none that `normalise` changes, all of them are read with no normalising.
    left = choice_batch._left_as_they_are(pa.array([t for t in texts if len(t) > 64]))
    assert left.all() == (loose == 0) and left.any()
    sample = [(t, SETS[i % len(SETS)]) for i, t in enumerate(texts)]
    expected = [extract_choice(r, o) for r, o in sample]
    got = extract_many(
        [r for r, _ in sample],
        [len(o) for _, o in sample],
        lambda rows: [sample[i][1] for i in rows],
    )
    assert got == expected
    reasons = {e.reason for e in expected}
    assert {"answer marker", "letter", "refusal or cannot determine"} <= reasons
    assert any(r.startswith("answer marker, but also") for r in reasons)


def test_texts_left_as_they_are_are_those_normalise_leaves():
    texts = [t for t, *_ in TABLE] + _long_responses(300, 5, loose=0.5)
    texts += [" lead", "trail ", "a\nb", "a\tb", "x" * 70, "é" * 70, "a_b", "`c`", "**B**"]
    y = "y" * 35
    odd = ["**B**", " ", "\n", "\t", "  ", "é", "`c`", "_", "\x7f"]
    texts += [o + y + y for o in odd] + [y + o + y for o in odd] + [y + y + o for o in odd]
    left = choice_batch._left_as_they_are(pa.array([*texts, None]))
    assert not left[-1]
    for text, kept in zip(texts, left.tolist(), strict=False):
        if kept:
            assert normalise(text) == text, repr(text)
        elif text and text.isascii() and text.isprintable() and not set(text) & set("*_`"):
            assert text != " ".join(text.split()), repr(text)  # spaces normalise changes
    assert left[texts.index("x" * 70)] and left[texts.index(y + " " + y)]
    assert sum(left) > 200


def test_ascii_is_told_from_the_bytes_as_arrow_tells_it():
    from benchfoundry.answering.predictions import _all_ascii

    texts = pa.array(["B", None, "c", "", "é", "d", "答案", "x"], pa.string())
    for start in range(len(texts)):
        for stop in range(start, len(texts) + 1):
            part = texts.slice(start, stop - start)
            expected = all(t is None or t.isascii() for t in part.to_pylist())
            assert _all_ascii(part) == expected, (start, stop)


def test_rows_with_no_category_count_with_those_named_uncategorised():
    # One row per question (the summary's columnar path) and the same rows with a circular copy
    # (the grouped path): the same categories either way.
    categories = ["uncategorised", None, "x", "", "x", None]
    predictions = ["A", "A", "B", "A", "A", "B"]
    frame = pd.DataFrame(
        {
            "index": range(6),
            "question": ["q?"] * 6,
            "A": ["a"] * 6,
            "B": ["b"] * 6,
            "answer": ["A"] * 6,
            "prediction": predictions,
            "category": categories,
        }
    )
    expected = {
        "uncategorised": {"questions": 4, "vanilla": 3 / 4},
        "x": {"questions": 2, "vanilla": 1 / 2},
    }
    assert score_predictions(frame)[1].by_category == expected
    copy = frame.iloc[[0]].assign(index=1_000_000)
    grouped = score_predictions(pd.concat([frame, copy], ignore_index=True))[1].by_category
    assert {
        k: {"questions": v["questions"], "vanilla": v["vanilla"]} for k, v in grouped.items()
    } == expected


def test_option_columns_with_nulls_are_read_row_by_row():
    # A null option adds no line to the joined options: those rows are read one by one.
    options = [["dog", "cat"], [None, "dog"], ["a\nb\nc", "horse"], ["cat", "dog"]]
    responses = ["dog", "dog", "horse", "cat"]
    columns = [pa.array([o[j] for o in options], pa.string()) for j in range(2)]
    filled = [[t or "" for t in o] for o in options]
    readings, at = choice_batch.read_many(
        responses, [2] * 4, lambda rows: [filled[i] for i in rows], columns
    )
    got = [readings[i] for i in at.tolist()]
    assert got == [extract_choice(r, o) for r, o in zip(responses, filled, strict=True)]
    assert got[1].letter == "B"
