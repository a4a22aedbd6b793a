"""Hostile stored values, for the tests that check they stay inert text on every door
(tests/e2e/test_inert_browser.py, tests/api/test_inert_values.py).

Each payload, were it interpreted, would run `alert` (the browser tests fail on any dialog), set
`window.__pwned`, or create an element whose id starts with `pwn` that nothing else creates."""

from memories.normalize import normalize_name
from memories.models import Entity, EntityAlias, Episode, Fact, FactStatus
from memories.scopes import scope_create, scope_update
from memories.services.facts import fact_correct
from memories.services.ingest import remember

SCRIPT = '<script id="pwn-script">window.__pwned = 1; alert("script")</script>'
IMG = '<img id="pwn-img" src="x" onerror="window.__pwned = 1; alert(\'img\')">'
LINK = '<a id="pwn-a" href="javascript:alert(\'link\')">click</a>'
SVG = '</text></title><svg id="pwn-svg" onload="alert(\'svg\')"><script>alert("svg")</script></svg>'
XML = ']]><![CDATA[<foo id="pwn-xml"/>]]><?xml version="1.0"?>'
JS_URL = "javascript:alert('url')"
CONTROL = "bell\x07 esc\x1b[31m red tab\t vt\x0b ff\x0c del\x7f"
RTL = "invoice\u202egpj.exe"
LONG = "W" * 240  # no space to break at: the layout must hold it (overflow-wrap)

NAME = f'{IMG}{RTL}'  # team, scope, speaker names: at most 200 characters
TOKEN_NAME = '<b id="pwn-b">tok</b>' + JS_URL + "\u202e"  # token names: at most 100
ALL = " ".join([SCRIPT, IMG, LINK, SVG, XML, JS_URL, CONTROL, RTL, LONG])
EVERY = (SCRIPT, IMG, LINK, SVG, XML, JS_URL, CONTROL, RTL, LONG, NAME, TOKEN_NAME)
MARKER_IDS = ("pwn-script", "pwn-img", "pwn-a", "pwn-svg", "pwn-xml", "pwn-b")


def hostile_world(cast):
    """A team and scope of team A's owner whose names, texts, speakers, entities, aliases, fact
    values and token name are hostile, stored through the services; one fact waits in review.
    Returns a namespace with the rows the tests visit."""
    from accounts.services import team_create, user_create
    from accounts.tokens import token_issue

    w = cast
    w.evil_team = team_create(actor=cast.p_owner, slug="evil-team", name=NAME, owner=cast.owner)
    w.evil = scope_create(principal=cast.p_owner, slug="evil", team=w.evil_team, name=NAME, description=ALL)
    remember(scope=w.evil, text=f"I live in Lisbon. {ALL}", speaker=NAME, occurred_at="2024-01-10", actor=cast.p_owner)
    w.episode = Episode.objects.get(scope=w.evil, text__startswith="I live in Lisbon.")
    remember(scope=w.evil, text=f"I work at Initech {LINK}", speaker=NAME, occurred_at="2024-02-10", actor=cast.p_owner)
    w.person = Entity.objects.get(scope=w.evil, name=NAME)
    EntityAlias.objects.create(scope=w.evil, entity=w.person, alias=SVG[:200], normalized=normalize_name(SVG))
    lives = Fact.objects.get(scope=w.evil, subject=w.person, attribute="lives_in", status=FactStatus.ACTIVE)
    w.fact = fact_correct(scope=w.evil, fact_public_id=lives.public_id, value=f"{SCRIPT} {XML} {RTL}", actor=cast.p_owner)
    scope_update(principal=cast.p_owner, scope=w.evil, review_before_recall=True)
    remember(scope=w.evil, text=f"I work at {JS_URL}", speaker=NAME, occurred_at="2024-03-10", actor=cast.p_owner)
    w.token = token_issue(actor=cast.p_owner, user=cast.owner, name=TOKEN_NAME, scopes=[w.evil], can_write=True)
    w.operator = user_create(username="operator", password="pw-operator-123", is_admin=True)
    return w
