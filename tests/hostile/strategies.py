"""Hypothesis strategies of hostile values, one per input kind and threat class (issue #32,
section 6; the kinds and classes are in ``surface_kinds.py``).

Each strategy mixes a fixed list of the values that broke something before (NaN, ``1e309``, a
400-digit integer, a NUL, ``..``, ``<script>``) with generated ones (control characters spliced
into text, tokens of random characters), so a few examples per surface already reach the edges.
YAML values are Python objects (dumped with ``yaml.safe_dump``); command-line values are text.
"""

from __future__ import annotations

import string

from hypothesis import strategies as st

BIG = 10**400  # an integer no float holds (a 400-digit score, a took, a seed)
CONTROL = ["\x00", "\x1b[2J", "\n", "\r", "\u202e", "\u200b", "\x7f", "\x07"]

_word = st.text(alphabet=string.ascii_letters + string.digits + " ._-/", max_size=12)
spliced = st.builds(lambda a, c, b: a + c + b, _word, st.sampled_from(CONTROL), _word)

# --- YAML values ------------------------------------------------------------------------------

# never a number anyone means: refused wherever a number is read
yaml_bad_numbers = st.sampled_from(
    [float("nan"), float("inf"), float("-inf"), True, False, "ten", "", "1,5", [1], {"a": 1}]
)
# odd but maybe meant: one line or accepted, never a traceback
yaml_odd_numbers = st.one_of(
    yaml_bad_numbers,
    st.sampled_from([BIG, -BIG, -0.0, 1e-320, 2**63, -(2**63) - 1, "1e309", "0x10"]),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
)
# never one of a closed set
yaml_bad_choices = st.one_of(
    st.sampled_from(["\u202e", "nosuch", "TRUE ", "maybe", 2, 0.5, [], {"a": [None]}]),
    spliced,
)
yaml_text = st.one_of(
    st.sampled_from([None, 1, 1.5, True, [], {"a": 1}, "", "\u202e", "x" * 10_000, "a\nb", BIG]),
    spliced,
    st.text(max_size=30),
)
yaml_structures = st.sampled_from([{"\u202e": [None]}, [["x"]], float("nan"), "text", 1, True, BIG])
# paths: special files (made by the fixture: adir, fifo), devices, NUL, control characters
yaml_bad_paths = st.one_of(
    st.sampled_from(["adir", "fifo", "/dev/zero", "a\x00b", "x" * 5000, "../" * 40 + "nosuch", ""]),
    spliced,
)
# a reference to code that cannot be what it says
bad_code = st.one_of(
    st.sampled_from(["nosuchmodule_xq:f", "os", ":", "a:b:c", "\u202e:f", "", "os:..", "1x:f"]),
    spliced,
)
# JMESPath that does not compile
bad_jmespath = st.sampled_from(["hits[", "a..b", "@@", "`", "hits[?", "\u202e", "", "a b"])

# --- secrets ----------------------------------------------------------------------------------

# a token as a credential is: letters, digits and the punctuation of base64, URLs and passwords
tokens = st.text(alphabet=string.ascii_letters + string.digits + "+/=_-.~!*", min_size=20, max_size=40).map(
    lambda s: "Zq7" + s
)

# --- markup, URL parts, shell words -----------------------------------------------------------

markup = st.one_of(
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "[x](javascript:alert(1))",
            "](javascript:alert(1))",
            "@octocat please look",
            "see https://evil.example/x",
            "<https://evil.example/y>",
            "| a | b |",
            "`code` *em* _u_",
            "<!-- x",
            "&lt;already&gt;",
        ]
    ),
    st.builds(lambda a, b: a + "<b>" + b, _word, _word),
)
url_parts = st.one_of(
    st.sampled_from(["..", "../..", "/", "a/../../b", "?x=1", "#frag", "%2e%2e", "a b", "\u202e", "..%2f"]),
    st.text(alphabet="./?#%&=@:", min_size=1, max_size=8),
)
shell_words = st.one_of(
    st.sampled_from(["; rm -rf x", "$(id)", "`id`", "a\nb", "-rf", "'", '"', "a b", "*", "~", "$HOME"]),
    st.text(alphabet="$`;|&<>()'\" \n*?~-", min_size=1, max_size=8),
)

# --- command-line values (text) ----------------------------------------------------------------

cli_bad_numbers = st.sampled_from(["nan", "inf", "-inf", "1e309", "true", "ten", "", "1,5", "\u202e"])
cli_odd_numbers = st.one_of(
    cli_bad_numbers,
    st.sampled_from([str(BIG), "-" + str(BIG), "-0", "1e-400", "0x10", "1_000"]),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)
cli_bad_choices = st.sampled_from(["\u202e", "nosuch", "", "=1", "NAN"])
cli_text = st.one_of(st.sampled_from(["", "\u202e", "x" * 5000, "a\nb", "-", "--"]), spliced)
# paths the fixture makes special (a folder, a FIFO), devices, a NUL; "<input>" is the command's
# own input file (an output that would overwrite what it reads)
cli_bad_paths = st.sampled_from(["adir", "fifo", "/dev/zero", "a\x00b", "nosuchdir/x"])
cli_bad_outputs = st.sampled_from(["adir", "fifo", "/dev/null", "a\x00b", "nosuchdir/x", "<input>"])
