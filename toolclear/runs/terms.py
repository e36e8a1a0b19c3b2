"""The vocabulary of ``losses``: what counts as a term in a text (``terms``), the pieces a
term matches in another text (``pieces``), a message's text as the agent wrote or read
it (``message_text``), the forms of a term that tell the agent the same thing
(``other_forms``), and which terms are conventions or weak evidence alone. Fixed rules,
one place: the losses, the tests' literal re-reading of the rules and the docs cite them."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from typing import Any

from ..model import Message
from .refetch import path_in, path_of

__all__ = ["INSTRUCTION_FILES", "MIN_LEN", "MAX_LEN", "SUPPORT_LINE", "WEAK_ALONE", "derived_from", "message_terms", "message_text",
           "other_forms", "pieces", "terms", "weak"]

# maximal runs of 8 or more: findall tries a run from its first character and takes all of
# it, and a shorter run fails at every one of its positions, so no look-behind is needed
# (one plain character class scans about three times as fast as a guarded one)
_RUN = re.compile(r"[A-Za-z0-9_./:-]{8,}")
_EDGE = "./:-"
_CAMEL = re.compile(r"[a-z][A-Z]")
_SEPARATORS = re.compile(r"[./:]")
_LINT = ("nolint:", "noqa", "pylint:", "eslint-disable", "type:", "go:build", "go:generate", "go:embed",
         "go:linkname")
_LANGUAGE = frozenset(sys.stdlib_module_names) | frozenset(
    "np pd plt tf torch t tb b fmt os io ioutil strings strconv errors bytes json filepath path sort sync context "
    "http url exec regexp time testing math rand bufio log slog reflect runtime atomic".split())
MIN_LEN, MAX_LEN = 8, 200
_GO_STD = frozenset(
    "archive/tar archive/zip bufio/scanner compress/gzip compress/zlib container/heap container/list crypto/aes "
    "crypto/hmac crypto/md5 crypto/rand crypto/rsa crypto/sha1 crypto/sha256 crypto/sha512 crypto/tls crypto/x509 "
    "database/sql encoding/base64 encoding/binary encoding/csv encoding/hex encoding/json encoding/pem encoding/xml "
    "go/ast go/format go/parser go/token hash/crc32 hash/fnv html/template io/fs io/ioutil log/slog math/big "
    "math/bits math/rand mime/multipart net/http net/http/httptest net/http/httputil net/mail net/netip net/url "
    "os/exec os/signal os/user path/filepath regexp/syntax runtime/debug runtime/pprof sort/slices sync/atomic "
    "testing/fstest testing/quick text/tabwriter text/template unicode/utf16 unicode/utf8".split())
"""Go's standard-library import paths: a reply writes them from the language, not from a result."""
_MIME = re.compile(r"(?:text|application|image|audio|video|multipart|font|message)/[a-z0-9.+-]+")
"""A media type (``text/html``, ``application/json``): a convention, not something a result told."""
_VCS_PREFIXES = ("refs/remotes/origin/", "refs/remotes/", "refs/heads/", "refs/tags/", "origin/", "upstream/")
"""Git's own prefixes: ``origin/`` + a branch is the branch, which must be a term on its own."""


def terms(text: str) -> set[str]:
    """The terms of a text: maximal runs of ``[A-Za-z0-9_./:-]``, stripped of leading and
    trailing ``. / : -``, 8 to 200 characters long, holding a digit, ``_``, ``/``, ``.``,
    ``:`` or a lowercase letter followed by an uppercase one; not a lint directive, and
    not headed (before the first ``.``) by a standard-library module or a language's
    everyday package name (``fmt.Errorf``, ``np.array``), and not a convention
    (``_conventional``: ``encoding/json``, ``text/html``, ``origin/main``)."""
    out = set()
    for run in _RUN.findall(text):
        if run[0] in _EDGE or run[-1] in _EDGE:
            run = run.strip(_EDGE)
        if not _plain(run) or _conventional(run):
            continue
        rest = _without_vcs_prefix(run)
        if rest is not run and (not _plain(rest) or _conventional(rest)):
            continue  # ``origin/main``: git's prefix before what is no term by itself
        out.add(rest)
    return out


