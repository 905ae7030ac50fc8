"""Chinese forms of the template questions: every template kind's question and options written
in Chinese from the same parts (colours, shapes, positions, relations, counts, actions) the
English form was written from, so a template twin needs no model and keeps its key. A seed
question (one read from a source, such as the synthetic scenes' reference questions) whose whole
text is in the grammar is written the same way.

The English template texts are a closed grammar (`tasks/generate/templates*.py`); each pattern
below reads one of its forms back into its parts and writes the Chinese form. A text outside
the grammar (an annotation label the grammar does not know, say) has no template form: `None`,
and the item goes to the translator model instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

COLOURS = {
    "black": "黑色", "blue": "蓝色", "green": "绿色", "red": "红色", "yellow": "黄色",
    "orange": "橙色", "purple": "紫色", "white": "白色", "grey": "灰色", "gray": "灰色",
    "pink": "粉色", "brown": "棕色", "cyan": "青色",
}  # fmt: skip
SHAPE_ADJECTIVES = {"round": "圆形", "rectangular": "矩形", "triangular": "三角形"}
SHAPES = {
    "circle": "圆形", "square": "正方形", "triangle": "三角形", "hexagon": "六边形",
    "rectangle": "长方形", "oval": "椭圆形", "star": "星形", "pentagon": "五边形",
    "octagon": "八边形", "cross": "十字形", "ring": "圆环", "diamond": "菱形",
}  # fmt: skip
POSITIONS = {
    "top left": "左上方", "top center": "上方正中", "top right": "右上方",
    "middle left": "左侧正中", "center": "正中央", "middle right": "右侧正中",
    "bottom left": "左下方", "bottom center": "下方正中", "bottom right": "右下方",
}  # fmt: skip
RELATIONS = {"above": "上方", "below": "下方", "to the left of": "左边", "to the right of": "右边"}
FIXED_OPTIONS = {
    "as many of each": "一样多",
    "only the top half": "只在上半部分", "only the bottom half": "只在下半部分",
    "both halves": "上下两半都有",
    "only the left side": "只在左侧", "only the right side": "只在右侧", "both sides": "左右两侧都有",
    "one object and no text": "一个物体，没有文字", "several objects and no text": "多个物体，没有文字",
    "text but no objects": "有文字，没有物体", "both objects and text": "既有物体也有文字",
    "no objects and no text": "没有物体，也没有文字",
    "below it": "在它下方", "above it": "在它上方",
    "to the left of it": "在它左边", "to the right of it": "在它右边",
}  # fmt: skip

_C = "|".join(sorted(COLOURS, key=len, reverse=True))
_S = "|".join(SHAPE_ADJECTIVES)
_P = "|".join(sorted(POSITIONS, key=len, reverse=True))
_R = "|".join(sorted(RELATIONS, key=len, reverse=True))
_N = "|".join(SHAPES)


def _thing(colour: str | None, shape: str | None = None) -> str:
    """`红色三角形物体`: a colour and a shape adjective before 物体."""
    return f"{COLOURS[colour] if colour else ''}{SHAPE_ADJECTIVES[shape] if shape else ''}物体"


# --- actions: the demo's synthetic labels (SSv2-style templates and procedure steps) -----------

_OBJ = rf"(?P<c>{_C}) (?P<n>{_N})"
ACTIONS: list[tuple[re.Pattern[str], Callable[[dict[str, str]], str]]] = [
    (re.compile(rf"^Moving {_OBJ} from left to right$", re.I), lambda g: f"把{g['o']}从左边移到右边"),
    (re.compile(rf"^Moving {_OBJ} from right to left$", re.I), lambda g: f"把{g['o']}从右边移到左边"),
    (re.compile(rf"^Moving {_OBJ} up$", re.I), lambda g: f"把{g['o']}向上移动"),
    (re.compile(rf"^Moving {_OBJ} down$", re.I), lambda g: f"把{g['o']}向下移动"),
    (re.compile(rf"^Putting {_OBJ} into the box$", re.I), lambda g: f"把{g['o']}放进盒子里"),
    (re.compile(rf"^Taking {_OBJ} out of the box$", re.I), lambda g: f"把{g['o']}从盒子里拿出来"),
    (re.compile(rf"^Making {_OBJ} bigger$", re.I), lambda g: f"把{g['o']}变大"),
    (re.compile(rf"^Making {_OBJ} smaller$", re.I), lambda g: f"把{g['o']}变小"),
    (re.compile(rf"^move the {_OBJ} to the right$", re.I), lambda g: f"把{g['o']}向右移动"),
    (re.compile(rf"^move the {_OBJ} to the left$", re.I), lambda g: f"把{g['o']}向左移动"),
    (re.compile(rf"^lift the {_OBJ} up$", re.I), lambda g: f"把{g['o']}向上抬起"),
    (re.compile(rf"^put the {_OBJ} down$", re.I), lambda g: f"把{g['o']}放低"),
    (re.compile(rf"^make the {_OBJ} bigger$", re.I), lambda g: f"把{g['o']}变大"),
    (re.compile(rf"^make the {_OBJ} smaller$", re.I), lambda g: f"把{g['o']}变小"),
]  # fmt: skip


def action(label: str) -> str | None:
    """An action label's Chinese form, or None when the grammar does not know it."""
    for pattern, write in ACTIONS:
        if match := pattern.match(label.strip()):
            groups = match.groupdict()
            groups["o"] = COLOURS[groups["c"].lower()] + SHAPES[groups["n"].lower()]
            return write(groups)
    return None


