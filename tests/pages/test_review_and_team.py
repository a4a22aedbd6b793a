"""The review queue and the team page as doors: every page and fragment for the owner, an editor,
a viewer (no controls, 403 on writes), an outsider (404), the anonymous (to the login page), and
bad input (a 4xx with the service's message on the page)."""

import pytest

from accounts.models import ApiToken, AuditEvent, Membership, Role
from accounts.tokens import token_issue
from memories.models import Episode, EpisodeStatus, Fact, FactStatus, Review
from memories.scopes import scope_update
from memories.services.ingest import remember
from tests.pages.conftest import hx

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


@pytest.fixture
def waiting(cast, memory, django_capture_on_commit_callbacks):
    """Alpha reviews before recall; ankesh says he moved to Lisbon (held), and one episode failed."""
    scope_update(principal=cast.p_owner, scope=cast.scope_a, review_before_recall=True)
    with django_capture_on_commit_callbacks(execute=True):
        remember(scope=cast.scope_a, text="I moved to Lisbon", speaker="ankesh", occurred_at="2025-06-01", actor=cast.p_owner)
    Episode.objects.filter(pk=memory.first.pk).update(status=EpisodeStatus.FAILED, error="The language model (x) failed: boom")
    memory.held = Fact.objects.get(scope=cast.scope_a, value="Lisbon")
    return memory


def action_url(fact, action: str, slug: str = "alpha") -> str:
    return f"/s/{slug}/review/facts/{fact.public_id}/{action}"


# --- the review queue -------------------------------------------------------------------------

@pytest.mark.parametrize("who", ["owner", "editor", "viewer"])
def test_members_see_the_waiting_facts_and_failed_episodes(pages, waiting, who):
    page = text(getattr(pages, who).get("/s/alpha/review/"))
    assert "Lisbon" in page and "held from recall" in page and "boom" in page
    assert ("Approve selected" in page) is (who != "viewer")  # viewers get no controls
    assert ('data-key="a"' in page) is (who != "viewer")
    assert ("Review settings" in page) is (who == "owner")  # team admins only


def test_the_scope_home_and_the_header_link_to_the_review_queue(pages, waiting):
    page = text(pages.viewer.get("/s/alpha/"))
    assert 'href="/s/alpha/review/"' in page and "1 fact waiting" in page


def test_approving_swaps_in_the_queue_and_the_fact_reaches_recall(pages, waiting):
    response = pages.editor.post(action_url(waiting.held, "approve"), headers=hx("queue"))
    fragment = text(response)
    assert response.status_code == 200 and fragment.lstrip().startswith('<section id="queue"') and "<html" not in fragment
    assert "Approved: ankesh lives_in Lisbon." in fragment and "Nothing waits for review." in fragment
    waiting.held.refresh_from_db()
    assert waiting.held.status == FactStatus.ACTIVE and waiting.held.review == Review.APPROVED
    results = text(pages.viewer.get("/s/alpha/", {"q": "where does ankesh live"}, headers=hx("results")))
    assert "Lisbon" in results


def test_rejecting_and_correcting_from_the_queue(pages, waiting, django_capture_on_commit_callbacks):
    pages.editor.post(action_url(waiting.held, "reject"), headers=hx("queue"))
    waiting.held.refresh_from_db()
    assert waiting.held.status == FactStatus.RETRACTED and AuditEvent.objects.filter(action="fact.reject").exists()
    with django_capture_on_commit_callbacks(execute=True):
        remember(scope=waiting.held.scope, text="I moved to Porto", speaker="ankesh", occurred_at="2025-07-01", actor=None)
    porto = Fact.objects.get(value="Porto")
    response = pages.editor.post(action_url(porto, "correct"), {"value": "Porto, Portugal"}, headers=hx("queue"))
    assert response.status_code == 200 and "Corrected and approved" in text(response)
    assert Fact.objects.get(value="Porto, Portugal").status == FactStatus.ACTIVE


