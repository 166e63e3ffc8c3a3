"""Tests for mqlab.common.sql92 (RocketMQ 4.9.3 filter module: ParserTest, ExpressionTest;
SelectorParser.jj grammar; ComparisonExpression/LogicExpression/UnaryExpression semantics)."""

from __future__ import annotations

import pytest

from mqlab.common import sql92
from mqlab.common.sql92 import (
    FilterException,
    Sql92EvaluationError,
    Sql92Expression,
    compile_sql92,
)


def ev(expression: str, **props: str) -> bool | None:
    return compile_sql92(expression).evaluate(props)


# --- ExpressionTest / ParserTest vectors (filter/src/test, RocketMQ 4.9.3) ---------------------
AND_EXPR = "a=3 and b<>4 And c>5 AND d<=4"
OR_EXPR = "a=3 or b<>4 Or c>5 OR d<=4"

EXPRESSION_TEST_CASES = [
    (AND_EXPR, {"a": "3", "b": "5", "c": "6", "d": "1"}, True),
    (AND_EXPR, {"a": "4", "b": "5", "c": "6", "d": "1"}, False),
    (OR_EXPR, {"a": "3"}, True),
    (OR_EXPR, {"a": "4", "b": "5"}, True),
    (OR_EXPR, {"a": "4", "b": "4", "c": "6"}, True),
    (OR_EXPR, {"a": "4", "b": "4", "c": "3", "d": "2"}, True),
    (OR_EXPR, {"a": "4", "b": "4", "c": "3", "d": "10"}, False),
    ("a in ('3', '4', '5')", {"a": "4"}, True),
    ("a in ('3', '4', '5')", {"a": "8"}, False),
    ("a not in ('3', '4', '5')", {"a": "8"}, True),
    ("a not in ('3', '4', '5')", {"a": "5"}, False),
    ("a between 2 and 10", {"a": "2"}, True),
    ("a between 2 and 10", {"a": "10"}, True),
    ("a between 2 and 10", {"a": "11"}, False),
    ("a not between 2 and 10", {"a": "1"}, True),
    ("a not between 2 and 10", {"a": "3"}, False),
    ("a is null", {"abc": "2"}, True),
    ("a is null", {"a": "2"}, False),
    ("a is not null", {"a": "2"}, True),
    ("a is not null", {"abc": "2"}, False),
    ("a is not null and a='hello'", {"a": "hello"}, True),
    ("a is null OR a='hello'", {}, True),
    ("a is null OR a='hello'", {"a": "abc"}, False),
    ("a=TRUE OR b=FALSE", {"a": "true", "b": "false"}, True),
    ("a=TRUE OR b=FALSE", {"a": "false", "b": "true"}, False),
    ("TAGS is not null and TAGS='''''tag'''''", {"TAGS": "''tag''"}, True),
    ("a > 3.1E10", {"a": str(3.1415 * 10**10)}, True),
    ("a > 3.14", {"a": "3.1415"}, True),
    ("a > b", {"a": "10", "b": "20"}, False),
    ("a > b", {"a": "20", "b": "10"}, True),
    ("a=b", {"a": "3.14", "b": "3.14"}, True),
    ("a<>b", {"a": "3.14", "b": "3.141"}, True),
    ("a <= now", {"a": "1", "now": "2"}, True),
]


@pytest.mark.parametrize(("expression", "props", "expected"), EXPRESSION_TEST_CASES)
def test_expression_test_vectors(expression: str, props: dict[str, str], expected: bool) -> None:
    """ExpressionTest (4.9.3): each expression/properties pair matches as Java's does."""
    assert compile_sql92(expression)(props) is expected


def test_evaluate_string_compare_raises() -> None:
    """ExpressionTest#testEvaluate_stringCompare: ordering two non-numeric strings throws."""
    expr = compile_sql92("a between up and low")
    assert expr.evaluate({"a": "3.14"}) is None  # bounds missing → unknown
    with pytest.raises(Sql92EvaluationError, match="illegal to compare string"):
        expr.evaluate({"a": "3.14", "up": "up", "low": "low"})
    assert expr({"a": "3.14", "up": "up", "low": "low"}) is False  # broker: error → no match


