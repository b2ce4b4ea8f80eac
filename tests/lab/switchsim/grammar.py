# SPDX-License-Identifier: GPL-3.0-or-later
"""A small command-grammar matcher for IOS-like CLIs (used by the EOS model).

A rule pattern is a string:

    qos map dscp <dscp:int:0-63>+ to traffic-class <tc:int:0-7>
    random-detect ecn minimum-threshold <min:int:1-4294967295> <minu:enum:segments|bytes|kbytes|mbytes|milliseconds> ...
    [ forced ]                      optional group (may nest)
    <name:word>                     any token
    <name:dec:0-60:2>               decimal number, at most 2 decimal places
    <name:hms>                      hh:mm:ss
    <name:intf>                     interface name or range (the model validates it)
    <name:line>                     the rest of the line (free text)

Keywords and enum values accept unique prefixes (as EOS does); the matcher
records how far it got so the caller can print the vendor's error with the
token index.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Kw:
    word: str


@dataclass
class Param:
    name: str
    kind: str
    args: tuple = ()
    repeat: bool = False


@dataclass
class Opt:
    elems: list


def parse_pattern(text: str) -> list:
    tokens = re.findall(r"\[|\]|<[^>]+>\+?|[^\s\[\]]+", text)
    pos = 0

    def parse_seq(end: str | None) -> list:
        nonlocal pos
        out: list = []
        while pos < len(tokens):
            tok = tokens[pos]
            pos += 1
            if tok == "[":
                out.append(Opt(parse_seq("]")))
            elif tok == "]":
                if end != "]":
                    raise ValueError(f"unbalanced ] in {text!r}")
                return out
            elif tok.startswith("<"):
                repeat = tok.endswith("+")
                body = tok[1:-2] if repeat else tok[1:-1]
                parts = body.split(":")
                name, kind = parts[0], parts[1]
                args: tuple = ()
                if kind in ("int", "dec"):
                    lo, hi = parts[2].split("-") if len(parts) > 2 else ("0", str(2**32 - 1))
                    places = int(parts[3]) if len(parts) > 3 else 0
                    conv = float if kind == "dec" else int
                    args = (conv(lo), conv(hi), places)
                elif kind == "enum":
                    args = tuple(parts[2].split("|"))
                out.append(Param(name, kind, args, repeat))
            else:
                out.append(Kw(tok))
        if end is not None:
            raise ValueError(f"unbalanced [ in {text!r}")
        return out

    return parse_seq(None)


@dataclass
class Result:
    """Outcome of matching tokens against a set of rules."""

    ok: bool
    rule: Any = None
    bindings: dict = field(default_factory=dict)
    canon: list = field(default_factory=list)
    error: str = ""          # 'invalid' | 'incomplete' | 'ambiguous'
    pos: int = 0             # token index of the error
    partial: bool = False    # matched all tokens but the rule wanted more


_HMS = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2})$")
_DEC = re.compile(r"^\d+(\.\d+)?$")


def _match_value(p: Param, tok: str):
    """Return (canonical, value) or None."""
    if p.kind == "word" or p.kind == "intf":
        return tok, tok
    if p.kind == "int":
        if not tok.isdigit():
            return None
        v = int(tok)
        lo, hi, _unused = p.args
        if lo <= v <= hi:
            return str(v), v
        return None
    if p.kind == "dec":
        if not _DEC.match(tok):
            return None
        lo, hi, places = p.args
        if "." in tok and len(tok.split(".")[1]) > places:
            return None
        v = float(tok)
        if lo <= v <= hi:
            return tok, v
        return None
    if p.kind == "hms":
        m = _HMS.match(tok)
        if not m:
            return None
        h, mi, s = (int(x) for x in m.groups())
        if mi > 59 or s > 59:
            return None
        return tok, h * 3600 + mi * 60 + s
    raise ValueError(p.kind)


class _Matcher:
    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.low = [t.lower() for t in tokens]
        self.far = -1
        self.far_eoi = False
        self.ambiguous_at = -1
        self.results: list = []   # (end, bindings, canon, partial)

    def note_fail(self, pos: int, eoi: bool) -> None:
        if pos > self.far:
            self.far, self.far_eoi = pos, eoi
        elif pos == self.far and eoi:
            self.far_eoi = True

    def run(self, elems: list, allow_partial: bool) -> None:
        self._seq(elems, 0, 0, {}, [], allow_partial)

    def _seq(self, elems, ei, ti, b, canon, allow_partial) -> None:
        toks = self.tokens
        if ei == len(elems):
            if ti == len(toks):
                self.results.append((ti, dict(b), list(canon), False))
            else:
                self.note_fail(ti, False)
            return
        if ti == len(toks):
            # input exhausted but pattern wants more (optional groups may be skipped)
            if all(isinstance(e, Opt) for e in elems[ei:]):
                self.results.append((ti, dict(b), list(canon), False))
                return
            if allow_partial:
                self.results.append((ti, dict(b), list(canon), True))
            self.note_fail(ti, True)
            return
        e = elems[ei]
        if isinstance(e, Opt):
            # try with the group, then without
            self._seq(list(e.elems) + list(elems[ei + 1:]), 0, ti, b, canon, allow_partial)
            self._seq(elems, ei + 1, ti, b, canon, allow_partial)
            return
        tok = self.low[ti]
        if isinstance(e, Kw):
            if tok == e.word:
                self._seq(elems, ei + 1, ti + 1, b, canon + [e.word], allow_partial)
            elif e.word.startswith(tok):
                self._seq(elems, ei + 1, ti + 1, b, canon + [e.word], allow_partial)
            else:
                self.note_fail(ti, False)
            return
        if isinstance(e, Param):
            if e.kind == "line":
                rest = " ".join(toks[ti:])
                nb = dict(b)
                nb[e.name] = rest
                self._seq(elems, ei + 1, len(toks), nb, canon + [rest], allow_partial)
                return
            if e.kind == "enum":
                exact = [c for c in e.args if c == tok]
                cands = exact or [c for c in e.args if c.startswith(tok)]
                if len(cands) != 1:
                    if len(cands) > 1:
                        self.ambiguous_at = max(self.ambiguous_at, ti)
                    self.note_fail(ti, False)
                    return
                val = cands[0]
                nb = dict(b)
                nb[e.name] = val
                self._seq(elems, ei + 1, ti + 1, nb, canon + [val], allow_partial)
                return
            mv = _match_value(e, toks[ti])
            if mv is None:
                self.note_fail(ti, False)
                return
            c, v = mv
            nb = dict(b)
            if e.repeat:
                vals = [v]
                cs = [c]
                j = ti + 1
                # greedy: take as many as match, then back off
                while j < len(toks):
                    mv2 = _match_value(e, toks[j])
                    if mv2 is None:
                        break
                    cs.append(mv2[0])
                    vals.append(mv2[1])
                    j += 1
                for k in range(len(vals), 0, -1):
                    nb2 = dict(b)
                    nb2[e.name] = vals[:k]
                    self._seq(elems, ei + 1, ti + k, nb2, canon + cs[:k], allow_partial)
                return
            nb[e.name] = v
            self._seq(elems, ei + 1, ti + 1, nb, canon + [c], allow_partial)
            return
        raise TypeError(e)


def match(rules: list, tokens: list[str], allow_partial: bool = False) -> Result:
    """Match tokens against rules (objects with a parsed ``elems`` attribute).

    Exact keyword spellings win over abbreviations; two different complete
    expansions of an abbreviation are ambiguous.
    """
    if not tokens:
        return Result(False, error="incomplete", pos=0)
    far, far_eoi, amb = -1, False, -1
    full: list = []
    partial: list = []
    others: list = []   # incomplete candidates, only for the ambiguity check
    for rule in rules:
        m = _Matcher(tokens)
        m.run(rule.elems, True)
        for _end, b, canon, part in m.results:
            if part and not allow_partial:
                others.append((rule, b, canon))
            else:
                (partial if part else full).append((rule, b, canon))
        if m.far > far:
            far, far_eoi = m.far, m.far_eoi
        elif m.far == far and m.far_eoi:
            far_eoi = True
        amb = max(amb, m.ambiguous_at)
    cands = full or partial
    if cands:
        # prefer the candidate whose canonical spelling equals the input most often
        def exactness(c):
            canon = c[2]
            return sum(1 for a, t in zip(canon, tokens) if a.lower() == t.lower())
        best = max(exactness(c) for c in cands)
        top = [c for c in cands if exactness(c) == best]
        canons = {" ".join(c[2]) for c in top}
        if len(canons) > 1:
            # find first differing token
            lists = [c[2] for c in top]
            pos = 0
            while pos < len(tokens) and all(len(lst) > pos and lst[pos] == lists[0][pos] for lst in lists):
                pos += 1
            return Result(False, error="ambiguous", pos=min(pos, len(tokens) - 1))
        rule, b, canon = top[0]
        # an abbreviated keyword that also expands differently in another candidate
        # (complete or not) is ambiguous: EOS does not prefer one of them
        for k, tok in enumerate(tokens):
            if k < len(canon) and canon[k].lower() != tok.lower():
                for other in full + partial + others:
                    oc = other[2]
                    if k < len(oc) and oc[k].lower() != tok.lower() and oc[k] != canon[k] \
                            and oc[:k] == canon[:k]:
                        return Result(False, error="ambiguous", pos=k)
        return Result(True, rule=rule, bindings=b, canon=canon, partial=not full)
    if amb >= 0 and amb >= far:
        return Result(False, error="ambiguous", pos=amb)
    if far_eoi and far >= len(tokens):
        return Result(False, error="incomplete", pos=len(tokens) - 1)
    return Result(False, error="invalid", pos=max(far, 0))
