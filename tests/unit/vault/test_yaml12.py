"""The fast YAML 1.2 value builder (vault/yaml12.py) against PyYAML's own construction."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault.frontmatter import load_properties
from notedex.vault.yaml12 import Yaml12Loader

SETTINGS = settings(max_examples=200, deadline=None)

# --- the fast YAML builder agrees with PyYAML's constructor -------------------------------------

_plain_scalars = st.sampled_from(
    [
        *["yes", "No", "on", "true", "FALSE", "tRuE", "null", "~", "", "012", "0o17", "0x1f"],
        *["-5", "1.5", ".inf", "-.Inf", ".NaN", "1e3", "1:20", "2023-01-05", "2023-13-45"],
        *["2023-01-05 10:00:00", "word", "'quoted'", '"dq"', "!!binary aGk=", "!!str 5"],
        "!!float 1",
    ]
)
_yaml_node: st.SearchStrategy[str] = st.recursive(
    _plain_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(st.sampled_from(["a", "b", "1", "yes"]), children), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"
        ),
    ),
    max_leaves=8,
)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["k1", "k2", "k3", "k4"]), _yaml_node), max_size=4))
def test_yaml_builder_matches_pyyaml_construction(pairs: list[tuple[str, str]]) -> None:
    unique = dict(pairs)  # later keys win in both readings only without duplicates
    source = "".join(f"{key}: {value}\n" for key, value in unique.items())
    try:
        expected = yaml.load(source, Loader=Yaml12Loader)  # a SafeLoader subclass
    except (yaml.YAMLError, ValueError):
        return
    got = load_properties(source)
    if not unique:
        assert got is None
    else:
        assert repr(got) == repr(expected)  # repr: nan != nan
