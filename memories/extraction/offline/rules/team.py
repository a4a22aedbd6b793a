"""Rules for a team's own knowledge: the tool or vendor used for a function (and switching it),
ownership and leading, reporting lines, decisions; and, read from whole clauses, what recurs
("the staging password rotates every Friday") and when an event is due ("the launch is on 12 May").

The function names the attribute (`vocabulary.tool_attribute`: "the billing service" →
payment_tool), so "Our payment provider is Stripe" and "We switched the billing service from
Stripe to Adyen" speak of one thing, and the second supersedes the first."""

import calendar
import re
from datetime import datetime
from functools import lru_cache

from memories.extraction.offline.context import Clause, Context, Predicate
from memories.extraction.offline.dates import YEAR, day_said
from memories.extraction.offline.facts import fact_add
from memories.extraction.offline.gazetteer import known_place
from memories.extraction.offline.values import cut_value, job_title, plain_value, proper_name, said_as_name, snake_case
from memories.extraction.offline.words import NAME, NOT_NAMES, RELATIONS
from memories.extraction.vocabulary import (
    FUNCTION_PHRASES, FUNCTION_SYNONYMS, REPLACEMENT_ATTRIBUTE, TOOL_WORDS, canonical_attribute, function_key, tool_attribute,
)

# A function is a few plain words ("the billing service", "tickets", "CI", "on-call").
_FUNCTION = r"(?P<fn>(?:the\s+|our\s+|my\s+)?[\w][\w\-]*(?:\s+[\w][\w\-]*){0,3}?)"
_NOT_A_FUNCTION = {"my", "his", "her", "their", "your", "family", "kids", "house", "home", "in", "back", "out", "away", "here"}
_OWN = r"own|owns|owned|maintain|maintains|(?:am |is |are )?taking ownership of|took ownership of|take ownership of|takes ownership of|am responsible for|is responsible for|are responsible for|am in charge of|is in charge of|" \
       r"are in charge of|took over|have taken over|has taken over|am the owner of|is the owner of|are the owners of|" \
       r"(?:will |am |is |are )?(?:take|takes|taking) over|(?:will |am |is |are |has been |have been )?(?:look|looks|looking|looked) after|" \
       r"handle|handles|handled|(?:am |is |are |has been |have been )handling"
_LEAD = r"lead|leads|led|run|runs|ran|head|heads|headed|manage|manages|managed|am the lead of|is the lead of|am the head of|is the head of|" \
        r"(?:am |is |are )(?:running|leading|heading|managing)"


def _tool(value: str, clause: Clause) -> str | None:
    """A tool's name as said after a verb; words that describe it before its name are no part of it ("the uni
    GitLab", "our new Nextcloud")."""
    value = re.sub(r"^(?:the|our)\s+(?:(?!called\b|named\b|of\b|in\b|at\b)(?-i:[a-z])[\w\-]*\s+){1,2}(?=(?-i:[A-Z]))", "", value.strip(), flags=re.I)
    if brand := _ADDRESS.match(value):
        return brand[0]  # a brand typed as its address: "incident.io", "linear.app"
    return proper_name(cut_value(value), clause)


_ADDRESS = re.compile(r"[a-z][a-z0-9-]*\.(?:io|ai|app|dev|so|sh|cloud)(?![\w.])")


def _owner(fn: str, subject: str, ctx: Context) -> str:
    """Whose tool a switch sets: in a team's scope, the team's when the speaker switched "the" or "our" thing ("I
    moved the flux scripts from Bitbucket to GitLab"); the subject's otherwise ("I switched my phone to a Pixel")."""
    return ctx.we if ctx.team and subject == ctx.speaker and re.match(r"(?:the|our)\s", fn.strip(), re.I) else subject


# Who, not what: "Trint replaced Otter for everyone" names no function.
_EVERYONE = frozenset("everyone everybody us you them me staff".split())


def function_ok(fn: str) -> bool:
    words = fn.lower().split()
    if words[:1] == ["my"]:  # "I switched my editor from Vim to VS Code" (but not "my family")
        words = words[1:]
    return bool(words) and words[0] not in _NOT_A_FUNCTION | _EVERYONE and not set(words) & {"from", "to", "with"}


# Functions a team names a tool by, so "we moved the CI to Buildkite" (no "from") is a switch but
# "we moved the meeting to Tuesday" is not; "the X is Y" with a capitalised Y is X's tool for these.
_KNOWN_FUNCTIONS = frozenset(
    "ci cd ci/cd build builds chat code repo repos repository docs doc documentation wiki tickets ticketing issues "
    "backlog on-call oncall paging alerting billing payments payment design designs dashboards dashboard monitoring "
    "analytics crm hosting cloud database db queue search storage editor ide logging logs errors error tracking spec specs "
    "crash reports testing tests "
    "deploys deployments deploy auth sso calendar video email "
    # a business's functions, in any trade (issue 24: teams that are no software teams)
    "payroll rota rotas bookings booking invoicing invoices expenses accounts accounting bookkeeping hr leave "
    "timesheets insurance banking energy electricity broadband internet phones newsletter website webshop tills till pos "
    "stock inventory courier couriers shipping printing secrets".split()
)
_KNOWN_KEYS = frozenset(function_key(f) for f in _KNOWN_FUNCTIONS) - {""}
# Things a team has whose "the X is Y" is a fact of the team: where, when, how much, who.
TEAM_THINGS = frozenset(
    "offsite off-site onsite standup stand-up retro retrospective planning meeting meetings sync all-hands kickoff "
    "demo review launch release sprint hackathon workshop summit conference party dinner lunch office offices hq "
    "headquarters budget deadline repo repository roadmap owner lead grooming refinement standups retros "
    "social meetup bbq barbecue picnic".split()  # "the summer social": a team's events (not "do": "docs" would be one)
)


@lru_cache(maxsize=8192)
def known_function(fn: str) -> bool:
    words = [w for w in fn.lower().split() if w not in {"the", "our", "my", "team", "team's"}]
    return bool(words) and (" ".join(words) in _KNOWN_FUNCTIONS or words[-1] in _KNOWN_FUNCTIONS or words[-1] in TOOL_WORDS
                            or function_key(" ".join(words)) in _KNOWN_KEYS | _PHRASE_KEYS)


# A synonym of a team thing ("retreat" is offsite, "HQ" office) names the thing, not a function a tool serves.
_PHRASE_KEYS = (frozenset(FUNCTION_PHRASES.values()) | frozenset(FUNCTION_SYNONYMS.values())) - TEAM_THINGS


# Labels that head chat's statements without naming what they are about ("Personal news: …", "Random one: …").
_GENERIC_LABELS = frozenset("personal random intro intros reminder fyi psa update updates news note notes announcement record "
                            "today tonight tomorrow weekend heads up one thing things question ps edit".split())


def topic_function(topic: str | None, *, people: dict[str, str] | None = None) -> str | None:
    """The function a label before a colon names, if any: a known function ("Version control news: …" →
    version control), or the thing a switch under it is about, said in one to three plain nouns ("taproom
    tills: we're ditching Square …", "QC records: …"); not a generic label ("Personal news"), a team event,
    people ("kids: …") or someone addressed by name ("kofi: …", `people`). Read only for switches whose
    statement names no function of its own."""
    if not topic:
        return None
    topic = re.sub(r"\s+(?:news|update|updates|change|changes|note|notes|stuff|corner|heads up)$", "", topic.strip(), flags=re.I)
    topic = re.sub(r"^(?:(?:quick|small|big|short|brief|important|some|a|an|the|our|new)\s+)+", "", topic, flags=re.I)
    if known_function(topic):
        return topic
    words = topic.split()
    if not 1 <= len(words) <= 3 or not all(re.fullmatch(r"(?:[A-Za-z][a-z\-]+|[A-Z]{2,5})", w) for w in words):
        return None  # "Ekos 2.0", "Maya's corner", a sentence
    lowered = {w.lower() for w in words}
    if lowered & (_GENERIC_LABELS | PEOPLE_NOUNS) or singular(words[-1]).lower() in TEAM_THINGS or words[-1].lower() in _NOT_A_FUNCTION:
        return None
    if len(words) == 1 and (words[0].lower() in (people or {}) or (words[0][:1].isupper() and words[0][1:].islower() and people is None)):
        return None  # "Kofi: we moved from Zoom to Teams" speaks to Kofi
    return topic


def no_person_s_shape(name: str) -> bool:
    """A name shaped as no person's is: an inner capital, a digit, a dot, all capitals (PagerDuty, 1Password,
    incident.io, AWS): a tool's or a firm's, whatever verb it takes."""
    return re.search(r"[a-z][A-Z]|\d|\.\w|^[A-Z]{2,}$", name) is not None


