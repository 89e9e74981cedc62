"""The judge's JSON schemas as byte automata: which bytes may come next in a reply.

The schemas of ablate.components.judge.tasks.schema use a small part of JSON Schema: an
object whose properties are all required and nothing else (keys in the schema's order),
strings (`minLength`, or an `enum` of strings), booleans, and arrays of those
(`minItems`, `maxItems`). Also read: numbers, integers, null, an object without
properties (any JSON object) and a schema without a type (any JSON value). `compile_schema` turns one into a sequence of frames; a state is
an immutable stack of frames (cheap to keep per candidate token); `step(state, byte)` is
the state after one more byte, or None when the schema forbids it; `done(state)` says the
object is complete (then nothing but the end of the reply may come).

The text allowed is what llama.cpp's JSON-schema grammar allows, minus trailing space:
between tokens up to 20 bytes of space, tab or newline; strings of any character but `"`,
`\\`, DEL and control characters, escapes as JSON's (`\\uXXXX` with four hex digits),
well-formed UTF-8 only (a lead byte takes its continuation bytes: no overlong forms, no
surrogates), so Chinese text is written byte by byte as tokens carry it and always
decodes. Anything else raises ValueError naming
the part of the schema it cannot follow.
"""

from __future__ import annotations

from typing import Any, Optional

Frame = tuple[Any, ...]
State = tuple[Frame, ...]  # a stack: the frame that reads the next byte is last

WS_MAX = 20
_WS = frozenset(b" \t\n")
_ESCAPES = frozenset(b'"\\/bfnrt')
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _ws() -> Frame:
    return ("ws", 0)


def _lit(text: str) -> Frame:
    return ("lit", text.encode("utf-8"), 0)


ANY: tuple[Frame, ...] = (("any",),)


def _value(schema: dict[str, Any], where: str) -> tuple[Frame, ...]:
    """The frames of one value, in reading order."""
    kind = schema.get("type")
    if kind is None and "enum" not in schema:
        return ANY
    if kind in ("number", "integer"):
        return (("num", kind == "integer", 0),)
    if kind == "null":
        return (("enum", (b"null",), b""),)
    if "enum" in schema:
        options = schema["enum"]
        if kind not in (None, "string") or not options or not all(isinstance(o, str) for o in options):
            raise ValueError(f"{where}: only an enum of strings is supported")
        quoted = tuple(sorted({('"' + o + '"').encode("utf-8") for o in options}))
        if any(a != b and b.startswith(a) for a in quoted for b in quoted):
            raise ValueError(f"{where}: an enum value is a prefix of another")
        return (("enum", quoted, b""),)
    if kind == "string":
        return (("str", int(schema.get("minLength", 0)), 0, 0, 0, 0, None),)
    if kind == "boolean":
        return (("enum", (b"false", b"true"), b""),)
    if kind == "array":
        item = _value(schema.get("items", {}), where + ".items")
        low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
        return (("arr", item, low, -1 if high is None else int(high), 0, 0),)
    if kind == "object":
        return _object(schema, where)
    raise ValueError(f"{where}: type {kind!r} is not supported by the judge's JSON automaton")


def _object(schema: dict[str, Any], where: str) -> tuple[Frame, ...]:
    props = schema.get("properties", {})
    if not props and "additionalProperties" not in schema and not schema.get("required"):
        return (("gobj", 0),)  # any object
    if set(schema.get("required", [])) != set(props) or schema.get("additionalProperties", True):
        raise ValueError(f"{where}: an object must require exactly its properties and no others")
    frames: list[Frame] = [_lit("{"), _ws()]
    for n, (name, sub) in enumerate(props.items()):
        if n:
            frames += [_lit(","), _ws()]
        frames += [_lit('"' + name + '"'), _ws(), _lit(":"), _ws(),
                   *_value(sub, f"{where}.{name}"), _ws()]
    frames.append(_lit("}"))
    return tuple(frames)


def compile_schema(schema: dict[str, Any]) -> State:
    """The start state of a reply that must be one JSON value of this schema."""
    return tuple(reversed(_value(schema, "schema")))


def done(state: State) -> bool:
    """The value is complete: what is left is optional (space, a number that may end)."""
    return all(f[0] == "ws" or (f[0] == "num" and f[2] in _NUM_END) for f in state)


# a JSON number's states: 0 start, 1 after '-', 2 a leading 0, 3 integer digits, 4 after
# '.', 5 fraction digits, 6 after e/E, 7 after the exponent's sign, 8 exponent digits
_NUM_END = frozenset((2, 3, 5, 8))
_DIGITS = frozenset(b"0123456789")


def _number(integer: bool, at: int, b: int) -> Optional[int]:
    """The number's state after byte b, or None when b does not continue it."""
    digit = b in _DIGITS
    if at in (0, 1):
        if at == 0 and b == 0x2D:
            return 1
        return (2 if b == 0x30 else 3) if digit else None
    if at == 3 and digit:
        return 3
    if at in (2, 3):
        if integer:
            return None
        return 4 if b == 0x2E else 6 if b in b"eE" else None
    if at in (4, 5):
        return 5 if digit else (6 if at == 5 and b in b"eE" else None)
    if at == 6 and b in b"+-":
        return 7
    return 8 if at in (6, 7, 8) and digit else None


_FIRST_CONT = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}


