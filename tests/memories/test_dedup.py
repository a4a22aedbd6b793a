"""Entity deduplication: three passes propose merges with their evidence, `dedup` merges them
(and undoes them exactly), the nightly task auto-merges only the sure ones, and the admin
merges or dismisses proposals."""

import contextlib
import io
import json

import pytest
from django.conf import settings
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction

from accounts.models import AuditEvent, Role
from accounts.services import membership_set, user_create
from memoryweb.errors import Forbidden, NotFound
from memoryweb.providers.embedders import get_embedder
from memories.models import (
    Embedding, EmbeddingTarget, Entity, EntityAlias, EntityMerge, Episode, Fact, FactSupport, Mention, MergeProposal,
    ProposalKind, ProposalStatus,
)
from memories.normalize import normalize_name
from memories.services.dedup import dedup_apply, dedup_key, dedup_propose, dedup_record
from memories.services.reconcile import NewFact, fact_reconcile
from memories.tasks import dedup_scopes

from .conftest import at


def call(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # --json writes to sys.stdout
        call_command(*args, stdout=out)
    return out.getvalue()


def entity(scope, name, kind="organization", *, aliases=()):
    """An entity with its name (and any other names) as aliases, as resolution records them."""
    made = Entity.objects.create(scope=scope, name=name, kind=kind)
    for alias in (name, *aliases):
        EntityAlias.objects.create(scope=scope, entity=made, alias=alias, normalized=normalize_name(alias))
    return made


def fact(scope, subject, attribute, value, when, *, episode=None, object_entity=None):
    return fact_reconcile(scope=scope, episode=episode, new=NewFact(
        subject=subject, attribute=attribute, value=value, sentence=f"{subject.name} {attribute} {value}.",
        valid_from=when, object_entity=object_entity,
    )).fact


def vector(*head: float) -> list[float]:
    dim = get_embedder().dim
    return [*head, *[0.0] * (dim - len(head))]


def name_vector(scope, target: Entity, vec: list[float]) -> None:
    Embedding.objects.create(scope=scope, target_type=EmbeddingTarget.ENTITY, target_id=target.pk, model=get_embedder().name, vec=vec)


class World:
    pass


@pytest.fixture
def google(cast):
    """Three spellings of one company, with facts (one colliding), mentions and a fact pointing at
    one of them; Apple, which is none of them; Ann, who works at "google inc"."""
    w = World()
    scope = w.scope = cast.scope_a
    w.google = entity(scope, "Google")
    w.inc = entity(scope, "google inc")
    w.mine = entity(scope, "my company Google")
    w.apple = entity(scope, "Apple")
    w.ann = entity(scope, "Ann", "person")
    w.e1, w.e2 = (Episode.objects.create(scope=scope, text=f"episode {n}", occurred_at=at(2024, n)) for n in (1, 2))
    fact(scope, w.google, "likes", "search", at(2023, 1), episode=w.e1)
    fact(scope, w.google, "has_office", "Zurich", at(2023, 2), episode=w.e1)
    w.dup = fact(scope, w.inc, "likes", "search", at(2022, 5), episode=w.e2)  # collides with Google's
    FactSupport.objects.create(scope=scope, fact=w.dup, episode=w.e1, sentence="google inc likes search.")
    fact(scope, w.ann, "works_at", "google inc", at(2021, 3), object_entity=w.inc)
    for target, episode in ((w.google, w.e1), (w.inc, w.e2), (w.mine, w.e2), (w.google, w.e2)):
        Mention.objects.create(scope=scope, episode=episode, entity=target, role="other")
    return w


def snapshot() -> dict[str, list[dict]]:
    """Every row of the tables a merge touches, by primary key."""
    return {model.__name__: list(model.objects.order_by("pk").values())
            for model in (Entity, EntityAlias, Fact, FactSupport, Mention)}


def everything() -> dict[str, list[dict]]:
    """snapshot() and the rows only a write would add: merges, proposals, audit events."""
    return {**snapshot(), **{model.__name__: list(model.objects.order_by("pk").values())
                             for model in (EntityMerge, MergeProposal, AuditEvent, Embedding)}}


@pytest.mark.parametrize("name, key", [
    ("Google", "google"), ("google inc", "google"), ("my company Google", "google"), ("Google, Inc.", "google"),
    ("GOOGLE LLC", "google"), ("Google's", "google"), ("Acme Pty Ltd", "acme"), ("Johnson & Co.", "johnson"),
    ("Siemens GmbH", "siemens"), ("our Google", "google"), ("my friend Ann", "ann"), ("O'Brien", "obrien"),
    ("U.S. Bank", "us bank"), ("my company", "my company"), ("Inc", "inc"), ("...", ""),
])
def test_the_normaliser_drops_case_punctuation_company_suffixes_and_owner_prefixes(name, key):
    assert dedup_key(name) == key


def test_google_google_inc_and_my_company_google_are_proposed_together(cast, google):
    w = google
    proposals = dedup_propose(principal=cast.p_viewer, scope=w.scope)
    assert {(p.source.name, p.target.name, p.kind, p.score) for p in proposals} == {
        ("google inc", "Google", ProposalKind.EXACT, 1.0), ("my company Google", "Google", ProposalKind.EXACT, 1.0),
    }
    # Google survives: more facts and mentions point at it than at either other.
    evidence = {p.source.name: p.evidence for p in proposals}
    assert evidence["google inc"] == {"pass": 1, "key": "google", "names": ["google inc", "Google"]}
    assert evidence["my company Google"]["names"] == ["my company Google", "Google"]


def test_the_survivor_is_the_heavier_then_the_older(cast):
    scope = cast.scope_a
    older, newer = entity(scope, "Initech"), entity(scope, "Initech Ltd")
    [proposal] = dedup_propose(principal=cast.p_viewer, scope=scope)
    assert (proposal.source, proposal.target) == (newer, older)  # equal weight: the older stays
    fact(scope, newer, "likes", "staplers", at(2024, 1))
    [proposal] = dedup_propose(principal=cast.p_viewer, scope=scope)
    assert (proposal.source, proposal.target) == (older, newer)  # the one with a fact stays


def test_containment_and_trigram_similarity_are_pass_two_with_their_scores(cast):
    scope = cast.scope_a
    ann, ann_smith = entity(scope, "Ann", "person"), entity(scope, "Ann Smith", "person")
    jon, john = entity(scope, "Jon Smithers", "person"), entity(scope, "John Smithers", "person")
    entity(scope, "San Francisco", "place"), entity(scope, "San Diego", "place")  # similar, but kept apart
    proposals = {frozenset((p.source.pk, p.target.pk)): p for p in dedup_propose(principal=cast.p_viewer, scope=scope)}
    assert set(proposals) == {frozenset((ann.pk, ann_smith.pk)), frozenset((jon.pk, john.pk))}
    contained = proposals[frozenset((ann.pk, ann_smith.pk))]
    assert contained.kind == ProposalKind.CONTAINMENT and contained.evidence["containment"] is True
    assert contained.score == contained.evidence["similarity"] < 1
    similar = proposals[frozenset((jon.pk, john.pk))]
    assert similar.kind == ProposalKind.TRIGRAM
    assert settings.DEDUP_TRIGRAM_SIMILARITY <= similar.score < 1 and similar.evidence["names"] == ["Jon Smithers", "John Smithers"]


def test_the_trigram_threshold_is_a_setting(cast, settings):
    scope = cast.scope_a
    entity(scope, "Jon Smithers", "person"), entity(scope, "John Smithers", "person")
    settings.DEDUP_TRIGRAM_SIMILARITY = 0.95
    assert dedup_propose(principal=cast.p_viewer, scope=scope) == []


def test_name_vectors_close_enough_are_pass_three(cast, settings):
    scope = cast.scope_a
    bob, robert, carol = entity(scope, "Bob", "person"), entity(scope, "Robert", "person"), entity(scope, "Carol", "person")
    name_vector(scope, bob, vector(1.0, 0.0))
    name_vector(scope, robert, vector(0.95, 0.2))  # cosine 0.979
    name_vector(scope, carol, vector(0.0, 1.0))
    [proposal] = dedup_propose(principal=cast.p_viewer, scope=scope)
    assert {proposal.source, proposal.target} == {bob, robert} and proposal.kind == ProposalKind.EMBEDDING
    assert proposal.evidence["cosine"] == pytest.approx(0.9786, abs=1e-3) and proposal.score == pytest.approx(0.9786, abs=1e-3)
    settings.DEDUP_EMBEDDING_SIMILARITY = 0.99
    assert dedup_propose(principal=cast.p_viewer, scope=scope) == []


def test_different_kinds_are_never_proposed_together(cast):
    scope = cast.scope_a
    city, person = entity(scope, "Paris", "place"), entity(scope, "paris inc", "person")
    hilton = entity(scope, "Paris Hilton", "organization")  # contains "paris", another kind again
    for target in (city, person, hilton):
        name_vector(scope, target, vector(1.0))  # identical vectors too
    assert dedup_propose(principal=cast.p_viewer, scope=scope) == []
    twin = entity(scope, "Paris, France", "place")
    [proposal] = dedup_propose(principal=cast.p_viewer, scope=scope)
    assert {proposal.source, proposal.target} == {city, twin} and proposal.kind == ProposalKind.CONTAINMENT


def test_merged_entities_are_skipped(cast, google):
    w = google
    Entity.objects.filter(pk=w.mine.pk).update(merged_into=w.apple)  # merged before, by hand
    assert [(p.source.name, p.target.name) for p in dedup_propose(principal=cast.p_viewer, scope=w.scope)] == [
        ("google inc", "Google"),
    ]


def test_another_scope_is_isolated(cast, google):
    entity(cast.scope_a2, "Google Inc.")
    entity(cast.scope_b, "GOOGLE")
    proposals = dedup_propose(principal=cast.p_viewer, scope=cast.scope_a)
    assert {p.source.scope_id for p in proposals} | {p.target.scope_id for p in proposals} == {cast.scope_a.pk}
    assert dedup_propose(principal=cast.p_viewer, scope=cast.scope_a2) == []
    with pytest.raises(NotFound):
        dedup_propose(principal=cast.p_outsider, scope=cast.scope_a)
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        call("dedup", "--scope", "alpha", "--dry-run", "--as", "outsider")
    # Without --scope, each scope the user may use, and only those.
    data = json.loads(call("dedup", "--dry-run", "--json", "--as", "outsider"))
    assert [s["scope"] for s in data["scopes"]] == ["bravo"] and data["scopes"][0]["proposals"] == []


def test_a_dry_run_changes_nothing(cast, google):
    before = everything()
    out = call("dedup", "--scope", "alpha", "--dry-run", "--as", "viewer")
    assert out.splitlines()[0] == "alpha: 2 proposals"
    assert "exact       1.00  google inc → Google (organization): both normalise to 'google'" in out
    assert out.splitlines()[-1] == "Dry run: nothing changed."
    data = json.loads(call("dedup", "--scope", "alpha", "--dry-run", "--json", "--as", "editor"))
    assert data["dry_run"] is True and len(data["scopes"][0]["proposals"]) == 2 and data["scopes"][0]["merges"] == []
    assert everything() == before


def test_merge_then_undo_restores_the_exact_prior_state(cast, google):
    w = google
    before = snapshot()
    data = json.loads(call("dedup", "--scope", "alpha", "--json", "--as", "editor"))
    merges = [m["merge"] for m in data["scopes"][0]["merges"]]
    assert len(merges) == 2 and all(merges)
    for merged in (w.inc, w.mine):
        assert Entity.objects.get(pk=merged.pk).merged_into_id == w.google.pk
    assert not Fact.objects.filter(subject__in=[w.inc, w.mine]).exists()
    assert Fact.objects.get(subject=w.ann).object_entity_id == w.google.pk
    assert set(EntityAlias.objects.filter(entity=w.google).values_list("alias", flat=True)) == {
        "Google", "google inc", "my company Google"}
    assert snapshot() != before
    assert AuditEvent.objects.filter(action="entity.merge").count() == 2
    assert MergeProposal.objects.filter(status=ProposalStatus.MERGED, merge__isnull=False).count() == 2

    for merge_id in reversed(merges):  # the later merge first
        out = call("dedup", "undo", merge_id, "--as", "editor")
        assert out.startswith(f"Undid merge {merge_id}")
    assert snapshot() == before
    assert AuditEvent.objects.filter(action="entity.unmerge").count() == 2
    # A person undid them: the pairs are not proposed (or merged) again.
    assert set(MergeProposal.objects.values_list("status", flat=True)) == {ProposalStatus.DISMISSED}
    assert dedup_propose(principal=cast.p_editor, scope=w.scope) == []


def test_a_viewer_can_dry_run_but_not_merge(cast, google):
    w = google
    before = everything()
    assert len(dedup_propose(principal=cast.p_viewer, scope=w.scope)) == 2
    with pytest.raises(CommandError, match="may not write"):
        call("dedup", "--scope", "alpha", "--as", "viewer")
    with pytest.raises(Forbidden):
        dedup_apply(principal=cast.p_viewer, scope=w.scope, proposals=dedup_propose(principal=cast.p_viewer, scope=w.scope))
    # Without --scope, a viewer's merge run reaches no scope at all.
    assert json.loads(call("dedup", "--json", "--as", "viewer"))["scopes"] == []
    assert everything() == before


def test_bad_undo_input_is_a_one_line_error(cast, google):
    with pytest.raises(CommandError, match=r"^Use `dedup"):
        call("dedup", "undo", "--as", "editor")
    with pytest.raises(CommandError, match="No merge 'not-a-merge'"):
        call("dedup", "undo", "not-a-merge", "--as", "editor")
    data = json.loads(call("dedup", "--scope", "alpha", "--json", "--as", "editor"))
    merge_id = data["scopes"][0]["merges"][0]["merge"]
    with pytest.raises(CommandError, match="No merge"):
        call("dedup", "undo", merge_id, "--as", "outsider")
    with pytest.raises(CommandError, match="may not write"):
        call("dedup", "undo", merge_id, "--as", "viewer")


@pytest.fixture
def mixed(cast, google):
    """google's exact group, a trigram pair and a name-vector pair, in scope alpha."""
    w = google
    w.jon, w.john = entity(w.scope, "Jon Smithers", "person"), entity(w.scope, "John Smithers", "person")
    w.bob, w.robert = entity(w.scope, "Bob", "person"), entity(w.scope, "Robert", "person")
    name_vector(w.scope, w.bob, vector(1.0, 0.0))
    name_vector(w.scope, w.robert, vector(0.95, 0.2))
    return w


def test_the_beat_task_proposes_and_auto_merges_only_above_the_threshold(cast, mixed, settings):
    w = mixed
    assert settings.CELERY_BEAT_SCHEDULE["dedup-scopes"]["task"] == dedup_scopes.name
    result = dedup_scopes.apply().get()
    assert result == {"scopes": 3, "proposed": 4, "merged": 2, "failed": []}
    merged = MergeProposal.objects.filter(status=ProposalStatus.MERGED)
    assert {(p.source.name, p.target.name) for p in merged} == {("google inc", "Google"), ("my company Google", "Google")}
    assert all(p.merge.by_label == "system" and p.decided_by == "system" for p in merged)
    assert Entity.objects.get(pk=w.inc.pk).merged_into_id == w.google.pk
    open_ = MergeProposal.objects.filter(status=ProposalStatus.PROPOSED)
    assert {p.kind for p in open_} == {ProposalKind.TRIGRAM, ProposalKind.EMBEDDING}
    assert Entity.objects.filter(pk__in=[w.jon.pk, w.bob.pk, w.robert.pk, w.john.pk], merged_into__isnull=False).count() == 0

    # Again: the open proposals are updated, not doubled, and nothing more merges.
    assert dedup_scopes.apply().get() == {"scopes": 3, "proposed": 2, "merged": 0, "failed": []}
    assert MergeProposal.objects.filter(status=ProposalStatus.PROPOSED).count() == 2

    # A lower threshold lets the name-vector pair (0.98) merge, not the trigram one.
    settings.DEDUP_AUTO_MERGE_SIMILARITY = 0.95
    assert dedup_scopes.apply().get()["merged"] == 1
    embedded = MergeProposal.objects.get(kind=ProposalKind.EMBEDDING)
    assert embedded.status == ProposalStatus.MERGED and embedded.merge is not None
    assert MergeProposal.objects.get(kind=ProposalKind.TRIGRAM).status == ProposalStatus.PROPOSED


def test_min_score_merges_only_the_surer_proposals(cast, mixed):
    data = json.loads(call("dedup", "--scope", "alpha", "--min-score", "1", "--json", "--as", "editor"))
    assert {(m["source"], m["target"], m["pass"]) for m in data["scopes"][0]["merges"]} == {
        ("google inc", "Google", "exact"), ("my company Google", "Google", "exact")}
    assert not Entity.objects.filter(pk__in=[mixed.jon.pk, mixed.john.pk, mixed.bob.pk, mixed.robert.pk],
                                     merged_into__isnull=False).exists()
    with pytest.raises(CommandError, match="--min-score must be from 0 to 1, not 2"):
        call("dedup", "--scope", "alpha", "--min-score", "2", "--as", "editor")


def test_one_open_proposal_per_pair_whichever_way_round(cast, google):
    w = google
    MergeProposal.objects.create(scope=w.scope, source=w.inc, target=w.google, kind=ProposalKind.EXACT, score=1.0)
    MergeProposal.objects.create(scope=w.scope, source=w.google, target=w.inc, kind=ProposalKind.EXACT, score=1.0,
                                 status=ProposalStatus.DISMISSED)  # closed ones may repeat
    with pytest.raises(IntegrityError), transaction.atomic():
        MergeProposal.objects.create(scope=w.scope, source=w.google, target=w.inc, kind=ProposalKind.TRIGRAM, score=0.6)


def test_with_auto_merge_off_the_beat_task_only_proposes(cast, mixed, settings):
    settings.DEDUP_AUTO_MERGE = False
    before = snapshot()
    assert dedup_scopes.apply().get()["merged"] == 0
    assert snapshot() == before and MergeProposal.objects.filter(status=ProposalStatus.PROPOSED).count() == 4


@pytest.fixture
def operator(client, cast):
    root = user_create(username="root", password="pw-root-1234", is_admin=True)
    membership_set(team=cast.team_a, user=root, role=Role.EDITOR)
    client.force_login(root)
    return client


def test_the_admin_lists_merges_and_dismisses_proposals(cast, google, operator):
    w = google
    rows = dedup_record(principal=None, scope=w.scope, proposals=dedup_propose(principal=None, scope=w.scope))
    by_source = {row.source.name: row for row in rows}
    assert operator.get("/admin/memories/mergeproposal/?status__exact=proposed&q=google").status_code == 200
    assert operator.get(f"/admin/memories/mergeproposal/{rows[0].pk}/change/").status_code == 200

    response = operator.post("/admin/memories/mergeproposal/", {
        "action": "merge", "_selected_action": [by_source["google inc"].pk]}, follow=True)
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Merged: 1."]
    merged = MergeProposal.objects.get(pk=by_source["google inc"].pk)
    assert merged.status == ProposalStatus.MERGED and merged.decided_by == "root"
    assert Entity.objects.get(pk=w.inc.pk).merged_into_id == w.google.pk and merged.merge.by_label == "root"

    response = operator.post("/admin/memories/mergeproposal/", {
        "action": "dismiss", "_selected_action": [by_source["my company Google"].pk, merged.pk]}, follow=True)
    messages = [str(m) for m in get_messages(response.wsgi_request)]
    assert "Dismissed: 1." in messages and any("merged already" in m for m in messages)
    assert MergeProposal.objects.get(pk=by_source["my company Google"].pk).status == ProposalStatus.DISMISSED
    assert Entity.objects.get(pk=w.mine.pk).merged_into_id is None
    assert AuditEvent.objects.filter(action="entity.merge_dismiss", actor_label="root").count() == 1
    # Dismissed: not proposed again.
    assert dedup_propose(principal=None, scope=w.scope) == []
    # View-only: a forged change is refused.
    assert operator.post(f"/admin/memories/mergeproposal/{merged.pk}/change/", {"status": "proposed"}).status_code == 403


def test_the_admin_merge_refuses_a_viewer_superuser(cast, google, client):
    root = user_create(username="root", password="pw-root-1234", is_admin=True)
    membership_set(team=cast.team_a, user=root, role=Role.VIEWER)
    client.force_login(root)
    [row, *_] = dedup_record(principal=None, scope=google.scope, proposals=dedup_propose(principal=None, scope=google.scope))
    response = client.post("/admin/memories/mergeproposal/", {"action": "merge", "_selected_action": [row.pk]}, follow=True)
    assert any("may not write" in str(m) for m in get_messages(response.wsgi_request))
    assert MergeProposal.objects.get(pk=row.pk).status == ProposalStatus.PROPOSED and not EntityMerge.objects.exists()