# --- every operator --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "value", "expected"),
    [
        ("a = 5", "5", True),
        ("a = 5", "6", False),
        ("a <> 5", "6", True),
        ("a <> 5", "5", False),
        ("a > 5", "6", True),
        ("a > 5", "5", False),
        ("a >= 5", "5", True),
        ("a >= 5", "4", False),
        ("a < 5", "4", True),
        ("a < 5", "5", False),
        ("a <= 5", "5", True),
        ("a <= 5", "6", False),
        ("a = 'x'", "x", True),
        ("a = 'x'", "X", False),
        ("a <> 'x'", "y", True),
        ("a > -3", "-2", True),
        ("a < +3", "2", True),
        ("a > 2.5", "2.6", True),
        ("a >= .5", "0.5", True),
        ("a = 3000000000", "3000000000", True),
        ("a = 5L", "5", True),
    ],
)
def test_comparison_operators(expression: str, value: str, expected: bool) -> None:
    """=, <>, >, >=, <, <= against int, long, double and string literals (ComparisonExpression)."""
    assert ev(expression, a=value) is expected


def test_comparison_binds_tighter_than_equality() -> None:
    """SelectorParser.jj: comparisonExpression (>, BETWEEN, IN) sits below equalityExpression."""
    expr = compile_sql92("a > 1 = TRUE")
    assert expr.text == "((a > 1) == TRUE)"
    assert expr({"a": "2"}) is True


def test_and_binds_tighter_than_or() -> None:
    """orExpression → andExpression: ``x OR y AND z`` is ``x OR (y AND z)``."""
    expr = compile_sql92("a = 1 OR b = 1 AND c = 1")
    assert expr.text == "((a == 1) || ((b == 1) && (c == 1)))"
    assert expr({"a": "1", "b": "0", "c": "0"}) is True  # (a OR b) AND c would be False


def test_not_is_unary_and_binds_tightest() -> None:
    """unaryExpr: ``NOT a = 'x'`` is ``(NOT a) = 'x'``, which fails at run time (Java quirk)."""
    expr = compile_sql92("NOT a = 'x'")
    assert expr.text == "((NOT a) == 'x')"
    with pytest.raises(Sql92EvaluationError, match="ClassCastException"):
        expr.evaluate({"a": "x"})
    assert expr({"a": "x"}) is False


def test_not_with_parentheses() -> None:
    """``NOT (a = 'x')`` negates the comparison; NOT of unknown stays unknown."""
    expr = compile_sql92("NOT (a = 'x')")
    assert expr.text == "(NOT (a == 'x'))"
    assert expr({"a": "y"}) is True
    assert expr({"a": "x"}) is False
    assert expr.evaluate({}) is None


def test_not_before_comparison_is_a_compile_error() -> None:
    """``NOT a > 5`` is ``(NOT a) > 5``: a boolean cannot be ordered (checkLessThanOperand)."""
    with pytest.raises(FilterException, match=r"Value '\(NOT a\)' cannot be compared"):
        compile_sql92("NOT a > 5")


def test_double_not_and_keywords_case_insensitive() -> None:
    """Reserved words are IGNORE_CASE; NOT NOT x is x."""
    assert ev("nOt NoT (a Is NuLl)", b="1") is True
    assert ev("a = 1 oR b = 1", b="1") is True


def test_property_names_are_case_sensitive() -> None:
    """Identifiers name properties exactly: ``A`` is not ``a``."""
    assert ev("A = 1", a="1") is None


# --- BETWEEN / IN / IS NULL ------------------------------------------------------------------
def test_between_is_inclusive_ge_and_le() -> None:
    """createBetween = (v >= low) AND (v <= high)."""
    expr = compile_sql92("a BETWEEN -1.5 AND 2.5")
    assert expr.text == "((a >= (- 1.5)) && (a <= 2.5))"
    assert [expr({"a": v}) for v in ("-1.5", "0", "2.5", "2.6")] == [True, True, True, False]
    # each bound converts the value by its own type: "-1.5" is no Java int
    assert compile_sql92("a BETWEEN -1.5 AND 2")({"a": "-1.5"}) is False


def test_between_integer_bounds_need_integer_values() -> None:
    """With int bounds the value goes through Integer.valueOf: ``"2.5"`` is an error → no match."""
    expr = compile_sql92("a BETWEEN 1 AND 3")
    assert expr({"a": "2"}) is True
    assert expr({"a": "2.5"}) is False
    with pytest.raises(Sql92EvaluationError, match='For input string: "2.5"'):
        expr.evaluate({"a": "2.5"})


