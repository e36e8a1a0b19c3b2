"""Every bound toolclear holds untrusted input to, in one place.

A transcript, an archive or an API cassette can be made to grow without end when it is
read: a gzip body that inflates a thousandfold, an archive of bombs, a 2 GiB stream.
Each bound below is what toolclear reads at most; past it the input is refused in one
line that names the bound and the environment variable that raises it (read when
toolclear is imported: ``TOOLCLEAR_MAX_BODY_BYTES=1073741824 toolclear inspect x.yaml``).
"""

from __future__ import annotations

import os

__all__ = ["ARCHIVE_FLOOR", "MAX_BODY_BYTES", "MAX_CASSETTE_BYTES", "MAX_SOURCE_BYTES", "MEMBER_FLOOR", "RATIO",
           "how_to_raise"]


def _bound(name: str, default: int) -> int:
    """The bound ``name``: its environment variable when set to a whole number > 0."""
    text = os.environ.get(f"TOOLCLEAR_{name}", "").replace("_", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else default


def how_to_raise(name: str) -> str:
    """The words an error ends with: which variable raises the bound it hit."""
    return f"set TOOLCLEAR_{name} to raise the bound"


MAX_SOURCE_BYTES = _bound("MAX_SOURCE_BYTES", 2 << 30)
"""One file or stream read whole (2 GiB)."""
MEMBER_FLOOR = _bound("MEMBER_FLOOR", 16 << 20)
"""An archive's member may always decompress to this many bytes (16 MiB)."""
ARCHIVE_FLOOR = _bound("ARCHIVE_FLOOR", 256 << 20)
"""An archive may always decompress to this many bytes in all (256 MiB)."""
RATIO = _bound("RATIO", 20)
"""Past the floors, what decompresses may be this many times what was compressed."""
MAX_BODY_BYTES = _bound("MAX_BODY_BYTES", 64 << 20)
"""One gzip-compressed request body of an API cassette, decompressed (64 MiB)."""
MAX_CASSETTE_BYTES = _bound("MAX_CASSETTE_BYTES", 512 << 20)
"""All the compressed bodies of one cassette, decompressed together (512 MiB)."""
