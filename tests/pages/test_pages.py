"""The HTMX pages as doors: every page and fragment for the owner, an editor, a viewer (403 on
writes, no edit controls), an outsider (404), the anonymous (to the login page), and bad input
(a 4xx with the service's message on the page)."""

import re

import pytest
from django.test import Client

from accounts.models import AuditEvent
from memories.models import Episode, EpisodeStatus, Fact, FactStatus, Provenance, Scope
from memories.services.ingest import remember
from tests.pages.conftest import hx

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def entity_url(memory) -> str:
    return f"/s/alpha/entities/{memory.ankesh.public_id}/"


def fact_url(fact, action: str, slug: str = "alpha") -> str:
    return f"/s/{slug}/facts/{fact.public_id}/{action}"


def episode_url(episode, slug: str = "alpha") -> str:
    return f"/s/{slug}/episodes/{episode.public_id}/"


# --- signing in -------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/s/alpha/", "/s/alpha/?q=york", "/password/"])
def test_the_anonymous_are_sent_to_the_login_page(pages, path):
    response = pages.anonymous.get(path)
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")


def test_the_anonymous_are_sent_to_log_in_from_entity_episode_and_write_urls(pages, memory):
    for response in (
        pages.anonymous.get(entity_url(memory)),
        pages.anonymous.get(episode_url(memory.second)),
        pages.anonymous.post(fact_url(memory.active, "retract")),
        pages.anonymous.post("/s/alpha/", {"text": "I like tea"}),
    ):
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert memory.active.status == FactStatus.ACTIVE and Episode.objects.count() == 2


def test_an_htmx_swap_after_the_session_expired_sends_the_whole_window_to_log_in(pages, memory):
    # The live search on a page left open after logging out: not the login form inside the results.
    headers = {"HX-Request": "true", "HX-Current-URL": "http://testserver/s/alpha/?q=york"}
    response = pages.anonymous.get("/s/alpha/?q=tea", headers=headers)
    assert response.status_code == 200 and not response.content
    assert response["HX-Redirect"] == "/login/?next=/s/alpha/%3Fq%3Dyork"