def test_between_and_continues_with_and() -> None:
    """``BETWEEN x AND y AND z``: the second AND is the logical one."""
    assert ev("a between 1 and 3 and b = 'q'", a="2", b="q") is True


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (" a between 10 and 0", "left value(10) must less than or equal to right value(0)"),
        ("a between NULL and 2", "values can not be null"),
        ("a between 'a' and 'b'", "Value ''a'' cannot be compared."),
    ],
)
def test_illegal_between(expression: str, message: str) -> None:
    """ParserTest#testParse_illegalBetween and createBetween's constant checks."""
    with pytest.raises(FilterException, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_sql92(expression)


def test_not_between_skips_bound_checks() -> None:
    """createNotBetween = (v < low) OR (v > high), with no low <= high check."""
    expr = compile_sql92("a NOT BETWEEN 10 AND 0")
    assert expr({"a": "5"}) is True
    assert expr.text == "((a < 10) || (a > 0))"


def test_in_list_strings_and_quotes() -> None:
    """IN takes string literals only; ``''`` inside a literal is one quote."""
    expr = compile_sql92("TAGS IN ('a', 'it''s', 'c', 'd', 'e', 'f')")
    assert expr({"TAGS": "it's"}) is True
    assert expr({"TAGS": "g"}) is False
    assert expr.evaluate({}) is None


def test_not_in_missing_property_is_unknown() -> None:
    """UnaryInExpression: a missing property is null for IN and NOT IN alike."""
    assert ev("a NOT IN ('x')") is None


@pytest.mark.parametrize("expression", ["a IN (1, 2)", "a IN ()", "1 IN ('1')"])
def test_in_requires_property_and_string_literals(expression: str) -> None:
    """IN wants a property on the left and at least one string literal."""
    with pytest.raises(FilterException):
        compile_sql92(expression)


def test_is_null_empty_string_is_not_null() -> None:
    """IS NULL tests presence: an empty value is a present (non-null) String."""
    assert ev("a IS NULL", a="") is False
    assert ev("a IS NOT NULL", a="") is True
    assert ev("NULL IS NULL") is True


# --- strings vs numbers, missing properties --------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "value", "expected"),
    [
        ("a = 3", "03", True),  # Integer.valueOf accepts leading zeros
        ("a = 3", "+3", True),
        ("a = '3'", "03", False),  # string literal: String#equals
        ("a = 3.0", "3", True),  # double literal: Double.valueOf
        ("a = 3.0", " 3.0 ", True),  # Double.valueOf trims
        ("a > 1.5", "1e1", True),
        ("a > 1.5", "2d", True),  # Java accepts a d/f suffix
        ("a > 1.5", "NaN", True),  # Double.compare puts NaN above everything
        ("a = TRUE", "TRUE", True),  # Boolean.valueOf ignores case
        ("a = TRUE", "yes", False),
        ("a = FALSE", "yes", True),  # anything but "true" is false
    ],
)
def test_string_property_conversion(expression: str, value: str, expected: bool) -> None:
    """A String meets a number or boolean literal → parsed as that literal's Java type."""
    assert ev(expression, a=value) is expected


@pytest.mark.parametrize(
    ("expression", "value", "error"),
    [
        ("a = 3", "3.0", 'For input string: "3.0"'),
        ("a = 3", " 3", 'For input string: " 3"'),
        ("a > 5", "abc", 'For input string: "abc"'),
        ("a = 5", "3000000000", 'For input string: "3000000000"'),  # beyond int
        ("TRUE = a", "true", "ClassCastException"),
    ],
)
def test_unconvertible_property_raises_and_never_matches(
    expression: str, value: str, error: str
) -> None:
    """NumberFormatException/ClassCastException surface as Sql92EvaluationError; call → False."""
    expr = compile_sql92(expression)
    with pytest.raises(Sql92EvaluationError, match=error):
        expr.evaluate({"a": value})
    assert expr({"a": value}) is False


