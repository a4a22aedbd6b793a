"""A business's functions in any trade (stop 43, issue 24 point 2), in sentences of our own: a function said as one
capitalised word opening the sentence ("Payroll is on BrightPay"), functions of teams that write no software
(payroll, rota, bookings, leave, insurance …), a brand typed as its address ("incident.io"), "all the X" as the X, and
a thing moved "out of" one tool "into" another."""

from datetime import UTC, datetime

import pytest

from retrieval.spans import expected_kind
from tests.memories.reading import read


@pytest.mark.parametrize("text, fact", [
    ("Payroll is on BrightPay.", ("Orbit", "payroll_tool", "BrightPay")),
    ("Payroll goes through BrightPay now.", ("Orbit", "payroll_tool", "BrightPay")),
    ("Leave goes through Timetastic.", ("Orbit", "leave_tool", "Timetastic")),
    ("Bookings go through Bookwhen now.", ("Orbit", "booking_tool", "Bookwhen")),
    ("Paging is on incident.io", ("Orbit", "on_call_tool", "incident.io")),
    ("We use Terraform for all the infra, nobody click in the console", ("Orbit", "infra_tool", "Terraform")),
])
def test_a_function_said_in_one_word_or_of_any_trade_is_read_with_its_tool(text, fact):
    assert fact in read(text)


def test_a_thing_moved_out_of_one_tool_into_another_is_a_switch():
    assert ("Orbit", "rota_tool", "Rotacloud", "Google Sheets") in read(
        "The rota moved out of Google Sheets into Rotacloud.", previous=True)


@pytest.mark.parametrize("text", [
    "Mark goes through the numbers on Friday",  # a person, not a function
    "Tomasz is on holiday",
    "Leave it with me",
])
def test_a_person_or_an_errand_is_no_function(text):
    assert [f for f in read(text, people=("tomasz", "mark")) if f[0] == "Orbit" and f[1].endswith("_tool")] == []


@pytest.mark.parametrize("question, kind", [
    ("Which week of September is the offsite?", "date"),
    ("In which month did Ana become head of sales?", "date"),
    ("What year did we open the Leeds shop?", "date"),
    ("Which day of the week is the shop closed?", None),  # a weekday is answered as said, not as a date
])
def test_which_week_month_or_year_asks_for_a_date(question, kind):
    assert expected_kind(question) == kind


def test_a_thing_up_in_a_tool_is_kept_there_and_up_alone_is_no_value():
    assert ("Orbit", "volunteer_rota_tool", "Deputy") in read("the volunteer rota is up in Deputy, don't edit other people's shifts")
    assert [f for f in read("the rota is up") if f[0] == "Orbit"] == []


@pytest.mark.parametrize("sentence, expected", [
    ("The group was founded in 2016 by Ana.", "2016"),  # a year said alone
    ("we have 2000 members now", ""),  # a number, no year
    ("I'm on sabbatical from September 2024 to February 2025", "September 2024"),  # a period: "from" opens it
])
def test_a_year_alone_and_from_in_a_period_or_a_move(sentence, expected):
    from retrieval.spans import date_span

    assert date_span(sentence, datetime(2025, 4, 1, tzinfo=UTC)) == expected


def test_a_date_moved_from_one_day_is_the_day_it_moved_to():
    from retrieval.spans import date_span

    assert date_span("we pushed the launch from 12 May to 9 June", datetime(2025, 4, 1, tzinfo=UTC)).startswith("9 June")
