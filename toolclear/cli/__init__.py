"""The ``toolclear`` command: reduce and inspect transcripts in scripts and pipelines.

A thin layer over the library. Exit status: 0 on success, 2 for bad input or usage
(one line on stderr, never a traceback), 1 for an internal error.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from ..errors import ToolclearError
from .info import _app, _counters, _formats, _policies, _prices, app_command
from .output import _FIRST_FAILURE, _FROZEN, _NOTED, _WRITTEN, check_outputs, terminal_text
from .parser import UsageError, _parser
from .run import _advise, _compare, _corpus, _inspect, _reduce, _report, _sessions

__all__ = ["Terminated", "app_command", "check_outputs", "main", "main_entry", "terminal_text"]

_COMMANDS = {"reduce": _reduce, "compare": _compare, "corpus": _corpus, "prices": _prices, "inspect": _inspect,
             "app": _app, "formats": _formats, "counters": _counters, "sessions": _sessions, "advise": _advise,
             "report": _report, "policies": _policies}


def main(argv: Sequence[str] | None = None, *, stdout: IO[bytes] | None = None, stderr: IO[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr
    _WRITTEN.clear()
    _NOTED.clear()
    _FIRST_FAILURE.clear()
    try:
        parser = _parser()
        args = parser.parse_args(argv)
        if args.command != "reduce" and getattr(args, "counter", "") is None:
            args.counter = "eino"
        if args.command is None:
            parser.print_help(sys.stdout)
            return 2
        # SIGTERM (timeout, systemd, kill) ends every command as Ctrl-C does: no temporary file left
        try:
            return _with_sigterm_as_interrupt(lambda: _COMMANDS[args.command](args, out, err))
        finally:
            if _FROZEN:  # the command froze what it loaded: the caller's process gets it back
                import gc

                gc.unfreeze()
                _FROZEN.clear()
    except (UsageError, ToolclearError) as exc:
        print(f"toolclear: error: {terminal_text(str(exc))}", file=err)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt as exc:
        done = ", ".join(terminal_text(p) for p in _WRITTEN)
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"toolclear: {how}; {'wrote ' + done + ' before that' if done else 'nothing was written'}",
              file=err)
        return 143 if isinstance(exc, Terminated) else 130
    except MemoryError:
        print("toolclear: error: out of memory reading the input", file=err)
        return 2
    except Exception as exc:  # never a traceback: one line, and a distinct status
        print(f"toolclear: internal error, please report it: {type(exc).__name__}: {terminal_text(str(exc))}",
              file=err)
        return 1


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is (the same clean-up), reported as such (exit 143)."""


def _with_sigterm_as_interrupt(run: Any) -> int:
    """SIGTERM (what `timeout`, systemd and `docker stop` send) taken as Ctrl-C, so a
    sweep stops its worker processes and says what it wrote, instead of dying with
    its workers left running."""
    if threading.current_thread() is not threading.main_thread():
        return int(run())

    def _interrupt(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return int(run())
    finally:
        signal.signal(signal.SIGTERM, previous)


def main_entry() -> None:
    """Console-script entry point."""
    try:
        code = main()
    except KeyboardInterrupt:  # between the call and main's own handler
        print("toolclear: interrupted; nothing was written", file=sys.stderr)
        code = 130
    sys.exit(code)

