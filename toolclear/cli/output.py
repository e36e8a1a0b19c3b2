"""What the command reads and writes: inputs, safe outputs (never over an input, all or
nothing), terminal-safe text, progress."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .._files import atomic_write
from ..model import Transcript
from ..runs.report import (
    display_text,
    table_csv,
)
from .parser import UsageError


def _read_input(name: str | None, stderr: IO[str] | None = None) -> tuple[object, str | None]:
    """The input named, standard input for -, or with no name the newest agent session
    on this machine (said on stderr)."""
    if name is None:
        from ..corpus.sessions import find_sessions, where_looked

        found = find_sessions()
        if not found:
            raise UsageError("no INPUT given and no agent session found on this machine (looked in "
                             + ", ".join(where_looked()) + ")")
        if stderr is not None:
            print(f"toolclear: the newest session: {terminal_text(found[0].path)} ({found[0].agent})", file=stderr)
        return found[0].path, None
    if name == "-":
        return sys.stdin.buffer, "<stdin>"
    return name, None


# control characters, line and paragraph separators, and the invisible format characters a
# crafted name hides behind: zero-width spaces and joiners, bidi marks, embeddings and isolates
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                      "\ufeff\ufff9-\ufffb]")


def terminal_text(text: str) -> str:
    """Text from the input made safe for a terminal: control characters (escape
    sequences, OSC 52 clipboard writes, bidi overrides, line breaks) become visible
    escapes such as ``\\x1b``, so a crafted file name or error cannot paint or move
    what the terminal shows."""
    text = display_text(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _select(transcripts: list[Transcript], wanted: str | None) -> list[Transcript]:
    if wanted is None:
        return transcripts
    chosen = [t for t in transcripts if t.id == wanted]
    if not chosen:
        ids = ", ".join(repr(t.id) for t in transcripts[:5])
        more = ", ..." if len(transcripts) > 5 else ""
        raise UsageError(f"no conversation with id {wanted!r}; this file holds {ids}{more}")
    return chosen


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(inputs: Sequence[str], outputs: Sequence[tuple[str, str | None]]) -> None:
    """Refuse an output that is an input, or the same file as another output: each
    would overwrite what the command is still reading or has just written."""
    named = [(flag, path) for flag, path in outputs if path not in (None, "-")]
    for flag, path in named:
        assert path is not None
        if not path.strip():
            raise UsageError(f"{flag} '': give a file name, or - for standard output")
        for src in inputs:
            if src != "-" and _same_file(src, path):
                raise UsageError(f"{flag} {path} is the input file; write the output somewhere else")
    for k, (flag, path) in enumerate(named):
        for other_flag, other in named[k + 1 :]:
            assert path is not None and other is not None
            if _same_file(path, other):
                raise UsageError(f"{flag} and {other_flag} are the same file ({path}); give each its own")


class _Interrupts:
    """Holds Ctrl-C back while a finished output is moved into place, so an output is
    either not there or complete, and the exit message can say which."""

    def __init__(self) -> None:
        self.pending = False

    def __enter__(self) -> _Interrupts:
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._hold)
        return self

    def _hold(self, signum: int, frame: object) -> None:
        self.pending = True

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


_WRITTEN: list[str] = []
"""Outputs completed by the running command (for the message when it is interrupted)."""


def _new_mode(target: Path) -> int:
    """The mode an output gets: the existing file's permissions (never its setuid, setgid
    or sticky bit: new content is not the program that was trusted with them), else what
    the umask allows."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode) & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _write_output(path: str | None, data: bytes, stdout: IO[bytes]) -> None:
    if path is None or path == "-":
        stdout.write(data)
        stdout.flush()
        return
    target = Path(path)
    try:
        info = os.stat(target)
    except OSError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):
            # a terminal, /dev/null, a pipe: write into it, never replace the node
            try:
                with open(target, "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
            _WRITTEN.append(path)
            return
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise UsageError(f"cannot write {path}: it is {kind}")
    if target.is_symlink():  # written through, as cp and sort -o do: the link stays a link
        target = Path(os.path.realpath(target))
    @contextlib.contextmanager
    def moved() -> Iterator[None]:
        with _Interrupts():  # Ctrl-C waits until the output is in place and said to be
            yield
            _WRITTEN.append(path)

    try:
        atomic_write(target, data, mode=_new_mode(target), guard=moved)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None



def _write_table(table: Any, path: str, stdout: IO[bytes]) -> None:
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        try:
            buf = io.BytesIO()
            table.to_parquet(buf, index=False)
        except ImportError:
            raise UsageError("Parquet needs pyarrow: pip install 'toolclear[corpus]'") from None
        data = buf.getvalue()
    elif suffix == ".json":
        data = table.to_json(orient="records", indent=1).encode("utf-8")
    else:
        data = table_csv(table)  # file names and session ids are the user's: no cell starts a formula
    _write_output(path, data, stdout)


class _Progress:
    """Runs done, rate and time left, on a terminal only (a pipe gets the summary alone)."""

    def __init__(self, stream: IO[str]) -> None:
        import time

        self.stream, self.t0, self.clock = stream, time.monotonic(), time.monotonic
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.tty:
            return
        elapsed = max(self.clock() - self.t0, 1e-6)
        rate = done / elapsed
        left = (total - done) / rate if rate else 0
        width = 30
        filled = int(width * done / max(total, 1))
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files, "
                          f"{rate:.1f}/s, {left:.0f} s left ")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")



def _say_notes(stderr: IO[str]) -> None:
    for note in _NOTED:
        print(f"toolclear: note: {terminal_text(note)}", file=stderr)


def _fmt(n: int) -> str:
    return f"{n:,}"

_FIRST_FAILURE: list[str] = []
"""Why the first offload write of the running command failed (said with the count)."""
_NOTED: list[str] = []
"""What the pricing assumed, said once on stderr after the output."""
_FROZEN: list[bool] = []
"""Set while a command has frozen the loaded objects out of the collector (``run._load``)."""
