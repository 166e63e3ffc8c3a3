"""SQL92 message selectors: RocketMQ's property filter language, parsed once, run per message.

Mirrors ``FilterFactory`` / ``SqlFilter`` (filter), ``SelectorParser`` (filter/parser, the
JavaCC grammar ``SelectorParser.jj``) and the expression classes of
``org.apache.rocketmq.filter.expression`` (``ComparisonExpression``, ``LogicExpression``,
``UnaryExpression``, ``ConstantExpression``, ``BooleanConstantExpression``,
``PropertyExpression``), RocketMQ 4.9.3; mechanisms.md "Pull processing" step 6 (``ConsumerFilterManager.build``
compiles the expression), docs/reference.md §2.2 (``expressionType`` "SQL92").

What this module owns: the grammar (a lark LALR parser), the compile-time checks Java
makes in its ``create*`` factories, and Java's evaluation rules (three-valued logic,
``null`` for a missing property, string-to-number conversion, ``Double.compare``). Each
expression compiles once into nested Python closures; evaluating a message never touches
the parser. What it must not know: messages, stores or brokers — it sees a
``Mapping[str, str]`` of properties (``MessageEvaluationContext``), nothing else.

What 4.9.3 supports (``CONTAINS`` / ``STARTSWITH`` / ``ENDSWITH`` came in 5.x, not here):

=====================  =====================================================================
construct              4.9.3 behaviour (mirrored)
=====================  =====================================================================
``OR`` ``AND``         lowest precedence, left-assoc; Java's 3-valued logic (``null`` = unknown)
``=`` ``<>``           equality level; ``<>`` is ``NOT (=)``; ``x = NULL`` is a compile error
``IS [NOT] NULL``      equality level; a missing property IS NULL
``>`` ``>=`` ``<``     comparison level (binds tighter than ``=``); operands must be numbers
``<=``                 or properties: ``a > 'x'`` / ``a > TRUE`` are compile errors
``[NOT] BETWEEN x      ``>= x AND <= y`` (NOT: ``< x OR > y``); constant bounds must be
AND y``                non-null with x <= y, else a compile error
``[NOT] IN ('s',..)``  string literals only, left side must be a property
``NOT`` ``-`` ``+``    unary, tightest: ``NOT a = 'x'`` is ``(NOT a) = 'x'`` — write ``NOT (..)``
literals               ``'it''s'`` strings; ``12`` / ``12L`` Java int or long; ``1.5``, ``.5``,
                       ``5E3`` doubles (``0.0`` is rejected: "is less than 4.9E-324");
                       ``TRUE`` ``FALSE`` ``NULL``; keywords are case-insensitive
identifiers            ``[A-Za-z_$][A-Za-z0-9_$]*`` — property names (no dots)
comments               ``/* .. */`` and ``-- ..`` ended by a newline
=====================  =====================================================================

Evaluation: property values are strings. Compared with an int literal a value must parse
as a Java ``int`` (``Integer.valueOf``), with a long literal as a ``long``, with a double
literal as a ``double``; ``a > b`` with two properties parses both as doubles. A value
that does not parse raises :class:`Sql92EvaluationError` (Java: ``RuntimeException``), which
the broker turns into "no match" for that message. A missing property makes a comparison
``None`` (unknown); only ``True`` matches.

Faithful quirks worth a lesson: the top rule has no ``<EOF>``, so parsing stops at the
first token that cannot continue a complete expression and ignores the rest
(``a = 1 b = 2`` filters on ``a = 1``; see :attr:`Sql92Expression.ignored_tail`);
``a = b`` is TRUE when both are missing; ``a = FALSE`` matches any value but "true";
``TRUE = a`` always fails at run time (Java's ``ClassCastException``). Not mirrored:
Java's 100-entry parse cache (callers keep their compiled object instead).
"""

from __future__ import annotations

import functools
import math
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

__all__ = [
    "SQL92",
    "FilterException",
    "Sql92EvaluationError",
    "Sql92Expression",
    "compile_sql92",
]

#: ``ExpressionType.SQL92``: the one type ``FilterFactory`` registers (``SqlFilter#ofType``).
SQL92 = "SQL92"

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_DOUBLE_MAX = 1.7976931348623157e308
_DOUBLE_MIN = 5e-324  # Double.MIN_VALUE, printed by Java as 4.9E-324
_EMPTY: Mapping[str, Any] = MappingProxyType({})


