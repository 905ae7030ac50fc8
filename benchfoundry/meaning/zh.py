"""The Chinese words the template kinds are written with, as a native annotator writes them:
colours, shape hints and names (one word a shape: 长方形 for a rectangle everywhere), positions,
relations, and the actions of the annotation sets the demo's clips use (SSv2's templates, the
procedures' verbs, the things they act on), and an option from what it is. Each kind's question
is written in its entry (`meaning.kinds`) from the same slots as the English, so a template twin
needs no model and keeps its key. A slot outside the vocabulary raises `NoForm`: that item is
translated by a model."""

from __future__ import annotations

from collections.abc import Mapping

from benchfoundry.meaning.parts import NoForm, slot, steps, unlisted

Slots = Mapping[str, str]

COLOURS = {
    "black": "黑色", "blue": "蓝色", "green": "绿色", "red": "红色", "yellow": "黄色",
    "orange": "橙色", "purple": "紫色", "white": "白色", "grey": "灰色", "gray": "灰色",
    "pink": "粉色", "brown": "棕色", "cyan": "青色",
}  # fmt: skip
SHAPE_ADJECTIVES = {"round": "圆形", "rectangular": "长方形", "triangular": "三角形"}
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
    "put-down": "把{0}放下",
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


# the words that join a procedure's steps: first, next, then, last (never a chain of 然后)
ORDER_WORDS = ("先", "再", "然后", "接着", "最后")


def in_order(actions: list[str]) -> str:
    """`先A，再B，然后C，最后D`: steps in order as a person says them."""
    if len(actions) == 1:
        return actions[0]
    if len(actions) == 2:
        return f"先{actions[0]}，再{actions[1]}"
    middle = ORDER_WORDS[1:4]
    words = [ORDER_WORDS[0], *(middle[i % len(middle)] for i in range(len(actions) - 2))]
    return "，".join(w + a for w, a in zip([*words, ORDER_WORDS[4]], actions, strict=True))


def option(slots: Slots) -> str:
    """An option from what it is; counts stay digits and printed text stays as printed."""
    if "fixed" in slots:
        if slots["fixed"] == "more":
            return f"{thing(slot(slots, 'colour'))}更多"
        return word(FIXED, slots["fixed"])
    if "actions" in slots:
        return in_order([action(a) for a in steps(slots["actions"])])
    if "relation" in slots:
        return word(RELATIONS, slots["relation"])
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
    raise NoForm(f"no Chinese option from {dict(slots)}")
