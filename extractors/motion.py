"""Motion facts of a clip's segment, from the instances found in its keyframes: a simple tracker
over boxes (objects of one colour, or of a colour unclear beside it, matched frame to frame by
the nearest centre), then what each track did: moved (which way, from where to where), grew or shrank, appeared or disappeared.

It reads only what the image extractors found, so it runs with any segmenter; it is as good as
the instances are, and says nothing where a track is too short to trust (a fragment seen once).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchfoundry.core.records import Instance, MotionEvent
from benchfoundry.extractors.colour_names import UNCLEAR_JOIN

TRACKER = "boxes-2"  # the tracker's version, part of the motion facts' configuration
MOVED = 0.08  # a centre that travels this share of the frame's side has moved
MATCH = 0.35  # farthest a centre may travel between two keyframes, as a share of the diagonal
GREW = 1.5  # area ratio last / first for grew (and its inverse for shrank)


@dataclass
class _Track:
    name: str
    colour: str
    seen: list[tuple[int, float, Instance]] = field(default_factory=list)  # (frame, time, inst)


def _centre(box: Sequence[float]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def _area(box: Sequence[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _name(instance: Instance) -> tuple[str, str]:
    """(what to call it, its colour) from the describer's attributes or the recogniser's label."""
    colour = instance.attributes[0] if instance.attributes else ""
    shapes = {"round": "circle", "rectangular": "rectangle", "triangular": "triangle"}
    shape = next((shapes[a] for a in instance.attributes if a in shapes), None)
    noun = instance.label or shape or "object"
    return (f"{colour} {noun}".strip(), colour)


def _alike(a: str, b: str) -> bool:
    """Two keyframes' colour words for one object: the same name, or a name and a colour unclear
    between it and a neighbour ("yellow" and "yellow-green": a compressed frame's pixels shift
    a colour near the edge of its name across it and back)."""
    return a == b or bool(set(a.split(UNCLEAR_JOIN)) & set(b.split(UNCLEAR_JOIN)))


def _where(x: float, y: float, width: float, height: float) -> str:
    row = ("top", "middle", "bottom")[min(2, int(3 * y / height))]
    column = ("left", "centre", "right")[min(2, int(3 * x / width))]
    return "centre" if (row, column) == ("middle", "centre") else f"{row} {column}"


def _tracks(
    frames: Sequence[tuple[float, Sequence[Instance]]], width: float, height: float
) -> list[_Track]:
    tracks: list[_Track] = []
    reach = MATCH * math.hypot(width, height)
    for index, (at, instances) in enumerate(frames):
        open_tracks = [t for t in tracks if t.seen[-1][0] == index - 1]
        pairs = []
        for k, inst in enumerate(instances):
            name, colour = _name(inst)
            for t in open_tracks:
                if _alike(t.colour, colour):
                    (x0, y0), (x1, y1) = _centre(t.seen[-1][2].box), _centre(inst.box)
                    if (d := math.hypot(x1 - x0, y1 - y0)) <= reach:
                        pairs.append((d, k, id(t), t))
        used_inst, used_track = set(), set()
        for _, k, key, t in sorted(pairs, key=lambda p: (p[0], p[1])):
            if k not in used_inst and key not in used_track:
                t.seen.append((index, at, instances[k]))
                used_inst.add(k)
                used_track.add(key)
        for k, inst in enumerate(instances):
            if k not in used_inst:
                name, colour = _name(inst)
                tracks.append(_Track(name, colour, [(index, at, inst)]))
    return tracks


def motion_events(
    frames: Sequence[tuple[float, Sequence[Instance]]], width: float, height: float
) -> list[MotionEvent]:
    """What happens over the keyframes (time, instances), in time order: one event per thing a
    track did. A track seen in one keyframe only is left out (a fragment, not an object)."""
    events: list[MotionEvent] = []
    last = len(frames) - 1
    for track in _tracks(frames, width, height):
        if len(track.seen) < 2:
            continue
        (i0, t0, first), (i1, t1, final) = track.seen[0], track.seen[-1]
        (x0, y0), (x1, y1) = _centre(first.box), _centre(final.box)
        start, end = _where(x0, y0, width, height), _where(x1, y1, width, height)

        def add(
            event: str, detail: str, at0: float = t0, at1: float = t1, name: str = track.name
        ) -> None:
            text = f"the {name} {event}" + (f" {detail}" if detail else "")
            events.append(MotionEvent(
                object=name, event=event, detail=detail, start_time=at0, end_time=at1,
                text=f"{text} ({at0:g}-{at1:g} s)",
            ))  # fmt: skip

        if i0 > 0:
            add("appeared", f"at the {start}", t0, t0)
        dx, dy = (x1 - x0) / width, (y1 - y0) / height
        ways = []
        if abs(dx) >= MOVED:
            ways.append("to the right" if dx > 0 else "to the left")
        if abs(dy) >= MOVED:
            ways.insert(0, "down" if dy > 0 else "up")
        if ways:
            where = f", from the {start} to the {end}" if start != end else ""
            add("moved", " and ".join(ways) + where)
        ratio = _area(final.box) / max(1.0, _area(first.box))
        if ratio >= GREW:
            add("grew", f"to {ratio:.1f} times its size")
        elif ratio <= 1 / GREW:
            add("shrank", f"to {ratio:.1f} of its size")
        if i1 < last:
            add("disappeared", f"from the {end}", t1, t1)
    return sorted(events, key=lambda e: (e.start_time, e.object, e.event))