class FilterException(ValueError):
    """An expression that does not compile. Mirrors ``MQFilterException`` (filter/expression).

    Java wraps every parser failure as ``MQFilterException("Invalid MessageSelector. ", e)``;
    the message here starts the same way and names where the problem is.

    Attributes:
        expression: the expression text.
        position: 0-based character offset of the offending token, or ``None``.
        line, column: 1-based line and column of that token, or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        expression: str | None = None,
        position: int | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.expression = expression
        self.position = position
        self.line = line
        self.column = column


class Sql92EvaluationError(RuntimeError):
    """What Java's ``evaluate`` throws for one message: a property that is not a number
    (``NumberFormatException``), two strings ordered with ``>`` (``RuntimeException``), or
    ``TRUE = prop`` (``ClassCastException``). ``ExpressionMessageFilter`` catches it and
    treats the message as not matched."""


# ---------------------------------------------------------------------------------------
# Java value model: None = null, bool = Boolean, str = String, int = Integer,
# _JavaLong = Long, float = Double. The Integer/Long split matters: a property compared
# with an int literal goes through Integer.valueOf, with a long literal Long.valueOf.
# ---------------------------------------------------------------------------------------
class _JavaLong(int):
    """A ``java.lang.Long`` value (a Python ``int`` that remembers it was a long)."""

    __slots__ = ()


_INT_RE = re.compile(r"[+-]?\d+")  # Character.digit accepts any Unicode decimal digit
_DOUBLE_RE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)"
)
_HEX_DOUBLE_RE = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?"
)
_JAVA_TRIM = "".join(chr(c) for c in range(33))  # String#trim drops chars <= ' '


def _number_format(s: str) -> Sql92EvaluationError:
    return Sql92EvaluationError(f'java.lang.NumberFormatException: For input string: "{s}"')


def _parse_java_integer(s: str, lo: int, hi: int) -> int:
    """``Integer/Long.parseInt``: sign + decimal digits (leading zeros fine), in range."""
    if _INT_RE.fullmatch(s) and len(s.lstrip("+-").lstrip("0")) <= 19:  # int() digit cap
        v = int(s)
        if lo <= v <= hi:
            return v
    raise _number_format(s)


def _integer_value_of(s: str) -> int:
    """``Integer.valueOf(String)``: int32 range, no spaces, no decimal point."""
    return _parse_java_integer(s, _INT_MIN, _INT_MAX)


def _long_value_of(s: str) -> _JavaLong:
    """``Long.valueOf(String)``: as :func:`_integer_value_of` with the int64 range."""
    return _JavaLong(_parse_java_integer(s, _LONG_MIN, _LONG_MAX))


def _double_value_of(s: str) -> float:
    """``Double.valueOf(String)``: trimmed; decimal or hex, NaN, Infinity, f/d suffix."""
    t = s.strip(_JAVA_TRIM)
    if _DOUBLE_RE.fullmatch(t):
        t = t.rstrip("fFdD") if t[-1] in "fFdD" else t
        return float(t)
    if _HEX_DOUBLE_RE.fullmatch(t):
        return float.fromhex(t.rstrip("fFdD"))
    raise _number_format(s)


def _boolean_value_of(s: str) -> bool:
    """``Boolean.valueOf(String)``: ``"true"`` in any case, everything else false."""
    return len(s) == 4 and s.lower() == "true"


def _double_bits(x: float) -> int:
    if x != x:
        return 0x7FF8000000000000  # doubleToLongBits canonical NaN
    return struct.unpack(">q", struct.pack(">d", x))[0]


def _compare_double(a: float, b: float) -> int:
    """``Double.compare``: NaN is above everything and equal to itself; -0.0 < 0.0."""
    if a < b:
        return -1
    if a > b:
        return 1
    ab, bb = _double_bits(a), _double_bits(b)
    return 0 if ab == bb else (-1 if ab < bb else 1)


def _compare_plain(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _compare(lv: Any, rv: Any) -> int:
    """``ComparisonExpression.__compare(lv, rv, convertStringExpressions=true)``.

    Different classes are converted "up" (int → long → double); a String meeting a
    number or a Boolean is parsed as that type. Unrelated classes compare as -1.
    """
    lc, rc = type(lv), type(rv)
    if lc is not rc:
        if lc is bool:
            if rc is str:  # Java casts the Boolean itself to String
                raise Sql92EvaluationError(
                    "java.lang.ClassCastException: java.lang.Boolean cannot be cast to "
                    "java.lang.String"
                )
            return -1
        if lc is int or lc is _JavaLong:
            if rc is int or rc is _JavaLong:
                pass
            elif rc is float:
                lv, lc = float(lv), float
            elif rc is str:
                rv = _integer_value_of(rv) if lc is int else _long_value_of(rv)
            else:
                return -1
        elif lc is float:
            if rc is int or rc is _JavaLong:
                rv = float(rv)
            elif rc is str:
                rv = _double_value_of(rv)
            else:
                return -1
        elif lc is str:
            if rc is bool:
                lv = _boolean_value_of(lv)
            elif rc is int:
                lv = _integer_value_of(lv)
            elif rc is _JavaLong:
                lv = _long_value_of(lv)
            elif rc is float:
                lv, lc = _double_value_of(lv), float
            else:
                return -1
        else:
            return -1
    if lc is float:
        return _compare_double(lv, rv)
    return _compare_plain(lv, rv)


def _java_double_str(x: float) -> str:
    """``Double.toString`` (used in messages and :attr:`Sql92Expression.text` only)."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        return repr(x)
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e10 = int(exp) + len(digits) - 1
    return f"{'-' if sign else ''}{ds[0]}.{ds[1:] or '0'}E{e10}"