def test_bulk_approval_of_the_checked_facts(pages, waiting):
    response = pages.owner.post("/s/alpha/review/bulk", {"action": "approve", "fact": [str(waiting.held.public_id)]}, headers=hx("queue"))
    assert response.status_code == 200 and "Approved 1 fact." in text(response)


@pytest.mark.parametrize(("url", "form", "status", "message"), [
    ("/s/alpha/review/bulk", {"action": "approve"}, 422, "Choose at least one fact."),
    ("/s/alpha/review/bulk", {"action": "explode", "fact": ["x"]}, 422, "Choose approve or reject."),
])
def test_bad_bulk_input_is_shown_on_the_queue(pages, waiting, url, form, status, message):
    response = pages.editor.post(url, form, headers=hx("queue"))
    assert response.status_code == status and message in text(response) and "<html" not in text(response)


def test_a_bad_correction_is_shown_next_to_the_fact_and_approves_nothing(pages, waiting):
    response = pages.editor.post(action_url(waiting.held, "correct"), {"value": " "}, headers=hx("queue"))
    assert response.status_code == 422 and "Value is empty" in text(response)
    waiting.held.refresh_from_db()
    assert waiting.held.status == FactStatus.HELD


def test_deciding_twice_is_a_conflict_shown_on_the_page(pages, waiting):
    pages.editor.post(action_url(waiting.held, "reject"), headers=hx("queue"))
    response = pages.editor.post(action_url(waiting.held, "approve"))
    assert response.status_code == 409 and "not waiting for review" in text(response)


@pytest.mark.parametrize("action", ["approve", "reject", "correct"])
def test_a_viewer_is_refused_every_decision_even_forged(pages, waiting, action):
    assert pages.viewer.post(action_url(waiting.held, action), {"value": "x"}, headers=hx("queue")).status_code == 403
    assert pages.viewer.post("/s/alpha/review/bulk", {"action": "approve", "fact": [str(waiting.held.public_id)]}).status_code == 403
    assert pages.viewer.post(f"/s/alpha/review/episodes/{waiting.first.public_id}/retry").status_code == 403
    assert pages.viewer.post("/s/alpha/review/settings", {"review_threshold": "0.5"}).status_code == 403
    waiting.held.refresh_from_db()
    assert waiting.held.status == FactStatus.HELD


def test_another_teams_review_queue_and_facts_are_404(pages, waiting, foreign):
    assert pages.outsider.get("/s/alpha/review/").status_code == 404
    assert pages.outsider.post(action_url(waiting.held, "approve")).status_code == 404
    assert pages.owner.get("/s/bravo/review/").status_code == 404
    assert pages.owner.post(action_url(foreign.fact, "approve")).status_code == 404  # bravo's fact through alpha
    assert pages.owner.post(f"/s/alpha/review/episodes/{foreign.episode.public_id}/retry").status_code == 404


def test_the_anonymous_are_sent_to_log_in_from_the_review_urls(pages, waiting):
    for response in (pages.anonymous.get("/s/alpha/review/"), pages.anonymous.post(action_url(waiting.held, "approve")),
                     pages.anonymous.post("/s/alpha/review/bulk"), pages.anonymous.post("/s/alpha/review/settings")):
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_retrying_a_failed_episode_from_the_queue(pages, waiting):
    response = pages.editor.post(f"/s/alpha/review/episodes/{waiting.first.public_id}/retry", headers=hx("failed"))
    assert response.status_code == 200 and "Queued again" in text(response)
    assert Episode.objects.get(pk=waiting.first.pk).status != EpisodeStatus.FAILED
    again = pages.editor.post(f"/s/alpha/review/episodes/{waiting.second.public_id}/retry", headers=hx("failed"))
    assert again.status_code == 409


