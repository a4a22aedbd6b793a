"""The `merge` door: dry run, merge, undo, by name or id, and the fact documents named after the subject."""

import contextlib
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import AuditEvent
from memories.models import Entity, EntityMerge, Fact
from memories.services.indexing import queue_index
from memories.services.reconcile import NewFact, fact_reconcile
from memories.services.resolve import Resolver
from retrieval.models import SearchDocument

from .conftest import at


def call(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # --json writes to sys.stdout
        call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def pair(cast, committed):
    resolver = Resolver(scope=cast.scope_a)
    jonny = resolver.resolve("Jonny", kind="person").entity
    jon = resolver.resolve("Jon Smith", kind="person").entity
    fact = fact_reconcile(scope=cast.scope_a, episode=None, new=NewFact(
        subject=jonny, attribute="likes", value="football", sentence="I like football.", valid_from=at(2024, 1)))
    with committed():
        queue_index(cast.scope_a)  # index the scope, as extraction would have
    return jonny, jon, fact.fact


def _document(fact: Fact) -> str:
    return SearchDocument.objects.get(collection="fact", target_id=fact.pk).text


def test_a_dry_run_shows_what_would_move_and_changes_nothing(cast, pair):
    out = call("merge", "Jonny", "Jon Smith", "--scope", "alpha", "--dry-run", "--as", "viewer")
    assert out.splitlines()[0] == "Would merge Jonny into Jon Smith (nothing changed):"
    assert "facts about it: 1" in out and "aliases: Jonny" in out
    data = json.loads(call("merge", "Jonny", "Jon Smith", "--scope", "alpha", "--dry-run", "--json", "--as", "viewer"))
    assert data["facts_as_subject"] == [str(pair[2].public_id)] and data["collisions"] == []
    assert not EntityMerge.objects.exists() and not AuditEvent.objects.exists()


def test_merge_then_undo_by_id_rewrites_the_fact_documents_both_ways(cast, pair, committed):
    jonny, jon, fact = pair
    assert _document(fact) == "Jonny: I like football."
    with committed():
        data = json.loads(call("merge", str(jonny.public_id), "jon smith", "--scope", "alpha", "--json", "--as", "editor"))
    merge = EntityMerge.objects.get()
    assert data["id"] == str(merge.public_id) and data["moved"]["facts_subject"] == 1
    assert Entity.objects.get(pk=jonny.pk).merged_into == jon
    assert _document(fact) == "Jon Smith: I like football."  # a fresh build would write this
    with committed():
        out = call("merge", "undo", str(merge.public_id), "--scope", "alpha", "--as", "editor")
    assert out.strip() == f"Undid merge {merge.public_id}: Jonny is its own entity again."
    assert _document(fact) == "Jonny: I like football."


def test_the_door_refuses_a_viewer_an_unknown_name_one_entity_twice_and_a_second_undo(cast, pair):
    with pytest.raises(CommandError, match="You may not write scope 'alpha'"):
        call("merge", "Jonny", "Jon Smith", "--scope", "alpha", "--as", "viewer")
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        call("merge", "Jonny", "Jon Smith", "--scope", "alpha", "--as", "outsider")
    with pytest.raises(CommandError, match="No entity named 'Nobody'"):
        call("merge", "Nobody", "Jon Smith", "--scope", "alpha", "--as", "editor")
    with pytest.raises(CommandError, match="one entity already"):
        call("merge", "jonny", "Jonny", "--scope", "alpha", "--as", "editor")
    merge_id = json.loads(call("merge", "Jonny", "Jon Smith", "--scope", "alpha", "--json", "--as", "editor"))["id"]
    call("merge", "undo", merge_id, "--scope", "alpha", "--as", "editor")
    with pytest.raises(CommandError, match="undone already"):
        call("merge", "undo", merge_id, "--scope", "alpha", "--as", "editor")