def test_error_aborts_whole_expression() -> None:
    """Java propagates the exception out of OR: a later TRUE operand cannot rescue it."""
    expr = compile_sql92("a = 1 OR b = 'x'")
    assert expr({"a": "oops", "b": "x"}) is False
    assert compile_sql92("b = 'x' OR a = 1")({"a": "oops", "b": "x"}) is True  # short-circuit


def test_missing_property_three_valued_logic() -> None:
    """LogicExpression: unknown OR TRUE = TRUE, unknown AND FALSE = FALSE, else unknown."""
    assert ev("a > 1 OR b = 'x'", b="x") is True
    assert ev("a > 1 AND b = 'x'", b="y") is False
    assert ev("a > 1 AND b = 'x'", b="x") is None
    assert ev("a > 1 OR b = 'x'", b="y") is None
    assert compile_sql92("a > 1")({}) is False


def test_two_missing_properties_are_equal() -> None:
    """doCreateEqual: null == null is TRUE, so ``a = b`` matches when both are absent."""
    assert ev("a = b") is True
    assert ev("a = b", a="1") is False
    assert ev("a = b", b="1") is None


def test_bare_property_is_boolean_cast() -> None:
    """asBooleanExpression casts a bare property: a String is never Boolean → FALSE."""
    assert ev("a", a="true") is False
    assert ev("a") is None
    assert ev("TRUE") is True


def test_properties_none_is_empty_context() -> None:
    """MessageEvaluationContext with null properties returns null for every name."""
    assert compile_sql92("a IS NULL").evaluate(None) is True
    assert compile_sql92("a = 1")(None) is False


# --- compile errors ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "line", "column"),
    [
        ("a and between 2 and 10", 1, 7),  # ParserTest#testParse_invalid
        # <EOF> is placed on the last character read (JavaCC's SimpleCharStream), and an
        # empty input on the stream's unset slot: line 0, column 0
        ("", 0, 0),
        ("(a = 1", 1, 6),
        ("a = ", 1, 4),
        ("a = 1 NOT x", 1, 11),
        ("a IS 5", 1, 6),
        ("a = 1 AND\n  b =", 2, 5),
    ],
)
def test_syntax_error_names_position(expression: str, line: int, column: int) -> None:
    """A syntax error raises FilterException (a ValueError) naming line, column and offset."""
    with pytest.raises(FilterException) as info:
        compile_sql92(expression)
    e = info.value
    assert isinstance(e, ValueError)
    assert (e.line, e.column) == (line, column)
    assert str(e).startswith("Invalid MessageSelector. ")
    assert f"line {line}, column {column}" in str(e)


def test_syntax_error_is_javacc_parse_exception_text() -> None:
    """ParseException#getMessage word for word: what a real 4.9.3 broker answered to
    CHECK_CLIENT_CONFIG with "a >>> 5" (after "Invalid MessageSelector. ", which Java
    keeps out of the remark). "+" is never listed: JavaCC picks it by an unbounded
    syntactic LOOKAHEAD that generateParseException does not rescan."""
    with pytest.raises(FilterException) as info:
        compile_sql92("a >>> 5")
    assert str(info.value) == (
        'Invalid MessageSelector. Encountered " ">" "> "" at line 1, column 4.\n'
        "Was expecting one of:\n"
        '    "NOT" ...\n    "TRUE" ...\n    "FALSE" ...\n    "NULL" ...\n'
        "    <DECIMAL_LITERAL> ...\n    <FLOATING_POINT_LITERAL> ...\n"
        '    <STRING_LITERAL> ...\n    <ID> ...\n    "(" ...\n    "-" ...\n    '
    )
    with pytest.raises(FilterException) as info:
        compile_sql92("a = 'it''s' >")
    assert str(info.value).startswith('Invalid MessageSelector. Encountered "<EOF>" at line 1, '
                                      "column 13.\nWas expecting one of:\n")  # fmt: skip


def test_syntax_error_lists_expected_tokens() -> None:
    """The message says what was found and what could have come next (JavaCC style)."""
    with pytest.raises(FilterException) as info:
        compile_sql92("a and between 2 and 10")
    msg = str(info.value)
    assert 'Encountered " "BETWEEN" "between "' in msg and "<ID>" in msg and '"("' in msg
    assert info.value.position == 6