def test_logging_in_leads_to_the_scopes_and_a_wrong_password_says_so(cast):
    client = Client()
    refused = client.post("/login/", {"username": "owner", "password": "wrong"})
    assert refused.status_code == 200 and "correct username and password" in text(refused)
    response = client.post("/login/", {"username": "owner", "password": "pw-owner-123"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert "Alpha" in text(client.get("/"))
    assert client.post("/logout/")["Location"] == "/login/"
    assert client.get("/").status_code == 302


def test_a_password_change_needs_the_old_password(pages, cast):
    wrong = pages.editor.post("/password/", {"old_password": "nope", "new_password1": "a-new-secret-9", "new_password2": "a-new-secret-9"})
    assert wrong.status_code == 200 and "incorrectly" in text(wrong)
    done = pages.editor.post("/password/", {"old_password": "pw-editor-123", "new_password1": "a-new-secret-9", "new_password2": "a-new-secret-9"})
    assert done.status_code == 302
    cast.editor.refresh_from_db()
    assert cast.editor.check_password("a-new-secret-9")


def test_csrf_is_enforced_and_the_header_on_body_passes_it(cast, memory):
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.editor)
    page = text(client.get(entity_url(memory)))
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', page).group(1)
    assert client.post(fact_url(memory.active, "retract"), headers=hx("memory")).status_code == 403
    response = client.post(fact_url(memory.active, "retract"), {"reason": "wrong"}, headers={**hx("memory"), "X-CSRFToken": token})
    assert response.status_code == 200


def test_the_header_shows_the_user_the_team_and_a_scope_switcher(pages, cast):
    page = text(pages.viewer.get("/s/alpha/"))
    assert "viewer" in page and "team team-a" in page
    assert 'href="/s/alpha-two/"' in page and "/s/bravo/" not in page


# --- the scopes page --------------------------------------------------------------------------

def test_the_scopes_page_lists_visible_scopes_with_their_counts(pages, memory, cast, django_assert_max_num_queries):
    Episode.objects.filter(pk=memory.first.pk).update(status=EpisodeStatus.FAILED)
    with django_assert_max_num_queries(12):  # one query for all the counts, whatever the number of scopes
        response = pages.viewer.get("/")
    page = text(response)
    row = re.search(r'<a href="/s/alpha/">Alpha</a>.*?</tr>', page, re.S).group(0)
    cells = re.findall(r'<td[^>]*class="num">(?:<span class="badge failed">)?(\d+)', row)
    active = Fact.objects.filter(scope=cast.scope_a, status=FactStatus.ACTIVE).count()
    entities = cast.scope_a.entities.filter(merged_into__isnull=True).count()
    assert cells == ["2", str(entities), str(active), "1"]
    assert "ago" in row and "/s/alpha-two/" in page and "/s/bravo/" not in page


def test_a_team_admin_creates_a_scope_and_bad_input_is_shown_on_the_form(pages, cast):
    created = pages.owner.post("/", {"slug": "gamma", "name": "Gamma", "team": "team-a"}, headers=hx("create"))
    assert created.status_code == 200 and created["HX-Redirect"] == "/s/gamma/"
    assert Scope.objects.get(slug="gamma").team == cast.team_a
    bad = pages.owner.post("/", {"slug": "Not A Slug", "team": "team-a"}, headers=hx("create"))
    assert bad.status_code == 422 and "Invalid scope slug" in text(bad) and "<html" not in text(bad)
    taken = pages.owner.post("/", {"slug": "gamma", "team": "team-a"})
    assert taken.status_code == 409 and "exists already" in text(taken) and "<html" in text(taken)


def test_a_member_who_is_not_team_admin_cannot_create_a_scope_in_it(pages, cast):
    assert pages.editor.post("/", {"slug": "sneaky", "team": "team-a"}).status_code == 403
    assert pages.outsider.post("/", {"slug": "sneaky", "team": "team-a"}).status_code == 404
    assert not Scope.objects.filter(slug="sneaky").exists()
    assert 'value="team-a"' not in text(pages.viewer.get("/"))  # only their own team is offered


# --- the scope home: search, remember, episodes -----------------------------------------------

@pytest.mark.parametrize("who", ["owner", "editor", "viewer"])
def test_members_see_the_scope_home(pages, memory, who):
    page = text(getattr(pages, who).get("/s/alpha/"))
    assert "I moved to New York" in page and 'hx-trigger="input changed delay:300ms, search"' in page
    assert ('name="text"' in page) is (who != "viewer")  # the remember box is for writers only


def test_another_teams_scope_is_a_404(pages, cast):
    assert pages.outsider.get("/s/alpha/").status_code == 404
    assert pages.owner.get("/s/bravo/").status_code == 404
    assert pages.owner.get("/s/bravo/?q=acme", headers=hx("results")).status_code == 404


def test_search_as_you_type_answers_with_the_results_fragment(pages, memory):
    response = pages.viewer.get("/s/alpha/", {"q": "where does ankesh live"}, headers=hx("results"))
    fragment = text(response)
    assert response.status_code == 200 and fragment.lstrip().startswith('<div id="results"') and "<html" not in fragment
    assert "ankesh lives in New York." in fragment and "kind-fact" in fragment and "kind-episode" in fragment
    assert re.search(r"similarity \d\.\d\d", fragment) and "2025-02-10 → now" in fragment
    assert f'href="/s/alpha/episodes/{memory.second.public_id}/"' in fragment


def test_search_works_without_javascript_too(pages, memory):
    page = text(pages.viewer.get("/s/alpha/", {"q": "New York"}))
    assert "<html" in page and "ankesh lives in New York." in page


def test_remembering_returns_the_emptied_form_and_the_episode_list_out_of_band(pages, cast):
    response = pages.editor.post("/s/alpha/", {"text": "I work at Initech", "speaker": "milton"}, headers=hx("remember"))
    fragment = text(response)
    episode = Episode.objects.get(scope=cast.scope_a, text="I work at Initech")
    assert response.status_code == 200 and episode.author == cast.editor and episode.source == "web"
    assert '<section id="remember"' in fragment and "Stored; extraction is" in fragment
    assert 'id="episodes"' in fragment and 'hx-swap-oob="true"' in fragment and "I work at Initech" in fragment


def test_remembering_without_javascript_redirects_to_the_scope(pages, cast):
    response = pages.owner.post("/s/alpha/", {"text": "I like tea"})
    assert response.status_code == 302 and response["Location"] == "/s/alpha/"


@pytest.mark.parametrize(("form", "message"), [
    ({"text": "   "}, "Text"),
    ({"text": "I like tea", "occurred_at": "2999-01-01"}, "future"),
])
def test_bad_input_to_remember_is_shown_next_to_the_field(pages, form, message):
    response = pages.editor.post("/s/alpha/", form, headers=hx("remember"))
    fragment = text(response)
    assert response.status_code == 422 and 'id="remember-error"' in fragment and message in fragment
    assert not Episode.objects.exists()


def test_a_viewer_cannot_remember_even_by_a_forged_post(pages):
    response = pages.viewer.post("/s/alpha/", {"text": "I own this place"}, headers=hx("remember"))
    assert response.status_code == 403 and "may not write" in text(response)
    assert pages.outsider.post("/s/alpha/", {"text": "hello"}).status_code == 404
    assert not Episode.objects.exists()


def test_the_episode_list_polls_only_while_something_is_unfinished(pages, cast, memory):
    done = text(pages.viewer.get("/s/alpha/", headers=hx("episodes")))
    assert done.lstrip().startswith('<section id="episodes"') and "every 1s" not in done
    remember(scope=cast.scope_a, text="I like tea", actor=cast.p_owner, enqueue=False)
    pending = text(pages.viewer.get("/s/alpha/", headers=hx("episodes")))
    assert 'hx-trigger="every 1s"' in pending and 'data-episode-status="pending"' in pending


# --- the entity page and corrections in place -------------------------------------------------

def test_the_entity_page_shows_aliases_facts_timeline_and_mentions(pages, memory):
    page = text(pages.viewer.get(entity_url(memory)))
    assert "New York" in page and "lives_in" in page
    assert f'data-fact="{memory.old.public_id}" data-status="superseded"' in page
    assert f'data-fact="{memory.active.public_id}" data-status="active"' in page and "<svg" in page
    assert f'href="/s/alpha/episodes/{memory.first.public_id}/"' in page  # a mention
    assert 'name="value"' not in page and "Retract" not in page and ">Restore<" not in page  # a viewer: no edit controls


def test_an_editor_sees_the_edit_controls(pages, memory):
    page = text(pages.editor.get(entity_url(memory)))
    assert 'name="value"' in page and 'name="importance"' in page and "Retract" in page and ">Restore<" in page


def test_another_teams_entity_is_a_404(pages, memory, foreign):
    assert pages.outsider.get(entity_url(memory)).status_code == 404
    assert pages.owner.get(f"/s/alpha/entities/{foreign.entity.public_id}/").status_code == 404
    assert pages.owner.get(f"/s/bravo/entities/{foreign.entity.public_id}/").status_code == 404


def test_correcting_a_fact_swaps_in_the_new_value_with_the_old_one_superseded(pages, cast, memory):
    response = pages.editor.post(fact_url(memory.active, "correct"), {"value": "Brooklyn"}, headers=hx("memory"))
    fragment = text(response)
    new = Fact.objects.get(scope=cast.scope_a, subject=memory.ankesh, attribute="lives_in", status=FactStatus.ACTIVE)
    assert response.status_code == 200 and fragment.lstrip().startswith('<div id="memory"')
    assert new.value == "Brooklyn" and new.provenance == Provenance.MANUAL and new.author == cast.editor
    assert f'data-fact="{new.public_id}" data-status="active"' in fragment and "bar active manual" in fragment
    assert f'data-fact="{memory.active.public_id}" data-status="superseded"' in fragment
    assert "editor</strong> fact.correct: New York → Brooklyn" in fragment  # the audit event, on the page
    assert AuditEvent.objects.filter(action="fact.correct", actor_user=cast.editor).count() == 1


def test_retracting_with_a_reason_and_restoring(pages, cast, memory):
    retracted = text(pages.editor.post(fact_url(memory.active, "retract"), {"reason": "he never moved"}, headers=hx("memory")))
    memory.active.refresh_from_db()
    assert memory.active.status == FactStatus.RETRACTED and "No active facts." in retracted
    assert 'data-status="retracted"' in retracted and 'class="strike"' in retracted and "“he never moved”" in retracted
    restored = text(pages.editor.post(fact_url(memory.active, "restore"), headers=hx("memory")))
    memory.active.refresh_from_db()
    assert memory.active.status == FactStatus.ACTIVE and "fact.restore" in restored


def test_changing_importance_is_audited_and_bounded(pages, cast, memory):
    ok = pages.owner.post(fact_url(memory.active, "importance"), {"importance": "0.9"}, headers=hx("memory"))
    memory.active.refresh_from_db()
    assert ok.status_code == 200 and memory.active.importance == 0.9 and "fact.importance" in text(ok)
    bad = pages.owner.post(fact_url(memory.active, "importance"), {"importance": "2"}, headers=hx("memory"))
    assert bad.status_code == 422 and f'id="err-{memory.active.public_id}"' in text(bad) and "from 0 to 1" in text(bad)


@pytest.mark.parametrize(("action", "form", "status", "message"), [
    ("correct", {"value": "  "}, 422, "Value is empty"),
    ("correct", {"value": "New York"}, 422, "Nothing to correct"),
    ("restore", {}, 409, "active already"),
])
def test_bad_corrections_show_the_message_next_to_the_fact(pages, memory, action, form, status, message):
    response = pages.editor.post(fact_url(memory.active, action), form, headers=hx("memory"))
    assert response.status_code == status and message in text(response) and 'id="memory"' in text(response)
    memory.active.refresh_from_db()
    assert memory.active.status == FactStatus.ACTIVE


def test_a_superseded_fact_cannot_be_corrected_and_says_so_in_its_history_row(pages, memory):
    response = pages.editor.post(fact_url(memory.old, "correct"), {"value": "Oakland"}, headers=hx("memory"))
    assert response.status_code == 409 and "only an active fact can be corrected" in text(response)


def test_corrections_without_javascript_redirect_back_to_the_entity(pages, memory):
    response = pages.editor.post(fact_url(memory.active, "retract"), {"reason": "no"})
    assert response.status_code == 302 and response["Location"] == entity_url(memory)


@pytest.mark.parametrize("action", ["correct", "retract", "restore", "importance"])
def test_a_viewer_is_refused_every_correction_even_forged(pages, memory, action):
    response = pages.viewer.post(fact_url(memory.active, action), {"value": "Paris", "importance": "1"}, headers=hx("memory"))
    assert response.status_code == 403
    memory.active.refresh_from_db()
    assert memory.active.status == FactStatus.ACTIVE and memory.active.value == "New York" and not AuditEvent.objects.exists()


@pytest.mark.parametrize("action", ["correct", "retract", "restore", "importance"])
def test_another_teams_fact_is_a_404(pages, memory, foreign, action):
    assert pages.outsider.post(fact_url(memory.active, action), {"value": "x"}).status_code == 404
    assert pages.owner.post(fact_url(foreign.fact, action), {"value": "x"}).status_code == 404
    foreign.fact.refresh_from_db()
    assert foreign.fact.status == FactStatus.ACTIVE


# --- the episode page -------------------------------------------------------------------------

def test_the_episode_page_shows_text_status_and_what_extraction_made(pages, memory):
    page = text(pages.viewer.get(episode_url(memory.second)))
    assert "I moved to New York" in page and 'data-episode-status="done"' in page
    assert "lives_in" in page and "New York" in page
    assert "Retry extraction" not in page and "Forget this episode" not in page  # a viewer


def test_the_episode_page_shows_the_neighbouring_turns_of_its_session(pages, cast):
    for said in ("Hi there", "I adopted a cat", "Nice!"):
        remember(scope=cast.scope_a, text=said, speaker="kim", session_id="chat-1", actor=cast.p_owner, enqueue=False)
    middle = Episode.objects.get(text="I adopted a cat")
    page = text(pages.owner.get(episode_url(middle)))
    assert "Hi there" in page and "Nice!" in page and 'class="this" aria-current="true"' in page
    assert 'hx-trigger="every 1s"' in page  # pending: the status polls
    # Each neighbour links to its own episode (read by turn, `selectors.turns_around`), not to this one.
    for neighbour in Episode.objects.filter(text__in=["Hi there", "Nice!"]):
        assert f'href="{episode_url(neighbour)}"' in page
    assert f'href="{episode_url(middle)}"' not in page


def test_another_teams_episode_is_a_404(pages, memory, foreign):
    assert pages.outsider.get(episode_url(memory.second)).status_code == 404
    assert pages.owner.get(episode_url(foreign.episode)).status_code == 404
    assert pages.owner.get("/s/alpha/episodes/not-a-uuid/").status_code == 404
    assert pages.owner.post(f"/s/alpha/episodes/{foreign.episode.public_id}/retry").status_code == 404
    assert pages.owner.post(f"/s/alpha/episodes/{foreign.episode.public_id}/forget").status_code == 404
    assert Episode.objects.filter(pk=foreign.episode.pk).exists()


def test_retrying_a_failed_episode_and_refusing_a_done_one(pages, cast, memory):
    done = pages.editor.post(episode_url(memory.second) + "retry", headers=hx("produced"))
    assert done.status_code == 409 and "only failed or pending" in text(done) and 'id="produced"' in text(done)
    Episode.objects.filter(pk=memory.second.pk).update(status=EpisodeStatus.FAILED, error="model down")
    retried = pages.editor.post(episode_url(memory.second) + "retry", headers=hx("produced"))
    assert retried.status_code == 200 and AuditEvent.objects.filter(action="episode.retry").count() == 1


def test_a_viewer_cannot_retry_or_forget(pages, memory):
    Episode.objects.filter(pk=memory.second.pk).update(status=EpisodeStatus.FAILED)
    assert pages.viewer.post(episode_url(memory.second) + "retry").status_code == 403
    assert pages.viewer.get(episode_url(memory.second) + "forget").status_code == 403
    assert pages.viewer.post(episode_url(memory.second) + "forget").status_code == 403
    memory.second.refresh_from_db()
    assert memory.second.status == EpisodeStatus.FAILED


def test_forgetting_asks_first_then_erases_and_returns_to_the_scope(pages, cast, memory):
    confirm = pages.editor.get(episode_url(memory.second) + "forget")
    assert confirm.status_code == 200 and "cannot be undone" in text(confirm)
    response = pages.editor.post(episode_url(memory.second) + "forget", follow=True)
    assert response.redirect_chain == [("/s/alpha/", 302)] and "Episode forgotten" in text(response)
    assert not Episode.objects.filter(pk=memory.second.pk).exists()