def _java_str(v: Any) -> str:
    """``String.valueOf(Object)``."""
    if v is None:
        return "null"
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is float:
        return _java_double_str(v)
    return str(v)


def _constant_text(v: Any) -> str:
    """``ConstantExpression#toString``."""
    if v is None:
        return "NULL"
    if type(v) is bool:
        return "TRUE" if v else "FALSE"
    if type(v) is str:
        return "'" + v.replace("'", "''") + "'"
    return _java_str(v)


# ---------------------------------------------------------------------------------------
# The compiled node: an evaluation closure plus what Java's factories inspect
# (instanceof ConstantExpression / BooleanExpression / PropertyExpression) and toString.
# ---------------------------------------------------------------------------------------
Evaluator = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class _Node:
    fn: Evaluator
    text: str
    boolean: bool = False  # implements BooleanExpression
    constant: bool = False  # is a ConstantExpression
    value: Any = None  # the constant's value
    prop: str | None = None  # PropertyExpression name


def _const(value: Any, *, boolean: bool = False) -> _Node:
    def fn(p: Mapping[str, Any]) -> Any:
        return value

    return _Node(fn, _constant_text(value), boolean=boolean, constant=True, value=value)


def _prop(name: str) -> _Node:
    def fn(p: Mapping[str, Any]) -> Any:
        return p.get(name)

    return _Node(fn, name, prop=name)


class _CompileError(Exception):
    """A Java factory rejected a construct; carries the token to point at."""

    def __init__(self, message: str, token: Token | None) -> None:
        super().__init__(message)
        self.token = token


def _as_boolean(node: _Node, tok: Token | None) -> _Node:
    """``SelectorParser#asBooleanExpression``: booleans pass, a property is cast."""
    if node.boolean:
        return node
    if node.prop is not None:  # UnaryExpression.createBooleanCast
        inner = node.fn

        def cast(p: Mapping[str, Any]) -> Any:
            v = inner(p)
            if v is None:
                return None
            return v if type(v) is bool else False

        return _Node(cast, node.text, boolean=True)
    raise _CompileError(f"Expression will not result in a boolean value: {node.text}", tok)


def _check_less_than_operand(node: _Node, tok: Token) -> None:
    """``ComparisonExpression#checkLessThanOperand``: numbers or non-boolean expressions."""
    if node.constant:
        if type(node.value) in (int, _JavaLong, float):
            return
        raise _CompileError(f"Value '{node.text}' cannot be compared.", tok)
    if node.boolean:
        raise _CompileError(f"Value '{node.text}' cannot be compared.", tok)


_ORDER_TESTS: dict[str, Callable[[int], bool]] = {
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
}
_FROM_STRING: dict[type, Callable[[str], Any]] = {
    int: _integer_value_of,
    _JavaLong: _long_value_of,
    float: _double_value_of,
}


def _ordering(left: _Node, right: _Node, symbol: str, tok: Token) -> _Node:
    """``createGreaterThan`` / ``…Equal`` / ``createLessThan`` / ``…Equal`` + ``evaluate``."""
    _check_less_than_operand(left, tok)
    _check_less_than_operand(right, tok)
    test = _ORDER_TESTS[symbol]
    lf, rf = left.fn, right.fn
    text = f"({left.text} {symbol} {right.text})"

    if left.prop is not None and right.constant:
        # NOTE: performance. The common "prop OP literal" shape picks its String
        # conversion once (Integer/Long/Double.valueOf by the literal's class).
        name, c = left.prop, right.value
        conv = _FROM_STRING[type(c)]
        cmp = _compare_double if type(c) is float else _compare_plain

        def fast(p: Mapping[str, Any]) -> Any:
            v = p.get(name)
            if v is None:
                return None
            if type(v) is str:
                return test(cmp(conv(v), c))
            return test(_compare(v, c))

        return _Node(fast, text, boolean=True)

    def fn(p: Mapping[str, Any]) -> Any:
        lv = lf(p)
        if lv is None:
            return None
        rv = rf(p)
        if rv is None:
            return None
        if type(lv) is str and type(rv) is str:  # "Compare String is illegal": try doubles
            try:
                return test(_compare_double(_double_value_of(lv), _double_value_of(rv)))
            except Sql92EvaluationError as e:
                raise Sql92EvaluationError(
                    f"It's illegal to compare string by '>=', '>', '<', '<='. lv={lv}, rv={rv}"
                ) from e
        return test(_compare(lv, rv))

    return _Node(fn, text, boolean=True)