@pytest.mark.parametrize(
    ("expression", "text"),
    [
        ("a = 1 # b", 'line 1, column 7.  Encountered: "#" (35), after : ""'),
        ("a = 1 #", 'line 1, column 8.  Encountered: <EOF> after : ""'),
        ("a = 'open", 'line 1, column 10.  Encountered: <EOF> after : "\\\'open"'),
        ("a != 1", 'line 1, column 3.  Encountered: "!" (33), after : ""'),
    ],
)
def test_lexical_error_is_javacc_token_mgr_error_text(expression: str, text: str) -> None:
    """TokenMgrError#LexicalError word for word, as a real 4.9.3 broker answered
    CHECK_CLIENT_CONFIG for the first three (a bad LAST character reads as <EOF>)."""
    with pytest.raises(FilterException) as info:
        compile_sql92(expression)
    assert str(info.value) == "Invalid MessageSelector. Lexical error at " + text


@pytest.mark.parametrize("expression", ["a = 1 #", 'a = "x"', "a = 'open", "a != 1"])
def test_lexical_error(expression: str) -> None:
    """Characters outside the grammar raise FilterException ("Lexical error")."""
    with pytest.raises(FilterException, match="Lexical error"):
        compile_sql92(expression)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("a > 100000000000000000000000", "NumberFormatException"),  # testParse_decimalOverFlow
        ("a > 1" + "1" * 400 + ".5", "is greater than 1.7976931348623157E308"),
        ("a > 0.0", "0.0 is less than 4.9E-324"),  # createFloat rejects zero
        ("a > 'x'", "Value ''x'' cannot be compared."),
        ("a < TRUE", "Value 'TRUE' cannot be compared."),
        ("a = NULL", "'NULL' cannot be compared."),
        ("TRUE = 1", "'TRUE' cannot be compared with '1'"),
        ("5", "Expression will not result in a boolean value: 5"),
        ("-a", r"Expression will not result in a boolean value: \(- a\)"),
        ("a = 1 AND 5", "Expression will not result in a boolean value: 5"),
    ],
)
def test_factory_checks_raise(expression: str, message: str) -> None:
    """Checks Java makes while building the tree become FilterException."""
    with pytest.raises(FilterException, match=message):
        compile_sql92(expression)


def test_type_error_for_non_string() -> None:
    """API misuse: a non-str expression raises TypeError naming the type."""
    with pytest.raises(TypeError, match="int"):
        compile_sql92(5)  # type: ignore[arg-type]


# --- 4.9.3 quirks: no <EOF>, comments --------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "tail"),
    [
        ("a = 1 b = 2", "b = 2"),
        ("a = 1 )", ")"),
        ("a = 1 -- no newline", "-- no newline"),
        ("a = 1 2", "2"),
    ],
)
def test_trailing_tokens_are_ignored(expression: str, tail: str) -> None:
    """JmsSelector() has no <EOF>: parsing stops at the first token that cannot continue."""
    expr = compile_sql92(expression)
    assert expr.ignored_tail == tail
    assert expr.text == "(a == 1)"
    assert expr({"a": "1", "b": "9"}) is True


def test_comments_are_skipped() -> None:
    """Block comments and newline-terminated ``--`` comments are SKIP tokens."""
    expr = compile_sql92("a = 1 /* block */ AND -- line\n b = 2")
    assert expr.ignored_tail == ""
    assert expr({"a": "1", "b": "2"}) is True


# --- compile once ----------------------------------------------------------------------------
def test_compile_once_evaluation_never_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The closure tree is self-contained: with the parser gone, evaluation still works."""
    expr = compile_sql92("a > 5 AND TAGS IN ('A', 'B') OR c IS NULL")

    def no_parser() -> None:
        raise AssertionError("parser used at evaluation time")

    monkeypatch.setattr(sql92, "_parser", no_parser)
    results = [expr({"a": str(i), "TAGS": "A", "c": "1"}) for i in range(1000)]
    assert results.count(True) == 994
    with pytest.raises(AssertionError):
        compile_sql92("a = 1")


def test_compiled_expression_is_immutable() -> None:
    """Sql92Expression is a frozen value: expression text, Java toString and the closure."""
    expr = compile_sql92("a = 1")
    assert isinstance(expr, Sql92Expression)
    assert (expr.expression, str(expr)) == ("a = 1", "(a == 1)")
    with pytest.raises(AttributeError):
        expr.expression = "b = 1"  # type: ignore[misc]
