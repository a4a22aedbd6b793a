"""Erasure survives restore (retrieval/tombstones.py): restoring a backup written before an
erasure — merged into the scope, beside it, or on a fresh database from a later backup's
tombstones — erases again what was erased, before its commit; the receipt says how many rows and
why; tombstones hold digests only and travel in backups; merge proposals and their dismissals too."""

import gzip
import io
import json
import re

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.test import Client, override_settings

from accounts.models import AuditEvent
from accounts.tokens import token_issue
from memories.models import Entity, Episode, Fact, MergeProposal, ProposalStatus, Scope, Tombstone
from memories.services.dedup import dedup_propose, dedup_record, proposal_dismiss
from memories.services.ingest import remember
from retrieval.backup import scope_backup, scope_restore
from retrieval.indexing import index_pending
from retrieval.services import episode_forget, recall, subject_erase
from tests.retrieval.test_erase import MAYA, maya, searches  # noqa: F401 (maya: the fixture)
from tests.retrieval.test_forget import texts

pytestmark = pytest.mark.django_db

TEAPOT = re.compile(r"teapot|savings", re.IGNORECASE)


def backup(scope, principal) -> bytes:
    out = io.BytesIO()
    scope_backup(principal=principal, scope=scope, out=out)
    return out.getvalue()


def restore(principal, data: bytes, **kwargs):
    return scope_restore(principal=principal, file=io.BytesIO(data), **kwargs)


def audit_text(scope) -> str:
    return json.dumps([[e.before, e.after] for e in AuditEvent.objects.filter(scope=scope)])


def doors_text(cast, scope) -> str:
    """What the API (a token) and the pages (a session) show of the scope, as one text."""
    token = token_issue(actor=cast.p_owner, user=cast.owner, name=f"check-{scope.slug}", scopes=[scope]).secret
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    base = f"/api/v1/scopes/{scope.slug}"
    shown = [
        api.get(f"{base}/facts").content, api.get(f"{base}/facts", {"history": "true"}).content,
        api.get(f"{base}/entities").content, api.get(f"{base}/entities", {"q": "maya"}).content,
    ]
    for path, body in (("recall", {"query": "Maya teapot savings", "include_history": True}), ("recall/evidence", {"query": "Maya teapot"})):
        reply = api.post(f"{base}/{path}", body, content_type="application/json")
        assert reply.status_code == 200
        shown.append(json.dumps([reply.json()["results"], reply.json()["entities"]]).encode())  # not the echo of the question (its lexemes)
    browser = Client()
    browser.force_login(cast.owner)
    shown += [browser.get(f"/s/{scope.slug}/").content, browser.get(f"/s/{scope.slug}/", {"q": "Maya teapot"}).content]
    for entity in Entity.objects.in_scope(scope):
        page = browser.get(f"/s/{scope.slug}/entities/{entity.public_id}/")
        assert page.status_code == 200
        shown.append(page.content)
    for episode in Episode.objects.in_scope(scope):
        page = browser.get(f"/s/{scope.slug}/episodes/{episode.public_id}/")
        assert page.status_code == 200
        shown.append(page.content)
    # The pages and replies echo the question asked; that is the asker's text, not the memory's.
    return b"\n".join(shown).decode().replace('value="Maya teapot"', "")


def assert_gone(cast, scope, pattern: re.Pattern, words=()) -> None:
    found = "\n".join(texts(result) for result in searches(scope))
    found += "\n" + texts(recall(scope=scope, query="teapot savings", include_history=True))
    assert not pattern.search(found), found
    facts = json.dumps(list(Fact.objects.in_scope(scope).values_list("value", "sentence")))
    assert not pattern.search(facts), facts
    assert not Episode.objects.in_scope(scope).filter(text__iregex=pattern.pattern).exists()
    assert not Entity.objects.in_scope(scope).filter(name__iregex=pattern.pattern).exists()
    shown = doors_text(cast, scope)
    assert not pattern.search(shown), [shown[max(0, m.start() - 150):m.end() + 60] for m in pattern.finditer(shown)]
    assert not any(word in shown for word in words)
    assert not pattern.search(audit_text(scope)), audit_text(scope)