def test_a_team_admin_changes_the_review_settings_and_bad_ones_are_refused(pages, cast, waiting):
    saved = pages.owner.post("/s/alpha/review/settings", {"review_threshold": "0.8"}, headers=hx("review-settings"))
    assert saved.status_code == 200 and "Saved." in text(saved)
    cast.scope_a.refresh_from_db()
    assert cast.scope_a.review_threshold == 0.8 and cast.scope_a.review_before_recall is False
    bad = pages.owner.post("/s/alpha/review/settings", {"review_threshold": "2"}, headers=hx("review-settings"))
    assert bad.status_code == 422 and "from 0 to 1" in text(bad)
    assert pages.editor.post("/s/alpha/review/settings", {"review_threshold": "0.1"}).status_code == 403


# --- the team page ----------------------------------------------------------------------------

@pytest.fixture
def token(cast):
    return token_issue(actor=cast.p_owner, user=cast.editor, name="editor's agent", scopes=[cast.scope_a], can_write=True).token


def test_a_team_admin_sees_members_tokens_and_the_audit_log(pages, cast, token):
    page = text(pages.owner.get("/teams/team-a/"))
    assert "editor" in page and "viewer" in page and "Add member" in page
    assert f"mw_{token.prefix}_…" in page and "editor&#x27;s agent" in page and "Audit log" in page and "token.create" in page
    assert 'href="/teams/team-a/"' in page  # the header's link for team admins


@pytest.mark.parametrize("who", ["editor", "viewer"])
def test_other_members_see_the_members_only(pages, token, who):
    page = text(getattr(pages, who).get("/teams/team-a/"))
    assert "owner" in page and "Members" in page
    assert "Add member" not in page and "API tokens" not in page and "Audit log" not in page and token.prefix not in page
    assert getattr(pages, who).get("/teams/team-a/", headers=hx("tokens")).status_code == 403
    assert getattr(pages, who).get("/teams/team-a/", headers=hx("audit")).status_code == 403


