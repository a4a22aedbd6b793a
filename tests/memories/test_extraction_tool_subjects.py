"""A tool named as the subject of what it does for the team (stop 44, issue 24 point 2): "PagerDuty is set up for on-call",
"GitHub Actions handles CI now", in several tenses. A name that could be a person's takes only the verbs said of tools
alone ("is set up for", "is used for", "powers"); "Maria handles payroll" is no tool."""

import pytest

from tests.memories.reading import read


@pytest.mark.parametrize("text, fact", [
    ("PagerDuty is set up for on-call now, the rota starts monday", ("Orbit", "on_call_tool", "PagerDuty")),
    ("Opsgenie has been set up for paging", ("Orbit", "on_call_tool", "Opsgenie")),
    ("Zettle is used for the market stall card payments", ("Orbit", "market_stall_card_payment_tool", "Zettle")),
    ("GitHub Actions handles CI now", ("Orbit", "ci_tool", "GitHub Actions")),
    ("GitLab is handling our CI these days", ("Orbit", "ci_tool", "GitLab")),
    ("PagerDuty takes care of on-call for us", ("Orbit", "on_call_tool", "PagerDuty")),
    ("BambooHR now handles the payroll", ("Orbit", "payroll_tool", "BambooHR")),
])
def test_a_tool_as_the_subject_of_a_function_is_the_team_s_tool(text, fact):
    assert fact in read(text)


@pytest.mark.parametrize("text", [
    "Maria handles payroll",  # a person's job: an owner, not a tool
    "Maria is handling on-call this week",
    "tomasz is doing payroll",  # a speaker
    "Mark runs the builds",
    "Opsgenie handles paging",  # a name that could be a person's, with a verb said of people too
])
def test_a_name_that_could_be_a_person_s_with_a_person_s_verb_is_no_tool(text):
    assert [f for f in read(text, people=("tomasz", "mark")) if f[0] == "Orbit" and f[1].endswith("_tool")] == []