def _do_create_equal(left: _Node, right: _Node) -> _Node:
    """``ComparisonExpression#doCreateEqual``: null only on one side → null if it is the
    left, FALSE if the right; both null → TRUE; else equals / converted compare."""
    lf, rf = left.fn, right.fn
    text = f"({left.text} == {right.text})"
    if left.prop is not None and right.constant and right.value is None:  # IS NULL
        name = left.prop

        def is_null(p: Mapping[str, Any]) -> Any:
            return p.get(name) is None

        return _Node(is_null, text, boolean=True)
    if left.prop is not None and right.constant and type(right.value) is str:
        name, c = left.prop, right.value

        def eq_str(p: Mapping[str, Any]) -> Any:
            v = p.get(name)
            if v is None:
                return None
            return v == c if type(v) is str else _compare(v, c) == 0

        return _Node(eq_str, text, boolean=True)

    def fn(p: Mapping[str, Any]) -> Any:
        lv = lf(p)
        rv = rf(p)
        if lv is None or rv is None:
            if lv is None and rv is None:
                return True
            return None if lv is None else False
        return _compare(lv, rv) == 0

    return _Node(fn, text, boolean=True)


def _create_equal(left: _Node, right: _Node, tok: Token) -> _Node:
    """``ComparisonExpression#createEqual`` with its operand checks."""
    for node in (left, right):  # checkEqualOperand
        if node.constant and node.value is None:
            raise _CompileError(f"'{node.text}' cannot be compared.", tok)
    if left.constant and right.constant and left.boolean and not right.boolean:
        raise _CompileError(f"'{left.text}' cannot be compared with '{right.text}'", tok)
    return _do_create_equal(left, right)


def _create_not(node: _Node) -> _Node:
    """``UnaryExpression#createNOT``: null stays null."""
    inner = node.fn

    def fn(p: Mapping[str, Any]) -> Any:
        v = inner(p)
        return None if v is None else not v

    return _Node(fn, f"(NOT {node.text})", boolean=True)


def _create_negate(node: _Node) -> _Node:
    """``UnaryExpression#createNegate``: numbers negate (int/long wrap), others → null."""
    inner = node.fn

    def fn(p: Mapping[str, Any]) -> Any:
        v = inner(p)
        t = type(v)
        if t is int:
            return -v if v != _INT_MIN else v
        if t is _JavaLong:
            return _JavaLong(-v if v != _LONG_MIN else v)
        if t is float:
            return -v
        return None

    return _Node(fn, f"(- {node.text})")


def _logic(nodes: list[_Node], is_and: bool) -> Evaluator:
    """``LogicExpression#createAND`` / ``createOR`` chained left to right, flattened.

    ``((a AND b) AND c)`` short-circuits and propagates null exactly like a flat scan:
    the first FALSE (TRUE for OR) wins, else null if any operand was null.
    """
    stop = not is_and  # AND stops at False, OR at True
    fns = tuple(n.fn for n in nodes)
    if len(fns) == 2:
        f1, f2 = fns

        def fn2(p: Mapping[str, Any]) -> Any:
            lv = f1(p)
            if lv is stop:
                return stop
            rv = f2(p)
            if rv is stop:
                return stop
            if lv is None or rv is None:
                return None
            return not stop

        return fn2

    def fn(p: Mapping[str, Any]) -> Any:
        unknown = False
        for f in fns:
            v = f(p)
            if v is stop:
                return stop
            if v is None:
                unknown = True
        return None if unknown else not stop

    return fn