def _plain(run: str) -> bool:
    """A stripped run is a term by its characters: 8 to 200 long, with a digit, ``_ / . :``
    or a camel hump; not a lint directive nor headed by a language's own module."""
    if not MIN_LEN <= len(run) <= MAX_LEN:
        return False
    # letters and hyphens only: a term only with a lowercase letter before an uppercase
    # one (a word in lower case or capitalised has none; checked without a search)
    if run.replace("-", "").isalpha() and (run[1:].islower() or run.isupper() or _CAMEL.search(run) is None):
        return False
    return not (run.startswith(_LINT) or run.partition(".")[0] in _LANGUAGE)


INSTRUCTION_FILES = frozenset("CLAUDE.md CLAUDE.local.md AGENTS.md GEMINI.md .cursorrules copilot-instructions.md".split())
"""The files an agent runs with in its system prompt."""
_KNOWN_FILES = frozenset(
    "CLAUDE.md CLAUDE.local.md AGENTS.md GEMINI.md README.md CHANGELOG.md CONTRIBUTING.md .cursorrules "
    "copilot-instructions.md package.json pyproject.toml requirements.txt tsconfig.json Cargo.toml setup.py "
    "docker-compose.yml .gitignore .golangci.yml .golangci.yaml mise.toml Makefile.toml settings.json "
    "settings.local.json".split())
"""Files an agent knows by convention: its own instructions file (CLAUDE.md, AGENTS.md,
which the agent reads before the log starts) and a project's usual manifests."""


_CONVENTIONS = frozenset(
    "main/master master/main origin/HEAD user.name user.email user.signingkey core.editor core.autocrlf "
    "core.hooksPath core.bare init.defaultBranch commit.gpgsign tag.gpgsign gpg.format push.default "
    "push.autoSetupRemote pull.rebase merge.ff remote.origin.url remote.origin.fetch credential.helper".split())
"""Spellings every git user writes: the default branch either way, git's own config keys
(``git config user.email``)."""
_PLACEHOLDER = re.compile(r"(?:test|tests|example|foo|bar|baz|sample|dummy|tmp|temp|my|file)[\w-]{0,6}"
                          r"\.(?:com|org|net|io|txt|json|log|csv|md|yaml|yml|go|py|js|ts|sh)")
"""A placeholder file or domain (``test.txt``, ``example.com``): what every test writes."""


def _conventional(run: str) -> bool:
    """A name a language, a protocol or the agent's own setup gives, not one a result
    told: a standard library's import path (``encoding/json``), a media type
    (``text/html``), an instructions file or a usual manifest (``CLAUDE.md``,
    ``package.json``) named bare or under a directory."""
    return (run.partition(".")[0] in _GO_STD or _MIME.fullmatch(run) is not None
            or run.rsplit("/", 1)[-1] in _KNOWN_FILES or _PLACEHOLDER.fullmatch(run) is not None
            or run in _CONVENTIONS)


_WEAK = re.compile(r"[a-z]{2,}(?:[A-Z][a-z]+|[A-Z]{2,4})|[a-z]{1,4}(?:\.[A-Z][a-z]+(?:[A-Z][a-z]+)?)+"
                   r"|[a-z]{1,8}(?:\.[A-Z][a-z]+)+|[a-z]{2,}_[a-z]{2,}|[A-Z][a-z]+(?:[A-Z][a-z]+|[A-Z]{2,4})"
                   r"|[a-z]+/[a-z]+"
                   r"|(?:utils?|helpers?|common|types|index|config|constants|errors|models?|handlers?)"
                   r"\.[a-z]{1,4}")
