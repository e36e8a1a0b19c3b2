"""The commands that list or start things: app, prices, policies, formats, counters."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import IO, Any

from ..cost.billing import PRICING
from ..cost.prices import pricing_for
from ..counters import list_counters
from ..formats import list_formats
from ..formats._source import read_source
from ..runs.report import (
    json_bytes,
)
from .output import terminal_text
from .parser import UsageError, _plain_option


def app_command(file: str | None, *, port: int = 8501, address: str = "localhost",
                headless: bool = False) -> list[str]:
    """The ``streamlit run`` command line of the inspector, with the settings of the
    repository's .streamlit/config.toml (an installed toolclear has no such file)."""
    import importlib.util

    spec = importlib.util.find_spec("toolclear.inspector.app")
    assert spec is not None and spec.origin is not None
    return [
        sys.executable, "-m", "streamlit", "run", spec.origin,
        f"--server.port={port}", f"--server.address={address}", f"--server.headless={str(headless).lower()}",
        "--server.maxUploadSize=200", "--browser.gatherUsageStats=false", "--theme.base=light",
        "--client.toolbarMode=viewer", "--runner.magicEnabled=false", "--runner.postScriptGC=false",
        "--global.disableWidgetStateDuplicationWarning=true",
    ]


def _app(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    import importlib.util
    import subprocess

    if importlib.util.find_spec("streamlit") is None:
        raise UsageError("the inspector needs Streamlit: pip install 'toolclear[app]'")
    env = dict(os.environ)
    env.pop("TOOLCLEAR_APP_SESSIONS", None)
    if not args.file:  # opens on a picker of the agent sessions on this machine
        env["TOOLCLEAR_APP_SESSIONS"] = "1"
    if args.file:
        path = Path(args.file).resolve()
        read_source(path)  # refuse a missing, special or oversized file here, in one line
        env["TOOLCLEAR_APP_FILE"] = str(path)
    child = subprocess.Popen(app_command(args.file, port=args.port, address=args.address,
                                         headless=args.headless), env=env)

    def _stop(signum: int, frame: object) -> None:
        # `kill`, `timeout` and systemd send SIGTERM to this process only: pass it on, or
        # the server is re-parented and keeps its port
        child.terminate()

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return child.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()


def _prices(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    head = "                    input  output  cache write  cache read  cache      min   as of       source"
    if args.model:
        lines = ["model" + head[5:]]
        for model in args.model:
            p = pricing_for(model, batch=args.batch)
            lines.append(f"{p.name:<18} {p.input:>6.3g} {p.output:>7.3g} {p.cache_write:>12.3g} {p.cache_read:>11.3g}  "
                         f"{p.cache:<9} {p.min_cacheable:>5}  {p.as_of or '-':<10}  {p.source}")
            if p.long is not None:
                lines.append(f"{'':<18} past {p.long_context_from:,} input tokens a call pays {p.long[0]:.3g} input, "
                             f"{p.long[1]:.3g} output, {p.long[2]:.3g} cache write, {p.long[3]:.3g} cache read")
        lines.append("US dollars per million tokens.")
        stdout.write(("\n".join(lines) + "\n").encode())
        return 0
    lines = ["preset" + head[6:]]
    for name, p in PRICING.items():
        lines.append(f"{name:<18} {p.input:>6.3g} {p.output:>7.3g} {p.cache_write:>12.3g} {p.cache_read:>11.3g}  "
                     f"{p.cache:<9} {p.min_cacheable:>5}  {p.as_of}  {p.source}")
    lines.append("US dollars per million tokens. Edit toolclear/data/pricing.json or pass --price-* to change them.")
    lines.append("A log's model is priced from genai-prices when it is installed (toolclear[prices]), these presets "
                 "being the offline fallback: 'toolclear prices MODEL' shows what a model gets.")
    stdout.write(("\n".join(lines) + "\n").encode())
    return 0


def _policies(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from dataclasses import fields

    from ..policies import registered

    docs: list[dict[str, Any]] = []
    for spec in registered():
        base = spec.presets[0].make()
        options = {f.name: _plain_option(getattr(base, f.name)) for f in fields(base) if not f.name.startswith("_")
                   and not callable(getattr(base, f.name))}
        docs.append({"name": spec.name, "presets": [p.name for p in spec.presets],
                     "help": spec.presets[0].help, "options": options, "aliases": dict(spec.aliases),
                     "source": spec.source})
    if args.json:
        stdout.write(json_bytes(docs))
        return 0
    lines = []
    for d in docs:
        names = ", ".join(d["presets"])
        lines += [f"{names}" + (f"  (from {d['source']})" if d["source"] != "toolclear" else ""),
                  f"  {d['help']}"]
        short = {v: k for k, v in d["aliases"].items()}
        for name, value in d["options"].items():
            alias = f" ({short[name]})" if name in short else ""
            lines.append(f"    {name}{alias} = {json.dumps(value, ensure_ascii=False)}")
        lines.append("")
    lines.append("Use: --policy NAME[:option=value,...], lists as a|b or JSON, e.g. anthropic:trigger=50000,keep=5")
    stdout.write(("\n".join(terminal_text(line) for line in lines) + "\n").encode("utf-8", "replace"))
    return 0


def _formats(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    lines = []
    width = max(len(f.name) for f in list_formats())
    for f in list_formats():
        lines.append(f"{f.name:<{width}}  {f.label}")
        lines.append(f"{'':<{width}}  found: {f.where_found}")
        lines.append(f"{'':<{width}}  tool result: {f.tool_result}")
        if f.writes_as != f.name:
            lines.append(f"{'':<{width}}  written back as: {f.writes_as} ({f.export_changes})")
    stdout.write(("\n".join(lines) + "\n").encode())
    return 0


def _counters(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    lines = []
    for c in list_counters():
        state = "available" if c.available else "not available: " + c.reason
        lines.append(f"{c.name:<15} {c.label}\n{'':<15} {state}")
    stdout.write(("\n".join(lines) + "\n").encode())
    return 0
