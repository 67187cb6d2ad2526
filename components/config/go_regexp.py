"""Whether Go's regexp package (RE2 syntax) compiles a pattern: the Determined master compiles
log policy patterns with `regexp.Compile` (master/internal/logpattern/logpattern.go at
v0.38.1, read 2026-11), and a pattern it cannot compile fails every task it is matched on.

Python's `re` is no judge of that: it takes lookarounds and backreferences (RE2 has neither)
and refuses \\z and \\p{Lu} (RE2 has both). So this is a port of the syntax rules of Go's
regexp/syntax parser (Perl flags, as regexp.Compile uses), the one the master is built with:
Go 1.22 (0.38.1's go.mod says `go 1.22.0`; its CI downloads go1.22.8).
Source: https://github.com/golang/go/blob/go1.22.8/src/regexp/syntax/parse.go and
https://github.com/google/re2/wiki/Syntax (read 2026-11), checked against Go's own parser on
the cases in tests/config/test_go_syntax_and_labels.py. Go 1.22 differs from the Go 1.19 parser
those cases were run against only in taking `(?<name>re)` (Go 1.22 release notes) and in
its Unicode tables (15.0.0 since Go 1.21, release notes): both are written in below.

The size limits Go puts on a parse tree (ErrNestingDepth past a height of 1000, ErrLarge
past about 3.3 million instructions) are estimated on this parser's own tree, which is close
to Go's but not equal: a pattern within a few levels or percent of those limits may be judged
differently.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Go's unicode.Categories (Go 1.22; "Cn" and "LC" only came in Go 1.25).
GO_CATEGORIES = _names(
    """C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z
    Zl Zp Zs"""
)
# Go's unicode.Scripts: Unicode 13.0.0's (Go 1.19's tables, read 2026-11) and the scripts
# Unicode 14.0.0 (Cypro_Minoan, Old_Uyghur, Tangsa, Toto, Vithkuqi) and 15.0.0 (Kawi,
# Nag_Mundari) added (https://www.unicode.org/versions/Unicode14.0.0/,
# https://www.unicode.org/versions/Unicode15.0.0/, read 2026-11).
GO_SCRIPTS = _names(
    """Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak
    Bengali Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian
    Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cyrillic
    Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic
    Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Han Hangul
    Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited
    Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kayah_Li
    Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A
    Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen
    Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs
    Miao Modi Mongolian Mro Multani Myanmar Nabataean Nandinagari New_Tai_Lue Newa Nko Nushu
    Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian Old_Permic
    Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Oriya Osage Osmanya Pahawh_Hmong
    Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra
    Sharada Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese
    Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangut Telugu
    Thaana Thai Tibetan Tifinagh Tirhuta Ugaritic Vai Wancho Warang_Citi Yezidi Yi
    Zanabazar_Square Cypro_Minoan Old_Uyghur Tangsa Toto Vithkuqi Kawi Nag_Mundari"""
)
# [[:name:]] classes (and [[:^name:]]), regexp/syntax perl_groups.go.
POSIX_CLASSES = _names("alnum alpha ascii blank cntrl digit graph lower print punct space upper word xdigit")
MAX_REPEAT = 1000  # x{n,m}: n, m at most 1000, and nested counts multiply to at most 1000
MAX_HEIGHT = 1000  # ErrNestingDepth
MAX_SIZE = (128 << 20) // 40  # ErrLarge: 128 MB of 40-byte instructions
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
_C_ESCAPES = "afnrtv"
_PERL_CLASSES = "dDsSwW"


class GoRegexpError(ValueError):
    """Why Go would not compile the pattern, and where (a 0-based character index)."""

    def __init__(self, why: str, at: int) -> None:
        super().__init__(why)
        self.why, self.at = why, at


@dataclass
class _Node:
    kind: str  # leaf, concat, alternate, capture, star, plus, quest, repeat
    subs: list[_Node] = field(default_factory=list)
    low: int = 0
    high: int = 0  # -1: no upper bound
    runes: int = 1  # for a leaf: literal runes counted by Go's size estimate
    literal: bool = False  # a run of literal characters (Go keeps a run as one node)


def _leaf(runes: int = 1, literal: bool = False) -> _Node:
    return _Node("leaf", runes=runes, literal=literal)


def _add(items: list[_Node], node: _Node) -> None:
    """Append to a concatenation as Go does: runs of literals merge, and a group's own
    concatenation is spliced in."""
    if node.literal and items and items[-1].literal:
        items[-1] = _leaf(items[-1].runes + node.runes, literal=True)
    else:
        items.append(node)


def _octal(c: str) -> bool:
    return c != "" and c in _OCTAL


def _is_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def fail(self, why: str, at: int | None = None) -> GoRegexpError:
        return GoRegexpError(why, self.i if at is None else at)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def rest(self) -> str:
        return self.s[self.i :]

    # -- structure ---------------------------------------------------------------------
    def parse(self) -> _Node:
        node = self.alternation(top=True)
        if self.i < len(self.s):  # only a ')' stops the top level early
            raise self.fail("unexpected ')': no group is open")
        return node

    def alternation(self, top: bool) -> _Node:
        branches = [self.concat()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat())
        if not top and self.peek() != ")":
            raise self.fail("missing ')': a group is not closed", len(self.s))
        if len(branches) == 1:
            return branches[0]
        return _Node("alternate", [s for b in branches for s in (b.subs if b.kind == "alternate" else [b])])

    def concat(self) -> _Node:
        items: list[_Node] = []
        last_repeat = False  # Go refuses a repetition of a repetition written at once (a**)
        while self.i < len(self.s) and self.peek() not in "|)":
            start = self.i
            c = self.peek()
            if c in "*+?{":
                repeat = self.repetition(items, last_repeat)
                if repeat is None:  # '{' that is no repetition: a literal
                    _add(items, _leaf(literal=True))
                    self.i += 1
                    last_repeat = False
                    continue
                last_repeat = True
                continue
            last_repeat = False
            if c == "(":
                node = self.group()
                if node is not None:
                    items.append(node)
            elif c == "[":
                _add(items, self.char_class())
            elif c == "\\":
                node = self.escape_atom()
                if node is not None:
                    _add(items, node)
            else:
                self.i += 1
                _add(items, _leaf(literal=True))
            assert self.i > start
        if len(items) == 1:
            return items[0]
        # A group's concatenation or alternation joins the enclosing one (Go's collapse).
        return _Node(
            "concat", [s for item in items for s in (item.subs if item.kind == "concat" else [item])]
        )

    def repetition(self, items: list[_Node], last_repeat: bool) -> _Node | None:
        start = self.i
        c = self.peek()
        low, high = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}.get(c, (0, 0))
        kind = {"*": "star", "+": "plus", "?": "quest"}.get(c, "repeat")
        if c == "{":
            bounds = self.repeat_bounds()
            if bounds is None:
                return None
            low, high = bounds
            if low < 0 or low > MAX_REPEAT or high > MAX_REPEAT or (high >= 0 and low > high):
                raise self.fail(
                    f"repetition count out of range: counts go from 0 to {MAX_REPEAT}, the first at "
                    "most the second",
                    start,
                )
        else:
            self.i += 1
        if self.peek() == "?":  # non-greedy
            self.i += 1
        if last_repeat:
            raise self.fail("repetition of a repetition (such as ** or +?? or ++)", start)
        if not items:
            raise self.fail("repetition operator with nothing before it to repeat", start)
        last = items[-1]
        if last.literal and last.runes > 1:  # the operator takes the run's last character
            items[-1:] = [_leaf(last.runes - 1, literal=True), _leaf(literal=True)]
        node = _Node(kind, [items[-1]], low, high)
        if kind == "repeat" and (low >= 2 or high >= 2) and not _repeat_is_valid(node, MAX_REPEAT):
            raise self.fail(f"nested repetition counts multiply to more than {MAX_REPEAT}", start)
        items[-1] = node
        return node

    def repeat_bounds(self) -> tuple[int, int] | None:
        """{n}, {n,} or {n,m} as Go's parseRepeat reads it; None: not a repetition."""
        j = self.i + 1
        low, j = self.integer(j)
        if low is None or j >= len(self.s):
            return None
        if self.s[j] != ",":
            high = low
        else:
            j += 1
            if j >= len(self.s):
                return None
            if self.s[j] == "}":
                high = -1
            else:
                high, j = self.integer(j)
                if high is None:
                    return None
                if high < 0:
                    low = -1
        if j >= len(self.s) or self.s[j] != "}":
            return None
        self.i = j + 1
        return low, high

    def integer(self, j: int) -> tuple[int | None, int]:
        """A decimal without a leading zero (Go's parseInt); -1 when too large."""
        k = j
        while k < len(self.s) and self.s[k] in "0123456789":
            k += 1
        digits = self.s[j:k]
        if not digits or (len(digits) >= 2 and digits[0] == "0"):
            return None, j
        return (int(digits) if len(digits) <= 8 else -1), k

    def group(self) -> _Node | None:
        start = self.i
        if self.peek(1) == "?":
            rest = self.rest()
            if rest.startswith(("(?<=", "(?<!")):
                raise self.fail("Go's regular expressions (RE2) have no lookbehind group", start)
            if (rest.startswith("(?P<") and len(rest) > 4) or (rest.startswith("(?<") and len(rest) > 3):
                begin = 4 if rest[2] == "P" else 3
                end = rest.find(">")
                name = rest[begin:end] if end >= 0 else ""
                if end < 0 or not name or not all(ch == "_" or _is_alnum(ch) for ch in name):
                    raise self.fail(
                        "invalid named group: a name is letters, digits and '_' (A-Z, a-z, 0-9, _)",
                        start,
                    )
                self.i += end + 1
                return self.group_body(start, capture=True)
            return self.flags(start)
        self.i += 1
        return self.group_body(start, capture=True)

    def group_body(self, start: int, capture: bool) -> _Node:
        inner = self.alternation(top=False)
        self.i += 1  # ')'
        return _Node("capture", [inner]) if capture else inner

    def flags(self, start: int) -> _Node | None:
        """(?flags) or (?flags:re): flags i, m, s, U, once negated with '-'."""
        self.i += 2
        negated = saw_flag = False
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c in "imsU":
                saw_flag = True
            elif c == "-" and not negated:
                negated, saw_flag = True, False
            elif c in ":)":
                if negated and not saw_flag:
                    break
                return self.group_body(start, capture=False) if c == ":" else None
            else:
                break
        construct = {
            "=": "lookahead",
            "!": "negative lookahead",
            "<=": "lookbehind",
            "<!": "negative lookbehind",
            ">": "atomic group",
            "#": "comment",
        }
        after = self.s[start + 2 : start + 4]
        name = next((v for k, v in construct.items() if after.startswith(k)), None)
        if name:
            raise self.fail(f"Go's regular expressions (RE2) have no {name} group", start)
        raise self.fail(
            "unknown group syntax: a group opened with '?' takes only the flags i, m, s and U "
            "(negated after one '-'), then ':' or ')'",
            start,
        )

    # -- escapes and classes -------------------------------------------------------------
    def escape_atom(self) -> _Node | None:
        start = self.i
        nxt = self.peek(1)
        if nxt in ("A", "b", "B", "z"):
            self.i += 2
            return _leaf()
        if nxt == "C":
            raise self.fail("\\C (any byte) is not supported by Go's regular expressions", start)
        if nxt == "Q":  # \Q...\E: literal text
            end = self.s.find("\\E", self.i + 2)
            text = self.s[self.i + 2 : end if end >= 0 else len(self.s)]
            self.i = end + 2 if end >= 0 else len(self.s)
            return _leaf(len(text), literal=True) if text else None
        if nxt in ("p", "P"):
            self.unicode_class()
            return _leaf()
        if nxt and nxt in _PERL_CLASSES:
            self.i += 2
            return _leaf()
        self.escape()
        return _leaf(literal=True)

    def unicode_class(self) -> None:
        start = self.i
        self.i += 2
        if self.peek() == "{":
            end = self.s.find("}", self.i)
            if end < 0:
                raise self.fail("\\p{ without its closing '}'", start)
            name = self.s[self.i + 1 : end]
            self.i = end + 1
        else:
            name = self.peek()
            self.i += 1 if name else 0
        name = name[1:] if name.startswith("^") else name
        if name != "Any" and name not in GO_CATEGORIES and name not in GO_SCRIPTS:
            raise self.fail(
                f"\\p{{{name}}} names no Unicode category or script Go knows (names are "
                "case-sensitive: Lu, Greek, Han)",
                start,
            )

    def escape(self) -> None:
        """One escaped character (Go's parseEscape)."""
        start = self.i
        self.i += 1
        if self.i >= len(self.s):
            raise self.fail("trailing backslash at the end of the pattern", start)
        c = self.s[self.i]
        self.i += 1
        if c.isascii() and not c.isalnum():
            return  # escaped punctuation is itself
        if (c in "1234567" and not _octal(self.peek())) or c in "89":
            raise self.fail(
                f"\\{c} is a backreference, which Go's regular expressions (RE2) do not support", start
            )
        if c in "01234567":
            for _ in range(2):
                if _octal(self.peek()):
                    self.i += 1
            return
        if c == "x":
            if self.peek() == "{":
                end = self.s.find("}", self.i)
                digits = self.s[self.i + 1 : end] if end >= 0 else ""
                if digits and all(d in _HEX for d in digits) and int(digits, 16) <= 0x10FFFF:
                    self.i = end + 1
                    return
            elif self.peek(0) and self.peek(1) and self.peek(0) in _HEX and self.peek(1) in _HEX:
                self.i += 2
                return
            raise self.fail("invalid \\x escape: \\x and two hex digits, or \\x{hex digits}", start)
        if c in _C_ESCAPES:
            return
        raise self.fail(
            f"\\{c} is not an escape Go's regular expressions know (for instance \\Z, \\e, \\k, \\g "
            "and \\h are not)",
            start,
        )

    def char_class(self) -> _Node:
        start = self.i
        self.i += 1
        if self.peek() == "^":
            self.i += 1
        first = True
        while self.i >= len(self.s) or self.s[self.i] != "]" or first:
            first = False
            if self.i >= len(self.s):
                raise self.fail("missing ']': a character class is not closed", start)
            rest = self.rest()
            if rest.startswith("[:") and len(rest) > 2:
                end = rest.find(":]", 2)
                if end >= 0:
                    name = rest[2:end]
                    if name.removeprefix("^") not in POSIX_CLASSES:
                        raise self.fail(f"[:{name}:] is not a POSIX class Go knows", self.i)
                    self.i += end + 2
                    continue
            if rest[:2] in ("\\p", "\\P"):
                self.unicode_class()
                continue
            if len(rest) >= 2 and rest[0] == "\\" and rest[1] in _PERL_CLASSES:
                self.i += 2
                continue
            low = self.class_char(start)
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                range_start = self.i - 1
                self.i += 1
                high = self.class_char(start)
                if high < low:
                    raise self.fail("character range out of order (such as z-a)", range_start)
        self.i += 1
        return _leaf()

    def class_char(self, class_start: int) -> int:
        if self.i >= len(self.s):
            raise self.fail("missing ']': a character class is not closed", class_start)
        if self.s[self.i] == "\\":
            at = self.i
            self.escape()
            return _escaped_value(self.s[at : self.i])
        self.i += 1
        return ord(self.s[self.i - 1])


