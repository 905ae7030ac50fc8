"""The Chinese form of every template kind, written from the same slots as the English (so a
template twin needs no model and keeps its key), and the vocabulary it is written with:
colours, shape hints and names, positions, relations, and the actions of the annotation sets
the demo's clips use (SSv2's templates, the procedures' verbs, the things they act on). A slot
outside the vocabulary raises `NoForm`: that item is translated by a model."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from benchfoundry.core.phrasing.parts import NoForm, slot, steps, unlisted

Slots = Mapping[str, str]

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
FIXED = {
    "as_many": "一样多",
    "one_object_no_text": "一个物体，没有文字", "several_objects_no_text": "多个物体，没有文字",
    "text_no_objects": "有文字，没有物体", "objects_and_text": "既有物体也有文字",
    "left_only": "只在左侧", "right_only": "只在右侧", "both_sides": "左右两侧都有",
    "top_only": "只在上半部分", "bottom_only": "只在下半部分", "both_halves": "上下两半都有",
}  # fmt: skip

# --- actions: the annotation sets' own parts -------------------------------------------------
# SSv2's templates as the demo's clips use them ({0}, {1}: the placeholders in order)
TEMPLATES = {
    "Moving [something] from left to right": "把{0}从左边移到右边",
    "Moving [something] from right to left": "把{0}从右边移到左边",
    "Moving [something] up": "把{0}向上移动",
    "Moving [something] down": "把{0}向下移动",
    "Putting [something] into [something]": "把{0}放进{1}里",
    "Taking [something] out of [something]": "把{0}从{1}里拿出来",
    "Making [something] bigger": "把{0}变大",
    "Making [something] smaller": "把{0}变小",
}
# verbs of a verb-noun annotation (EPIC-KITCHENS' columns) as the demo's procedures use them
VERBS = {
    "move-right": "把{0}向右移动",
    "move-left": "把{0}向左移动",
    "lift-up": "把{0}向上抬起",
    "put-down": "把{0}放低",
    "make-bigger": "把{0}变大",
    "make-smaller": "把{0}变小",
}
# the things actions are done to: a colour and a shape's name, and the box of the demo's clips
THINGS = {f"{c} {s}": COLOURS[c] + SHAPES[s] for c in COLOURS for s in SHAPES} | {"the box": "盒子"}


def word(table: Mapping[str, str], key: str) -> str:
    """`key`'s Chinese in `table`; NoForm when the vocabulary does not know it."""
    try:
        return table[key]
    except KeyError:
        raise NoForm(f"no Chinese for {key!r}") from None


def thing(colour: str | None, shape: str | None = None) -> str:
    """`红色三角形物体`: a colour and a shape hint before 物体."""
    return (
        f"{word(COLOURS, colour) if colour else ''}"
        f"{word(SHAPE_ADJECTIVES, shape) if shape else ''}物体"
    )


def named(slots: Slots, key: str = "object") -> str:
    """An object named by its colour (the `object` slot, or `other`)."""
    return thing(slot(slots, key))


def action(slots: Slots) -> str:
    """One action from its annotation's parts: an SSv2 template and its placeholders, or a verb
    and its noun. A label that came without parts has no Chinese form."""
    if "template" in slots:
        things = [word(THINGS, p.casefold()) for p in unlisted(slot(slots, "placeholders"))]
        pattern = word(TEMPLATES, slots["template"])
    elif "verb" in slots:
        things = [word(THINGS, slot(slots, "action_noun").casefold())]
        pattern = word(VERBS, slots["verb"].casefold())
    else:
        raise NoForm(f"the action {slots.get('label', '')!r} came without its parts")
    if pattern.count("{") != len(things):
        raise NoForm(f"{len(things)} placeholder(s) for {pattern!r}")
    return pattern.format(*things)


def _order(s: Slots) -> str:
    listed = "；".join(f"“{action(a)}”" for a in steps(slot(s, "actions")))
    return f"视频中这些动作是按什么顺序进行的：{listed}？"


LAYOUTS = {
    "x": "物体位于图像的哪一侧，左侧还是右侧？",
    "y": "物体位于图像的哪一半，上半部分还是下半部分？",
}
EXTREMES = {"largest": "最大", "smallest": "最小"}

QUESTIONS: dict[str, Callable[[Slots], str]] = {
    "count": lambda s: f"图中有多少个{thing(s.get('colour'))}？",
    "position": lambda s: f"{thing(slot(s, 'colour'), s.get('shape'))}在图中的什么位置？",
    "colour": lambda s: (
        f"图中{word(POSITIONS, slot(s, 'position'))}的{thing(None, s.get('shape'))}是什么颜色？"
    ),
    "size": lambda s: f"图中哪个物体{word(EXTREMES, slot(s, 'extreme'))}？",
    "relative_position": lambda s: f"{named(s)}相对于{named(s, 'other')}在哪里？",
    "read_text": lambda s: "图中写的是哪一段文字？",
    "identity": lambda s: (
        f"图中{word(POSITIONS, slot(s, 'position'))}的{thing(s.get('colour'))}是什么形状？"
    ),
    "contain": lambda s: f"哪个物体在{named(s)}里面？",
    "overlap": lambda s: f"哪个物体与{named(s)}重叠？",
    "touch": lambda s: f"哪个物体与{named(s)}相接触？",
    "compare_counts": lambda s: f"图中是{named(s)}更多，{named(s, 'other')}更多，还是一样多？",
    "most_common_colour": lambda s: "图中的物体最常见的是哪种颜色？",
    "remove_and_count": lambda s: f"如果移除所有{thing(slot(s, 'colour'))}，还剩多少个物体？",
    "count_beside": lambda s: f"{named(s)}的{word(RELATIONS, slot(s, 'side'))}有多少个物体？",
    "which_object": lambda s: f"哪个物体在{named(s)}的{word(RELATIONS, slot(s, 'side'))}？",
    "scene_content": lambda s: "图中包含什么？",
    "dominant_colour": lambda s: "除背景外，哪种颜色在图中所占的面积最大？",
    "layout": lambda s: word(LAYOUTS, slot(s, "axis")),
    "action_label": lambda s: "视频中执行了什么动作？",
    "next_action": lambda s: "视频展示了一项活动的前几个步骤。接下来最有可能发生什么？",
    "action_order": _order,
    "count_shape": lambda s: f"图中有多少个{word(SHAPES, slot(s, 'noun'))}？",
    "shape_colour": lambda s: f"图中的{word(SHAPES, slot(s, 'noun'))}是什么颜色？",
    "read_word": lambda s: "图中写的是哪个词？",
}


def question(kind: str, slots: Slots) -> str:
    return word(QUESTIONS, kind)(slots)


def option(kind: str, slots: Slots) -> str:
    """An option from what it is; counts stay digits and printed text stays as printed."""
    if "fixed" in slots:
        if slots["fixed"] == "more":
            return f"{thing(slot(slots, 'colour'))}更多"
        return word(FIXED, slots["fixed"])
    if "actions" in slots:
        return "，然后".join(action(a) for a in steps(slots["actions"]))
    if "relation" in slots:
        return f"在它{word(RELATIONS, slots['relation'])}"
    if "object" in slots:
        return named(slots)
    if "number" in slots:
        return slots["number"]
    if "text" in slots:
        return slots["text"]
    if "noun" in slots:
        return word(SHAPES, slots["noun"])
    if "colour" in slots:
        return word(COLOURS, slots["colour"])
    if "position" in slots:
        return word(POSITIONS, slots["position"])
    if "label" in slots:
        return action(slots)
    raise NoForm(f"no Chinese option of {kind!r} from {dict(slots)}")
