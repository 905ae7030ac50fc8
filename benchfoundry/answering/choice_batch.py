"""Choice reading for a whole prediction file at once, equal row for row to `extract_choice`:
each distinct (response, option count) read by letters once, the short word responses told
apart by Arrow patterns, and the option texts matched for all undecided rows together."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache, partial
from itertools import chain, compress, count, repeat
from operator import contains

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchfoundry.answering.choice import (
    Extraction,
    _by_content,
    _by_letters,
    _by_rules,
    _decide,
)
from benchfoundry.answering.choice_keys import ANY_KEY_PATTERN as _ANY_KEY_PATTERN
from benchfoundry.answering.choice_text import _ASCII_PLAIN
from benchfoundry.core.letters import LETTERS

# Arrow memory for a scoring pass comes from the system allocator. Arrow's default pool
# (mimalloc) stalls for 5 to 7 ms at times, on the 2-core machines we measure on, when it takes
# fresh memory: a fresh process's `score` pass over 20,000 rows (`bench/score_speed.py`) took
# 28.4 / 31.3 / 36.8 ms (quartiles of 20) with it, 27.6 / 28.9 / 30.0 with the system's.
POOL = pa.system_memory_pool()


def _take(texts: pa.Array, at: np.ndarray) -> pa.Array:
    """`texts` at the positions `at`."""
    return pc.take(texts, pa.array(at, memory_pool=POOL), memory_pool=POOL)


def extract_many(
    responses: Sequence[str | None],
    counts: Sequence[int] | np.ndarray,
    options_of: Callable[[list[int]], Iterable[Sequence[str]]],
) -> list[Extraction]:
    """`extract_choice` for every row of a file at once: row i is `responses[i]` with `counts[i]`
    options; `options_of(rows)` gives the option texts of `rows`, asked once, for the rows whose
    letters decide nothing (the others never need them). A response repeated with the same
    number of options ("B", "The answer is C.") is read by letters once for all its rows."""
    readings, at = read_many(responses, counts, options_of)
    return list(map(readings.__getitem__, at.tolist()))


def read_many(
    responses: Sequence[str | None] | pa.Array,
    counts: Sequence[int] | np.ndarray,
    options_of: Callable[[list[int]], Iterable[Sequence[str]]],
    option_columns: Sequence[pa.Array] | None = None,
) -> tuple[list[Extraction], np.ndarray]:
    """`extract_many` as its distinct readings and, for each row, the position of its reading
    among them (rows that share a reading share a position): a caller that makes columns of
    the readings makes them once per reading, not once per row. `option_columns`, where given,
    are the option texts as columns (one a letter, empty past a row's count): the options of
    the rows read by content are then taken from them at once, and `options_of` asked only for
    the rows read one by one (all of them where a column holds a null)."""
    if len(responses) != len(counts):
        raise ValueError(f"{len(responses)} responses but {len(counts)} option counts")
    # Each distinct (response, count) read once, the rows matched to them by Arrow's hashing: a
    # Python step per row would cost as much as reading most rows.
    readings, at = _distinct_readings(responses, counts)
    by_content = np.fromiter(map(isinstance, readings, repeat(str)), bool, len(readings))
    if not by_content.any():
        return readings, at  # type: ignore[return-value]
    # The rows whose letters decide nothing, each read with its own options: each its own reading
    # (after the others, the texts they replace left out).
    pending_at = np.flatnonzero(by_content[at])
    pending = pending_at.tolist()
    texts: list[str] = list(map(readings.__getitem__, at[pending_at].tolist()))  # type: ignore[arg-type]
    decided = ~by_content
    readings = list(compress(readings, decided.tolist()))
    at = (np.cumsum(decided) - 1)[at]
    at[pending_at] = np.arange(len(readings), len(readings) + len(pending))
    padded = _plain_all(texts, padded=True)
    if option_columns is not None:
        width = len(option_columns)
        taken = pa.array(pending, pa.int64(), memory_pool=POOL)
        columns = [pc.take(c, taken, memory_pool=POOL) for c in option_columns]
        # (A null option adds no line: such columns are read row by row.)
        option_padded = (
            None
            if any(c.null_count for c in columns)
            else _plain_joined(_lines(columns), len(pending) * width, padded=True)
        )
        sizes = np.asarray(counts)[pending_at].tolist()

        def row_options(rows: list[int]) -> list[Sequence[str]]:
            return list(options_of([pending[r] for r in rows]))

    else:
        options = list(options_of(pending))
        sizes = list(map(len, options))
        width = max(sizes, default=0)
        option_padded = _plain_all(
            [t for o in options for t in (*o, *("",) * (width - len(o)))], padded=True
        )

        def row_options(rows: list[int]) -> list[Sequence[str]]:
            return [options[r] for r in rows]

    if padded is None or option_padded is None:  # not all ASCII: row by row
        readings += [
            _by_content(text, own, LETTERS[: len(own)])
            for text, own in zip(texts, row_options(list(range(len(pending)))), strict=True)
        ]
    else:
        readings += _by_content_many(texts, padded, option_padded, width, sizes, row_options)
    return readings, at  # type: ignore[return-value]  (no str is left)


@lru_cache(maxsize=1024)
def _label(letter: str, count: int) -> Extraction:
    """The reading of a response whose only letter is its first, `letter`, with `count` options."""
    return _decide({letter}, LETTERS[:count], "letter")  # type: ignore[return-value]


# A decided option's reading by each content rule, by its letter (as `_decide` makes them).
_OPTION_TEXT = {L: _decide({L}, LETTERS, "option text") for L in LETTERS}
_WITHIN = {L: _decide({L}, LETTERS, "option text within the response") for L in LETTERS}


def _by_content_many(
    texts: list[str],
    padded: list[str],
    option_padded: list[str],
    width: int,
    sizes: list[int],
    row_options: Callable[[list[int]], list[Sequence[str]]],
) -> list[Extraction]:
    """`_by_content` of each of `texts` (ASCII; `padded`: their `_plain` forms with a space
    either side) with its options (`option_padded`: the same of `width` options a row, empty
    past a row's `sizes`; `row_options(rows)`: the option texts of those rows). A response that
    holds exactly one of its options as whole words (most of them) is decided from all rows'
    matches made together: it is that option's text, or holds it and no "not" or "no"; the
    others are read one by one."""
    # The forms are words joined by single spaces, so a whole-word match is a match of the
    # padded forms. An empty option's form, two spaces, is held only by an empty response.
    at = np.fromiter(
        compress(
            count(),
            map(contains, chain.from_iterable(map(repeat, padded, repeat(width))), option_padded),
        ),
        np.int64,
    )
    rows = at // width if width else at
    held_count = np.bincount(rows, minlength=len(texts))
    held_at = np.zeros(len(texts), np.int64)
    held_at[rows] = at - rows * width
    # Where one option is held, it is the only one the response can equal (an equal one is held).
    one, places = (held_count == 1).tolist(), held_at.tolist()
    read: list[Extraction | None] = [None] * len(texts)
    slow = []
    for row, form in enumerate(padded):
        if one[row] and form != "  ":
            place = places[row]
            if form == option_padded[row * width + place]:
                read[row] = _OPTION_TEXT[LETTERS[place]]
                continue
            if " not " not in form and " no " not in form:
                read[row] = _WITHIN[LETTERS[place]]
                continue
        slow.append(row)
    for row, own in zip(slow, row_options(slow), strict=True):
        start = row * width
        forms_padded = [o if o != "  " else "\0" for o in option_padded[start : start + sizes[row]]]
        forms = (padded[row][1:-1], [o[1:-1] for o in forms_padded], forms_padded, [])
        read[row] = _by_content(texts[row], own, LETTERS[: sizes[row]], forms)
    return read  # type: ignore[return-value]  (every row read above)


def _distinct_readings(
    responses: Sequence[str | None] | pa.Array, counts: Sequence[int] | np.ndarray
) -> tuple[list[Extraction | str], np.ndarray]:
    """The readings by letters of the distinct (response, count) pairs (a response of words
    with no letter left as its text, to be read by content), and for each row the position of
    its pair's reading. The responses whose only letter is their first ("B. a cat") are read
    from that letter and the count alone: one reading for each (letter, count), and no Python
    text made for them."""
    try:
        array = (
            responses
            if isinstance(responses, pa.Array)
            else pa.array(responses, pa.string(), memory_pool=POOL)
        )
        if array.type != pa.string():
            array = pc.cast(array, pa.string(), memory_pool=POOL)
        encoded = pc.dictionary_encode(array, null_encoding="encode", memory_pool=POOL)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):  # a lone surrogate, say
        keys = list(zip(responses, counts, strict=True))
        positions = {key: at for at, key in enumerate(dict.fromkeys(keys))}
        at = np.fromiter(map(positions.__getitem__, keys), np.int64, len(keys))
        return [_by_letters(response, n) for response, n in positions], at
    dictionary = encoded.dictionary
    kinds = np.full(len(dictionary), _RULES)
    # Only a response of 64 bytes or fewer can be short words: the patterns run on those (its
    # length from the offsets, numpy's: Arrow's kernels cost more on their first call).
    lengths = byte_lengths(dictionary)
    long = lengths > 64
    short = np.flatnonzero(~long)
    if len(short) == len(dictionary):
        kinds = _kinds(dictionary)
    elif len(short):
        kinds[short] = _kinds(_take(dictionary, short))
    if len(short) < len(dictionary):  # the pattern run on the long ones alone
        long_at = np.flatnonzero(long)
        kinds[long_at[_left_as_they_are(_take(dictionary, long_at))]] = _LONG
    numbers = np.asarray(counts)
    width = int(numbers.max(initial=0)) + 1
    # 32-bit numbers where they fit: a file's arrays are made fresh, and smaller ones cost less.
    small = len(dictionary) * width < 2**31
    pairs = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32 if small else np.int64)
    pairs *= width
    pairs += numbers.astype(pairs.dtype, copy=False)
    # The pairs are numbers below len(dictionary) * width: the distinct ones are marked in a
    # table of that size (and each row's reading is found through a table of the same size).
    held = np.zeros(len(dictionary) * width, dtype=bool)
    held[pairs] = True
    distinct = np.flatnonzero(held)
    text_at, count_at = np.divmod(distinct, width)
    kind_at = kinds[text_at]
    label = kind_at == _LABEL
    # A label's reading depends only on its letter (a text's first byte) and the count.
    letters = np.frombuffer(dictionary.buffers()[2] or b"\0", dtype=np.uint8).take(
        text_offsets(dictionary)[text_at[label]], mode="clip"
    )
    codes, label_at = np.unique(
        letters.astype(np.int64) * width + count_at[label], return_inverse=True
    )
    readings: list[Extraction | str] = [
        _label(chr(code // width), code % width) for code in codes.tolist()
    ]
    others = np.flatnonzero(~label)
    reading_at = np.empty(len(distinct), dtype=np.int64)
    reading_at[label] = label_at
    reading_at[others] = np.arange(len(readings), len(readings) + len(others))
    texts = _take(dictionary, text_at[others]).to_pylist()
    readings += [
        _by_rules(response, LETTERS[:n])  # type: ignore[arg-type]
        if kind == _LONG
        else response  # type: ignore[misc]  (words with no letter: read by content)
        if kind == _WORDS
        else _by_letters(response, n)
        for response, n, kind in zip(
            texts, count_at[others].tolist(), kind_at[others].tolist(), strict=True
        )
    ]
    # Each row's reading: through a table of all pairs, the distinct ones' readings put in it.
    lookup = np.empty(len(held), dtype=pairs.dtype)
    lookup[distinct] = reading_at
    return readings, lookup[pairs]


def text_offsets(texts: pa.Array) -> np.ndarray:
    """Where each text of a `string` array begins in its bytes, and where the last ends (numpy's
    view of its offsets: Arrow's kernels cost more on their first call in a process)."""
    ends = np.frombuffer(texts.buffers()[1], dtype=np.int32)
    return ends[texts.offset : texts.offset + len(texts) + 1]


def byte_lengths(texts: pa.Array) -> np.ndarray:
    """The length in bytes of each text of a `string` array (0 for a null)."""
    return np.diff(text_offsets(texts))


# How `_by_letters` reads a response, as `_kinds` tells it for many at once: by the full rules;
# a response of words with no letter (`_words_only` gives it back, to be read by content); one
# whose only letter is its first character (`_words_only` decides that letter); a response of
# over 64 characters that `normalise` leaves as it is (by the full rules, not normalised again).
_RULES, _WORDS, _LABEL, _LONG = 0, 1, 2, 3


def _left_as_they_are(texts: pa.Array) -> np.ndarray:
    """For each of `texts` (strings, or null), whether `normalise` surely leaves it as it is:
    printable ASCII words with no emphasis or code marks, joined by single spaces (one Arrow
    pattern over all of them, which copies none)."""
    plain = pc.match_substring_regex(texts, _LEFT_AS_IT_IS, memory_pool=POOL)
    return pc.coalesce(plain, False, memory_pool=POOL).to_numpy(zero_copy_only=False)


# `_words_only`'s conditions as Arrow (RE2) patterns, on responses that `normalise` leaves as
# they are. One pattern holds four: printable ASCII with nothing to strip, no emphasis or code
# marks (`*`, `_`, backtick), words joined by single spaces (2 to 12 of them), and no capital
# after the first character.
_FIRST = r"[!-)+-^a-~]"  # printable, not a space, `*`, `_` or a backtick
_LATER = r"[!-)+-@\[-^a-~]"  # nor a capital
_SHORT_WORDS = rf"^{_FIRST}{_LATER}*(?: {_LATER}+){{1,11}}$"
_LEFT_AS_IT_IS = rf"^{_FIRST}+(?: {_FIRST}+)*$"


def _kinds(texts: pa.Array) -> np.ndarray:
    """`_RULES`, `_WORDS` or `_LABEL` for each of `texts` (strings, or null): `_words_only`
    found for all of them at once (two Arrow patterns; a text's first two bytes and its length
    read by numpy)."""
    match = partial(pc.match_substring_regex, memory_pool=POOL)
    words = pc.and_(
        match(texts, _SHORT_WORDS),
        pc.invert(match(texts, _ANY_KEY_PATTERN, ignore_case=True), memory_pool=POOL),
        memory_pool=POOL,
    )
    words = pc.coalesce(words, False, memory_pool=POOL).to_numpy(zero_copy_only=False)
    words &= byte_lengths(texts) <= 64
    # Short words are printable ASCII with a space: each has a second byte.
    held = np.frombuffer(texts.buffers()[2] or b"\0", dtype=np.uint8)
    starts = text_offsets(texts)[:-1]
    first = held.take(starts, mode="clip")
    second = held.take(starts + 1, mode="clip")
    label = (first >= 65) & (first <= 90) & ~_WORD_BYTE[second]  # `_LABEL_FIRST`
    article = ((first == 65) | (first == 73)) & (second == 32)  # `_WORD_AFTER`: "A " or "I "
    kinds = np.where(label, np.where(article, _RULES, _LABEL), _WORDS)
    return np.where(words, kinds, _RULES)


# The bytes of ASCII letters, digits and the apostrophe (what may follow a leading letter that
# is a word, not a label).
_WORD_BYTE = np.zeros(256, dtype=bool)
_WORD_BYTE[list(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'")] = True


_ODD_SPACE = "\t\r\x0b\x0c\x1c\x1d\x1e\x1f"  # ASCII white space other than " " and "\n"
_RUNS = re.compile(r"  +")


def _lines(columns: Sequence[pa.Array]) -> str:
    """The texts of `columns` (strings, no nulls) row by row, joined by new lines (the joined
    bytes Arrow makes, read once: no Python text made per value)."""
    if not columns or not len(columns[0]):
        return ""
    # Each row's texts and an empty one joined by new lines: a new line after each text.
    rows = pc.binary_join_element_wise(*columns, "", "\n", memory_pool=POOL)
    ends = text_offsets(rows)
    joined = rows.buffers()[2].slice(int(ends[0]), int(ends[-1] - ends[0])).to_pybytes()
    return joined[:-1].decode("utf-8")


def _plain_all(texts: list[str], padded: bool = False) -> list[str] | None:
    """`_plain` of each of `texts` made all at once (`_plain_joined`)."""
    return _plain_joined("\n".join(texts), len(texts), padded)


def _plain_joined(joined: str, count: int, padded: bool = False) -> list[str] | None:
    """`_plain` of each of the `count` texts `joined` by new lines, made all at once (one
    translation of their bytes, one pass over them for runs of spaces), where all are ASCII and
    hold no white space but single spaces; otherwise None. `padded`: each with a space either
    side."""
    if (
        not joined.isascii()
        or joined.count("\n") != count - 1
        or any(space in joined for space in _ODD_SPACE)  # a `find` each: faster than a pattern
    ):
        return None if count else []
    plain = joined.encode("ascii").translate(_ASCII_PLAIN).decode("ascii")
    if "  " in plain:
        plain = _RUNS.sub(" ", plain)
    if "\n " in plain:
        plain = plain.replace("\n ", "\n")
    if " \n" in plain:
        plain = plain.replace(" \n", "\n")
    plain = plain.strip(" ")
    if padded:
        plain = " " + plain.replace("\n", " \n ") + " "
    return plain.split("\n")