def _escaped_value(escape: str) -> int:
    c = escape[1]
    if c in _OCTAL:
        return int(escape[1:], 8)
    if c == "x":
        return int(escape[2:].strip("{}"), 16)
    if c in _C_ESCAPES:
        return {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}[c]
    return ord(c)


def _repeat_is_valid(node: _Node, n: int) -> bool:
    """Go's repeatIsValid: the counts of nested x{n,m} multiply to at most `n`."""
    if node.kind == "repeat":
        m = node.high if node.high >= 0 else node.low
        if m == 0:
            return True
        if m > n:
            return False
        n //= m
    return all(_repeat_is_valid(sub, n) for sub in node.subs)


def _nodes(node: _Node) -> int:
    return 1 + sum(_nodes(sub) for sub in node.subs)


def _repeats(node: _Node) -> int:
    """The product of every x{n,m}'s count (capped): with the node count, Go's gate before it
    estimates sizes at all (a long run of literal text is one node, never too large)."""
    own = max(node.high if node.high >= 0 else node.low, 1) if node.kind == "repeat" else 1
    product = own
    for sub in node.subs:
        product = min(product * _repeats(sub), MAX_SIZE)
    return product


def _height(node: _Node) -> int:
    return 1 + max((_height(sub) for sub in node.subs), default=0)


