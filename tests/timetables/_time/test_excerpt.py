"""The one renderer of user-given values in refusals: repr() for ordinary values, never failing, never long."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.timetables._time.excerpt import excerpt

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=200),
    lambda children: (
        st.lists(children, max_size=5)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(value=JSONISH, limit=st.integers(min_value=10, max_value=200))
def test_an_ordinary_value_reads_as_its_repr_within_the_limit(value: object, limit: int) -> None:
    text = excerpt(value, limit)
    assert len(text) <= limit
    whole = repr(value)
    if len(whole) <= limit:
        assert text == whole
    else:
        assert text.endswith("...") and whole.startswith(text[:-3])


class _Hostile:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        if self.kind == "raises":
            raise RuntimeError("no repr")
        if self.kind == "huge":
            return "x" * 10_000_000
        return repr(self)  # recurses


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (10**5000, "<integer of about 5000 digits>"),
        (-(10**5000), "-<integer of about 5000 digits>"),
        (10**40, "1" + "0" * 40),  # fits the excerpt: exact
        (_Hostile("raises"), "<_Hostile object>"),
        (_Hostile("recurses"), "<_Hostile object>"),
    ],
    ids=["huge-int", "huge-negative-int", "41-digits", "repr-raises", "repr-recurses"],
)
def test_a_hostile_value_is_named_without_failing(value: object, expected: str) -> None:
    assert excerpt(value, 60) == expected


def test_deep_nesting_long_text_and_a_huge_repr_stay_short() -> None:
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    assert excerpt(nested, 60) == "[[[[[[[[[...]]]]]]]]]"
    assert excerpt("a" * 10**7, 20) == "'aaaaaaaaaaaaaaaa..."
    assert len(excerpt(_Hostile("huge"), 60)) == 60