# ---------------------------------------------------------------- a person


def test_restoring_a_backup_from_before_a_persons_erasure_erases_her_again(maya):
    scope = maya.scope_a
    old = backup(scope, maya.p_owner)
    assert MAYA.search(gzip.decompress(old).decode())  # the old backup holds her: the test can fail
    receipt = subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")

    restored = restore(maya.p_owner, old, scope=scope, merge=True)

    assert restored.written["episode"] > 0  # the merge brought her episodes back into the transaction…
    assert restored.erased_again > 0  # …and the tombstone took them out again
    [again] = restored.reapplied
    assert again["erasure_id"] == str(receipt.erasure_id) and again["kind"] == "subject"
    assert again["reason"] == f"erased on {receipt.erased_at:%Y-%m-%d}" and again["rows"] == restored.erased_again
    assert_gone(maya, scope, MAYA, words=("Quillfeather", "sourdough"))
    assert recall(scope=scope, query="Biscuit cat").items  # the rest stays
    event = AuditEvent.objects.filter(scope=scope, action="scope.restore").latest("created_at")
    assert event.after["erased_again"] == restored.erased_again


def test_a_copy_restored_beside_the_scope_is_erased_too(maya):
    old = backup(maya.scope_a, maya.p_owner)
    subject_erase(principal=maya.p_owner, scope=maya.scope_a, subject="Maya")

    restored = restore(maya.p_owner, old, scope="alpha-copy", team=maya.team_a)

    copy = Scope.objects.get(slug="alpha-copy")
    assert restored.erased_again > 0
    assert Tombstone.objects.in_scope(copy).count() == 1  # adopted from the origin: its next backup carries it
    assert_gone(maya, copy, MAYA, words=("Quillfeather", "sourdough"))


def test_on_a_fresh_database_the_later_backups_tombstones_erase_the_older_backup(maya):
    scope = maya.scope_a
    old = backup(scope, maya.p_owner)
    subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")
    later = backup(scope, maya.p_owner)
    later_text = gzip.decompress(later).decode()
    assert '"kind":"tombstone"' in later_text and not MAYA.search(later_text)  # digests only
    Tombstone.objects.all().delete()  # as on a fresh database: nothing of the erasure is left but the file

    restore(maya.p_owner, later, scope="alpha-fresh", team=maya.team_a)
    fresh = Scope.objects.get(slug="alpha-fresh")
    assert Tombstone.objects.in_scope(fresh).count() == 1
    restored = restore(maya.p_owner, old, scope=fresh, merge=True)  # its ids are alpha's: renewed, matched by content

    assert restored.erased_again > 0
    assert Tombstone.objects.in_scope(fresh).count() == 1  # a restore never removes a tombstone
    assert_gone(maya, fresh, MAYA, words=("Quillfeather", "sourdough"))


def test_a_tombstone_made_with_another_key_is_reported_not_matched(maya):
    old = backup(maya.scope_a, maya.p_owner)
    subject_erase(principal=maya.p_owner, scope=maya.scope_a, subject="Maya")
    original = django_settings.SECRET_KEY
    with override_settings(SECRET_KEY="another-deployment-key-" + "x" * 40):
        restored = restore(maya.p_owner, old, scope=maya.scope_a, merge=True)
    assert restored.tombstones_unmatched == 1 and restored.erased_again == 0
    with override_settings(SECRET_KEY="another-deployment-key-" + "x" * 40, SECRET_KEY_FALLBACKS=[original]):
        again = restore(maya.p_owner, old, scope=maya.scope_a, merge=True)
    assert again.tombstones_unmatched == 0 and again.erased_again > 0