def _size(node: _Node) -> int:
    """Go's calcSize estimate of the compiled program."""
    subs = [_size(sub) for sub in node.subs]
    if node.kind == "leaf":
        size = node.runes
    elif node.kind in ("capture", "star"):
        size = 2 + subs[0]
    elif node.kind in ("plus", "quest"):
        size = 1 + subs[0]
    elif node.kind == "concat":
        size = sum(subs)
    elif node.kind == "alternate":
        size = sum(subs) + len(subs) - 1
    elif node.high == -1:
        size = 2 + subs[0] if node.low == 0 else 1 + node.low * subs[0]
    else:
        size = node.high * subs[0] + node.high - node.low
    return max(size, 1)


# Groups this parser follows (each takes a few Python frames); Go refuses capturing groups
# past MAX_HEIGHT anyway, so only a pattern of thousands of nested (?:...) is refused here
# that Go would take.
_MAX_GROUPS = 4 * MAX_HEIGHT


def check(pattern: str) -> None:
    """Raise GoRegexpError when Go's regexp.Compile would refuse `pattern`."""
    if pattern.count("(") > _MAX_GROUPS:
        raise GoRegexpError(f"nests more than {MAX_HEIGHT} levels deep", 0)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 8 * _MAX_GROUPS))
    try:
        tree = _Parser(pattern).parse()
        height, size = _height(tree), _size(tree)
        large = size > MAX_SIZE and _nodes(tree) * _repeats(tree) >= MAX_SIZE
    finally:
        sys.setrecursionlimit(limit)
    if height > MAX_HEIGHT:
        raise GoRegexpError(f"nests more than {MAX_HEIGHT} levels deep", 0)
    if large:
        raise GoRegexpError("is too large for Go to compile (its repetitions expand too far)", 0)


def problem(pattern: str) -> str | None:
    """Why Go's regexp.Compile would refuse `pattern` (with the character position), or None."""
    try:
        check(pattern)
    except GoRegexpError as exc:
        return f"{exc.why} (at character {exc.at + 1})"
    return None