def _create_between(value: _Node, low: _Node, high: _Node, tok: Token) -> _Node:
    """``ComparisonExpression#createBetween``: constant bounds must be non-null, low <= high."""
    if low.constant and high.constant:
        lv, rv = low.value, high.value
        if lv is None or rv is None:
            raise _CompileError("Illegal values of between, values can not be null!", tok)
        try:
            ret = _compare(rv, lv)
        except Sql92EvaluationError as e:
            raise _CompileError(str(e), tok) from None
        if ret < 0:
            raise _CompileError(
                f"Illegal values of between, left value({_java_str(lv)}) must less than or "
                f"equal to right value({_java_str(rv)})",
                tok,
            )
    ge = _ordering(value, low, ">=", tok)
    le = _ordering(value, high, "<=", tok)
    return _Node(_logic([ge, le], True), f"({ge.text} && {le.text})", boolean=True)


def _create_not_between(value: _Node, low: _Node, high: _Node, tok: Token) -> _Node:
    """``ComparisonExpression#createNotBetween``: ``< low OR > high``, no bound checks."""
    lt = _ordering(value, low, "<", tok)
    gt = _ordering(value, high, ">", tok)
    return _Node(_logic([lt, gt], False), f"({lt.text} || {gt.text})", boolean=True)


def _create_in(left: _Node, items: list[str], negated: bool, tok: Token) -> _Node:
    """``ComparisonExpression#createInFilter`` → ``UnaryExpression#createInExpression``."""
    if left.prop is None:
        raise _CompileError(f"Expected a property for In expression, got: {left.text}", tok)
    name, members = left.prop, frozenset(items)

    def fn(p: Mapping[str, Any]) -> Any:
        v = p.get(name)
        if v is None or type(v) is not str:
            return None
        return (v in members) is not negated

    symbol = "NOT IN" if negated else "IN"
    return _Node(fn, f"{name} {symbol} ( {', '.join(items)} )", boolean=True)


def _decimal(tok: Token) -> _Node:
    """``ConstantExpression#createFromDecimal``: a long, narrowed to int when it fits."""
    text = str(tok)
    if text[-1] in "lL":
        text = text[:-1]
    if len(text) > 19 or int(text) > _LONG_MAX:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise _CompileError(f'java.lang.NumberFormatException: For input string: "{shown}"', tok)
    v = int(text)
    return _const(v if v <= _INT_MAX else _JavaLong(v))


def _floating(tok: Token) -> _Node:
    """``ConstantExpression#createFloat``: rejects overflow and anything below
    ``Double.MIN_VALUE`` — which, faithfully, includes ``0.0``."""
    text = str(tok)
    v = float(text)
    if v > _DOUBLE_MAX:
        raise _CompileError(f"{text} is greater than 1.7976931348623157E308", tok)
    if v < _DOUBLE_MIN:
        raise _CompileError(f"{text} is less than 4.9E-324", tok)
    return _const(v)


def _string_literal(tok: Token) -> str:
    """``SelectorParser#stringLitteral``: strip the quotes, ``''`` → ``'``."""
    return str(tok)[1:-1].replace("''", "'")


def _first_token(tree: Tree | Token) -> Token | None:
    if isinstance(tree, Token):
        return tree
    for child in tree.children:
        tok = _first_token(child)
        if tok is not None:
            return tok
    return None


def _compile(tree: Tree | Token) -> _Node:
    """Build the expression bottom-up, left to right: Java's construction order."""
    if isinstance(tree, Token):  # pragma: no cover - every literal is wrapped in a rule
        raise AssertionError(f"bare token {tree!r}")
    kind, ch = tree.data, tree.children
    if kind in ("or_expr", "and_expr"):
        is_and = kind == "and_expr"
        acc = _as_boolean(_compile(ch[0]), ch[1])
        nodes, text = [acc], acc.text
        for i in range(1, len(ch), 2):
            right = _as_boolean(_compile(ch[i + 1]), ch[i])
            nodes.append(right)
            text = f"({text} {'&&' if is_and else '||'} {right.text})"
        return _Node(_logic(nodes, is_and), text, boolean=True)
    if kind == "eq":
        return _create_equal(_compile(ch[0]), _compile(ch[2]), ch[1])
    if kind == "ne":
        return _create_not(_create_equal(_compile(ch[0]), _compile(ch[2]), ch[1]))
    if kind == "is_null":
        return _do_create_equal(_compile(ch[0]), _const(None, boolean=True))
    if kind == "is_not_null":
        return _create_not(_do_create_equal(_compile(ch[0]), _const(None, boolean=True)))
    if kind in ("gt", "ge", "lt", "le"):
        return _ordering(_compile(ch[0]), _compile(ch[2]), str(ch[1]), ch[1])
    if kind == "between":
        return _create_between(_compile(ch[0]), _compile(ch[2]), _compile(ch[4]), ch[1])
    if kind == "not_between":
        return _create_not_between(_compile(ch[0]), _compile(ch[3]), _compile(ch[5]), ch[1])
    if kind in ("in_list", "not_in_list"):
        negated = kind == "not_in_list"
        left = _compile(ch[0])
        items = [_string_literal(t) for t in ch[(3 if negated else 2) :]]
        return _create_in(left, items, negated, ch[1])
    if kind == "plus":
        return _compile(ch[1])
    if kind == "negate":
        return _create_negate(_compile(ch[1]))
    if kind == "not_":
        return _create_not(_as_boolean(_compile(ch[1]), ch[0]))
    if kind == "string":
        return _const(_string_literal(ch[0]))
    if kind == "decimal":
        return _decimal(ch[0])
    if kind == "floating":
        return _floating(ch[0])
    if kind in ("true", "false", "null"):
        return _const({"true": True, "false": False, "null": None}[kind], boolean=True)
    if kind == "variable":
        return _prop(str(ch[0]))
    raise AssertionError(f"unknown rule {kind}")  # pragma: no cover


