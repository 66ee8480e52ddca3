"""The one redactor: every text that leaves the process goes through it.

Reports (text, JSON, SARIF) are redacted as data (:func:`report`, :func:`scrub`), harden's
files, error messages and logs as text (:func:`text`). What is removed:

- URL userinfo (``https://user:PASS@host`` keeps the user, ``https://TOKEN@host`` keeps
  nothing) and secret-named query parameters (``?token=``, ``&sig=``, ``?key=``...);
- the value after a secret-named flag, in any spelling (``--token VALUE``,
  ``--api-key=VALUE``, ``--API_KEY VALUE``, ``"--password", "VALUE"``) and after a
  secret-named variable or header (``GITHUB_TOKEN=...``, ``X-Api-Key: ...``,
  ``Authorization: Bearer ...``), and in data: a secret-named key's value, the element
  after a secret-named flag in a list, ``{"name": "API_KEY", "value": ...}``;
- known token shapes wherever they stand (GitHub, AWS access key ids, Anthropic and
  OpenAI keys, Slack, Google API keys, JWTs, PEM private keys).

A reference (``$VAR``, ``${VAR}``) is kept: it names a secret without holding it. Text is
also made representable: a lone surrogate (a non-UTF-8 file name decoded with
``surrogateescape``) becomes the visible ``\\xNN`` of its byte, so no output format fails
to encode it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from collections.abc import Mapping
from typing import Any, TypeVar

MASK = "REDACTED"  # a plain word: safe in a shell script, YAML, JSON, a URL

_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "apikey",
        "accesskey",
        "privatekey",
        "secretkey",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
        "bearer",
        "sessionid",
        "signature",
        "clientsecret",
    }
)
_ENDINGS = ("token", "secret", "password", "passwd", "apikey", "accesskey", "secretkey")
# A name ending so points at a secret without being one (--token-file, TOKEN_URL).
_NOT_VALUE = frozenset({"file", "path", "dir", "env", "name", "url", "length", "len", "type"})
_QUERY_ONLY = frozenset(
    {"key", "sig", "code", "pwd", "session", "access_token", "x-amz-signature", "x-amz-credential"}
)


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a flag, variable, header or key name says its value is a secret."""
    segs = [s for s in re.split(r"[^a-z0-9]+", _split_camel(name).lower()) if s]
    if not segs or segs[-1] in _NOT_VALUE:
        return False
    for i, s in enumerate(segs):
        if s in _WORDS or s.endswith(_ENDINGS):
            return True
        if i + 1 < len(segs) and s + segs[i + 1] in _WORDS:
            return True
    return False


def _split_camel(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)


def _is_reference(value: str) -> bool:
    return (
        not value
        or value == MASK
        or value.startswith("$")
        or value.startswith("-")
        or bool(re.fullmatch(r"<[^<>]*>|\*+", value))
    )