# --- options -----------------------------------------------------------------------------------


def option(text: str, kind: str) -> str | None:
    """One option's Chinese form for a template kind, or None outside the grammar."""
    t = text.strip()
    if kind == "read_text" or re.fullmatch(r"\d+", t):
        return t  # the printed words to read, and counts, stay as they are
    if t in FIXED_OPTIONS:
        return FIXED_OPTIONS[t]
    if t in COLOURS:
        return COLOURS[t]
    if t in POSITIONS:
        return POSITIONS[t]
    if m := re.fullmatch(r"an? (\w+)", t):
        return SHAPES.get(m.group(1))
    if m := re.fullmatch(rf"the ({_C}) object", t):
        return _thing(m.group(1))
    if m := re.fullmatch(rf"more ({_C}) objects", t):
        return f"{_thing(m.group(1))}更多"
    if kind == "action_order":
        steps = [action(s) for s in t.split(", then ")]
        return "，然后".join(steps) if all(steps) else None  # type: ignore[arg-type]
    if kind in ("action_label", "next_action"):
        return action(t)
    return None


# --- questions ---------------------------------------------------------------------------------

QUESTIONS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]]] = [
    (re.compile(rf"^How many (?:({_C}) )?objects are there in the image\?$"),
     lambda m: f"图中有多少个{_thing(m[1])}？"),
    (re.compile(rf"^How many objects are ({_R}) the ({_C}) object\?$"),
     lambda m: f"{_thing(m[2])}的{RELATIONS[m[1]]}有多少个物体？"),
    (re.compile(rf"^What colour is the (?:({_S}) )?object at the ({_P}) of the image\?$"),
     lambda m: f"图中{POSITIONS[m[2]]}的{_thing(None, m[1])}是什么颜色？"),
    (re.compile(rf"^What is the (?:({_C}) )?object at the ({_P}) of the image\?$"),
     lambda m: f"图中{POSITIONS[m[2]]}的{_thing(m[1])}是什么形状？"),
    (re.compile(rf"^Are there more ({_C}) objects, more ({_C}) objects, or as many of each in the image\?$"),
     lambda m: f"图中是{_thing(m[1])}更多，{_thing(m[2])}更多，还是一样多？"),
    (re.compile(rf"^Which object is inside the ({_C}) object\?$"),
     lambda m: f"哪个物体在{_thing(m[1])}里面？"),
    (re.compile(rf"^Which object overlaps the ({_C}) object\?$"),
     lambda m: f"哪个物体与{_thing(m[1])}重叠？"),
    (re.compile(rf"^Which object touches the ({_C}) object\?$"),
     lambda m: f"哪个物体与{_thing(m[1])}相接触？"),
    (re.compile(rf"^Which object is ({_R}) the ({_C}) object\?$"),
     lambda m: f"哪个物体在{_thing(m[2])}的{RELATIONS[m[1]]}？"),
    (re.compile(r"^Which object is the (largest|smallest) in the image\?$"),
     lambda m: f"图中哪个物体{'最大' if m[1] == 'largest' else '最小'}？"),
    (re.compile(r"^Apart from the background, which colour covers the largest area of the image\?$"),
     lambda m: "除背景外，哪种颜色在图中所占的面积最大？"),
    (re.compile(r"^Which colour is the most common among the objects in the image\?$"),
     lambda m: "图中的物体最常见的是哪种颜色？"),
    (re.compile(r"^Which half of the image holds the objects, top or bottom\?$"),
     lambda m: "物体位于图像的哪一半，上半部分还是下半部分？"),
    (re.compile(r"^Which side of the image are the objects on, left or right\?$"),
     lambda m: "物体位于图像的哪一侧，左侧还是右侧？"),
    (re.compile(rf"^Where in the image is the (?:({_C}) )?(?:({_S}) )?object\?$"),
     lambda m: f"{_thing(m[1], m[2])}在图中的什么位置？"),
    (re.compile(rf"^Where is the ({_C}) object relative to the ({_C}) object\?$"),
     lambda m: f"{_thing(m[1])}相对于{_thing(m[2])}在哪里？"),
    (re.compile(rf"^If the ({_C}) objects were removed, how many objects would remain\?$"),
     lambda m: f"如果移除所有{_thing(m[1])}，还剩多少个物体？"),
    (re.compile(r"^What does the image contain\?$"), lambda m: "图中包含什么？"),
    # the synthetic scenes' reference questions (`benchfoundry synth`'s questions.tsv)
    (re.compile(rf"^How many ({_N})s are there in the image\?$"),
     lambda m: f"图中有多少个{SHAPES[m[1]]}？"),
    (re.compile(rf"^What colour is the ({_N})\?$"), lambda m: f"图中的{SHAPES[m[1]]}是什么颜色？"),
    (re.compile(r"^Which word is written in the image\?$"), lambda m: "图中写的是哪个词？"),
    (re.compile(r"^Which text is written in the image\?$"), lambda m: "图中写的是哪一段文字？"),
    (re.compile(r"^What action is performed in the video\?$"), lambda m: "视频中执行了什么动作？"),
    (re.compile(r"^The video shows the first steps of an activity\. What is most likely to happen next\?$"),
     lambda m: "视频展示了一项活动的前几个步骤。接下来最有可能发生什么？"),
    (re.compile(r"^In what order are these actions performed in the video: (.+)\?$"),
     lambda m: _order_question(m[1])),
]  # fmt: skip


def _order_question(listed: str) -> str | None:
    steps = [action(s) for s in re.findall(r'"([^"]+)"', listed)]
    if not steps or not all(steps):
        return None
    return "视频中这些动作是按什么顺序进行的：" + "；".join(f"“{s}”" for s in steps) + "？"


def question(text: str) -> str | None:
    """A template question's Chinese form, or None outside the grammar."""
    for pattern, write in QUESTIONS:
        if match := pattern.match(text.strip()):
            return write(match)
    return None


READING = re.compile(r"^Which (?:text|word) is written in the image\?$")


def twin(kind: str, text: str, options: Sequence[str]) -> tuple[str, list[str]] | None:
    """The Chinese question and options of a template item of `kind`, in the same order (so
    the key letter is the English one), or None when any part is outside the grammar. A seed
    question (`kind` seed) is written so too when all of it is in the grammar; a reading
    question's options stay as printed."""
    if kind == "seed":
        kind = "read_text" if READING.match(text.strip()) else kind
    asked = question(text)
    written = [option(o, kind) for o in options]
    if asked is None or any(w is None for w in written):
        return None
    return asked, [w for w in written if w is not None]