# ---------------------------------------------------------------------------------------
# Grammar: SelectorParser.jj, token for token. Named terminals keep JavaCC's token names
# so error messages read like Java's "Was expecting one of: ...".
# ---------------------------------------------------------------------------------------
_GRAMMAR = r"""
start: or_expr
?or_expr: and_expr (OR and_expr)*
?and_expr: equality (AND equality)*
?equality: comparison
    | equality EQ comparison -> eq
    | equality NE comparison -> ne
    | equality IS NULL -> is_null
    | equality IS NOT NULL -> is_not_null
?comparison: unary
    | comparison GT unary -> gt
    | comparison GE unary -> ge
    | comparison LT unary -> lt
    | comparison LE unary -> le
    | comparison BETWEEN unary AND unary -> between
    | comparison NOT BETWEEN unary AND unary -> not_between
    | comparison IN _LPAREN _strings _RPAREN -> in_list
    | comparison NOT IN _LPAREN _strings _RPAREN -> not_in_list
_strings: STRING_LITERAL (_COMMA STRING_LITERAL)*
?unary: primary
    | PLUS unary -> plus
    | MINUS unary -> negate
    | NOT unary -> not_
?primary: STRING_LITERAL -> string
    | DECIMAL_LITERAL -> decimal
    | FLOATING_POINT_LITERAL -> floating
    | TRUE -> true
    | FALSE -> false
    | NULL -> null
    | ID -> variable
    | _LPAREN or_expr _RPAREN

NOT: "not"i
AND: "and"i
OR: "or"i
BETWEEN: "between"i
IN: "in"i
TRUE: "true"i
FALSE: "false"i
NULL: "null"i
IS: "is"i
DECIMAL_LITERAL: /0|[1-9][0-9]*[lL]?/
FLOATING_POINT_LITERAL.2: /[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+/
STRING_LITERAL: /'(?:''|[^'])*'/
ID: /[a-zA-Z_$][a-zA-Z0-9_$]*/
EQ: "="
NE: "<>"
GT: ">"
GE: ">="
LT: "<"
LE: "<="
_LPAREN: "("
_COMMA: ","
_RPAREN: ")"
PLUS: "+"
MINUS: "-"
%ignore /[ \t\n\r\f]+/
%ignore /--[^\n\r]*(?:\r\n|\n|\r)/
%ignore /\/\*[^*]*\*+(?:[^\/*][^*]*\*+)*\//
"""

#: JavaCC ``tokenImage`` order and spelling, for "Was expecting one of".
_TOKEN_IMAGES: dict[str, str] = {
    "$END": "<EOF>",
    "NOT": '"NOT"',
    "AND": '"AND"',
    "OR": '"OR"',
    "BETWEEN": '"BETWEEN"',
    "IN": '"IN"',
    "TRUE": '"TRUE"',
    "FALSE": '"FALSE"',
    "NULL": '"NULL"',
    "IS": '"IS"',
    "DECIMAL_LITERAL": "<DECIMAL_LITERAL>",
    "FLOATING_POINT_LITERAL": "<FLOATING_POINT_LITERAL>",
    "STRING_LITERAL": "<STRING_LITERAL>",
    "ID": "<ID>",
    "EQ": '"="',
    "NE": '"<>"',
    "GT": '">"',
    "GE": '">="',
    "LT": '"<"',
    "LE": '"<="',
    "_LPAREN": '"("',
    "_COMMA": '","',
    "_RPAREN": '")"',
    "PLUS": '"+"',
    "MINUS": '"-"',
}
_TOKEN_ORDER = {name: i for i, name in enumerate(_TOKEN_IMAGES)}


