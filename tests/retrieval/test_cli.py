"""The CLI doors: recall, query, chat, and who may use them."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.retrieval.conftest import SCENARIO  # noqa: F401  (the fixture's statements)

pytestmark = pytest.mark.django_db


def run(*args, stdin=None, monkeypatch=None) -> str:
    out = io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    call_command(*args, stdout=out)
    return out.getvalue()


def test_recall_json_lists_results_with_lanes_interval_and_ids(scenario, capsys):
    call_command("recall", "Where do I live?", "--scope", "alpha", "--speaker", "ankesh", "--json", "--as", "owner")
    data = json.loads(capsys.readouterr().out)
    top = data["results"][0]
    assert top["kind"] == "fact" and top["value"] == "New York" and top["status"] == "active"
    assert set(top["lanes"]) == {"similarity", "importance", "recency"}
    assert top["valid_from"].startswith("2025-04-20") and top["valid_to"] is None
    assert top["source"]["episode"] and top["id"]


def test_recall_history_and_as_of_flags(scenario, capsys):
    call_command("recall", "San Francisco", "--scope", "alpha", "--history", "--json", "--as", "owner")
    statuses = {(r["value"], r["status"]) for r in json.loads(capsys.readouterr().out)["results"] if r["kind"] == "fact"}
    assert ("San Francisco", "superseded") in statuses
    call_command("recall", "where does ankesh live", "--scope", "alpha", "--as-of", "2024-12-31", "--json", "--as", "owner")
    values = [r["value"] for r in json.loads(capsys.readouterr().out)["results"] if r["kind"] == "fact" and r.get("attribute") == "lives_in"]
    assert values == ["San Francisco"]


def test_query_json_has_answer_and_evidence(scenario, capsys):
    call_command("query", "What is my job?", "--scope", "alpha", "--speaker", "ankesh", "--json", "--as", "viewer")
    data = json.loads(capsys.readouterr().out)
    assert "senior engineer at Google" in data["answer"]
    assert data["evidence"] and all({"kind", "text", "lanes", "valid_from", "valid_to", "source"} <= set(e) for e in data["evidence"])


def test_query_text_output(scenario):
    out = run("query", "Where do I live?", "--scope", "alpha", "--speaker", "ankesh", "--as", "owner")
    assert out.startswith("You live in New York") and "Evidence:" in out


def test_an_outsider_gets_not_found(scenario):
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        run("recall", "anything", "--scope", "alpha", "--as", "outsider")
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        run("query", "anything?", "--scope", "alpha", "--as", "outsider")


def test_bad_input_is_a_clear_error(scenario):
    with pytest.raises(CommandError, match="as_of"):
        run("recall", "x", "--scope", "alpha", "--as-of", "yesterday-ish", "--as", "owner")


@pytest.mark.django_db(transaction=True)  # real commits: each line's extraction runs before the next line
def test_chat_remembers_statements_and_answers_questions(cast, monkeypatch):
    script = "\n".join([
        "I just started at Google as a software engineer in San Francisco",
        "I moved from San Francisco to New York",
        "Where do I live?",
        "/ask Did I ever live in San Francisco?",
        "/remember What a week!",
        "/quit",
        "I love tennis",  # after /quit: never read
    ]) + "\n"
    out = run("chat", "--scope", "alpha", "--speaker", "ankesh", "--as", "owner", stdin=script, monkeypatch=monkeypatch)
    lines = out.splitlines()
    assert lines[0] == "Remembered (done)." and "learned: ankesh lives in San Francisco." in out
    assert any(line.startswith("You live in New York") for line in lines)
    assert "Facts used:" in out and "ankesh lives in New York. (active" in out
    assert any(line.startswith("Yes: you lived in San Francisco from") for line in lines)
    assert out.count("Remembered") == 3  # "/remember What a week!" is stored although it starts like a question
    assert "tennis" not in out


def test_chat_tells_a_viewer_it_cannot_write(cast, monkeypatch):
    out = run("chat", "--scope", "alpha", "--as", "viewer", stdin="I love tennis\nWhat do I like?\n", monkeypatch=monkeypatch)
    assert "error: You may read scope 'alpha' but not write to it." in out
    assert "Remembered" not in out


def test_chat_json_writes_one_object_per_reply(cast, monkeypatch):
    out = run("chat", "--scope", "alpha", "--as", "viewer", "--json", stdin="I love tennis\nWhat do I like?\n", monkeypatch=monkeypatch)
    replies = [json.loads(line) for line in out.splitlines()]
    assert [r["input"] for r in replies] == ["I love tennis", "What do I like?"]
    assert replies[0] == {"input": "I love tennis", "reply": None, "error": "You may read scope 'alpha' but not write to it."}
    assert replies[1]["error"] is None and replies[1]["reply"]
