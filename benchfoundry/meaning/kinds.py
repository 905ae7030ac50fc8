"""One entry per template kind: what it asks (its slots), how it reads in English and in Chinese,
the dimension it serves, what asking it takes of the objects, and how a scene answers it. The
generator writes its keys from it, the evidence reader and the bench's truth check keys with
it, and the translation writes twins with it; adding a kind is one entry here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from benchfoundry.meaning import answers as a
from benchfoundry.meaning import zh
from benchfoundry.meaning.en import name, no
from benchfoundry.meaning.parts import slot, steps, unlisted
from benchfoundry.meaning.scene import Scene

Slots = Mapping[str, str]
# What asking a kind takes of the objects (the generator holds a kind back when the two readings
# do not support it):
SEPARATE = "separate"  # the regions found must look like separate objects
COUNTS = "counts"  # its key counts the objects or compares their number or sizes
BY_COLOUR = "by_colour"  # it names objects by their colours
ANY_SHAPE = "any_shape"  # it names no object by its description: asked where a shape is unclear
# It names a place in the frame (a third or a half of the image), in its question or its key: a
# margin, a crop or a wider shot moves things in the frame, so such a question may change with
# them where nothing else does (the invariance bench counts these apart for a margin).
IN_FRAME = "in_frame"


@dataclass(frozen=True)
class Kind:
    name: str
    dimension: str  # the SEED-Bench dimension it serves
    slots: tuple[str, ...]  # the question's parts (those in brackets optional)
    en: Callable[[Slots], str]
    zh: Callable[[Slots], str]
    answer: Callable[[Scene, Slots], a.Read]
    asks: frozenset[str] = frozenset()
    fits: Callable[[a.Read, Slots], bool | None] = a.fits
    clip: bool = False  # asked of a clip's stretch, not of a picture


def _count_en(s: Slots) -> str:
    if colour := s.get("colour"):
        return f"How many {colour} objects are there in the image?"
    return "How many objects are there in the image?"


def _position_en(s: Slots) -> str:
    colour, shape = slot(s, "colour"), s.get("shape")
    return f"Where in the image is the {f'{colour} {shape}' if shape else colour} object?"


def _colour_en(s: Slots) -> str:
    thing = f"{shape} object" if (shape := s.get("shape")) else "object"
    return f"What colour is the {thing} at the {slot(s, 'position')} of the image?"


def _identity_en(s: Slots) -> str:
    where = slot(s, "position")
    if colour := s.get("colour"):
        return f"What is the {colour} object at the {where} of the image?"
    return f"What is the object at the {where} of the image?"


def _order_en(s: Slots) -> str:
    listed = "; ".join(f'"{x}"' for x in unlisted(slot(s, "labels")))
    return f"In what order are these actions performed in the video: {listed}?"


def _order_zh(s: Slots) -> str:
    listed = "；".join(f"“{zh.action(x)}”" for x in steps(slot(s, "actions")))
    return f"视频中这些动作的先后顺序是什么：{listed}？"


def _where(s: Slots) -> str:
    return zh.word(zh.POSITIONS, slot(s, "position"))


def _side(s: Slots) -> str:
    return zh.word(zh.RELATIONS, slot(s, "side"))


LAYOUT_EN = {
    "x": "Which side of the image are the objects on, left or right?",
    "y": "Which half of the image holds the objects, top or bottom?",
}
LAYOUT_ZH = {"x": "物体在图像的左侧还是右侧？", "y": "物体在图像的上半部分还是下半部分？"}
EXTREMES_ZH = {"largest": "最大", "smallest": "最小"}
ALL = frozenset({SEPARATE, COUNTS, BY_COLOUR})

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("count", "instances_counting", ("[colour]",), _count_en,
             lambda s: f"图中有多少个{zh.thing(s.get('colour'))}？",
             a.count, frozenset({COUNTS})),
        Kind("position", "instance_location", ("colour", "[shape]"), _position_en,
             lambda s: f"{zh.thing(slot(s, 'colour'), s.get('shape'))}在图中的什么位置？",
             a.position, frozenset({BY_COLOUR, IN_FRAME})),
        Kind("colour", "instance_attributes", ("[shape]", "position"), _colour_en,
             lambda s: f"图中{_where(s)}的{zh.thing(None, s.get('shape'))}是什么颜色？",
             a.colour, frozenset({ANY_SHAPE, IN_FRAME})),
        Kind("size", "instance_attributes", ("extreme",),
             lambda s: f"Which object is the {slot(s, 'extreme')} in the image?",
             lambda s: f"图中哪个物体{zh.word(EXTREMES_ZH, slot(s, 'extreme'))}？",
             a.size, frozenset({COUNTS, BY_COLOUR})),
        Kind("relative_position", "spatial_relation", ("object", "other"),
             lambda s: f"Where is {name(s)} relative to {name(s, 'other')}?",
             lambda s: f"{zh.named(s)}在{zh.named(s, 'other')}的什么位置？",
             a.relative_position, frozenset({BY_COLOUR})),
        Kind("read_text", "text_understanding", (),
             lambda s: "Which text is written in the image?",
             lambda s: "图中写的是哪一段文字？",
             a.read_text, frozenset({ANY_SHAPE}), a.text_fits),
        Kind("identity", "instance_identity", ("[colour]", "position"), _identity_en,
             lambda s: f"图中{_where(s)}的{zh.thing(s.get('colour'))}是什么形状？",
             a.identity, frozenset({SEPARATE, IN_FRAME})),
        Kind("contain", "instance_interaction", ("object",),
             lambda s: f"Which object is inside {name(s)}?",
             lambda s: f"哪个物体在{zh.named(s)}里面？",
             a.meeting("contain"), frozenset({SEPARATE, BY_COLOUR})),
        Kind("overlap", "instance_interaction", ("object",),
             lambda s: f"Which object overlaps {name(s)}?",
             lambda s: f"哪个物体与{zh.named(s)}重叠？",
             a.meeting("overlap"), frozenset({SEPARATE, BY_COLOUR})),
        Kind("touch", "instance_interaction", ("object",),
             lambda s: f"Which object touches {name(s)}?",
             lambda s: f"哪个物体与{zh.named(s)}相接触？",
             a.meeting("touch"), frozenset({SEPARATE, BY_COLOUR})),
        Kind("compare_counts", "visual_reasoning", ("object", "other"),
             lambda s: (f"Are there more {slot(s, 'object')} objects, more {slot(s, 'other')} "
                        "objects, or as many of each in the image?"),
             lambda s: f"图中是{zh.named(s)}更多，{zh.named(s, 'other')}更多，还是一样多？",
             a.compare_counts, ALL),
        Kind("most_common_colour", "visual_reasoning", (),
             lambda s: "Which colour is the most common among the objects in the image?",
             lambda s: "图中哪种颜色的物体最多？",
             a.most_common_colour, ALL),
        Kind("remove_and_count", "visual_reasoning", ("colour",),
             lambda s: (f"If the {slot(s, 'colour')} objects were removed, how many objects "
                        "would remain?"),
             lambda s: f"如果移除所有{zh.thing(slot(s, 'colour'))}，还剩多少个物体？",
             a.remove_and_count, ALL),
        Kind("count_beside", "visual_reasoning", ("side", "object"),
             lambda s: f"How many objects are {slot(s, 'side')} {name(s)}?",
             lambda s: f"{zh.named(s)}的{_side(s)}有多少个物体？",
             a.count_beside, ALL),
        Kind("scene_content", "scene_understanding", (),
             lambda s: "What does the image contain?",
             lambda s: "图中有什么？",
             a.scene_content, frozenset({SEPARATE, COUNTS})),
        Kind("dominant_colour", "scene_understanding", (),
             lambda s: "Apart from the background, which colour covers the largest area of the image?",
             lambda s: "除背景外，哪种颜色在图中所占的面积最大？",
             a.dominant_colour, frozenset({SEPARATE, BY_COLOUR, ANY_SHAPE})),
        Kind("layout", "scene_understanding", ("axis",),
             lambda s: LAYOUT_EN.get(slot(s, "axis")) or no(f"axis {s['axis']!r}"),
             lambda s: zh.word(LAYOUT_ZH, slot(s, "axis")),
             a.layout, frozenset({SEPARATE, ANY_SHAPE, IN_FRAME})),
        Kind("which_object", "spatial_relation", ("side", "object"),
             lambda s: f"Which object is {slot(s, 'side')} {name(s)}?",
             lambda s: f"哪个物体在{zh.named(s)}的{_side(s)}？",
             a.which_object, frozenset({SEPARATE, BY_COLOUR})),
        Kind("action_label", "action_recognition", (),
             lambda s: "What action is performed in the video?",
             lambda s: "视频中的物体发生了什么动作？",
             a.action_label, clip=True),
        Kind("next_action", "action_prediction", (),
             lambda s: ("The video shows the first steps of an activity. What is most likely "
                        "to happen next?"),
             lambda s: "视频展示了一项活动的前几个步骤。接下来最有可能发生什么？",
             a.next_action, clip=True),
        Kind("action_order", "procedure_understanding", ("labels", "actions"), _order_en,
             _order_zh, a.action_order, fits=a.order_fits, clip=True),
        # the synthetic scenes' reference questions (seed questions that carry their slots)
        Kind("count_shape", "instances_counting", ("noun",),
             lambda s: f"How many {slot(s, 'noun')}s are there in the image?",
             lambda s: f"图中有多少个{zh.word(zh.SHAPES, slot(s, 'noun'))}？",
             lambda scene, s: {"number": str(sum(t.noun == s["noun"] for t in scene.things(True)))},
             frozenset({COUNTS})),
        Kind("shape_colour", "instance_attributes", ("noun",),
             lambda s: f"What colour is the {slot(s, 'noun')}?",
             lambda s: f"图中的{zh.word(zh.SHAPES, slot(s, 'noun'))}是什么颜色？",
             lambda scene, s: {"colour": a.shared(
                 [t.colour for t in scene.things() if t.noun == s["noun"]], f"{s['noun']}s")}),
        Kind("read_word", "text_understanding", (),
             lambda s: "Which word is written in the image?",
             lambda s: "图中写的是哪个词？",
             a.read_text, frozenset({ANY_SHAPE}), a.text_fits),
    )
}  # fmt: skip