@functools.cache
def _parser() -> Lark:
    """The LALR parser, built on first use (the tables are immutable once built)."""
    return Lark(_GRAMMAR, parser="lalr", lexer="basic", start="start")


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _java_add_escapes(text: str) -> str:
    """JavaCC's ``ParseException#add_escapes`` (quotes, backslash, control characters)."""
    out = []
    for ch in text:
        esc = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r",
               '"': '\\"', "'": "\\'", "\\": "\\\\"}.get(ch)  # fmt: skip
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _eof_line_col(expression: str) -> tuple[int, int]:
    """Where JavaCC's EOF token begins: ``SimpleCharStream#FillBuff`` fails, steps back
    to the last character read and the EOF token takes that character's line and column
    (an empty input leaves the stream's unset first slot: line 0, column 0)."""
    if not expression:
        return 0, 0
    return _line_col(expression, len(expression) - 1)


#: ``"+" unaryExpr`` is chosen by a syntactic LOOKAHEAD of unbounded length
#: (``jj_2_4(Integer.MAX_VALUE)``), whose rescan is never done, so "+" is never listed.
_NEVER_LISTED = frozenset({"PLUS"})


def _syntax_error(expression: str, tok: Token, expected: set[str]) -> FilterException:
    """JavaCC's ``ParseException#getMessage`` (``initialise``), word for word: the
    token found (its kind's image and its text), where, and the expected token kinds in
    ``tokenImage`` order, one per line.

    The expected kinds are the parser's (lark's) for this state, less "+" (see
    ``_NEVER_LISTED``); JavaCC can also list two-token sequences where its
    ``LOOKAHEAD(2)`` choices (``NOT BETWEEN``, ``NOT IN``, ``IS NOT NULL``) were tried at
    the failing token, which this does not reproduce.
    """
    eol = "\n"
    if tok.type == "$END":
        pos = len(expression)
        line, col = _eof_line_col(expression)
        found = "<EOF>"
    else:
        pos = tok.start_pos or 0
        line, col = _line_col(expression, pos)
        image = _TOKEN_IMAGES.get(tok.type, tok.type)
        found = f' {image} "{_java_add_escapes(str(tok))} "'
    kinds = sorted(expected - _NEVER_LISTED, key=lambda t: _TOKEN_ORDER.get(t, 99))
    listed = "".join(
        (f"{_TOKEN_IMAGES.get(t, t)} " if t == "$END" else f"{_TOKEN_IMAGES.get(t, t)} ...")
        + eol
        + "    "
        for t in kinds
    )
    head = "Was expecting:" if len(kinds) == 1 else "Was expecting one of:"
    return FilterException(
        f'Invalid MessageSelector. Encountered "{found}" at line {line}, column {col}.'
        f"{eol}{head}{eol}    {listed}",
        expression=expression,
        position=pos,
        line=line,
        column=col,
    )


def _lexical_error(expression: str, pos: int) -> FilterException:
    """JavaCC's ``TokenMgrError#LexicalError`` text for no token matching at ``pos``.

    Mirrors ``SelectorParserTokenManager#getNextToken``: the token automaton reads as far
    as it can (an unterminated ``'...`` string or ``/* ...`` comment runs to the end of
    the input; a ``.`` must be followed by a digit), then reports the line and column of
    the last character read and the character that stopped it; when that read hit the
    end of the input instead, "<EOF>" one column further, with everything read as
    "after" (Java's quirk: a bad character that is the LAST one is reported as <EOF>).
    """
    n = len(expression)
    if expression[pos] == "'" or expression.startswith("/*", pos):
        last = n - 1  # runs to the end
    elif expression[pos] == "." and pos + 1 < n:
        last = pos + 1  # "." then a non-digit: stopped by the next character
    else:
        last = pos  # no token starts with this character
    consumed = last - pos + 1  # JavaCC's curPos
    line, col = _line_col(expression, last)
    if last + 1 >= n:  # the look past the stopping character meets the end
        after = "" if consumed <= 1 else expression[pos : last + 1]
        if expression[last] in "\n\r":
            line, col = line + 1, 0
        else:
            col += 1
        found = "<EOF> "
    else:
        after = "" if consumed <= 1 else expression[pos:last]
        ch = expression[last]
        found = f'"{_java_add_escapes(ch)}" ({ord(ch)}), '
    return FilterException(
        f"Invalid MessageSelector. Lexical error at line {line}, column {col}.  Encountered: "
        f'{found}after : "{_java_add_escapes(after)}"',
        expression=expression,
        position=pos,
        line=line,
        column=col,
    )


