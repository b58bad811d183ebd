"""A small FileCheck: match CHECK lines from a golden file against produced text.

Directives (``PREFIX`` is ``CHECK`` unless another prefix is given):

* ``PREFIX: pat``        ``pat`` matches somewhere after the previous match.
* ``PREFIX-NEXT: pat``   ... on the line right after the previous match's line.
* ``PREFIX-SAME: pat``   ... on the same line as the previous match, after it.
* ``PREFIX-NOT: pat``    ``pat`` does not occur between the previous match and the next
                         positive match (or the end of the text).
* ``PREFIX-LABEL: pat``  like ``PREFIX:`` and, in addition, the text is split at labels:
                         every other directive is matched only inside its label's section
                         (from the label's line to the next label's line).

Patterns are literal text except ``{{regex}}``, ``[[NAME:regex]]`` (match and bind NAME)
and ``[[NAME]]`` (the text bound earlier).  Runs of spaces match any horizontal
whitespace.  A check file with no positive directive fails: a golden test that cannot
fail is not a test.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("LABEL", "NEXT", "SAME", "NOT")


class FileCheckError(AssertionError):
    pass


@dataclass
class Check:
    kind: str          # "", "LABEL", "NEXT", "SAME", "NOT"
    pattern: str
    line: int          # line number in the check file (1-based)

    def __str__(self):
        tag = "CHECK" + (f"-{self.kind}" if self.kind else "")
        return f"line {self.line}: {tag}: {self.pattern}"


def parse_checks(text: str, prefix: str = "CHECK") -> list[Check]:
    """Every ``PREFIX[-KIND]:`` directive of ``text`` in order."""
    rx = re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(prefix)}(?:-({'|'.join(KINDS)}))?:(.*)$")
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        m = rx.search(line)
        if m:
            out.append(Check(m.group(1) or "", m.group(2).strip(), no))
    return out


_TOKEN = re.compile(r"\{\{(.*?)\}\}|\[\[([A-Za-z_][A-Za-z0-9_]*)(?::(.*?))?\]\]")


def compile_pattern(pattern: str, variables: dict) -> tuple[re.Pattern, list[tuple[str, str]]]:
    """A regex for ``pattern`` and the [(group, variable)] bindings it defines."""
    parts, binds, pos = [], [], 0
    for m in _TOKEN.finditer(pattern):
        parts.append(_literal(pattern[pos:m.start()]))
        regex, name, defn = m.group(1), m.group(2), m.group(3)
        if regex is not None:
            parts.append(f"(?:{regex})")
        elif defn is not None:
            group = f"v{len(binds)}_{name}"
            parts.append(f"(?P<{group}>{defn})")
            binds.append((group, name))
        else:
            if name not in variables:
                raise FileCheckError(f"undefined variable [[{name}]] in pattern {pattern!r}")
            parts.append(re.escape(variables[name]))
        pos = m.end()
    parts.append(_literal(pattern[pos:]))
    return re.compile("".join(parts), re.MULTILINE), binds


def _literal(text: str) -> str:
    return "[ \t]+".join(re.escape(chunk) for chunk in re.split(r"[ \t]+", text))


class _Matcher:
    def __init__(self, output: str, name: str):
        self.out = output
        self.name = name
        self.vars: dict[str, str] = {}
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", output)]

    def line_of(self, pos: int) -> int:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def line_span(self, line: int) -> tuple[int, int]:
        start = self.line_starts[line]
        end = self.out.find("\n", start)
        return start, len(self.out) if end < 0 else end

    def search(self, check: Check, start: int, end: int):
        rx, binds = compile_pattern(check.pattern, self.vars)
        m = rx.search(self.out, start, end)
        if m:
            for group, name in binds:
                self.vars[name] = m.group(group)
        return m

    def fail(self, check: Check, msg: str, pos: int):
        line = self.line_of(min(pos, max(len(self.out) - 1, 0)))
        lines = self.out.splitlines()
        excerpt = "\n".join(f"  {i + 1:4d} | {lines[i]}" for i in range(line, min(line + 6, len(lines))))
        raise FileCheckError(f"{self.name}:{check}\n{msg} (searching from output line {line + 1}):\n"
                             f"{excerpt}\n--- full output ---\n{self.out}")


def _sections(checks: list[Check], m: _Matcher):
    """Split at LABEL checks: [(checks, start, end)] with each label matched first."""
    labels = [i for i, c in enumerate(checks) if c.kind == "LABEL"]
    if not labels:
        return [(checks, 0, len(m.out))]
    bounds, pos = [], 0
    for i in labels:
        hit = m.search(checks[i], pos, len(m.out))
        if hit is None:
            m.fail(checks[i], "label not found", pos)
        bounds.append(m.line_span(m.line_of(hit.start()))[0])
        pos = hit.end()
    out = []
    if labels[0] > 0:
        out.append((checks[:labels[0]], 0, bounds[0]))
    for k, i in enumerate(labels):
        end = bounds[k + 1] if k + 1 < len(labels) else len(m.out)
        stop = labels[k + 1] if k + 1 < len(labels) else len(checks)
        out.append((checks[i:stop], bounds[k], end))
    return out


def _run_section(m: _Matcher, checks: list[Check], start: int, end: int) -> None:
    pos, last = start, None          # last: (match start, match end) of the previous positive
    nots: list[Check] = []
    for c in checks:
        if c.kind == "NOT":
            nots.append(c)
            continue
        if c.kind in ("NEXT", "SAME") and last is None:
            m.fail(c, f"CHECK-{c.kind} has no previous match", pos)
        if c.kind == "NEXT":
            line = m.line_of(last[0]) + 1
            if line >= len(m.line_starts):
                m.fail(c, "no next line", pos)
            s, e = m.line_span(line)
            hit = m.search(c, s, min(e, end))
        elif c.kind == "SAME":
            s, e = m.line_span(m.line_of(last[0]))
            hit = m.search(c, last[1], min(e, end))
        else:
            hit = m.search(c, pos, end)
        if hit is None:
            m.fail(c, "no match", pos)
        _check_nots(m, nots, pos, hit.start())
        nots = []
        last = (hit.start(), hit.end())
        pos = hit.end()
    _check_nots(m, nots, pos, end)


def _check_nots(m: _Matcher, nots, start, end) -> None:
    for c in nots:
        hit = m.search(c, start, end)
        if hit is not None:
            m.fail(c, f"excluded pattern found: {hit.group(0)!r}", hit.start())


def filecheck(output: str, check_text: str, prefix: str = "CHECK", name: str = "<checks>") -> int:
    """Match ``output`` against the ``prefix`` directives in ``check_text``; raise
    FileCheckError on the first failure.  Returns the number of directives checked."""
    checks = parse_checks(check_text, prefix)
    if not any(c.kind != "NOT" for c in checks):
        raise FileCheckError(f"{name}: no {prefix}: lines (a golden test needs at least one "
                             f"positive check)")
    m = _Matcher(output, name)
    for section, start, end in _sections(checks, m):
        _run_section(m, section, start, end)
    return len(checks)