def test_non_members_get_a_404_and_the_anonymous_log_in(pages):
    assert pages.outsider.get("/teams/team-a/").status_code == 404
    assert pages.owner.get("/teams/team-b/").status_code == 404
    assert pages.outsider.post("/teams/team-a/members/add", {"username": "outsider", "role": "admin"}).status_code == 404
    response = pages.anonymous.get("/teams/team-a/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_adding_changing_and_removing_members(pages, cast):
    added = pages.owner.post("/teams/team-a/members/add", {"username": "outsider", "role": "viewer"}, headers=hx("members"))
    assert added.status_code == 200 and added.content.decode().lstrip().startswith('<section id="members"')
    assert Membership.objects.get(team=cast.team_a, user=cast.outsider).role == Role.VIEWER
    pages.owner.post("/teams/team-a/members/outsider/role", {"role": "editor"}, headers=hx("members"))
    assert Membership.objects.get(team=cast.team_a, user=cast.outsider).role == Role.EDITOR
    pages.owner.post("/teams/team-a/members/outsider/remove", headers=hx("members"))
    assert not Membership.objects.filter(team=cast.team_a, user=cast.outsider).exists()
    assert AuditEvent.objects.filter(action__startswith="team.member_").count() == 3


@pytest.mark.parametrize(("url", "form", "status", "message"), [
    ("/teams/team-a/members/add", {"username": "nobody", "role": "viewer"}, 422, "No user named"),
    ("/teams/team-a/members/add", {"username": "editor", "role": "viewer"}, 409, "member of team"),
    ("/teams/team-a/members/add", {"username": "outsider", "role": "boss"}, 422, "Role must be one of"),
    ("/teams/team-a/members/owner/remove", {}, 409, "last admin"),
    ("/teams/team-a/members/owner/role", {"role": "viewer"}, 409, "last admin"),
])
def test_bad_member_changes_are_shown_on_the_members_list(pages, url, form, status, message):
    response = pages.owner.post(url, form, headers=hx("members"))
    assert response.status_code == status and message in text(response) and "<html" not in text(response)


def test_a_member_who_is_not_admin_cannot_change_the_team_even_forged(pages, cast, token):
    for url, form in (("/teams/team-a/members/add", {"username": "outsider", "role": "admin"}),
                      ("/teams/team-a/members/viewer/role", {"role": "admin"}),
                      ("/teams/team-a/members/viewer/remove", {}),
                      ("/teams/team-a/tokens/new", {"name": "x", "scope": ["alpha"]}),
                      (f"/teams/team-a/tokens/{token.prefix}/revoke", {})):
        assert pages.editor.post(url, form).status_code == 403
    assert Membership.objects.get(team=cast.team_a, user=cast.viewer).role == Role.VIEWER
    assert ApiToken.objects.count() == 1 and ApiToken.objects.get().revoked_at is None


def test_creating_a_token_shows_its_secret_once(pages, cast):
    response = pages.owner.post("/teams/team-a/tokens/new", {"name": "ci", "user": "viewer", "scope": ["alpha"]}, headers=hx("tokens"))
    fragment = text(response)
    created = ApiToken.objects.get(name="ci")
    assert response.status_code == 200 and f"mw_{created.prefix}_" in fragment and "shown only once" in fragment
    assert created.user == cast.viewer and not created.can_write and list(created.scopes.all()) == [cast.scope_a]
    assert f'value="mw_{created.prefix}_' not in text(pages.owner.get("/teams/team-a/"))  # gone on the next page


@pytest.mark.parametrize(("form", "status", "message"), [
    ({"name": "", "scope": ["alpha"]}, 422, "needs a name"),
    ({"name": "x"}, 422, "at least one scope"),
    ({"name": "x", "scope": ["alpha"], "user": "viewer", "can_write": "on"}, 403, "viewer may not write"),
    ({"name": "x", "scope": ["alpha"], "expires": "2000-01-01"}, 422, "in the future"),
    ({"name": "x", "scope": ["alpha"], "expires": "soon"}, 422, "a date like"),
    ({"name": "x", "scope": ["alpha"], "user": "outsider"}, 422, "not a member"),
])
def test_bad_token_requests_are_shown_on_the_form(pages, form, status, message):
    response = pages.owner.post("/teams/team-a/tokens/new", form, headers=hx("tokens"))
    assert response.status_code == status and message in text(response) and "<html" not in text(response)
    assert not ApiToken.objects.exists()


def test_revoking_a_token_and_another_teams_token_is_a_404(pages, cast, token):
    response = pages.owner.post(f"/teams/team-a/tokens/{token.prefix}/revoke", headers=hx("tokens"))
    token.refresh_from_db()
    assert response.status_code == 200 and token.revoked_at is not None and "revoked" in text(response)
    theirs = token_issue(actor=cast.p_outsider, user=cast.outsider, name="o", scopes=[cast.scope_b]).token
    assert pages.owner.post(f"/teams/team-a/tokens/{theirs.prefix}/revoke").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_the_audit_log_filters_by_action_actor_and_scope_and_pages(pages, cast, waiting, token):
    def audit(**params):
        fragment = text(pages.owner.get("/teams/team-a/", params, headers=hx("audit")))
        return fragment.split("</form>", 1)[1]  # the events, not the filter's choices

    assert "fact.reject" not in audit(action="token.create") and "token.create" in audit(action="token.create")
    assert "scope.update" in audit(scope="alpha") and "token.create" not in audit(scope="alpha")
    assert "Nothing recorded for these filters" in audit(actor="nobody-at-all")
    assert "bravo" not in audit()
    for _ in range(30):
        AuditEvent.objects.create(scope=cast.scope_a, actor_label="owner", action="fact.retract", target_type="fact", target_id="x")
    first = audit(action="fact.retract")
    assert "page 1 of 2" in first and "page=2" in first and "action=fact.retract" in first
    assert "page 2 of 2" in audit(action="fact.retract", page=2)