def _parse_prefix(expression: str) -> tuple[Tree, str]:
    """Parse the longest prefix that is a complete selector, as ``JmsSelector()`` does.

    JavaCC's top rule has no ``<EOF>``: after a complete ``orExpression`` it peeks one
    token; if that token cannot continue the expression it returns, ignoring the rest
    (the peeked token must still be lexically valid). Returns the tree and the ignored tail.
    """
    ip = _parser().parse_interactive(expression)
    try:
        for tok in ip.lexer_thread.lex(ip.parser_state):
            saved = ip.copy()
            try:
                ip.feed_token(tok)
            except UnexpectedToken:
                try:
                    tree = saved.feed_eof()
                except UnexpectedToken:
                    raise _syntax_error(expression, tok, saved.accepts()) from None
                return tree, expression[tok.start_pos :]
        saved = ip.copy()
        try:
            return ip.feed_eof(), ""
        except UnexpectedToken as e:
            raise _syntax_error(expression, e.token, saved.accepts()) from None
    except UnexpectedCharacters as e:
        raise _lexical_error(expression, e.pos_in_stream) from None
    except UnexpectedInput as e:  # pragma: no cover - other lark failures
        raise FilterException(f"Invalid MessageSelector. {e}", expression=expression) from None


@dataclass(frozen=True, slots=True, eq=False)
class Sql92Expression:
    """A compiled selector: call it on a message's properties to get match / no match.

    Mirrors the ``BooleanExpression`` that ``SqlFilter#compile`` returns (filter, RocketMQ
    4.9.3). ``text`` is Java's ``toString`` of the tree (``&&``, ``||``, ``==``), which
    shows how the expression was grouped.
    """

    expression: str
    text: str
    #: Source text after the parsed prefix (``""`` unless 4.9.3's no-EOF rule cut it off).
    ignored_tail: str
    _fn: Evaluator = field(repr=False)

    def evaluate(self, properties: Mapping[str, str] | None) -> bool | None:
        """Java's ``evaluate(MessageEvaluationContext)``: ``True``, ``False`` or ``None``.

        Raises:
            Sql92EvaluationError: a property value does not convert (see module doc).
        """
        return self._fn(_EMPTY if properties is None else properties)

    def matches(self, properties: Mapping[str, str] | None) -> bool:
        """``BooleanExpression#matches``: ``evaluate(...) is True``; errors propagate."""
        return self.evaluate(properties) is True

    def __call__(self, properties: Mapping[str, str] | None) -> bool:
        """Match as the broker does: ``True`` only for TRUE; unknown or an error → ``False``.

        Mirrors the try/catch around ``evaluate`` in ``ExpressionMessageFilter
        #isMatchedByCommitLog`` (broker/filter, RocketMQ 4.9.3).
        """
        try:
            return self._fn(_EMPTY if properties is None else properties) is True
        except Sql92EvaluationError:
            return False

    def __str__(self) -> str:
        return self.text


def compile_sql92(expression: str) -> Sql92Expression:
    """Compile a SQL92 selector once, for evaluation on many messages.

    Mirrors ``FilterFactory.INSTANCE.get("SQL92").compile(expr)`` → ``SqlFilter#compile``
    → ``SelectorParser#parse`` (filter, RocketMQ 4.9.3); mechanisms.md "Pull processing" step 6.

    Args:
        expression: the selector, e.g. ``"a > 5 AND TAGS IN ('TagA', 'TagB')"``.

    Returns:
        The compiled :class:`Sql92Expression`.

    Raises:
        TypeError: ``expression`` is not a ``str``.
        FilterException: a lexical or syntax error (with line, column and offset), or a
            construct Java's factories reject (``a > 'x'``, ``a = NULL``, ``1 IN ('1')``,
            ``a BETWEEN 10 AND 0``, a non-boolean top level such as ``5``, ``0.0`` ...).
    """
    if not isinstance(expression, str):
        raise TypeError(f"expression must be a str, got {type(expression).__name__}")
    tree, tail = _parse_prefix(expression)
    try:
        node = _as_boolean(_compile(tree.children[0]), None)  # JmsSelector
    except _CompileError as e:
        tok = e.token or _first_token(tree)
        pos = tok.start_pos if tok is not None and tok.start_pos is not None else 0
        line, col = _line_col(expression, pos)
        raise FilterException(
            f"Invalid MessageSelector. {e} (at line {line}, column {col}, offset {pos})",
            expression=expression,
            position=pos,
            line=line,
            column=col,
        ) from None
    except RecursionError:
        raise FilterException(
            "Invalid MessageSelector. expression nests too deeply", expression=expression
        ) from None
    return Sql92Expression(expression, node.text, tail, node.fn)