_SHAPES = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"
    r"|\bsk-ant-[A-Za-z0-9_-]{16,}"
    r"|\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    re.DOTALL,
)
# (the userinfo ends at the last ``@`` before the path: a password may hold an unescaped one)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/\s?#\"'<>]+)@")
# (a value ends before a colon that ends a word: ``{url}: not found`` keeps its colon)
_QUERY = re.compile(
    r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.%-]+)=(?P<val>(?:[^&#\s\"'<>:]|:(?!\s|$))*)"
)
# (a value stops at a backslash too: an escaped control character in quoted text)
_VALUE = re.compile(
    r"(?P<q2>[\"']?)(?P<val>(?:(?:Bearer|Basic|Token|token|bearer)\s+)?[^\s\"'`,;&)\]}\x00\\]+)"
)
# A name and its separator only: the value is matched after a secret name, so a name that
# is not secret never swallows the next one as its value (``-x --token V``, ``a=TOKEN=V``).
# A flag starts a word: the ``-credentials`` inside ``~/.git-credentials`` is part of a path.
_FLAG = re.compile(r"(?<![^\s\"'\[(,=])(?P<name>--?[A-Za-z][A-Za-z0-9_.-]*)[\"']?(?:=|\s*,\s*|\s+)")
# (never across a line end: ``KEY:`` with no value ends its line, the next line's name is
# not its value)
# (nor is a URL's user name, ``https://password:REDACTED@host``: the userinfo is masked as a URL)
# (nor is ``tiktoken==0.11.0``: a name then ``==`` is a requirement's pin, not an assignment)
_ASSIGN = re.compile(r"(?<!://)(?P<name>\b[A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*(?:=(?!=)|:)[ \t]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHAPE_HINT = re.compile(r"-----BEGIN|gh[pousr]_|github_pat_|A[KSGIRNP][A-Z]A|sk-|xox|AIza|eyJ")
# every secret name holds one of these (checked before the costlier patterns run)
_NAME_HINT = re.compile(r"(?i)tok|secret|pass|pwd|key|auth|cookie|cred|bearer|session|sig|code")


def mask_value(value: object = None) -> str:
    """What a known secret value is shown as, in every output: :data:`MASK`, whatever the
    value (never a part, a length or a hint of it). Every masker outside this module (a
    build step's secret spans, a command's flag values, a variable's value, the agent's
    output) masks through this, so a report, a harden file and a probe show one mask."""
    return MASK


def text(s: str) -> str:
    """``s`` with every secret it holds replaced by :data:`MASK`."""
    return _text(s) if len(s) < 4096 else _redact(s)


@functools.lru_cache(maxsize=32768)
def _text(s: str) -> str:  # reports repeat titles, fixes and paths: each is redacted once
    return _redact(s)


def _redact(s: str) -> str:
    if _SURROGATE.search(s):
        s = _SURROGATE.sub(_surrogate, s)
    if _SHAPE_HINT.search(s):
        s = _SHAPES.sub(MASK, s)
    if "@" in s and "://" in s:
        s = _USERINFO.sub(_userinfo, s)
    if not _NAME_HINT.search(s):
        return s
    if "=" in s and ("?" in s or "&" in s):
        s = _QUERY.sub(_query, s)
    if "-" in s:
        s = _named(_FLAG, s)
    if "=" in s or ":" in s:
        s = _named(_ASSIGN, s)
    return s


def url(s: str) -> str:
    """The URL part of :func:`text`, alone: each URL's userinfo and secret-named query values
    masked the same way (what the lock files, index and resolver messages and install facts
    show of a URL). A URL already masked (``***`` by an older agentguard) is left as it is."""
    if "@" in s and "://" in s:
        s = _USERINFO.sub(_userinfo, s)
    if "=" in s and ("?" in s or "&" in s) and _NAME_HINT.search(s):
        s = _QUERY.sub(_query, s)
    return s


def quote(s: str, limit: int = 80) -> str:
    """A short, redacted, printable quotation of untrusted text (for a reason)."""
    s = text(s)
    if len(s) > limit:
        s = s[:limit] + "..."
    return repr(s)


def _surrogate(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def _userinfo(m: re.Match[str]) -> str:
    info = m.group("info")
    user, colon, rest = info.partition(":")
    secret = rest if colon else user
    if secret == MASK or secret.startswith("$") or re.fullmatch(r"\*+", secret):
        return m.group(0)  # already masked (``***`` in a lock an older version wrote) or a $VAR
    kept = f"{user}:{MASK}" if colon and user else MASK
    return f"{m.group('scheme')}{kept}@"


def _query(m: re.Match[str]) -> str:
    name = m.group("name")
    val = m.group("val")
    if val and not _is_reference(val) and (is_secret_name(name) or name.lower() in _QUERY_ONLY):
        return f"{m.group('lead')}{name}={MASK}"
    return m.group(0)


def _named(names: re.Pattern[str], s: str) -> str:
    """``s`` with the value after each secret-named flag, variable or header masked."""
    out: list[str] = []
    last = 0
    for m in names.finditer(s):
        if m.start() < last or not is_secret_name(m.group("name").lstrip("-")):
            continue
        v = _VALUE.match(s, m.end())
        if v is None or _is_reference(v.group("val")):
            continue
        out += [s[last : v.start("val")], MASK]
        last = v.end("val")
    if not out:
        return s
    out.append(s[last:])
    return "".join(out)


# -- data ------------------------------------------------------------------------------

T = TypeVar("T")


def scrub(value: T, key: str | None = None) -> T:
    """``value`` (JSON-like data, frozen dataclasses, tuples) with every secret replaced."""
    return _scrub(value, key)  # type: ignore[no-any-return]


def _scrub(value: Any, key: str | None) -> Any:
    """(Plain dicts, lists and tuples in which nothing is redacted come back as the same
    object: a report is about 50,000 values, nearly all of them clean.)"""
    kind = type(value)
    if kind is str:
        if key is not None and is_secret_name(key) and not _is_reference(value):
            return MASK
        return text(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return _scrub_dict(value)
    if kind is list or kind is tuple:
        return _scrub_sequence(value)
    if kind in _DATACLASS_FIELDS:
        return _scrub_dataclass(value, _DATACLASS_FIELDS[kind])
    return _scrub_other(value, key)


def _scrub_other(value: Any, key: str | None) -> Any:
    """Everything but the exact built-in containers: str and int subclasses, enums, other
    mappings and sequences, dataclasses seen for the first time."""
    if isinstance(value, str):
        if key is not None and is_secret_name(key) and not _is_reference(value):
            return MASK
        return text(value)
    if isinstance(value, (bool, int, float, enum.Enum)) or value is None:
        return value
    if isinstance(value, Mapping):
        out = _scrub_dict(value)
        return dict(out) if out is value else out
    if isinstance(value, (list, tuple)):
        items = _scrub_sequence(value)
        if items is value:
            items = list(value)
        return tuple(items) if isinstance(value, tuple) else list(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value) if f.init)
        _DATACLASS_FIELDS[type(value)] = names
        return _scrub_dataclass(value, names)
    return value


_PLAIN = frozenset({int, float, bool, type(None)})
# a dataclass type -> the names of its init fields (what ``dataclasses.replace`` takes)
_DATACLASS_FIELDS: dict[type, tuple[str, ...]] = {}


def _scrub_dict(value: Mapping[Any, Any]) -> Any:
    named = value.get("name") if "value" in value else None
    secret_pair = isinstance(named, str) and is_secret_name(named)
    out = {}
    changed = False
    for k, v in value.items():
        sk = text(k) if isinstance(k, str) else k
        kind = type(v)
        if kind in _PLAIN:
            new: Any = v
        elif secret_pair and k == "value" and isinstance(v, str) and not _is_reference(v):
            new = MASK
        elif kind is str and not (isinstance(k, str) and is_secret_name(k)):
            new = text(v)
        else:
            new = _scrub(v, k if isinstance(k, str) else None)
        out[sk] = new
        changed = changed or _changed(new, v) or _changed(sk, k)
    return out if changed else value


def _changed(new: Any, old: Any) -> bool:
    """Whether a scrubbed value differs from the original: for plain text, by equality (the
    text of each string is cached, so an equal one may come back as another object); for
    anything else, being another object (another type, say)."""
    return new is not old and (type(old) is not str or new != old)


def _scrub_sequence(value: list[Any] | tuple[Any, ...]) -> Any:
    items = []
    changed = False
    after_flag = False  # the item before is a secret-named flag: this one is its value
    for v in value:
        if isinstance(v, str):
            new = MASK if after_flag and not _is_reference(v) else text(v)
            after_flag = v.startswith("-") and "=" not in v and is_secret_name(v.lstrip("-"))
        else:
            new = v if type(v) in _PLAIN else _scrub(v, None)
            after_flag = False
        changed = changed or _changed(new, v)
        items.append(new)
    if not changed:
        return value
    return tuple(items) if isinstance(value, tuple) else items


def _scrub_dataclass(value: Any, names: tuple[str, ...]) -> Any:
    changes: dict[str, Any] = {}
    named, held = getattr(value, "name", None), getattr(value, "value", None)
    if (
        isinstance(named, str)
        and isinstance(held, str)
        and is_secret_name(named)
        and not _is_reference(held)
    ):
        changes["value"] = MASK
    for name in names:
        if name in changes:
            continue
        old = getattr(value, name)
        kind = type(old)
        if kind in _PLAIN:
            continue
        new = text(old) if kind is str else _scrub(old, None)
        if new is not old and new != old:
            changes[name] = new
    return dataclasses.replace(value, **changes) if changes else value
