"""A business's functions asked in their other common words (stop 43, issue 24): "IaC" is the infra, "observability"
monitoring, "BI" the dashboards, "ETL" the data pipelines, "feature toggles" feature flags, an "outage page" the status
page, "tills" the point of sale, an "online store" the webshop, a "mailing list" the newsletter, a "roster" the rota; and
a question about another aspect of a function ("the infrastructure budget") is not answered by its tool."""

from datetime import UTC, datetime

import pytest

from memories.extraction.vocabulary import function_key
from retrieval.answer import answer
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize("asked, said", [
    ("IaC", "infrastructure"), ("observability", "monitoring"), ("BI", "dashboards"), ("ETL", "data pipelines"),
    ("feature toggles", "feature flags"), ("outage page", "status page"), ("tills", "point of sale"),
    ("online store", "webshop"), ("mailing list", "newsletter"), ("roster", "rota"), ("electricity", "energy"),
])
def test_other_words_for_a_function_name_the_same_function(asked, said):
    assert function_key(asked) == function_key(said)


@pytest.mark.django_db
@pytest.mark.parametrize("statement, question, expected", [
    ("We use Terraform for all the infra, please don't click around in the console.", "What's our IaC tool?", "Terraform"),
    ("Our dashboards are in Looker.", "Which BI tool do we use?", "Looker"),
    ("We moved the data pipelines from Luigi to Prefect this month.", "Which orchestrator runs our ETL jobs?", "Prefect"),
    ("We replaced Pingdom with Checkly for monitoring.", "What do we use for observability?", "Checkly"),
    ("The shop tills run on Square now.", "What's our point of sale system?", "Square"),
])
def test_a_question_in_other_words_finds_the_function_s_tool(say, statement, question, expected):
    say("ines", statement, "2025-03-02")
    assert expected in answer(scope=say.cast.scope_a, question=question, now=NOW).text.split("\n")[0]


@pytest.mark.django_db
def test_another_aspect_of_a_function_is_not_answered_by_its_tool(say):
    say("ines", "We use Terraform for all the infra, please don't click around in the console.", "2025-03-02")
    assert "Terraform" not in answer(scope=say.cast.scope_a, question="What's the infrastructure budget for 2027?", now=NOW).text.split("\n")[0]


@pytest.mark.django_db
def test_of_attributes_said_as_fully_the_one_whose_words_the_question_says_answers(say):
    say("mei", "Email is on Exchange Online, the last on-prem mailbox server went this weekend.", "2024-03-11")
    say("kwame", "We migrated all our repos from Bitbucket to GitLab over the weekend.", "2024-06-03")
    # "hosted" is a word of code hosting too: code_tool and email_tool are both said wholly
    assert "Exchange Online" in answer(scope=say.cast.scope_a, question="Where is our email hosted?", now=NOW).text.split("\n")[0]