"""A term that says little on its own: a two-word name (``shadowBranch``, ``sessionID``,
``SessionID``, ``created_at``, ``MergeBase``), a method on a short receiver (``sb.String``,
``repo.Worktree``, ``current.Parent``, ``worktree.Status``), two words joined by a slash in prose
(``staging/committing``), a file every project has (``utils.go``): an agent writes such
names by habit, or from an API it knows, not only from a result."""
WEAK_ALONE = 3
"""A reference of fewer weak terms than this, and nothing else, needs the reply to copy a
line of the message it is charged to (``SUPPORT_LINE``)."""
SUPPORT_LINE = 24
"""How long a line the reply and the charged message share must be to show a copy."""


def weak(term: str) -> bool:
    """Whether ``term`` is weak evidence alone (``_WEAK``)."""
    return _WEAK.fullmatch(term) is not None


def _without_vcs_prefix(run: str) -> str:
    """``origin/feat_12`` is the branch ``feat_12``: the term a kept message may hold."""
    for prefix in _VCS_PREFIXES:
        if run.startswith(prefix) and len(run) > len(prefix):
            return run[len(prefix):]
    return run


_TEST_NAME = re.compile(r"^(?P<dir>.*?/)?(?:test_(?P<a>[^/]+)|(?P<b>[^/]+?)(?:_test|\.test|\.spec|Test|Tests))"
                        r"(?P<ext>\.[A-Za-z0-9]+)$")


def derived_from(term: str) -> str:
    """The name ``term`` is formed from by a language's naming rule for tests
    (``explain_test.go`` from ``explain.go``, ``test_cli.py`` from ``cli.py``,
    ``app.spec.ts`` from ``app.ts``, ``FooTest.java`` from ``Foo.java``), or "": an agent
    that sees the one writes the other without being told."""
    m = _TEST_NAME.match(term)
    if m is None:
        return ""
    base = f"{m.group('dir') or ''}{m.group('a') or m.group('b')}{m.group('ext')}"
    return base if len(base) >= MIN_LEN and base != term else ""


_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_CAMEL_WORDS = re.compile(r"[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")


