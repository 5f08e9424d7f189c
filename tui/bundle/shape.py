"""The shape of a bundle's ``console.msgpack``, checked before a byte of it is decoded.

Decoding trusts the lengths a MessagePack message announces: an array of 500,000,000
booleans packs into 500 MB (and gzip makes that 573 KB), and each element costs a pointer
once decoded. So the message is walked first, header by header, without building anything:
no container may hold more than ``MAX_ITEMS`` elements (no array of a bundle is longer than
the largest job has ranks), all of them together no more than ``MAX_TOTAL_ITEMS``, and no
container may be nested more than ``MAX_DEPTH`` deep (a bundle's deepest is about ten). A
message that breaks off or runs past its end is no bundle either.
"""

from __future__ import annotations

from ..core.ranks import MAX_RANKS

MAX_DEPTH = 32
MAX_ITEMS = MAX_RANKS
MAX_TOTAL_ITEMS = 16 * MAX_RANKS  # 65,536 ranks' bundle holds about 2 million; each costs
# the walk below about 0.15 µs, so that even the worst is refused within a second or so

# Header byte -> bytes that follow it, for the scalars of fixed size.
_FIXED = {0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
          0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8}
# Header byte -> bytes of the length that follows it, for strings and binaries.
_SIZED = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
# Header byte -> (bytes of the count that follows it, elements per count): arrays and maps.
_COUNTED = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}
_NIL_FALSE_TRUE = (0xC0, 0xC2, 0xC3)


class ShapeError(ValueError):
    """The message is not shaped as a bundle's console can be; the text says how."""


def check_shape(data: bytes) -> None:
    """ShapeError unless ``data`` is one MessagePack value within the bounds above."""
    position, end = 0, len(data)
    left = [1]  # elements still to read at each open level, the message itself first
    total = 0
    while left:
        if left[-1] == 0:
            left.pop()
            continue
        left[-1] -= 1
        if position >= end:
            raise ShapeError("it breaks off")
        head = data[position]
        position += 1
        if head <= 0x7F or head >= 0xE0 or head in _NIL_FALSE_TRUE:
            continue
        if 0xA0 <= head <= 0xBF:
            position += head & 0x1F
            continue
        if head in _FIXED:
            position += _FIXED[head]
            continue
        if head in _SIZED:
            size = _SIZED[head]
            position += size + int.from_bytes(data[position:position + size], "big")
            continue
        if 0x90 <= head <= 0x9F:
            count = head & 0x0F
        elif 0x80 <= head <= 0x8F:
            count = 2 * (head & 0x0F)
        elif head in _COUNTED:
            size, per_item = _COUNTED[head]
            count = per_item * int.from_bytes(data[position:position + size], "big")
            position += size
            if count > per_item * MAX_ITEMS:
                raise ShapeError(f"a list of {count // per_item:,} items (at most "
                                 f"{MAX_ITEMS:,}: the largest job's ranks)")
        else:
            raise ShapeError(f"a value of a kind no bundle holds (0x{head:02x})")
        total += count
        if total > MAX_TOTAL_ITEMS:
            raise ShapeError(f"over {MAX_TOTAL_ITEMS:,} values in all")
        if count:
            if len(left) > MAX_DEPTH:
                raise ShapeError(f"values nested over {MAX_DEPTH} deep")
            left.append(count)
    if position != end:
        raise ShapeError("it breaks off" if position > end else "bytes follow its end")