def _lead(b: int) -> tuple[int, int, int] | None:
    """(continuation bytes, lowest, highest first continuation byte) of a UTF-8 lead byte:
    no overlong forms, no surrogates, nothing above U+10FFFF (well-formed UTF-8 only)."""
    n = 1 if 0xC2 <= b <= 0xDF else 2 if 0xE0 <= b <= 0xEF else 3 if 0xF0 <= b <= 0xF4 else 0
    if not n:
        return None
    lo, hi = _FIRST_CONT.get(b, (0x80, 0xBF))
    return n, lo, hi


def _string(frame: Frame, b: int) -> Optional[Frame]:
    """A string frame after byte b, or None; a closed string is ("end",). The frame:
    ("str", minLength, opened, characters, escape position, continuation bytes left,
    (lowest, highest) allowed for the next continuation byte)."""
    _, low, opened, count, esc, more, span = frame
    if not opened:
        return ("str", low, 1, 0, 0, 0, None) if b == 0x22 else None
    if more:  # inside a multi-byte UTF-8 character
        if span[0] <= b <= span[1]:
            return ("str", low, 1, count + (more == 1), 0, more - 1, (0x80, 0xBF))
        return None
    if esc == 1:
        if b in _ESCAPES:
            return ("str", low, 1, count + 1, 0, 0, None)
        return ("str", low, 1, count, 2, 0, None) if b == 0x75 else None  # \u
    if esc:  # 2..5: the four hex digits of \uXXXX
        if b not in _HEX:
            return None
        if esc == 5:
            return ("str", low, 1, count + 1, 0, 0, None)
        return ("str", low, 1, count, esc + 1, 0, None)
    if b == 0x22:
        return ("end",) if count >= low else None
    if b == 0x5C:
        return ("str", low, 1, count, 1, 0, None)
    if b < 0x20 or b == 0x7F:
        return None
    if b < 0x80:
        return ("str", low, 1, count + 1, 0, 0, None)
    lead = _lead(b)
    return None if lead is None else ("str", low, 1, count, 0, lead[0], lead[1:])


def step(state: State, b: int) -> Optional[State]:
    """The state after byte `b`, or None when the schema does not allow it here."""
    while state:
        frame, rest = state[-1], state[:-1]
        kind = frame[0]
        if kind == "ws":
            if b in _WS and frame[1] < WS_MAX:
                return rest + (("ws", frame[1] + 1),)
            state = rest  # optional: the byte goes to the next frame
            continue
        if kind == "lit":
            data, i = frame[1], frame[2]
            if b != data[i]:
                return None
            return rest + (("lit", data, i + 1),) if i + 1 < len(data) else rest
        if kind == "str":
            nxt = _string(frame, b)
            if nxt is None:
                return None
            return rest if nxt[0] == "end" else rest + (nxt,)
        if kind == "any":
            if b == 0x7B:
                state = rest + (("gobj", 0),)
            elif b == 0x5B:
                state = rest + (("arr", ANY, 0, -1, 0, 0),)
            elif b == 0x22:
                state = rest + (("str", 0, 0, 0, 0, 0, None),)
            elif b == 0x2D or b in _DIGITS:
                state = rest + (("num", False, 0),)
            elif b in b"tfn":
                state = rest + (("enum", (b"false", b"null", b"true"), b""),)
            else:
                return None
            continue
        if kind == "num":
            at = _number(frame[1], frame[2], b)
            if at is not None:
                return rest + (("num", frame[1], at),)
            if frame[2] not in _NUM_END:
                return None
            state = rest  # the number has ended: the byte goes to the next frame
            continue
        if kind == "gobj":  # any object: 0 before '{', 1 after '{', 2 after a value, 3 after ','
            phase = frame[1]
            if phase == 0:
                return rest + (("gobj", 1), _ws()) if b == 0x7B else None
            if phase == 2:
                if b == 0x2C:
                    return rest + (("gobj", 3), _ws())
                return rest if b == 0x7D else None
            if phase == 1 and b == 0x7D:
                return rest
            state = rest + (("gobj", 2), _ws(), *reversed(ANY), _ws(), _lit(":"), _ws(),
                            ("str", 0, 0, 0, 0, 0, None))
            continue
        if kind == "enum":
            prefix = frame[2] + bytes((b,))
            alive = tuple(o for o in frame[1] if o.startswith(prefix))
            if not alive:
                return None
            return rest if prefix in alive else rest + (("enum", alive, prefix),)
        # an array: phase 0 before '[', 1 after '[', 2 after an item, 3 after ','
        _, item, low, high, phase, count = frame
        if phase == 0:
            return rest + (("arr", item, low, high, 1, 0), _ws()) if b == 0x5B else None
        if phase == 2:
            if b == 0x2C and (high < 0 or count < high):
                return rest + (("arr", item, low, high, 3, count), _ws())
            return rest if b == 0x5D and count >= low else None
        if phase == 1 and b == 0x5D and low == 0:
            return rest
        if high >= 0 and count >= high:
            return None
        state = rest + (("arr", item, low, high, 2, count + 1), _ws()) + tuple(reversed(item))
    return None  # the value is complete: nothing more may come


def feed(state: State, data: bytes) -> Optional[State]:
    """The state after these bytes, or None."""
    s: Optional[State] = state
    for b in data:
        s = step(s, b) if s is not None else None
        if s is None:
            return None
    return s


def allowed_bytes(state: State) -> list[int]:
    """The bytes that may come next (none once the value is complete)."""
    return [b for b in range(256) if step(state, b) is not None]