# ---------------------------------------------------------------- one episode


@pytest.fixture
def teapot(cast, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    with django_capture_on_commit_callbacks(execute=True):
        kept = remember(scope=scope, text="I live in Lisbon.", speaker="Caroline", actor=cast.p_owner)
        gone = remember(scope=scope, text="I keep my savings in a blue teapot.", speaker="Caroline", actor=cast.p_owner)
    index_pending(scope=scope, full=True)
    cast.kept, cast.gone = kept, gone
    return cast


def test_restoring_a_backup_from_before_forgetting_an_episode_forgets_it_again(teapot, capsys, tmp_path):
    scope = teapot.scope_a
    old = backup(scope, teapot.p_owner)
    assert TEAPOT.search(texts(recall(scope=scope, query="teapot savings")))  # the test can fail
    episode_forget(principal=teapot.p_owner, scope=scope, episode_public_id=teapot.gone.episodes[0].episode_id)
    tombstone = Tombstone.objects.in_scope(scope).get()
    assert not TEAPOT.search(json.dumps([tombstone.episodes, tombstone.turns, tombstone.texts, tombstone.names]))
    path = tmp_path / "old.jsonl.gz"
    path.write_bytes(old)

    call_command("restore", str(path), "--scope", scope.slug, "--merge", "--as", "owner")
    text = capsys.readouterr().out
    call_command("restore", str(path), "--scope", scope.slug, "--merge", "--as", "owner", "--json")
    report = json.loads(capsys.readouterr().out)

    assert f"rows removed again (episode erased on {tombstone.erased_at:%Y-%m-%d})" in text
    assert report["erased_again"] >= 1 and report["reapplied"][0]["kind"] == "episode"
    assert_gone(teapot, scope, TEAPOT)
    assert "Lisbon" in texts(recall(scope=scope, query="Where does Caroline live?"))


def test_the_api_import_reports_what_it_erased_again(teapot):
    scope = teapot.scope_a
    old = backup(scope, teapot.p_owner)
    episode_forget(principal=teapot.p_owner, scope=scope, episode_public_id=teapot.gone.episodes[0].episode_id)
    browser = Client()
    browser.force_login(teapot.owner)
    reply = browser.post(f"/api/v1/scopes/{scope.slug}/import?merge=true", old, content_type="application/gzip")
    assert reply.status_code == 201, reply.content
    assert reply.json()["erased_again"] >= 1 and "erased on" in reply.json()["reapplied"][0]["reason"]
    assert not Episode.objects.in_scope(scope).filter(text__icontains="teapot").exists()


# ---------------------------------------------------------------- merge proposals


def test_a_dismissed_proposal_survives_backup_and_restore(cast):
    scope = cast.scope_a
    a = Entity.objects.create(scope=scope, name="Acme Corporation", kind="organization")
    b = Entity.objects.create(scope=scope, name="ACME Corporation", kind="organization")
    [proposal] = dedup_record(principal=cast.p_owner, scope=scope, proposals=dedup_propose(principal=cast.p_owner, scope=scope))
    proposal = proposal_dismiss(principal=cast.p_owner, proposal=proposal)
    assert {a.pk, b.pk} == {proposal.source_id, proposal.target_id}
    data = backup(scope, cast.p_owner)

    restored = restore(cast.p_owner, data, scope="alpha-restored", team=cast.team_a)

    copy = Scope.objects.get(slug="alpha-restored")
    assert restored.written["proposal"] == 1
    row = MergeProposal.objects.in_scope(copy).get()
    assert row.status == ProposalStatus.DISMISSED and row.decided_by == proposal.decided_by == "owner"
    assert {row.source.name, row.target.name} == {"Acme Corporation", "ACME Corporation"}
    assert dedup_propose(principal=cast.p_owner, scope=copy) == []  # the pair is not proposed again
    assert dedup_propose(principal=cast.p_owner, scope=scope) == []
