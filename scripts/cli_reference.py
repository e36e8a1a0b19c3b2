"""Write docs/cli.md: the CLI guide, then every command's --help as the installed parser
prints it (tests/test_docs.py holds the file equal to this output; rerun after changing
an option: python scripts/cli_reference.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
GUIDE = """# The CLI

[← the README](../README.md) · [all docs](index.md)

```bash
toolclear sessions                                    # the agent sessions on this machine, newest first
toolclear advise                                      # per agent: does any policy pay, and which setting
toolclear inspect                                     # the newest session: the verdict first, then the detail
toolclear inspect session.jsonl --policy anthropic    # a file, any policy
toolclear compare session.jsonl                       # every policy family side by side, in dollars
toolclear report session.jsonl -o report.html         # one HTML file to attach to an issue
toolclear reduce run.json -o reduced.json             # same format out; '-' reads stdin, stdout by default
toolclear reduce run.json --threshold 10000 --keep 20000 --exclude read_file --counter cl100k_base \\
    --replay --report report.json -o reduced.json
toolclear reduce big.json --offload-dir offloaded/ --offload-limit 5000 -o reduced.json  # notice: /large_tool_result/<id>
toolclear corpus ~/.claude/projects --replay -o sweep.csv
toolclear app                                         # the inspector on the sessions on this machine
toolclear formats                                     # the formats and what counts as a tool result
toolclear counters                                    # the token counters and whether they work here
```

One rule everywhere: a replay is priced with the provider's prompt cache at the prices of
the model the log names (`--pricing auto`; a log that names none is priced at
claude-sonnet-4-5 and a note says so), calibrated on the log's recorded usage where it has
some (`--calibrate`, the default), tokens counted with eino's estimate unless
`--counter` says otherwise. `inspect`, `compare`, `report`, `advise`, the corpus and the
inspector all go through `toolclear.verdict` / `toolclear.compare`, so they give the same
dollars for the same run and setting.

On a file holding several conversations `reduce` reduces each (or only
`--conversation ID`) and writes the whole file back. Exit status 0 on success, 2 for bad
input or usage with one line on stderr (never a traceback; text from the input is shown
with control characters escaped, so a crafted file cannot drive the terminal).

Outputs: `-o` and `--report` may not be the input file or each other (exit 2); a file is
written to a temporary file beside it and renamed into place, keeping the mode of the
file it replaces (else what the umask allows); a device or pipe (`-o /dev/null`) is written
into, never replaced; an output that is a symbolic link is written through (the file it
points to gets the new content, the link stays a link, as `cp` and `sort -o` do); a
setuid, setgid or sticky bit of the file replaced is dropped. Ctrl-C and SIGTERM leave no
temporary file, and the message says which outputs were completed (exit 130 and 143).
CSV cells never start a formula.

## Reference

Generated from each command's `--help` by `scripts/cli_reference.py`.
"""


def reference() -> str:
    from toolclear.cli.parser import _parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: one width for everyone
    try:
        parser = _parser()
        parts = [GUIDE, "### toolclear\n", "```text", parser.format_help().rstrip(), "```", ""]
        sub = next(a for a in parser._actions if a.dest == "command")
        for name, command in sub.choices.items():  # type: ignore[union-attr]
            parts += [f"### toolclear {name}\n", "```text", command.format_help().rstrip(), "```", ""]
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before
    return "\n".join(parts)


if __name__ == "__main__":
    DOC.write_text(reference())
    print(f"wrote {DOC}", file=sys.stderr)