def rule_team(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    """Tools, decisions, owners and leads are read in a team's scope only (a personal chat's "I
    run every morning" is not leading anything); "reports to" everywhere."""
    t = pred.text
    if pred.negated:
        return False
    if not ctx.team:
        return _reports_to(t, subject, clause, ctx, confidence)
    if pred.perfect and re.match(r"used\s", t, re.I):
        t = "uses " + t[5:]  # "we've used Gusto for payroll since March": still in use ("we used Trello" may be over)
    # "Photon Voice replaced Vivox for in-game voice chat": the subject is the new tool (not a person: "Maya replaced Tom as lead")
    if (m := re.match(r"^(?:replaced|has replaced|have replaced|took over from|superseded)\s+(?P<a>(?-i:[A-Z])[\w.\- ]*?)(?:\s+(?:for|as|in)\s+(?P<fn>.+))?$", t, re.I)) \
            and subject[:1].isupper() and subject != ctx.team and ctx.subject_kinds.get(subject) != "person" \
            and subject.casefold() != ctx.speaker.casefold() and not re.search(r"\s(?:with|by)\s", m["a"]):
        old, fn = _tool(m["a"], clause), cut_value(m["fn"] or "")
        fn = "" if fn and fn.lower() in _EVERYONE else fn  # "Trint replaced Otter for everyone"
        if old and said_as_name(old, clause) and not (fn and job_title(fn, strict=True)):
            if fn and function_ok(fn):
                fact_add(ctx, clause, ctx.we, tool_attribute(fn), subject, obj=subject, obj_kind="organization", previous=old, confidence=confidence)
                return True
            if not fn:
                return _replaced(ctx, clause, ctx.we, old, subject, confidence)
    # "Jira was replaced by Linear": the subject is the old tool, the team the one that switched (under way too: "Jira is
    # being replaced by Linear", "Square is being swapped for Zettle from 1 May", from the day said or the date it names)
    if (m := re.match(r"^(?:was|were|is|has been|got|have been|(?:is|are|was|were)\s+being)\s+(?:replaced\s+(?:by|with)|swapped\s+(?:out\s+)?(?:for|with))\s+(?P<b>.+)$", t, re.I)) \
            and subject[:1].isupper():
        new = _tool(m["b"], clause)
        if new and said_as_name(new, clause):
            return _replaced(ctx, clause, ctx.we, subject, new, confidence)
    # "Rootly is live for paging", "Notion went live for docs": a tool named as the subject, live for a function
    if (m := re.match(r"^(?:is|are|went|has gone|have gone|has been|is now)\s+(?:now\s+)?live\s+(?:for|as)\s+(?:our\s+|the\s+)?(?P<fn>[a-z][\w\- ]{1,30}?)$", t, re.I)) \
            and subject[:1].isupper() and subject != ctx.team and ctx.subject_kinds.get(subject) != "person" and known_function(m["fn"]):
        fact_add(ctx, clause, ctx.we, tool_attribute(m["fn"]), subject, obj=subject, obj_kind="organization", confidence=confidence)
        return True
    # "PagerDuty is set up for on-call", "incident.io is handling paging now": a tool named as the subject, doing a known
    # function. Of a name that could be a person's ("Maria handles payroll" is an owner, `_OWN`), only the verbs said of
    # tools alone; the others of a name shaped as no person's is (PagerDuty, incident.io, 1Password, AWS).
    if (m := re.match(r"^(?:(?P<tools>(?:is|are|has been|have been|got)\s+(?:now\s+)?(?:set up|used|configured)\s+for|powers|is powering|now powers)|"
                      r"(?:now\s+)?(?:handles|is handling|is now handling|takes care of|is taking care of|does|is doing|runs|is running|covers|deals with))"
                      r"\s+(?:our\s+|the\s+|all\s+(?:of\s+)?(?:our\s+|the\s+)?)?(?P<fn>[a-z][\w\- ]{1,30}?)(?:\s+(?:for us|for everyone|now|these days|from now on))*$", t, re.I)) \
            and subject != ctx.team and ctx.subject_kinds.get(subject) != "person" and subject.casefold() != ctx.speaker.casefold() \
            and subject.casefold() not in ctx.people and known_function(m["fn"]) \
            and (m["tools"] and subject[:1].isupper() or no_person_s_shape(subject)):
        fact_add(ctx, clause, ctx.we, tool_attribute(m["fn"]), subject, obj=subject, obj_kind="organization", confidence=confidence)
        return True
    # "switched the billing service from Stripe to Adyen", "migrated CI from Jenkins to GitHub Actions"
    if m := re.match(rf"^(?:switched|migrated|moved|changed|swapped|transitioned)\s+(?:over\s+)?{_FUNCTION}\s+from\s+(?P<a>.+?)\s+(?:to|over to)\s+(?P<b>.+)$", t, re.I):
        old, new = _tool(m["a"], clause), _tool(m["b"], clause)
        if old and new and function_ok(m["fn"]):
            owner = _owner(m["fn"], subject, ctx)
            thing = re.sub(r"^(?:the|our|my)\s+", "", m["fn"].strip(), flags=re.I)
            if not known_function(thing) and (singular(thing.split()[-1]).lower() in TEAM_THINGS - {"repo", "repository"} or known_place(new)):
                # "we moved the offsite from Lisbon to Porto", "moved the servers from Frankfurt to Dublin": a place
                fact_add(ctx, clause, owner, f"{snake_case(thing)}_place", new, obj=new, obj_kind="place", previous=old, confidence=confidence,
                         sentence=f"The {thing} is in {new}.")
                return True
            fact_add(ctx, clause, owner, tool_attribute(m["fn"]), new, obj=new, obj_kind="organization", previous=old, confidence=confidence)
            return True
    # "moved chat off Discord and onto Microsoft Teams"
    if m := re.match(rf"^(?:switched|migrated|moved|changed|taken|took)\s+{_FUNCTION}\s+(?:off|away from)\s+(?P<a>.+?)\s+(?:and\s+)?(?:on|over\s+)?to\s+(?P<b>.+)$", t, re.I):
        old, new = _tool(m["a"], clause), _tool(m["b"], clause)
        if old and new and function_ok(m["fn"]):
            fact_add(ctx, clause, subject, tool_attribute(m["fn"]), new, obj=new, obj_kind="organization", previous=old, confidence=confidence)
            return True
    # "switched from Linear to Jira for tickets", "replaced PagerDuty with Opsgenie for on-call": the function said
    # (before the shapes below that would take "Opsgenie for on-call" as the new tool)
    if m := re.match(r"^(?:switched|migrated|moved|changed|gone|went)\s+from\s+(?P<a>.+?)\s+to\s+(?P<b>.+?)\s+(?:for|as)\s+(?!(?:my|his|her|their)\b)(?P<fn>.+)$", t, re.I) or re.match(
        r"^(?:replaced|swapped)\s+(?P<a>.+?)\s+(?:with|for)\s+(?P<b>.+?)\s+(?:for|as|on)\s+(?P<fn>.+)$", t, re.I
    ):
        old, new = _tool(m["a"], clause), _tool(m["b"], clause)
        if old and new and function_ok(cut_value(m["fn"])):
            fact_add(ctx, clause, subject, tool_attribute(cut_value(m["fn"])), new, obj=new, obj_kind="organization", previous=old,
                     confidence=confidence)
            return True
    # "replaced New Relic with Honeycomb", "dropped Crashlytics for Sentry", "left Slack for Zulip": the function is the old tool's
    if m := re.match(r"^(?:replaced|swapped out|swapped)\s+(?P<a>.+?)\s+(?:out\s+)?(?:with|for)\s+(?P<b>.+)$"
                     r"|^(?:dropped|ditched|left|quit|abandoned|retired|moved away from|moved off|switched away from)\s+(?P<a2>.+?)\s+(?:for|in favou?r of)\s+(?P<b2>.+)$", t, re.I):
        old, new = _tool(m["a"] or m["a2"], clause), _tool(m["b"] or m["b2"], clause)
        if old and new and said_as_name(old, clause) and said_as_name(new, clause):
            return _replaced(ctx, clause, subject, old, new, confidence)
    # "we migrated from Perforce to Plastic SCM" (the team; no function said): the label's function, else the old tool's
    if subject == ctx.team and (m := re.match(r"^(?:switched|migrated|moved|changed|gone|went)\s+(?:over\s+)?from\s+(?P<a>.+?)\s+(?:over\s+)?to\s+(?P<b>.+)$", t, re.I)):
        old, new = _tool(m["a"], clause), _tool(m["b"], clause)
        if old and new and said_as_name(old, clause) and said_as_name(new, clause):
            if fn := topic_function(clause.topic, people=ctx.people):
                fact_add(ctx, clause, subject, tool_attribute(fn), new, obj=new, obj_kind="organization", previous=old, confidence=confidence)
                return True
            return _replaced(ctx, clause, subject, old, new, confidence)
    # "moved the CI to Buildkite": a known function switched, the old tool not said
    if m := re.match(rf"^(?:switched|migrated|moved|changed|swapped|transitioned)\s+(?:over\s+)?{_FUNCTION}\s+(?:over\s+)?to\s+(?P<b>.+)$", t, re.I):
        new = _tool(m["b"], clause)
        if new and said_as_name(new, clause) and function_ok(m["fn"]) and known_function(m["fn"]):
            fact_add(ctx, clause, subject, tool_attribute(m["fn"]), new, obj=new, obj_kind="organization", confidence=confidence)
            return True
    # "switched to Linear for tickets", "have migrated to Grafana for dashboards"
    if m := re.match(r"^(?:switched|migrated|moved|changed|gone|went)\s+(?:over\s+)?to\s+(?P<b>.+?)\s+(?:for|as)\s+(?P<fn>.+)$", t, re.I):
        new, fn = _tool(m["b"], clause), cut_value(m["fn"])
        if new and said_as_name(new, clause) and function_ok(fn):
            fact_add(ctx, clause, subject, tool_attribute(fn), new, obj=new, obj_kind="organization", confidence=confidence)
            return True
    # "we switched to 1Password", "IT has switched us to Teams": the team's tool, under a label's function if one names
    # it; a tool said gone beside it makes it a switch from that one (`offline._gone_replaced`)
    if subject == ctx.we and ctx.team and (m := re.match(r"^(?:switched|migrated|changed|swapped|transitioned)\s+(?:over\s+)?to\s+(?P<b>.+)$", t, re.I)):
        new = _tool(m["b"], clause)
        if new and said_as_name(new, clause) and new.split()[0].lower() not in NOT_NAMES and not known_place(new) and _day(new, ctx.occurred_at) is None:
            fn = topic_function(clause.topic, people=ctx.people)
            fact_add(ctx, clause, subject, tool_attribute(fn) if fn else "uses", new, obj=new, obj_kind="organization", confidence=confidence)
            return True
    # "uses Linear instead of Jira" (no function said): the old tool's function
    if m := re.match(r"^(?:use|uses|used|are using|is using|switched to|moved to|went with|are on|is on|am on)\s+(?P<b>.+?)\s+(?:instead of|rather than|in place of)\s+(?P<a>.+)$", t, re.I):
        old, new = _tool(m["a"], clause), _tool(m["b"], clause)
        if old and new and said_as_name(old, clause) and said_as_name(new, clause) and not re.search(r"\s(?:for|as)\s", m["a"]):
            return _replaced(ctx, clause, subject, old, new, confidence)
    # "moved the standup to 9:30", "pushed the launch to 2 June": a team event's time, day or place
    if (m := re.match(r"^(?:moved|pushed|shifted|rescheduled|postponed|brought forward|delayed)\s+(?P<thing>(?:the|our)\s+[\w\- ]{1,40}?)\s+(?:back\s+)?(?:to|until)\s+(?P<rest>.+)$", t, re.I)) \
            and singular(m["thing"].split()[-1]).lower() in TEAM_THINGS and due_date(f"{m['thing']} moved to {m['rest']}", clause, ctx):
        return True
    # "we've moved the studio into a bigger space in Griffintown", "moved the office to Leith": a thing of the team's new place
    if (m := re.match(r"^(?:moved|relocated)\s+(?P<thing>(?:the|our)\s+[a-z][\w\- ]{1,30}?)\s+(?:to|into|over to)\s+(?P<dest>.+)$", t, re.I)) \
            and not known_function(m["thing"]):
        towns = re.findall(rf"(?:^|\s(?:in|to|at)\s)(?:the\s+)?({NAME}(?:\s+{NAME})*)", m["dest"])
        place = towns[-1] if towns else None
        if place and place.split()[0].lower() not in NOT_NAMES:
            thing = re.sub(r"^(?:the|our)\s+", "", m["thing"], flags=re.I)
            # "we moved the runbooks out of Confluence into SharePoint": the old one said inside
            thing, *said_old = re.split(r"\s+(?:out of|off|away from|from)\s+", thing, maxsplit=1, flags=re.I)
            old = _tool(said_old[0], clause) if said_old else None
            said_at_once = re.match(rf"(?:the\s+)?{re.escape(place)}", m["dest"]) is not None  # "to Bitwarden", not "to a space in Griffintown"
            if said_at_once and not known_place(place) and singular(thing.split()[-1]).lower() not in TEAM_THINGS | {"studio"} and not re.search(
                    r"\d|\b(?:room|building|floor|wing|office|cupboard|store|basement|lab|hall|house|centre|center|street|road|site)\b", place, re.I):
                # "moving our shared passwords to Bitwarden", a name that is no town: the thing's tool
                fact_add(ctx, clause, ctx.we, tool_attribute(thing), place, obj=place, obj_kind="organization", previous=old, confidence=confidence)
                return True
            fact_add(ctx, clause, ctx.we, f"{snake_case(thing)}_place", place, obj=place, obj_kind="place", previous=old, confidence=confidence,
                     sentence=f"The {thing} is in {place}.")
            return True
    # "use Linear for tickets", "use Opsgenie instead of PagerDuty for on-call"
    if m := re.match(r"^(?:use|uses|are using|is using|am using|been using|rely on|relies on|picked|chose|selected|went with|adopted|settled on|are on|is on|am on|"
                     r"have got|have now got|now have|have gotten|got|gotten|"
                     r"are going with|are sticking with|stuck with|are staying with|stayed with|standardi[sz]ed on|"
                     r"standardi[sz]ed on)\s+(?P<b>.+?)(?:\s+instead\s+of\s+(?P<a>.+?))?\s+(?:for|as our|as the|as)\s+(?P<fn>.+)$", t, re.I):
        new, fn = _tool(m["b"], clause), cut_value(m["fn"])
        if new and function_ok(fn) and not re.match(rf"(?:next\s+|this\s+)?(?:{_WEEKDAYS}|today|tomorrow|tonight|the weekend)\b", fn, re.I):
            # ("we're on track for friday" names no function)
            old = _tool(m["a"], clause) if m["a"] else None
            fact_add(ctx, clause, subject, tool_attribute(fn), new, obj=new, obj_kind="organization", previous=old, confidence=confidence)
            _listed_tools(m["fn"], subject, clause, ctx, confidence)
            return True
    # "we use Doxdirect", "we're on Slack now"; under a label that names the function, its tool ("Poster printing: we're
    # using Doxdirect now"), and then said as possession or company too ("Drone news: we've got a DJI Mavic 3 now",
    # "Vehicle hire: we're with Enterprise from now on")
    fn = topic_function(clause.topic, people=ctx.people)
    if m := re.match(r"^(?:use|uses|are using|is using|adopted|am on|are on|is on)\s+(?P<b>.+)$", t, re.I) or fn and re.match(
            r"^(?:have got|have gotten|got|have|now have|are with|are now with|are going with|went with|bought|have bought)\s+(?:(?:a|an|the|our)\s+)?(?:new\s+)?(?P<b>.+)$", t, re.I):
        new = _tool(m["b"], clause)
        # in lowercase chat "on" is said of shifts and states too ("i'm on boxing day", "we're on track"): only a capital says a tool
        named = bool(new) and (new[:1].isupper() or new[:1].isdigit() if re.match(r"(?:am|are|is)\s+on\b", t, re.I) else said_as_name(new, clause))
        if named and new.split()[0].lower() not in NOT_NAMES and ctx.subject_kinds.get(new) != "person" \
                and new.split()[0].lower() not in ctx.people:
            attribute = tool_attribute(fn) if fn and subject == ctx.we else "uses"
            fact_add(ctx, clause, subject, attribute, new, obj=new, obj_kind="organization", confidence=confidence)
            return True
    if _handed_over(t, subject, clause, ctx, confidence) or _tool_by_verb(t, subject, clause, ctx, confidence):
        return True
    # "decided to keep Postgres for the queue", "agreed to ship on Tuesdays"
    if m := re.match(r"^(?:decided|agreed|chose|voted|resolved|settled|committed|concluded)\s+"
                     r"(?:that\s+(?:(?:we|the team|everyone|everybody)\s+(?:will|would|should|shall|are going to|must)\s+)?|to|on|upon|(?=against\b))\s*(?P<what>.+)$", t, re.I):
        what = m["what"].strip(" .")
        if 1 <= len(what.split()) <= 15:
            fact_add(ctx, clause, subject, "decision", what, confidence=confidence, sentence=f"{subject} decided to {what}.")
            return True
    if _reports_to(t, subject, clause, ctx, confidence):
        return True
    # "owns the billing service", "leads the platform team", "took over billing"
    if m := re.match(rf"^(?P<verb>{_OWN}|{_LEAD})\s+(?P<what>.+)$", t, re.I):
        what = re.sub(r"^(?:the|our)\s+", "", cut_value(m["what"]), flags=re.I).strip()
        what = re.sub(r"\s+(?:from|once|when|until|while)\s.*$", "", what, flags=re.I)  # "takes over billing from Wiktor": the old holder is no part of it
        if (role := re.match(r"^as\s+(?:the\s+)?(?P<role>.+)$", what, re.I)) and re.search(r"over$", m["verb"], re.I) and (title := job_title(role["role"], strict=True)):
            fact_add(ctx, clause, subject, "role", title, confidence=confidence)  # "Hana will take over as EHR analyst lead"
            return True
        if not what or len(what.split()) > 5 or what.split()[0].lower() in {"a", "an", "my", "it", "this", "that", "to", "into", "out", "late", "behind",
                                                                            "low", "around", "away", "errands", "for", "as", "off", "home", "back", "over",
                                                                            "up", "down", "north", "south", "east", "west"}:  # "heading off tomorrow": going, not leading
            return False
        verb = m["verb"].lower()
        if verb.endswith("ing") and len(what.split()) == 1 and what[:1].islower() and not re.match(r"(?:the|our)\s", m["what"], re.I):
            return False  # "BattlEye is running clean": a state, not a thing led ("Olu is running the store service")
        if what.lower() in {"me", "us"} and verb in {"manage", "manages", "managed"}:  # "Tomasz manages me"
            fact_add(ctx, clause, ctx.speaker, "reports_to", subject, obj=subject, obj_kind="person", confidence=confidence)
            return True
        if re.fullmatch(NAME, what) and verb in {"manage", "manages", "managed"}:  # "Tomasz manages Maya"
            fact_add(ctx, clause, what, "reports_to", subject, obj=subject, obj_kind="person", confidence=confidence)
            return True
        attribute = "owns" if re.fullmatch(_OWN, verb, re.I) else "leads"
        fact_add(ctx, clause, subject, attribute, what, confidence=confidence)
        return True
    return False


# A firm's name: capitalised words (an "&" or "and" between them) ending in a word that names a firm ("Bramble Hill
# Farm", "Hagen & Co", "Harlan Property", "Cairnview Pet Cremation"), or a name shaped as no person's (PHS, 1Password).
FIRM_WORDS = frozenset(
    "ltd limited co company inc llc llp plc gmbh group services service farm farms partners associates solutions supplies "
    "supply hire logistics couriers courier cleaning cleaners property properties waste recycling accountants accounting "
    "bank insurance insurers brewery bakery printers print printing labs systems studio studios agency media energy water "
    "motors garage mechanics electrical electrics plumbing builders construction security vets veterinary clinic pharmacy "
    "catering caterers foods dairy nursery transport removals storage consulting consultants solicitors lawyers legal bros "
    "brothers sons trust cremation crematorium laundry linen hygiene pest signs rentals wholesale wholesalers distribution "
    "haulage freight telecom networks payroll".split()
)
_FIRM = r"(?P<firm>(?-i:[A-Z])[\w'.\-]*(?:\s+(?:&|and)\s+(?-i:[A-Z])[\w'.\-]*|\s+(?-i:[A-Z])[\w'.\-]*){0,4})"
# What a firm does for a team, in any tense: "collects our spent grain", "has done our accounts since 2019", "now supplies the milk"
_SERVES = re.compile(
    r"^(?:now\s+|still\s+|also\s+)?(?:(?:has|have)\s+(?:always\s+)?(?:been\s+)?|(?:is|are)\s+(?:now\s+)?)?"
    r"(?P<verb>collect(?:s|ed|ing)?|suppl(?:y|ies|ied|ying)|deliver(?:s|ed|ing)?|do|does|did|doing|done|handl(?:e|es|ed|ing)|print(?:s|ed|ing)?|"
    r"clean(?:s|ed|ing)?|servic(?:e|es|ed|ing)|maintain(?:s|ed|ing)?|provid(?:e|es|ed|ing)|host(?:s|ed|ing)?|repair(?:s|ed|ing)?|"
    r"insur(?:e|es|ed|ing)|audit(?:s|ed|ing)?|prepar(?:e|es|ed|ing)|process(?:es|ed|ing)?|fix(?:es|ed|ing)?|empt(?:y|ies|ied|ying)|"
    r"(?:look(?:s|ed|ing)?\s+after)|(?:tak(?:e|es|ing)|took|taken)\s+(?:care\s+of|away)|(?:pick(?:s|ed|ing)?)\s+up|"
    r"(?:sort(?:s|ed|ing)?)\s+out|launder(?:s|ed|ing)?|wash(?:es|ed|ing)?|stor(?:e|es|ed|ing)|ship(?:s|ped|ping)?)"
    r"\s+(?:all\s+(?:of\s+)?)?(?:our|the|us\s+our)\s+(?P<fn>[a-z][\w\-' ]{1,40}?)"
    r"(?:\s+(?:for us|for the team|now|these days|from now on|every\s+\w+|each\s+\w+|on\s+\w+days?|weekly|monthly|too|as well))*$",
    re.I,
)


def _firm_name(name: str, ctx: Context) -> bool:
    """Whether a subject names a firm rather than a person: its last word names a firm ("Bramble Hill Farm", "Hagen
    & Co"), or it is shaped as no person's name is (PHS, 1Password, incident.io)."""
    words = name.split()
    if name.casefold() in {ctx.speaker.casefold(), (ctx.team or "").casefold()} or ctx.subject_kinds.get(name) == "person" \
            or words[0].lower() in ctx.people or words[0].lower() in NOT_NAMES:
        return False
    return words[-1].lower().strip(".") in FIRM_WORDS and (len(words) > 1 or words[0].isupper()) \
        or no_person_s_shape(name)


def firm_serves(text: str, clause: Clause, ctx: Context) -> bool:
    """A firm named as the subject of what it does for the team: "Bramble Hill Farm collects our spent grain",
    "Hagen & Co do our taxes", "PHS take away the sharps bins" → the team's tool (supplier) for that thing, as
    "our spent grain goes to Bramble Hill Farm" says it. "Hall Farm hosts our harvest supper": an event's place."""
    if not ctx.team or not (m := re.match(rf"^{_FIRM}\s+(?P<rest>.+)$", text)):
        return False
    firm, rest = m["firm"], m["rest"]
    if not _firm_name(firm, ctx) or not (said := _SERVES.match(rest)):
        return False
    fn = cut_value(said["fn"]).strip()
    if not fn or not function_ok(fn) or fn.split()[0].lower() in {"a", "an", "it", "this", "that"} or job_title(fn, strict=True):
        return False
    if singular(fn.split()[-1]).lower() in TEAM_THINGS:
        if not said["verb"].lower().startswith("host"):
            return False
        fact_add(ctx, clause, ctx.we, f"{snake_case(fn)}_place", firm, obj=firm, obj_kind="place", confidence=0.8, sentence=f"The {fn} is at {firm}.")
        return True
    fact_add(ctx, clause, ctx.we, tool_attribute(fn), firm, obj=firm, obj_kind="organization", confidence=0.8)
    ctx.subject_kinds.setdefault(firm, "organization")
    return True


# Verbs that say where a team is or goes, not what it works with ("we met on Zoom" is still a tool).
_NOT_TOOL_VERBS = set(
    "is are was were be been am live lives lived stay stayed went go goes travel travelled traveled arrived moved "
    "had have has got get left met meet celebrated celebrate ate eat landed flew fly won win lost spent spend "
    "talked talk agreed decided voted switched migrated changed replaced started joined going gone coming come came sticking stuck staying".split()
)


# Stems that lost an "e" before -ing / -ed ("moving", "stored"); the rest keep theirs ("hosting", "deployed").
_E_DROPPED = set("mov us stor migrat chang replac schedul manag hous releas shar creat updat writ tak mak driv serv sav compil "
                 "automat stag messag cod leav merg stag sourc produc captur measur trac pag invoic purchas prototyp".split())
_SWITCH_VERBS = {"move", "switch", "migrate", "change", "replace", "swap", "transition", "go", "leave", "start", "join", "plan",
                  "want", "hope", "consider", "think", "try", "look", "need"}


def verb_base(verb: str) -> str:
    """"deploys" / "deployed" / "deploying" → "deploy", "tracks" → "track" (the noun a function is named by)."""
    verb = verb.lower()
    for suffix, back in (("ying", "y"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("s", "")):
        if verb.endswith(suffix) and len(verb) - len(suffix) >= 3:
            base = verb[: len(verb) - len(suffix)] + back
            if suffix in {"ed", "ing"} and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "ls":
                base = base[:-1]  # shipped → ship
            elif suffix in {"ed", "ing"} and base in _E_DROPPED:
                base += "e"  # moving → move, stored → store
            if suffix == "es" and not base.endswith(("sh", "ch", "x", "ss")):
                base += "e"  # releases → release (but pushes → push)
            return base
    return verb


def _tool_by_verb(t: str, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    """The general shape of "what we do it with": subject, a verb in any tense, an optional object,
    then "with / on / via / through / using / in" and a tool's name. "We deploy with Argo CD" →
    deploy_tool; "the team tracks bugs in Jira" → bug_tool (the object names the function);
    "we've been testing on BrowserStack" → test_tool. "in" only with an object that is no team
    event ("we hold the retro in Porto" is a place, read by `our_detail`'s shapes)."""
    if subject != ctx.team:
        return False
    m = re.match(r"^(?:(?:am|is|are|was|were)\s+|been\s+)?(?P<verb>[a-z]{3,}|do)\s+(?:(?P<obj>(?:the\s+|our\s+)?[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?)\s+)?"
                 r"(?P<prep>with|on|via|through|using|in|into|to)\s+(?P<tool>.+)$", t, re.I)
    if not m or m["verb"].lower() in _NOT_TOOL_VERBS or m["verb"].lower() in _NOT_A_FUNCTION or verb_base(m["verb"]) in _SWITCH_VERBS:
        return False  # switches have their own shapes (and "we are moving the docs to Notion next week" is a plan)
    obj = (m["obj"] or "").strip()
    if m["prep"].lower() in {"in", "into", "to"} and (not obj or obj.lower().split()[-1].rstrip("s") in TEAM_THINGS):
        return False
    if obj and (obj.split()[0].lower() in {"a", "an", "it", "them", "this", "that", "there", "here", "back", "up", "out"} or not function_ok(obj)):
        return False
    tool = _tool(m["tool"], clause)
    if not tool or not tool[:1].isupper() or tool.split()[0].lower() in NOT_NAMES or re.match(r"^\d", tool):
        return False
    function = obj or verb_base(m["verb"])
    attribute = tool_attribute(function)
    if attribute == "uses" or (m["verb"].lower() == "do" and not obj):
        return False
    instead = re.search(r"\b(?:instead of|rather than|in place of)\s+(?P<old>.+)$", m["tool"], re.I)
    old = _tool(instead["old"], clause) if instead else None  # "… on Google Meet instead of Zoom"
    fact_add(ctx, clause, subject, attribute, tool, obj=tool, obj_kind="organization", previous=old, confidence=confidence)
    return True


# The items after the first of a list of tools by function: "…, Confluence for the wiki and Slack for chat".
_LISTED = re.compile(r"(?:,\s*(?:and\s+|&\s+)?|\s+(?:and|&)\s+)(?:(?:we\s+use|use|we're\s+on)\s+)?(?P<tool>[^,]+?)\s+(?:for|as)\s+(?P<fn>[^,]+?)(?=,|\s+(?:and|&)\s|$)", re.I)


def _listed_tools(said: str, subject: str, clause: Clause, ctx: Context, confidence: float) -> None:
    """"We use Jira for tickets, Confluence for the wiki and Slack for chat": the first pair is the rule's; each
    later "<tool> for <function>" of the list is a tool too (a name, a function; anything else ends the list)."""
    first = re.match(r"^[^,]+?(?=,|\s+(?:and|&)\s|$)", said)
    position = first.end() if first else len(said)
    while (m := _LISTED.match(said, position)) is not None:
        tool, fn = _tool(m["tool"], clause), cut_value(m["fn"])
        if not tool or m["tool"].strip() != tool and not re.fullmatch(rf"(?:the\s+|our\s+)?{re.escape(tool)}", m["tool"].strip(), re.I) \
                or not said_as_name(tool, clause) or not fn or not function_ok(fn) or tool.split()[0].lower() in NOT_NAMES \
                or re.match(r"(?:the\s+)?(?:everything|anything|rest|all|others?|stuff|now)\b", fn, re.I):
            return
        fact_add(ctx, clause, subject, tool_attribute(fn), tool, obj=tool, obj_kind="organization", confidence=confidence)
        position = m.end()


def _replaced(ctx: Context, clause: Clause, subject: str, old: str, new: str, confidence: float) -> bool:
    """A switch that names no function: the label's, when a label before a colon names one ("taproom tills: we
    ditched Square for Epos Now"), else the memory puts it on the old tool's attribute (`REPLACEMENT_ATTRIBUTE`)."""
    if fn := topic_function(clause.topic, people=ctx.people):
        fact_add(ctx, clause, subject, tool_attribute(fn), new, obj=new, obj_kind="organization", previous=old, confidence=confidence)
        return True
    fact_add(ctx, clause, subject, REPLACEMENT_ATTRIBUTE, new, obj=new, obj_kind="organization", previous=old, confidence=confidence,
             sentence=f"{subject} uses {new} instead of {old}.")
    return True


def _handed_over(t: str, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    """"Yusuf handed the billing pipeline over to Hana", "passed on-call to Tomasz": the receiver
    owns it now (which ends the giver's ownership: owns holds one subject per value)."""
    t = re.sub(r"^(?:am|is|are)\s+(hand|pass|giv|transferr)ing\b", lambda v: {"hand": "handed", "pass": "passed", "giv": "gave", "transferr": "transferred"}[v[1].lower()], t, flags=re.I)
    # "Kofi handed me the Steam store page", "gave Tomasz the netcode": the receiver said first
    if m := re.match(rf"^(?:handed|passed|gave|transferred)\s+(?:over\s+)?(?P<who>me|us|{NAME}(?:\s+{NAME})?)\s+(?P<what>(?:the|our|my)\s+.+?)(?:\s+(?:over|now))?$", t, re.I):
        pass
    else:
        m = re.match(rf"^(?:handed|passed|gave|transferred|handed over|passed on)\s+(?:over\s+)?(?P<what>.+?)\s+(?:over\s+|on\s+)?to\s+(?P<who>me|{NAME}(?:\s+{NAME})?)$", t, re.I)
    if not m:
        return False
    if m["who"].lower() == "us":
        return False
    who = ctx.speaker if m["who"].lower() == "me" else m["who"]
    what = re.sub(r"^(?:the|our|my)\s+", "", cut_value(m["what"].strip()), flags=re.I)
    if not what or len(what.split()) > 5 or what.split()[0].lower() in {"a", "an", "it", "this", "that", "them", "him", "her"}:
        return False
    fact_add(ctx, clause, who, "owns", what, confidence=confidence)
    ctx.subject_kinds.setdefault(who, "person")
    return True


_MINE = re.compile(
    r"^(?:all\s+of\s+)?(?:the\s+|our\s+)?(?P<what>[\w][\w\-' ]{1,50}?)\s+(?:is|are|was|were|has been|have been)\s+(?:now\s+|all\s+|officially\s+)*"
    r"(?P<whose>mine|hers|his|me|(?:owned|run|maintained|led|looked after|handled)\s+by\s+me)(?:\s+to\s+(?P<verb>run|lead|own|manage|maintain|look after))?"
    r"(?:\s+now)?(?:\s*[,;:].*)?$",
    re.I,
)


_NOT_OWNED = frozenset("pleasure honour honor fault mistake mistakes error errors blame loss choice call turn treat idea bad "
                       "problem winner loser one person guy girl culprit reason question answer issue manager boss supervisor "
                       "responsibility privilege apology apologies".split())


def owner_said(text: str, clause: Clause, ctx: Context) -> bool:
    """Ownership said from the thing, with a possessive pronoun: "the art pipeline is mine",
    "the telemetry dashboards are mine now", "all of the game's audio is mine: …", "the Discord
    server is mine to run", "the localization pipeline is owned by me" → the speaker owns it
    ("his" / "hers": the person last named). In a team's scope only."""
    m = _MINE.match(text.strip(" ."))
    if not ctx.team or not m:
        return False
    what = m["what"].strip()
    if what.split()[0].lower() in NOT_NAMES | {"it", "that", "this", "which", "one"} or len(what.split()) > 5:
        return False
    if what.split()[-1].lower() in _NOT_OWNED:
        return False  # "the pleasure is mine", "the mistake was mine": said of a feeling or a fault, not of a thing owned
    whose = m["whose"].lower()
    who = ctx.last_third_person if whose in {"his", "hers"} else ctx.speaker
    if not who:
        return False
    fact_add(ctx, clause, who, "owns", what, confidence=0.85, sentence=f"{who} owns {what}.")
    return True


def _reports_to(t: str, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    """"reports to Tomasz" in any tense, with an adverb ("reports straight to", "will now report to")
    and an object pronoun ("Felix reports to me": the speaker; "to him": the person last named);
    "is Felix's manager" said of the manager: Felix reports to the subject. What follows the
    manager ("from today", "for now", ", not to me") is no part of the fact."""
    m = re.match(rf"^(?:(?:will|now|still|also|then)\s+)*(?:report|reports|reported|am reporting|is reporting|are reporting|has reported|have reported)\s+"
                 rf"(?:(?:straight|directly|now|still|only|also)\s+)?to\s+(?P<who>me|him|her|{NAME}(?:\s+{NAME})?)\b", t, re.I)
    if m:
        who = {"me": ctx.speaker, "him": ctx.last_third_person, "her": ctx.last_third_person}.get(m["who"].lower(), m["who"])
        if not who or who.casefold() == subject.casefold():
            return False
        fact_add(ctx, clause, subject, "reports_to", who, obj=who, obj_kind="person", confidence=confidence)
        ctx.subject_kinds.setdefault(who, "person")
        return True
    if (m := re.match(rf"^(?:is|was|has been|will be)\s+(?:now\s+)?(?P<whose>{NAME})'s\s+(?:line\s+)?(?:manager|boss)$", t)) and subject[:1].isupper():
        fact_add(ctx, clause, m["whose"], "reports_to", subject, obj=subject, obj_kind="person", confidence=confidence)
        ctx.subject_kinds.setdefault(m["whose"], "person")
        return True
    return False


_TIME = re.compile(r"^(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}:\d{2}|noon|midday|midnight)$", re.I)
_PEOPLE_WORDS = {"manager", "boss", "lead", "owner", "head", "ceo", "cto", "cfo", "founder", "director", "pm", "contact", "admin"}
_STATE = r"(?:(?:now|actually|still|currently|officially|finally|all|both|fully|entirely|completely|mostly)\s+)*"


def time_value(text: str) -> str | None:
    """"9:30", "10 am", "noon": a time of day as said (cut_value would split "9:30" at the colon); "9:30 from next
    week": the time, from when it holds."""
    text = re.sub(r"\s+(?:from|starting|as of|until|till)\b.*$", "", text.strip(" .,"), flags=re.I).strip(" .,")
    return text if _TIME.match(text) else None


_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_SEGMENT = re.compile(r"(?:^|,?\s+)(?:still\s+|now\s+)?(?P<prep>on|at|in|every)\s+(?P<what>.+?)(?=(?:,?\s+(?:still\s+|now\s+)?(?:on|at|in|every)\s)|$)", re.I)


def event_details(thing: str, what: str, value: str, clause: Clause, ctx: Context, *, event: bool = False) -> bool:
    """"The retro is on Wednesdays at 3pm in the Kelp room", "standup is at 10:00 in the Kelp
    room": a team event's day (retro_schedule), time (retro_time) and place (retro_place), each
    its own single-valued fact. Only when at least two are said, or a day or a place with "the"."""
    parts = {}
    for seg in _SEGMENT.finditer(value):
        prep, said = seg["prep"].lower(), seg["what"].strip(" .,")
        if (prep in {"on", "every"} and re.fullmatch(rf"(?:every\s+|each\s+)?(?:other\s+)?{_WEEKDAYS}(?:\s+(?:morning|afternoon|evening|night)s?)?", said, re.I)) or prep == "every":
            parts.setdefault("schedule", (f"every {said}" if prep == "every" else f"on {said}"))
        elif prep == "at" and time_value(said):
            parts.setdefault("time", time_value(said))
        elif prep in {"in", "at"} and (place := proper_name(re.sub(r"^the\s+", "", said, flags=re.I), clause) or _room(said)):
            parts.setdefault("place", place)
        else:
            return False
    if len(parts) < 2 and not (set(parts) == {"schedule"} and (what.lower().split()[-1] in TEAM_THINGS or event)):
        return False  # one day alone only of a team's event ("demos are on Thursdays")
    for kind, said in parts.items():
        label = {"schedule": f"The {what} is {said}.", "time": f"The {what} is at {said}.", "place": f"The {what} is in {said}."}[kind]
        fact_add(ctx, clause, ctx.we, f"{thing}_{kind}", said, sentence=label)
    return True


def _room(said: str) -> str | None:
    """"the Kelp room", "room 2A", "the atrium of the Pier building": a place named by a name or a number."""
    said = re.sub(r"^the\s+", "", said.strip(), flags=re.I)
    return said if len(said.split()) <= 6 and re.search(r"\b[A-Z0-9]\w*", said) else None


# Words before a team thing that say how often it comes, not which one it is ("our weekly demo").
_HOW_OFTEN = re.compile(r"^(?:(?:weekly|daily|monthly|yearly|annual|quarterly|regular|usual|fortnightly|biweekly|bi-weekly|team)\s+)+", re.I)
# Verbs that place a team's event, read as "is in / at / on" ("the demo happens in the Larch room").
_HAPPENS = re.compile(r"^(?P<what>[a-z0-9][\w\-' ]{1,40}?)\s+(?:happens|happen|happened|takes place|take place|took place|has taken place|will take place|"
                      r"(?:is|are|was|were|will be|has been|have been)\s+(?:held|happening|taking place|booked|hosted)|meets|met|stays|stay|stayed|remains|remain)\s+"
                      r"(?P<prep>in|at|on)\s+", re.I)


def singular(word: str) -> str:
    """"demos" → "demo", "retros" → "retro", "offices" → "office" (of the team's things)."""
    low = word.lower()
    for cut in (low[:-1], low[:-2]):
        if low.endswith("s") and cut in TEAM_THINGS:
            return word[: len(cut)]
    return word


_FIRST_VERB = re.compile(r"\s(?:is|are|was|were|will|would|has|have|had|moves?|moved|happens?|happened|takes?|took|runs?|ran|starts?|started|stays?)\b", re.I)


def _thing_named(rest: str) -> str:
    """The thing a statement is about in the team's one word for it: a synonym of a team thing in
    the words before the verb is that thing ("the winter retreat is in Ljubljana" is the winter
    offsite, "retrospectives are at Café Hopper" retros), so every spelling lands on one attribute."""
    verb = _FIRST_VERB.search(f" {rest}")
    head, tail = (rest[: verb.start()], rest[verb.start():]) if verb else ("", rest)
    words = [FUNCTION_SYNONYMS.get(w.lower(), w) if FUNCTION_SYNONYMS.get(w.lower()) in TEAM_THINGS else w for w in head.split(" ")]
    return " ".join(words) + tail if head else rest


def _thing_said(rest: str) -> str:
    """A team thing as its attribute names it: "weekly demo" is "demo", "demos" "demo", and
    "happens / takes place / is held in" is "is in"."""
    rest = _HOW_OFTEN.sub("", rest)
    if m := _HAPPENS.match(rest):
        rest = f"{m['what']} is {m['prep']} " + rest[m.end():]
    words = rest.split(" ", 1)
    head = singular(words[0])
    if head != words[0] and len(words) > 1 and re.match(r"(?:is|are|was|were|has|have|happen|take)\b", words[1]):
        rest = head + " " + re.sub(r"^(?:are|were|have)\b", lambda v: {"are": "is", "were": "was", "have": "has"}[v[0]], words[1])
    return rest


_STRONG = re.compile(r"^(?:(?:in|at|on)\s+)?(?:the\s+)?(?:[$€£]?\d|(?-i:[A-Z])\w|(?-i:[a-z])+(?-i:[A-Z]))", re.I)  # "iOS 16" too


def _strong_value(value: str) -> bool:
    """A value that makes "the X is Y" a fact of a team thing outside the known list: a name
    ("Android 9"), a number or an amount ("$24.99", "120,000 dollars"), a date or a place
    ("in Frankfurt", "at the Studio Lab"); not a word that describes ("great", "out of control")."""
    value = value.strip()
    if not _STRONG.match(value):
        return False
    first = re.sub(r"^(?:(?:in|at|on)\s+)?(?:the\s+)?", "", value, flags=re.I).split()[0].lower()
    return first not in NOT_NAMES or bool(re.match(r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
                                                   r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)", first))


# Nouns for people, whose "X live in / come from Y" is a home or an origin, never a tool.
PEOPLE_NOUNS = frozenset("kids children family parents friends folks people everyone everybody guys lads girls boys crew team staff "
                          "colleagues neighbours neighbors relatives cousins grandparents".split()) | frozenset(RELATIONS)


def _kept_thing(what: str, value: str, clause: Clause, ctx: Context) -> bool:
    """A thing said in common nouns that lives in, goes through or comes from a name ("work orders live in
    Maximo", "timesheets go in Kronos", "weather forecasts come from StormGeo"): the tool that serves it,
    whatever the thing (the list of known functions is no longer asked), unless the words name people or the
    name is a known place ("half the office went to Lisbon"). Not in chat typed all in lowercase, where a name
    is lowercase too ("mei lives in Sheffield"). Opening the sentence, the thing's first letter is a capital
    ("Field data goes to Nextcloud", "Timesheets go in Kronos"), a name's is too ("Mei lives in Sheffield"):
    there it is a thing when it is said in two words or more, or in the plural, and is none of the scope's people."""
    words = what.split()
    said_lowercase = re.search(rf"(?<!\w){re.escape(what)}(?!\w)", clause.text) is not None  # "Mei lives …" is asked here as "mei lives …"
    opening = (not said_lowercase and clause.text.startswith(what[:1].upper() + what[1:]) and words[0].lower() not in ctx.people
               and (len(words) >= 2 or (words[0].endswith("s") and not words[0].endswith("ss"))))
    tool = cut_value(value.strip())
    return (not clause.typed_lowercase and (said_lowercase or opening) and all(w[:1].islower() for w in words)
            and not set(w.lower() for w in words) & PEOPLE_NOUNS
            and bool(re.match(r"(?:the\s+)?(?-i:[A-Z])", value.strip())) and not (tool and known_place(tool)))


def _handler(value: str, ctx: Context) -> str | None:
    """One of the team as the one a thing goes through: "me" (the speaker), or a name the scope knows as a person's."""
    value = re.sub(r"\s+now$", "", value.strip(" .,"), flags=re.I)
    if value.lower() == "me":
        return ctx.speaker
    if re.fullmatch(NAME, value) and (value.lower() in ctx.people or ctx.subject_kinds.get(value) == "person"):
        return value
    return None


_DONE = {"moving": "moved", "switching": "switched", "migrating": "migrated", "changing": "changed"}


def our_detail(rest: str, clause: Clause, ctx: Context, *, the: bool = False) -> bool:
    """The team's details, said as "our X …" (or "the X …", `the`, where X must be a team thing
    or a function, since "the kids are great" is no fact of the team). In a team's scope only:
    "our payment provider is Adyen" / "our CI is GitHub Actions" → the function's tool; "our docs
    now live in Notion", "the repo is hosted on GitHub" → the tool too; "the offsite is in
    Lisbon" → offsite_place; "the standup is at 9:30" → standup_time; "our deadline is 14 March"
    → deadline_date; "the owner of billing is Priya" → Priya owns billing; "the on-call lead is
    Tomasz" → Tomasz leads on-call; "the budget is 40,000 euros" → budget."""
    if not ctx.team:
        return False
    rest = _thing_named(" ".join(rest.split()))
    recurring_said, happens = bool(_HOW_OFTEN.match(rest)), bool(_HAPPENS.match(_HOW_OFTEN.sub("", rest)))
    rest = _thing_said(rest)
    rest = re.sub(r"^(?:all|every|each)\s+(?:(?:the|our)\s+)?(?=[a-z])", "", rest, flags=re.I)  # "all calls are on …": calls
    # "our CI changed from Jenkins to GitHub Actions", "the offsite moved from Lisbon to Porto": a switch said of the thing
    # (in the present too: "the offsite moves from Reykjavik to Tallinn"; under way once its date has come: "paging is moving … on 1 July")
    underway = re.match(r"^(?P<what>[a-z][\w\-' ]{0,40}?)\s+(?:is|are)\s+(?:moving|switching|migrating|changing)\s", rest, re.I)
    if underway and clause.valid_from is not None and clause.valid_from <= ctx.occurred_at:
        rest = re.sub(r"\s(?:is|are)\s+(moving|switching|migrating|changing)\s", lambda v: " " + _DONE[v[1].lower()] + " ", rest, count=1, flags=re.I)
    # (and in the passive: "secrets have been moved from Vault to AWS Secrets Manager", "repos were moved from …"; "out of … into …")
    if (m := re.match(r"^(?P<what>[a-z][\w\-' ]{0,40}?)\s+(?:has\s+|have\s+|(?:is|are|was|were|has been|have been|had been)\s+)?(?:changed|switched|moved|went|gone|migrated|changes|switches|moves|migrates)\s+(?:from|out\s+of)\s+(?P<a>.+?)\s+(?:to|into)\s+(?P<b>.+)$", rest, re.I)):
        what = m["what"]
        if singular(what.split()[-1]).lower() in TEAM_THINGS:
            old, new = _tool(m["a"], clause), _tool(m["b"], clause)
            if old and new and said_as_name(old, clause) and said_as_name(new, clause) and _day(new, ctx.occurred_at) is None and not time_value(new) \
                    and new.split()[0].lower() not in NOT_NAMES:  # "the offsite moved from Reykjavik to Tallinn": the old place said too
                fact_add(ctx, clause, ctx.we, f"{snake_case(_thing_said(what))}_place", new, obj=new, obj_kind="place", previous=old,
                         sentence=f"The {what} is in {new}.")
                return True
            return due_date(f"the {what} moved to {m['b']}", clause, ctx)
        old, new = _tool(m["a"], clause), _tool(m["b"], clause)
        if not (old and new):
            return False
        if known_function(what) or not re.search(r"\bmoved\b", m[0], re.I):
            fact_add(ctx, clause, ctx.we, tool_attribute(what), new, obj=new, obj_kind="organization", previous=old)
            return True
        if said_as_name(old, clause) and said_as_name(new, clause) and what.split()[0].lower() not in NOT_NAMES:
            # "the EU servers moved from Frankfurt to Amsterdam": a thing of the team moved
            fact_add(ctx, clause, ctx.we, f"{snake_case(what)}_place", new, obj=new, obj_kind="place", previous=old,
                     sentence=f"The {what} is in {new}.")
            return True
        return False
    # "logs have moved to Datadog", "our CI switched to Buildkite": a function's new tool, the old one not said
    if (m := re.match(r"^(?P<what>[a-z][\w\-' ]{0,40}?)\s+(?:has\s+|have\s+)?(?:changed|switched|moved|migrated|changes|switches|moves|migrates)\s+(?:over\s+)?to\s+(?P<b>.+)$", rest, re.I)) \
            and known_function(m["what"]) and singular(m["what"].split()[-1]).lower() not in TEAM_THINGS:
        new = _tool(m["b"], clause)
        if new and said_as_name(new, clause) and new.split()[0].lower() not in NOT_NAMES and _day(new, ctx.occurred_at) is None and not time_value(new):
            fact_add(ctx, clause, ctx.we, tool_attribute(m["what"]), new, obj=new, obj_kind="organization")
            return True
    # "the metrics API belongs to Marguerite", "on-call is now run by Tomasz": the holder after the verb
    if m := re.match(rf"^(?P<what>[\w][\w\-' ]{{1,40}}?)\s+(?:(?:now|still)\s+)?(?:belongs|belonged|has belonged)\s+to\s+(?P<who>{NAME}(?:\s+{NAME})?)(?:\s+now)?$", rest) or re.match(
            rf"^(?P<what>[\w][\w\-' ]{{1,40}}?)\s+(?:is|was|are|were|has been|have been)\s+{_STATE}(?P<verb>owned|maintained|looked after|run|led|headed|managed)\s+by\s+(?P<who>{NAME}(?:\s+{NAME})?)(?:\s+now)?$", rest):
        what = re.sub(r"^(?:the|our)\s+", "", m["what"], flags=re.I).strip()
        if what.split()[0].lower() not in NOT_NAMES | {"it", "she", "he", "they"} and len(what.split()) <= 5:
            leads = (m.groupdict().get("verb") or "").lower() in {"run", "led", "headed", "managed"}
            fact_add(ctx, clause, m["who"], "leads" if leads else "owns", what, confidence=0.85)
            ctx.subject_kinds.setdefault(m["who"], "person")
            return True
        return False
    # who: "the owner of the billing service is Priya", "the billing service's owner is Priya", "the on-call lead is Tomasz"
    if m := re.match(rf"^(?:(?P<role1>owner|owners|lead|head)\s+of\s+(?P<what1>.+?)|(?P<what2>.+?)(?:'s)?\s+(?P<role2>owner|lead|head))"
                     rf"\s+(?:is|was|are)\s+{_STATE}(?P<who>{NAME}(?:\s+{NAME})?)$", rest, re.I):
        what = re.sub(r"^(?:the|our)\s+", "", m["what1"] or m["what2"], flags=re.I).strip()
        role = (m["role1"] or m["role2"]).lower()
        if what and len(what.split()) <= 5:
            fact_add(ctx, clause, m["who"], "owns" if role.startswith("owner") else "leads", what, confidence=0.85)
            ctx.subject_kinds.setdefault(m["who"], "person")
            return True
        return False
    # "the booking flow is Esi's now": Esi owns it
    if (m := re.match(rf"^(?P<what>[a-z][\w\- ]{{1,40}}?)\s+(?:is|are)\s+(?:now\s+)?(?P<who>{NAME})'s(?:\s+now)?$", rest)) and (
            known_function(m["what"]) or not the or re.search(r"\b(?:service|flow|api|app|system|pipeline|area|project|module|checklist|process)$", m["what"], re.I)
            or re.search(r"\snow$", rest)):  # "matchmaking is Rohan's now": a hand-over, whatever the thing
        fact_add(ctx, clause, m["who"], "owns", re.sub(r"^(?:the|our)\s+", "", m["what"], flags=re.I), confidence=0.85)
        ctx.subject_kinds.setdefault(m["who"], "person")
        return True
    m = re.match(rf"^(?P<what>[a-z0-9][\w\-'.& ]{{0,40}}?)\s+(?P<verb>is|are|was|were|has been|have been)\s+{_STATE}(?P<value>.+)$", rest, re.I)
    lives = re.match(rf"^(?P<what>[a-z][\w\-' ]{{1,40}}?)\s+{_STATE}(?:lives?|lived|sits?|goes|go|went|runs?|ran|get sent|gets sent|"
                     rf"(?:comes?|came)(?:\s+in)?(?:\s+to\s+us)?(?:\s+{_STATE}from(?=\s+(?-i:[A-Z])))?|(?:has|have)\s+(?:lived|gone|run)|"
                     rf"(?:is|are|was|were|has been|have been)\s+{_STATE}(?:hosted|kept|stored|written|tracked|managed|sent|filed|logged|handled|routed|done|served|run|"
                     rf"built|made|drawn|(?!(?:held|planned|booked|scheduled)\b)\w{{3,}}ed))"
                     rf"(?:\s+{_STATE}(?:in|on|at|by|with|to|into|through|via)|(?<=from))\s+(?P<value>.+)$", rest, re.I)
    if lives and (head := re.split(r"\s+(?:for|from|of|between|across)\s+", lives["what"], maxsplit=1)[0]) != lives["what"] and known_function(head):
        rest = head + rest[len(lives["what"]):]  # "crash reports from the clients come in through Sentry": the function said first
        lives = re.match(lives.re, rest)
    if lives and (who := _handler(lives["value"], ctx)) and not set(lives["what"].lower().split()) & PEOPLE_NOUNS \
            and re.search(r"\s(?:through|to|by|via)\s+\S+(?:\s+now)?$", rest, re.I):
        # "Van bookings go through me", "all expenses go to Maria now", "refunds are handled by Tom": who handles the thing
        fact_add(ctx, clause, who, "owns", re.sub(r"^(?:the|our|all)\s+", "", lives["what"].strip(), flags=re.I), confidence=0.8)
        ctx.subject_kinds.setdefault(who, "person")
        return True
    if lives and the and not (known_function(lives["what"]) or lives["what"].lower().split()[-1] in TEAM_THINGS or _kept_thing(lives["what"], lives["value"], clause, ctx)):
        return False  # "Tomasz now lives in Porto" is a person's home, read elsewhere
    if lives:
        tool = _tool(lives["value"], clause)
        if tool and not lives["what"].lower().split()[-1] in TEAM_THINGS - {"repo", "repository"}:
            first = re.split(r"\s+(?:and|&)\s+", lives["what"])[0]  # "our source code and assets live in Perforce": the code's tool
            fact_add(ctx, clause, ctx.we, tool_attribute(first), tool, obj=tool, obj_kind="organization")
            return True
        return False
    if not m:
        return False
    what = m["what"].strip()
    if re.search(r"\bones?$", what, re.I) and ctx.last_thing and len(what.split()) > 1:
        what = re.sub(r"\bones?$", ctx.last_thing, what)  # "the North American ones" after "the EU servers"
    words = what.lower().split()
    thing = snake_case(what)
    value = m["value"].strip(" .")
    if value.lower() in {"down", "up", "out", "back", "done", "over", "off", "open", "closed", "ready", "here", "in"}:
        return False  # "the site is down": a state, no value ("Season 4 is LIVE" is kept: it says when it went live)
    if words:
        ctx.last_thing = what.split()[-1]
    if re.match(r"(?:moving|switching|migrating|changing)\b", value, re.I):
        return False  # "paging is moving from PagerDuty to Rootly in September": a plan (`underway` above reads one under way)
    if re.match(r"(?:mine|yours|his|hers|ours|theirs)\b", value, re.I):
        return False  # "the billing service was mine until March": an owner, not a value of the thing
    first_said = words[0] if words else ""  # "the Snowflake bill for April": judged by "Snowflake", not "April"
    if qualifier := re.match(r"^(?P<head>.+?)\s+(?:for|of|in)\s+(?P<q>(?:19|20)\d\d|q[1-4](?:\s+\d{4})?|h[12]|v?\d+(?:\.\d+)+|(?:the\s+)?[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)$", what, re.I):
        # "the marketing budget for 2026", "code freeze for early access": the qualifier names which one (and the
        # thing is what it qualifies: "the summer offsite for 2026" is an offsite)
        if not re.match(r"(?:the|a|an|my|our|his|her)$", re.sub(r"^the\s+", "", qualifier["q"], flags=re.I).split()[0], re.I):
            which = re.sub(r"^the\s+", "", qualifier["q"], flags=re.I)
            what = f"{which} {qualifier['head']}"
            words, thing = what.lower().split(), snake_case(what)
    team_thing = bool(words) and (words[-1] in TEAM_THINGS or known_function(what) or recurring_said or happens)
    # "all calls are on Microsoft Teams now", "field check-ins are on Signal": a thing in common nouns on a named tool
    if not team_thing and (on := re.match(r"^on\s+(?P<tool>.+?)(?:\s+now)?$", value, re.I)) and _kept_thing(what, on["tool"], clause, ctx):
        tool = _tool(on["tool"], clause)
        plural = words[-1].endswith("s") and not words[-1].endswith("ss")
        if tool and (plural or len(words) > 1) and len(words) <= 3 and _day(tool, ctx.occurred_at) is None and not time_value(tool) \
                and tool.split()[0].lower() not in NOT_NAMES:
            fact_add(ctx, clause, ctx.we, tool_attribute(what), tool, obj=tool, obj_kind="organization")
            return True
    if the and not team_thing and not (_strong_value(value) and first_said not in NOT_NAMES | {"it", "they", "he", "she"}
                                       and not re.search(r"'s$", first_said) and len(words) <= 5
                                       and (len(words) >= 2 or re.match(r"[$€£]?\d", value) or clause.corrects)):
        # "the kids are great", "the coffee is Lavazza": a thing of the team only when its value is a name, a number,
        # a date or a place, and (for a name) the thing is said in more than one word ("the minimum Android version")
        # or the sentence corrects one ("the minimum is Android 10, not Android 9": the held value's attribute)
        return False
    if known_function(what) and words[-1] not in TEAM_THINGS and (on := re.match(r"^(?:on|in|at|with)\s+(?P<tool>.+)$", value, re.I)):
        tool = _tool(on["tool"], clause)  # "the wiki is on Confluence", "the web launcher code is on GitLab"
        if tool and said_as_name(tool, clause) and tool.split()[0].lower() not in NOT_NAMES:
            fact_add(ctx, clause, ctx.we, tool_attribute(what), tool, obj=tool, obj_kind="organization")
            return True
    if event_details(thing, what, value, clause, ctx, event=recurring_said or happens):
        return True
    # "the offsite is in Lisbon", "the standup is at 9:30"
    if where := re.match(r"^(?:in|at)\s+(?P<place>.+)$", value, re.I):
        when = time_value(where["place"])
        if when:
            fact_add(ctx, clause, ctx.we, f"{thing}_time", when, sentence=f"The {what} is at {when}.")
            return True
        place = proper_name(cut_value(where["place"]), clause) or (_room(where["place"]) if words[-1] in TEAM_THINGS else None)
        if place and (town := re.match(rf"^(?:the\s+)?{re.escape(place)}\s+in\s+(?P<town>{NAME}(?:\s+{NAME})*)", where["place"])):
            place = f"{place}, {town['town']}"  # "the Studio Lab in Verdun": the place and its town
        if place and known_function(what) and words[-1] not in TEAM_THINGS and place[:1].isupper():
            fact_add(ctx, clause, ctx.we, tool_attribute(what), place, obj=place, obj_kind="organization")  # "our tickets are in Trello"
            return True
        if place:
            fact_add(ctx, clause, ctx.we, f"{thing}_place", place, obj=place, obj_kind="place", sentence=f"The {what} is in {place}.")
            return True
        return False
    if when := time_value(value):
        fact_add(ctx, clause, ctx.we, f"{thing}_time", when, sentence=f"The {what} is at {when}.")
        return True
    if length := re.fullmatch(r"(?P<n>(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+\w+)\s+(?:long|in length)", value, re.I):
        fact_add(ctx, clause, ctx.we, f"{thing}_length", length["n"], sentence=f"The {what} {m['verb']} {length['n']} long.")
        return True  # "sprints are three weeks long"
    if day := _day(value, ctx.occurred_at):
        label = thing if thing.endswith("_date") else f"{thing}_date"
        said = day_said(day)
        fact_add(ctx, clause, ctx.we, label, said, sentence=f"The {what} is on {said}.")
        return True
    if len(words) > 1 and words[-1] in TOOL_WORDS:
        attribute = tool_attribute(" ".join(words[:-1]))
    elif words and words[-1] in _PEOPLE_WORDS:
        attribute = canonical_attribute(thing)
    else:
        attribute = None
    named = proper_name(cut_value(value), clause) if value[:1].isalpha() else None  # "40,000 euros" is no name
    if named is None and (on := re.match(r"^(?:(?:up|live|available|posted|published)\s+(?:in|on)|on|with|using|via)\s+(?P<tool>.+)$", value, re.I)):
        # ("the rota is up in Deputy": the tool it is kept in)
        tool = _tool(on["tool"], clause)  # "the data warehouse is on Redshift for now": a platform the thing is on
        if tool and (said_as_name(tool, clause) or _ADDRESS.fullmatch(tool)) and tool.split()[0].lower() not in NOT_NAMES and _day(tool, ctx.occurred_at) is None:
            named, attribute = tool, tool_attribute(what)
    if attribute is None:
        attribute = tool_attribute(what) if named and named[:1].isupper() and (known_function(what) or not the) else canonical_attribute(thing)
    if attribute == "uses":
        return False
    if not named and re.match(r"^\w+ed\b|^\w+ing\b|^(?:not|no|being|going|getting)\b|^(?:up|down|out|live|ready|done|sorted|over|off)\b", value, re.I):
        return False  # "the offsite has been moved …", "the budget is not …", "the rota is up": no value said
    if not named and re.match(r"[$€£]?\d", value) and re.search(r"\s(?:on|for|in)\s.*\band\s+[$€£]?\d", value) and len(value.split()) <= 12:
        value = value  # "60 fps on PC and 30 fps on mobile": one value said for each case, kept whole
    else:
        value = named or plain_value(value, max_words=6)
    if not value:
        return False
    obj = value if value[:1].isupper() else None
    fact_add(ctx, clause, ctx.we, attribute, value, obj=obj, obj_kind="organization")
    return True


_DECISION_NOUN = re.compile(
    r"^(?:(?:the|our)\s+)?(?:final\s+)?(?:decision|call|verdict|outcome|consensus|agreement|resolution)"
    r"(?:\s+(?:on|about|for|of)\s+[\w\- ]{1,30}?)?\s+(?:is|was|has been)\s+(?:to|that)\s+(?P<what>.+)$"
    r"|^(?:final\s+)?decision\s*:\s*(?:(?:we|the team)\s+(?:will\s+|are going to\s+)?)?(?:to\s+)?(?P<what2>.+)$"
    r"|^it\s+(?:was|has been|is|got)\s+(?:decided|agreed)\s+(?:that|to)\s+(?:(?:we|the team)\s+(?:(?:will|would|should|shall)\s+)?)?(?P<what3>.+)$",
    re.I,
)


def decision_said(text: str, clause: Clause, ctx: Context) -> bool:
    """"The decision is to keep Postgres", "Decision: keep Postgres", "It was agreed that we
    freeze deploys on Fridays" → a decision of the team (in a team's scope only)."""
    m = _DECISION_NOUN.match(text.strip(" .")) if ctx.team else None
    if not m:
        return False
    what = (m["what"] or m["what2"] or m["what3"]).strip(" .")
    if not 1 <= len(what.split()) <= 15:
        return False
    fact_add(ctx, clause, ctx.we, "decision", what, confidence=0.85, sentence=f"{ctx.we} decided to {what}.")
    if m["what2"] and not clause.corrects:
        said = re.sub(r"^(?:the|our)\s+", "", what, flags=re.I)
        our_detail(said[:1].lower() + said[1:], clause, ctx, the=True)  # "Decision: task tracking has moved to Planner": the tool too
    return True


def recurring(text: str, clause: Clause, ctx: Context) -> bool:
    """"The staging password rotates every Friday" → staging_password_schedule = every Friday (in
    a team's scope only)."""
    if not ctx.team:
        return False
    m = re.match(r"^(?P<the>the|our)\s+(?P<thing>[a-z][\w\- ]{1,40}?)\s+(?P<verb>[a-z]+s)\s+(?P<when>(?:every|each|once a|twice a|on the first)\b.+)$", text, re.I)
    if not m:
        return False
    when = m["when"].strip(" .")
    fact_add(ctx, clause, ctx.we, f"{snake_case(m['thing'])}_schedule", when,
             sentence=f"{m['the'].capitalize()} {m['thing']} {m['verb']} {when}.")
    return True


_MONTH = "|".join(sorted((n.lower() for n in list(calendar.month_name)[1:] + list(calendar.month_abbr)[1:]), key=len, reverse=True))
_DUE = re.compile(
    r"^(?P<the>the|our)\s+(?P<thing>[a-z0-9][\w\-. ]{0,40}?)\s+(?:(?:is|was|will be|has been|have been|has|have|had|got|been|is now|now)\s+)*"
    r"(?:moved|pushed|postponed|rescheduled|brought forward|set|scheduled|planned|happening|due|booked|moving)?\s*(?:back\s+)?"
    r"(?:on|for|to|until)\s+(?:the\s+)?(?P<date>.+)$",
    re.I,
)

_DUE_IS = re.compile(r"^(?P<the>the|our)\s+(?P<thing>[a-z0-9][\w\-. ]{0,40}?)\s+(?:is|was)\s+(?:now\s+)?(?P<date>\d.+|[a-z]+\s+\d.+)$", re.I)


# A named thing whose day is set or moved ("Harbour Pass is pushed to 30 June", "Ferry Wallet moved to 4 November").
_NAMED_EVENT = re.compile(
    rf"^(?P<name>{NAME}(?:\s+{NAME})*)\s+(?:(?:is|was|has been|got|has|have)\s+)*(?:now\s+)?(?:moved|pushed|postponed|rescheduled|slipped|slips|"
    r"delayed|brought forward|set|scheduled|planned|ships|shipped|launches|launched|goes live|went live|releases|released)\s+(?:back\s+)?(?:on|for|to|until)\s+\d",
)
# What an event does on its day: "the beta ships on 2 December", "the launch slipped to 6 October".
_EVENT_VERB = re.compile(
    r"^(?P<thing>(?:the|our)\s+[a-z][\w\- ]{1,40}?)\s+(?:ships|shipped|launches|launched|goes live|went live|starts|started|begins|began|"
    r"kicks off|kicked off|opens|opened|ends|ended|closes|closed|lands|landed|releases|released|happens|happened|"
    r"takes place|took place|slipped|slips|slid|shifted|shifts|moves|was moved|got moved|has slipped|has shifted)(?=\s+(?:on|to|until|for)\s)",
    re.I,
)


_PUSHED = re.compile(
    r"^(?:we|i)\s+(?:are\s+|am\s+|have\s+|has\s+|had\s+)?(?:pushing|pushed|moving|moved|postponing|postponed|delaying|delayed|shifting|shifted|"
    r"bringing forward|brought forward|rescheduling|rescheduled)\s+(?P<thing>(?:the\s+|our\s+)?[a-z0-9][\w\-. ]{0,40}?)\s+(?:back\s+)?"
    r"from\s+(?P<a>.+?)\s+(?:back\s+)?(?:to|until)\s+(?P<date>.+)$",
    re.I,
)
# A named thing and an event of it, then its day: "Saltglass early access launches on 12 May 2026".
_NAMED_THING_EVENT = re.compile(
    rf"^(?P<thing>{NAME}(?:\s+[a-z0-9][\w\-.]*){{1,3}}?)\s+(?:launches|launched|ships|shipped|goes live|went live|opens|opened|starts|started|"
    r"releases|released|is set for|is due|is scheduled for|is planned for)\s+(?:on\s+|for\s+)?(?P<date>\d.+|[a-z]+\s+\d.+)$",
)


def due_date(text: str, clause: Clause, ctx: Context) -> bool:
    """"The launch is on 12 May", "the launch moved to 2 June" → launch_date = 12 May 2026 (the
    year said, else the next such day on or after when it was said). Read before the clause's
    dates are taken out, since here the date is the value. In a team's scope only."""
    if not ctx.team:
        return False
    said = text.strip(" .!")
    if (pushed := _PUSHED.match(said)) and (day := _day(re.split(r",\s*", pushed["date"])[0].strip(" ."), ctx.occurred_at)):
        # "we're pushing early access from 12 May to 9 June 2026": the thing's day is the new one
        thing = re.sub(r"^(?:the|our)\s+", "", pushed["thing"], flags=re.I)
        value = day_said(day)
        old = _day(pushed["a"].strip(" ."), ctx.occurred_at)
        if old is not None and not re.search(r"\d{4}", pushed["a"]):
            old = old.replace(year=day.year)  # "from 12 May to 9 June 2026": the year said once, for both
        fact_add(ctx, clause, ctx.we, f"{snake_case(thing)}_date", value, sentence=f"The {thing} is on {value}.",
                 previous=day_said(old) if old else None)
        return True
    if (named := _NAMED_THING_EVENT.match(said)) and ctx.subject_kinds.get(named["thing"].split()[0]) != "person" \
            and named["thing"].split()[0].lower() not in NOT_NAMES \
            and named["thing"].split()[0].casefold() != ctx.speaker.casefold() and (day := _day(named["date"].strip(" ."), ctx.occurred_at)):
        value = day_said(day)
        fact_add(ctx, clause, ctx.we, f"{snake_case(named['thing'])}_date", value, sentence=f"{named['thing']} is on {value}.")
        return True
    if not re.match(r"(?:the|our)\s", said, re.I) and singular(said.split()[0]).lower() in TEAM_THINGS:
        said = "the " + said  # "Standup has moved to 10:15": a team's thing said bare
    elif (named := _NAMED_EVENT.match(said)) and ctx.subject_kinds.get(named["name"]) != "person" and named["name"].casefold() != ctx.speaker.casefold():
        said = "the " + said  # "Ferry Wallet moved to 4 November": a named thing's day
    said = _EVENT_VERB.sub(r"\g<thing> is", said, count=1)  # "the beta ships on 2 December" → "the beta is on …"
    m = _DUE.match(said) or _DUE_IS.match(said)
    if not m:
        return False
    date = re.split(r",\s+", m["date"])[0]  # "the standup is moving to 9:30, starting Monday"
    day = _day(date.strip(" ."), ctx.occurred_at)
    if day is None:
        if re.match(r"(?:every\s+(?:other\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:s|\s+(?:morning|afternoon|evening)s))\b",
                    date, re.I) and singular(m["thing"].split()[-1]).lower() in TEAM_THINGS:
            # "the retro is moving to Thursday afternoons", "standup moved to Mondays at 10": the event's new day (said as
            # recurring: "moved the meeting to Tuesday" is one meeting)
            thing = " ".join(m["thing"].split()[:-1] + [singular(m["thing"].split()[-1])])
            return event_details(snake_case(thing), thing, f"on {date}", clause, ctx, event=True)
        when = time_value(date)  # "the standup moved to 10:00"
        if when:
            fact_add(ctx, clause, ctx.we, f"{snake_case(m['thing'])}_time", when, sentence=f"{m['the'].capitalize()} {m['thing']} is at {when}.")
            return True
        place = proper_name(cut_value(m["date"]), clause)  # "the offsite moved to Porto" (not "to Tuesday")
        if place and place[:1].isupper() and place.split()[0].lower() not in NOT_NAMES and m["thing"].lower().split()[-1] in TEAM_THINGS and re.search(r"\bto\s+(?:the\s+)?" + re.escape(m["date"].strip(" .")) + "$", text.strip(" .!"), re.I):
            fact_add(ctx, clause, ctx.we, f"{snake_case(m['thing'])}_place", place, obj=place, obj_kind="place",
                     sentence=f"{m['the'].capitalize()} {m['thing']} is in {place}.")
            return True
        return False
    thing = m["thing"].strip()
    if (year := YEAR.search(thing)) and not YEAR.search(date):
        try:
            day = day.replace(year=int(year[0]))  # "the 2026 hackathon is on 18 May": in 2026
        except ValueError:
            pass
    value = day_said(day)
    if where := re.match(r"^(?P<thing>.+?)\s+(?:is|are|was|were|will be)\s+(?:at|in)\s+(?P<place>.+)$", thing, re.I):
        # "the summer social is at the Crown on 4 July": the thing's place and its day
        thing = where["thing"]
        place = proper_name(cut_value(where["place"]), clause)
        if place and place[:1].isupper() and place.split()[0].lower() not in NOT_NAMES:
            fact_add(ctx, clause, ctx.we, f"{snake_case(thing)}_place", place, obj=place, obj_kind="place", sentence=f"{m['the'].capitalize()} {thing} is in {place}.")
    elif re.search(r"\s(?:is|are|was|were)\s", thing, re.I):
        return False  # a clause, not a thing's name
    thing = re.sub(r"(?<=\w)\s+(?:feature|project|initiative|product|epic|date|day)$", "", thing, flags=re.I)  # "the Harbour Pass feature", "the launch date"
    fact_add(ctx, clause, ctx.we, f"{snake_case(thing)}_date", value,
             sentence=f"{m['the'].capitalize()} {thing} is on {value}.")
    return True


def _day(text: str, said: datetime) -> datetime | None:
    m = re.fullmatch(rf"(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH})\.?(?:,?\s+(?P<y>\d{{4}}))?", text, re.I) or re.fullmatch(
        rf"(?P<m>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?", text, re.I
    )
    if not m:
        return None
    month = next(i for i in range(1, 13) if m["m"].lower() in (calendar.month_name[i].lower(), calendar.month_abbr[i].lower()))
    try:
        if m["y"]:
            return datetime(int(m["y"]), month, int(m["d"]), tzinfo=said.tzinfo)
        day = datetime(said.year, month, int(m["d"]), tzinfo=said.tzinfo)
        return day if day.date() >= said.date() else day.replace(year=said.year + 1)
    except ValueError:
        return None
