"""The property the fuzzer checks, shared with the regression tests (no atheris here)."""

from __future__ import annotations

import toolclear as tc

FORMATS = ["auto", *(f.name for f in tc.list_formats())]
CLEAR_ALL = tc.ClearToolResultConfig(tool_result_token_threshold=0, keep_recent_tokens=0, placeholder="[x]")


def split_input(data: bytes) -> tuple[bytes, str]:
    """A leading NUL byte picks a forced format from the second byte; otherwise auto."""
    if len(data) >= 2 and data[0] == 0:
        return data[2:], FORMATS[data[1] % len(FORMATS)]
    return data, "auto"


def check(data: bytes) -> None:
    """load_all reads the input or raises a one-line TranscriptError; what it reads is
    written back unchanged, and cleared contents survive a write and a read."""
    body, fmt = split_input(data)
    try:
        transcripts = tc.load_all(body, fmt)
    except tc.TranscriptError as exc:
        assert "\n" not in str(exc), "a multi-line error message"
        return
    for t in transcripts:
        assert tc.dump(t) == body, "unchanged write-back differs"
        reduced = tc.reduce_by_tokens(t.messages, CLEAR_ALL)
        tc.replay(t.messages, CLEAR_ALL)
        if not reduced.cleared_indices:
            continue
        out = tc.dump(t, reduced.messages)
        again = [x for x in tc.load_all(out, t.format) if x.id == t.id]
        assert again and [m.content for m in again[0].messages] == [m.content for m in reduced.messages], \
            "cleared contents did not survive a write and read"