def renamed(term: str) -> tuple[str, ...]:
    """The same name by a language's naming rule: ``files_touched`` as a Go or Java field
    (``FilesTouched``, ``filesTouched``), and ``FilesTouched`` as its JSON or Python
    spelling (``files_touched``). An agent that sees one writes the other."""
    if _SNAKE.fullmatch(term):
        words = term.split("_")
        pascal = "".join(w[:1].upper() + w[1:] for w in words)
        return (pascal, pascal[:1].lower() + pascal[1:])
    if _CAMEL_WORDS.fullmatch(term) and not term.isupper():
        return (re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", term).lower(),)
    return ()


def other_forms(term: str) -> tuple[str, ...]:
    """Forms of ``term`` that, in sight, tell the agent the same thing: the name a test
    file is formed from (``derived_from``), the name by another naming rule (``renamed``:
    ``files_touched`` for ``FilesTouched``), and the path relative to a root it lies under
    (``repo/src/app/main.py`` is in sight as ``src/app/main.py`` or ``app/main.py``: a
    tail that keeps a directory, 8 characters or more)."""
    out = []
    base = derived_from(term)
    if base:
        out.append(base)
    out += [f for f in renamed(term) if len(f) >= MIN_LEN]
    parts = term.split("/")
    for k in range(1, len(parts) - 1):
        tail = "/".join(parts[k:])
        if len(tail) >= MIN_LEN:
            out.append(tail)
    return tuple(out)


def _term_pieces(term: str, out: set[str]) -> None:
    bounds = [0]
    for m in _SEPARATORS.finditer(term):
        bounds += [m.start(), m.end()]
    bounds.append(len(term))
    spans = list(zip(bounds[::2], bounds[1::2]))  # each component's (start, end)
    for i, (start, _) in enumerate(spans):
        for _, end in spans[i:]:
            if end - start >= MIN_LEN:
                piece = term[start:end].strip(_EDGE)
                if len(piece) >= MIN_LEN:
                    out.add(piece)


def pieces(text: str) -> set[str]:
    """The pieces of a text: of each of its terms, the term itself and every substring
    from the start of one component (split at ``. / :``) to the end of the same or a
    later one, stripped as terms are, at least 8 characters long."""
    return _pieces_of_terms(terms(text))


def _pieces_of_terms(found: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for term in found:
        if _SEPARATORS.search(term) is None:
            out.add(term)  # one component: the term is its only piece
        else:
            _term_pieces(term, out)
    return out


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def message_terms(m: Message, by_text: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The terms of a message's text, worked out once per message (kept on it, as token
    counts are): a sweep of many settings over one run reads each text once. With
    ``by_text``, a text met before (a file read twice) is not scanned again."""
    got = m._terms
    if got is None:
        text = message_text(m)
        got = by_text.get(text) if by_text is not None else None
        if got is None:
            got = frozenset(terms(text))
            if by_text is not None:
                by_text[text] = got
        object.__setattr__(m, "_terms", got)
    return got




def message_text(m: Message) -> str:
    """A message's text for the losses: its text content, and for an assistant message
    every string value in its tool calls' arguments (parsed as JSON when they are JSON,
    else the raw string; keys left out)."""
    parts = [m.content]
    if m.role == "assistant":
        for call in m.tool_calls:
            try:
                parsed = json.loads(call.arguments)
            except (ValueError, RecursionError):
                parts.append(call.arguments)
                continue
            parts.extend(_strings(parsed))
            at = _line_of(parsed)
            if at:
                parts.append(at)
    return "\n".join(parts)


_LINE_KEYS = ("offset", "line", "line_number", "lineno", "start_line", "view_range", "line_start")


def _line_of(args: Any) -> str:
    """A call that opens a file at a line (``{"file_path": ..., "offset": 774}``) as the
    ``file:line`` a search result shows (``explain.go:774``): a number that only a
    cleared result held is a term like any name."""
    path = path_in(args)
    if not path:
        return ""
    for key in _LINE_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, int) and not isinstance(value, bool) and value > 1:
            return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{value}"
    return ""


_IMPORT = re.compile(r'"((?:[a-z0-9-]+\.)+[a-z]{2,}/[\w.~/-]+)"')
"""A Go import path in quotes (a domain, then the path)."""


def library_names(messages: Iterable[Message]) -> frozenset[str]:
    """The third-party packages a run's Go code imports, and the names they qualify: an
    agent writes ``plumbing.NewBranchReferenceName`` from go-git's API, not from a result.
    The project is the module (``host/org/repo``) whose packages lie where the agent's
    calls read and write files (``cmd/entire/cli/paths`` under a path it touched), else
    the one most import paths fall under; every other module is a library. Each library
    path, and its package name (the last segment, a version segment and a ``go-`` prefix
    dropped), are returned."""
    messages = list(messages)
    paths: set[str] = set()
    for m in messages:
        if '"' in m.content and "/" in m.content:
            paths.update(_IMPORT.findall(m.content))
    if not paths:
        return frozenset()
    touched = "\n".join(p for m in messages for c in m.tool_calls
                        if (p := path_of(c.arguments)))
    modules: dict[str, set[str]] = {}
    for p in paths:
        modules.setdefault("/".join(p.split("/")[:3]), set()).add(p)

    def mine(module: str) -> int:
        """How many of the module's packages lie where the agent touched files: the
        package's folder, or its parent, of two segments or more, in a touched path."""
        count = 0
        for p in modules[module]:
            tail = p[len(module):]
            for frag in (tail, tail.rsplit("/", 1)[0]):
                if frag.count("/") >= 2 and f"{frag}/" in touched:
                    count += 1
                    break
        return count

    project = max(modules, key=lambda k: (mine(k), len(modules[k]), k))
    out: set[str] = set()
    for module, found in modules.items():
        if module == project:
            continue
        for p in found:
            out.add(p)
            parts = [x for x in p.split("/") if not re.fullmatch(r"v\d+", x)]
            name = parts[-1].removeprefix("go-")
            if name:
                out.add(name)
    return frozenset(out)

