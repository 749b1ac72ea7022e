"""How the reports write a gate's owners (issue #36): CODEOWNERS names as code in the Markdown
comment (a code span notifies no one), live @mentions only when the file asked for them and each
name is one; a report read from disk is checked again."""

from __future__ import annotations

from pytest_retrieval.reports import markdown


def test_owners_are_code_unless_a_mention_was_asked_for():
    assert markdown._owners({"owners": ["@org/search"]}) == " (owner `@org/search`)"
    assert markdown._owners({"owners": ["@org/search"], "mention": True}) == " (owner @org/search)"
    assert markdown._owners({}) == ""


def test_a_tampered_report_never_renders_markup_as_a_mention():
    shown = markdown._owners({"owners": ["@org/x](https://evil.example)"], "mention": True})
    assert "\\]\\(" in shown and "@&#8203;org/x" in shown  # escaped: no link, no live mention
    assert markdown._owners({"owners": ["@a"], "mention": "yes"}) == " (owner `@a`)"  # only true
