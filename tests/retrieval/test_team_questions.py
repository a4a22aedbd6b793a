"""Questions that find facts whatever the words (issue 12, point 3): attribute synonyms and
spellings, team questions, the past through the supersession chain, a time in the question as
`as_of`, and the evidence's answering span when no fact holds the answer. With a model, the
prompt carries the fact chains and the time asked about."""

from datetime import UTC, datetime

import pytest

from memories.models import Fact
from memories.services.ingest import remember
from retrieval.answer import answer
from retrieval.temporal import as_of_in_question
from tests.replay import replay_server  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 1, tzinfo=UTC)
STATEMENTS = [
    ("tomasz", "Our payment provider is Stripe.", "2025-01-07"),
    ("ada", "I live in Lisbon.", "2025-01-09"),
    ("ada", "My manager is Priya.", "2025-01-10"),
    ("maya", "I am based in Warsaw.", "2025-01-15"),
    ("tomasz", "Dana owns the billing service.", "2025-01-14"),
    ("sam", "My favourite editor is Emacs.", "2025-01-22"),
    ("dana", "We switched the billing service from Stripe to Adyen in March 2025.", "2025-03-03"),
    ("ada", "I moved from Lisbon to Munich.", "2025-09-01"),
    ("tomasz", "PagerDuty is what we page people with for on-call.", "2025-02-04"),
    ("ada", "I moved from Munich to Porto.", "2026-10-01"),
    ("tomasz", "Maya owns the billing service now.", "2026-07-06"),
]


@pytest.fixture
def team(cast, django_capture_on_commit_callbacks):
    cast.team_a.name = "Kestrel"
    cast.team_a.save()
    for speaker, text, day in STATEMENTS:
        with django_capture_on_commit_callbacks(execute=True):
            remember(scope=cast.scope_a, text=text, speaker=speaker, occurred_at=datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC),
                     actor=cast.p_owner)
    return cast


def ask(cast, question, speaker=""):
    return answer(scope=cast.scope_a, question=question, speaker=speaker, now=NOW)


@pytest.mark.parametrize("question, speaker, expected", [
    ("Where is maya based?", "", "maya lives in Warsaw"),
    ("Where does maya live?", "", "maya lives in Warsaw"),
    ("Who is my boss?", "ada", "Priya"),
    ("Who is ada's manager?", "", "Priya"),
    ("Who does ada report to?", "", "Priya"),
    ("Who manages ada?", "", "Priya"),
    ("What is sam's favorite editor?", "", "Emacs"),
    ("What is sam's favourite editor?", "", "Emacs"),
])
def test_synonyms_and_spellings_find_the_fact(team, question, speaker, expected):
    reply = ask(team, question, speaker)
    assert expected in reply.text
    assert reply.citations and reply.citations[0] == reply.facts_used[0].id  # names the fact it used


@pytest.mark.parametrize("question, expected, wrong", [
    ("What payment provider do we use?", "Adyen", "Stripe"),
    ("Which payment processor do we use?", "Adyen", "Stripe"),
    ("Who owns billing?", "maya", "Dana"),
    ("Who owns the billing service?", "maya", "Dana"),
])
def test_team_questions(team, question, expected, wrong):
    reply = ask(team, question)
    assert expected in reply.text and wrong not in reply.text


def test_the_past_walks_the_supersession_chain(team):
    reply = ask(team, "What did we use before Adyen?")
    assert reply.text.startswith("Before Adyen: Kestrel used for payment: Stripe") and "Adyen" in reply.text
    reply = ask(team, "Where did ada live before Porto?")
    assert "Munich" in reply.text and "Lisbon" not in reply.text
    stripe = Fact.objects.in_scope(team.scope_a).get(attribute="payment_tool", value="Stripe")
    assert str(stripe.public_id) in reply.citations or str(stripe.public_id) in ask(team, "What did we use before Adyen?").citations


@pytest.mark.parametrize("question, expected, wrong", [
    ("Where did ada live in August 2026?", "Munich", "Porto"),
    ("Where did ada live in June 2025?", "Lisbon", "Porto"),
    ("Which payment provider did we use in January 2025?", "Stripe", "Adyen"),
    ("Who owned billing in 2025?", "Dana", "maya"),
])
def test_a_time_in_the_question_answers_as_of_that_time(team, question, expected, wrong):
    reply = ask(team, question)
    assert expected in reply.text and wrong not in reply.text
    assert reply.text.startswith("As of ")


def test_as_of_in_question_reads_past_states_only():
    assert as_of_in_question("Where did ada live in August 2026?", now=NOW).date().isoformat() == "2026-08-31"
    assert as_of_in_question("Where did ada live in 2025?", now=NOW).date().isoformat() == "2025-12-31"
    assert as_of_in_question("Where does ada live?", now=NOW) is None
    assert as_of_in_question("What happened since March 2025?", now=NOW) is None


def test_without_a_fact_the_answer_is_the_evidence_s_answering_span(team):
    reply = ask(team, "Which on-call tool do we use?")
    first, quote = reply.text.split("\n", 1)
    assert first == "PagerDuty"  # the value first, then the evidence
    assert quote.startswith('tomasz said on 4 February 2025: "PagerDuty is what we page people with for on-call')
    assert "I found no fact" not in reply.text
    assert len(reply.citations) == 1


def test_an_unanswerable_question_still_says_so(team):
    assert ask(team, "What is the airspeed of a swallow?").text.startswith(("I found no fact", "I don't know"))


def test_with_a_model_the_prompt_has_the_fact_chains_and_the_time_asked_about(team, replay_server, settings):  # noqa: F811
    reply = {"answer": "Munich.", "citations": []}
    server = replay_server(ollama=[{"match": "Question: Where did ada live in August 2026?", "responses": [{"content": reply}]}])
    server.configure(settings, "ollama")
    # The window narrows the episodes too, which leaves the evidence room for the other chains
    # checked below (under the default, facts only, episodes of other months take their places).
    settings.RETRIEVAL_TIME_WINDOWS = "all"
    result = ask(team, "Where did ada live in August 2026?")
    assert result.text == "Munich." and result.provider.startswith("ollama")
    (body,) = server.chats("/api/chat")
    prompt = body["messages"][1]["content"]
    assert "The question asks as of 2026-08-31" in prompt
    assert "ada lives_in: Lisbon (2025-01-09 – 2025-09-01) -> Munich (2025-09-01 – 2026-10-01) -> Porto (2026-10-01 – now)" in prompt
    assert "Kestrel payment_tool: Stripe (2025-01-07 – 2025-03-01) -> Adyen (2025-03-01 – now)" in prompt
    assert "owns: Dana: billing service (2025-01-14 – 2026-07-06) -> maya: billing service (2026-07-06 – now)" in prompt
